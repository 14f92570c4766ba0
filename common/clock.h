// Injectable wall clock (Abseil 20220623 has no absl::Clock).
#ifndef SPEAKERMEM_COMMON_CLOCK_H_
#define SPEAKERMEM_COMMON_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace speakermem {

// A source of wall-clock time. Implementations are safe for concurrent use.
class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch, UTC.
  virtual int64_t NowMs() const = 0;
  // The process-wide real clock; never null, never deleted.
  static Clock* Real();
};

// A clock that only moves when told to. Safe for concurrent use.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t now_ms = 1700000000000) : now_ms_(now_ms) {}
  int64_t NowMs() const override { return now_ms_.load(); }
  void AdvanceMs(int64_t delta) { now_ms_.fetch_add(delta); }
  void SetMs(int64_t now) { now_ms_.store(now); }

 private:
  std::atomic<int64_t> now_ms_;
};

// Formats `ms` since the epoch as ISO-8601 UTC, "2023-05-08T13:56:00.000Z".
std::string FormatIsoUtc(int64_t ms);

}  // namespace speakermem

#endif  // SPEAKERMEM_COMMON_CLOCK_H_

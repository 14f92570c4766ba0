// Structured JSON logging: one object per line on stderr (or a test sink).
//
//   LOG_INFO("rpc done").Str("method", "Ingest").Int("stored", 25);
//
// emits {"ts":"...","level":"info","msg":"rpc done","method":"Ingest",
// "stored":25}. Safe for concurrent use: each line is written whole.
#ifndef SPEAKERMEM_COMMON_LOG_H_
#define SPEAKERMEM_COMMON_LOG_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace speakermem {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Lines below `level` are dropped. Default: kInfo.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Parses "debug", "info", "warn", "error"; returns false on anything else.
bool ParseLogLevel(absl::string_view name, LogLevel* level);

// Replaces the output (default: stderr). Pass nullptr to restore stderr.
// Intended for tests that assert on log content.
void SetLogSink(std::function<void(absl::string_view line)> sink);

// One log line under construction; emitted when destroyed.
class LogLine {
 public:
  LogLine(LogLevel level, absl::string_view msg);
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  LogLine& Str(absl::string_view key, absl::string_view value);
  LogLine& Int(absl::string_view key, int64_t value);
  LogLine& Num(absl::string_view key, double value);
  LogLine& Bool(absl::string_view key, bool value);

 private:
  bool enabled_;
  std::string buf_;
};

}  // namespace speakermem

#define LOG_DEBUG(msg) ::speakermem::LogLine(::speakermem::LogLevel::kDebug, msg)
#define LOG_INFO(msg) ::speakermem::LogLine(::speakermem::LogLevel::kInfo, msg)
#define LOG_WARN(msg) ::speakermem::LogLine(::speakermem::LogLevel::kWarn, msg)
#define LOG_ERROR(msg) ::speakermem::LogLine(::speakermem::LogLevel::kError, msg)

#endif  // SPEAKERMEM_COMMON_LOG_H_

#include <catch2/catch.hpp>
#ifdef __linux__
#include <sched.h>
#endif
#include <string>
#include <thread>
#include <vector>

#include "common/allocator.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/thread_priority.h"
#include "common/utf8.h"

namespace speakermem {
namespace {

TEST_CASE("IsValidUtf8 accepts well-formed and rejects ill-formed UTF-8", "[utf8]") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8("plain ascii"));
  CHECK(IsValidUtf8("caf\xC3\xA9 \xE6\x88\x91 \xF0\x9F\x98\x81"));
  CHECK_FALSE(IsValidUtf8("\xC0\x80"));          // overlong NUL
  CHECK_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate U+D800
  CHECK_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(IsValidUtf8("abc\xE6\x88"));       // truncated
  CHECK_FALSE(IsValidUtf8("\x80"));              // lone continuation
  CHECK_FALSE(IsValidUtf8("\xFF"));
}

TEST_CASE("DecodeUtf8 and AppendUtf8 round-trip", "[utf8]") {
  for (int32_t cp : {0x41, 0xE9, 0x6211, 0x1F601, 0x10FFFF}) {
    std::string s;
    AppendUtf8(cp, &s);
    size_t pos = 0;
    CHECK(DecodeUtf8(s, &pos) == cp);
    CHECK(pos == s.size());
  }
}

TEST_CASE("JsonEscape escapes quotes, controls and bad bytes", "[utf8]") {
  CHECK(JsonEscape("a\"b\\c\n\x01") == "a\\\"b\\\\c\\n\\u0001");
  CHECK(JsonEscape("ok\xFFz") == "ok\xEF\xBF\xBDz");
}

TEST_CASE("FormatIsoUtc formats epoch milliseconds", "[clock]") {
  CHECK(FormatIsoUtc(0) == "1970-01-01T00:00:00.000Z");
  CHECK(FormatIsoUtc(1683554160123) == "2023-05-08T13:56:00.123Z");
  CHECK(FormatIsoUtc(-1) == "1969-12-31T23:59:59.999Z");
}

TEST_CASE("FakeClock moves only when told", "[clock]") {
  FakeClock clock(1000);
  CHECK(clock.NowMs() == 1000);
  clock.AdvanceMs(500);
  CHECK(clock.NowMs() == 1500);
}

TEST_CASE("log lines are single JSON objects with typed fields", "[log]") {
  std::vector<std::string> lines;
  SetLogSink([&](absl::string_view l) { lines.emplace_back(l); });
  LOG_INFO("hello \"world\"").Str("k", "v").Int("n", -3).Bool("b", true).Num("x", 0.5);
  LOG_DEBUG("dropped at info level");
  SetLogSink(nullptr);
  REQUIRE(lines.size() == 1);
  const std::string& l = lines[0];
  CHECK(l.front() == '{');
  CHECK(l.back() == '\n');
  CHECK(l.find("\"level\":\"info\"") != std::string::npos);
  CHECK(l.find("\"msg\":\"hello \\\"world\\\"\"") != std::string::npos);
  CHECK(l.find("\"k\":\"v\",\"n\":-3,\"b\":true,\"x\":0.5}") != std::string::npos);
}

#ifdef __linux__
TEST_CASE("background threads are SCHED_IDLE, the caller's other threads are not", "[priority]") {
  int policy = -1;
  std::thread t([&policy] {
    MakeThisThreadBackground();
    policy = sched_getscheduler(0);
  });
  t.join();
  CHECK(policy == SCHED_IDLE);
  CHECK(sched_getscheduler(0) == SCHED_OTHER);
}
#endif

TEST_CASE("the allocator serving malloc is the one the build linked", "[allocator]") {
  // The build links tcmalloc (SPEAKERMEM_MALLOC) unless it is a sanitizer
  // build; a linker that dropped the library would leave glibc's here.
  CHECK(std::string(AllocatorName()) == SPEAKERMEM_LINKED_MALLOC);
  // Memory freed from many threads is handed back without harm, and the
  // allocator still serves afterwards.
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([] { std::vector<std::string> v(10000, std::string(100, 'x')); });
  }
  for (auto& t : threads) t.join();
  ReleaseFreeMemory();
  std::vector<std::string> after(1000, std::string(1000, 'y'));
  CHECK(after.back().size() == 1000);
}

}  // namespace
}  // namespace speakermem

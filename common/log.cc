#include "common/log.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>

#include "common/clock.h"
#include "common/utf8.h"

namespace speakermem {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

struct Sink {
  std::mutex mu;
  std::function<void(absl::string_view)> fn;  // guarded by mu
};

Sink& GetSink() {
  static Sink* sink = new Sink();
  return *sink;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }

bool ParseLogLevel(absl::string_view name, LogLevel* level) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (name == LevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

void SetLogSink(std::function<void(absl::string_view)> sink) {
  Sink& s = GetSink();
  std::lock_guard<std::mutex> lock(s.mu);
  s.fn = std::move(sink);
}

LogLine::LogLine(LogLevel level, absl::string_view msg)
    : enabled_(static_cast<int>(level) >= g_level.load()) {
  if (!enabled_) return;
  buf_.reserve(160);
  buf_ += "{\"ts\":\"";
  buf_ += FormatIsoUtc(Clock::Real()->NowMs());
  buf_ += "\",\"level\":\"";
  buf_ += LevelName(level);
  buf_ += "\",\"msg\":\"";
  buf_ += JsonEscape(msg);
  buf_ += '"';
}

LogLine::~LogLine() {
  if (!enabled_) return;
  buf_ += "}\n";
  Sink& s = GetSink();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.fn) {
    s.fn(buf_);
  } else {
    std::fwrite(buf_.data(), 1, buf_.size(), stderr);
  }
}

LogLine& LogLine::Str(absl::string_view key, absl::string_view value) {
  if (!enabled_) return *this;
  buf_ += ",\"";
  buf_ += JsonEscape(key);
  buf_ += "\":\"";
  buf_ += JsonEscape(value);
  buf_ += '"';
  return *this;
}

LogLine& LogLine::Int(absl::string_view key, int64_t value) {
  if (!enabled_) return *this;
  buf_ += ",\"";
  buf_ += JsonEscape(key);
  buf_ += "\":";
  buf_ += std::to_string(value);
  return *this;
}

LogLine& LogLine::Num(absl::string_view key, double value) {
  if (!enabled_) return *this;
  buf_ += ",\"";
  buf_ += JsonEscape(key);
  buf_ += "\":";
  if (std::isfinite(value)) {
    char tmp[32];
    std::snprintf(tmp, sizeof(tmp), "%.6g", value);
    buf_ += tmp;
  } else {
    buf_ += "null";
  }
  return *this;
}

LogLine& LogLine::Bool(absl::string_view key, bool value) {
  if (!enabled_) return *this;
  buf_ += ",\"";
  buf_ += JsonEscape(key);
  buf_ += "\":";
  buf_ += value ? "true" : "false";
  return *this;
}

}  // namespace speakermem

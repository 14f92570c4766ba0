#include "datasets/slack_export.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"
#include "datasets/chat_export_internal.h"
#include "nlohmann/json.hpp"

namespace speakermem::datasets {
namespace {

namespace fs = std::filesystem;
using export_internal::Bad;
using export_internal::Deliver;
using export_internal::Field;
using export_internal::ReadJson;
using export_internal::SessionCutter;
using nlohmann::json;

// Message subtypes that are messages; every other subtype is a channel
// event (joins, topic changes, pins, tombstones of deleted messages...).
constexpr const char* kMessageSubtypes[] = {"bot_message", "thread_broadcast", "file_share",
                                            "me_message"};

// users.json: id -> display name.
absl::StatusOr<std::map<std::string, std::string>> ReadUsers(const fs::path& dir) {
  std::map<std::string, std::string> names;
  const fs::path path = dir / "users.json";
  if (!fs::exists(path)) return names;  // ids stand in for names
  SM_ASSIGN_OR_RETURN(json users, ReadJson(path.string()));
  if (!users.is_array()) return Bad(path.string(), "users", "must be a JSON array");
  for (size_t i = 0; i < users.size(); ++i) {
    const json& u = users[i];
    const std::string where = absl::StrCat(path.string(), ": entry ", i);
    if (!u.is_object()) return Bad(where, "user", "must be an object");
    const std::string id = Field(u, "id");
    if (id.empty()) return Bad(where, "id", "is missing");
    std::string name;
    if (auto p = u.find("profile"); p != u.end() && p->is_object()) {
      name = Field(*p, "display_name");
      if (name.empty()) name = Field(*p, "real_name");
    }
    if (name.empty()) name = Field(u, "real_name");
    if (name.empty()) name = Field(u, "name");
    names[id] = name.empty() ? id : name;
  }
  return names;
}

// "1700000000.000100" -> 1700000000000 (milliseconds).
bool ParseTs(const std::string& ts, int64_t* ms) {
  const size_t dot = ts.find('.');
  int64_t sec = 0, frac = 0;
  if (!absl::SimpleAtoi(ts.substr(0, dot), &sec) || sec < 0) return false;
  if (dot != std::string::npos) {
    std::string f = ts.substr(dot + 1);
    if (f.empty() || f.size() > 9 || !absl::SimpleAtoi(f, &frac) || frac < 0) return false;
    f.resize(3, '0');
    if (!absl::SimpleAtoi(f, &frac)) return false;
  }
  *ms = sec * 1000 + (dot == std::string::npos ? 0 : frac);
  return true;
}

// Slack's markup written out for people: <@U1> -> @Ann, <#C1|general> ->
// #general, <url|label> -> label, <url> -> url, <!here> -> @here; then
// &lt; &gt; &amp;.
std::string Readable(const std::string& text, const std::map<std::string, std::string>& users) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('<', i);
    const size_t close = open == std::string::npos ? open : text.find('>', open);
    if (close == std::string::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    out.append(text, i, open - i);
    const std::string inner = text.substr(open + 1, close - open - 1);
    const size_t bar = inner.find('|');
    const std::string target = inner.substr(0, bar);
    const std::string label = bar == std::string::npos ? "" : inner.substr(bar + 1);
    if (!target.empty() && target[0] == '@') {
      auto u = users.find(target.substr(1));
      out += "@" + (!label.empty() ? label : u != users.end() ? u->second : target.substr(1));
    } else if (!target.empty() && target[0] == '#') {
      out += "#" + (label.empty() ? target.substr(1) : label);
    } else if (!target.empty() && target[0] == '!') {
      out += "@" + (label.empty() ? target.substr(1) : label);
    } else {
      out += label.empty() ? target : label;
    }
    i = close + 1;
  }
  return absl::StrReplaceAll(out, {{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}});
}

bool IsMessageSubtype(const std::string& subtype) {
  return subtype.empty() || std::find(std::begin(kMessageSubtypes), std::end(kMessageSubtypes),
                                      subtype) != std::end(kMessageSubtypes);
}

// The messages of one daily file, in time order; nothing when it is
// malformed (the error names the entry).
absl::StatusOr<std::vector<storage::Message>> ReadDay(
    const fs::path& path, const std::map<std::string, std::string>& users, ExportStats* stats) {
  SM_ASSIGN_OR_RETURN(json day, ReadJson(path.string()));
  if (!day.is_array()) return Bad(path.string(), "messages", "must be a JSON array");
  std::vector<storage::Message> out;
  ExportStats local;
  for (size_t i = 0; i < day.size(); ++i) {
    const json& e = day[i];
    const std::string where = absl::StrCat(path.string(), ": entry ", i);
    if (!e.is_object()) return Bad(where, "message", "must be an object");
    if (Field(e, "type") != "message") {
      ++local.skipped["not_message"];
      continue;
    }
    const std::string ts = Field(e, "ts");
    if (ts.empty()) return Bad(where, "ts", "is missing");
    storage::Message m;
    if (!ParseTs(ts, &m.timestamp_ms)) {
      return Bad(where, "ts", absl::StrCat("'", ts, "' is not a Slack timestamp"));
    }
    const std::string subtype = Field(e, "subtype");
    if (!IsMessageSubtype(subtype)) {
      ++local.skipped[subtype];
      continue;
    }
    m.message_id = ts;
    const std::string thread = Field(e, "thread_ts");
    if (!thread.empty() && thread != ts) m.reply_to = thread;
    m.speaker_id = Field(e, "user");
    if (m.speaker_id.empty()) m.speaker_id = Field(e, "bot_id");
    if (m.speaker_id.empty()) return Bad(where, "user", "is missing (and no bot_id)");
    auto u = users.find(m.speaker_id);
    m.speaker = u != users.end() ? u->second : Field(e, "username");
    if (m.speaker.empty()) m.speaker = m.speaker_id;
    if (auto t = e.find("text"); t != e.end() && !t->is_null() && !t->is_string()) {
      return Bad(where, "text", "must be a string");
    }
    m.text = Readable(Field(e, "text"), users);
    if (auto files = e.find("files"); files != e.end()) {
      if (!files->is_array()) return Bad(where, "files", "must be an array");
      for (const json& f : *files) {
        if (!f.is_object()) return Bad(where, "files", "each must be an object");
        std::string title = Field(f, "title");
        if (title.empty()) title = Field(f, "name");
        if (title.empty()) continue;
        absl::StrAppend(&m.text, m.text.empty() ? "" : " ", "[file: ", title, "]");
        ++local.files_shared;
      }
    }
    if (m.text.empty()) {
      ++local.skipped["empty"];
      continue;
    }
    local.edited += e.contains("edited");
    local.bots += subtype == "bot_message" || (Field(e, "user").empty() && e.contains("bot_id"));
    out.push_back(std::move(m));
  }
  export_internal::Merge(local, stats);
  return out;
}

// A daily file's name: YYYY-MM-DD.json.
bool IsDayFile(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.size() == 15 && p.extension() == ".json" && name[4] == '-' && name[7] == '-';
}

}  // namespace

absl::Status ReadSlackExport(const std::string& dir, const ExportOptions& options,
                             const ExportSink& sink, ExportStats* stats,
                             const ExportProgress& progress) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, ": not a folder (unzip the Slack export first)"));
  }
  SM_ASSIGN_OR_RETURN(auto users, ReadUsers(dir));
  // Every channel folder's daily files, in name (= date) order.
  std::vector<std::pair<std::string, std::vector<fs::path>>> channels;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory()) continue;
    std::vector<fs::path> days;
    for (const auto& f : fs::directory_iterator(entry.path(), ec)) {
      if (f.is_regular_file() && IsDayFile(f.path())) days.push_back(f.path());
    }
    std::sort(days.begin(), days.end());
    if (!days.empty()) channels.emplace_back(entry.path().filename().string(), std::move(days));
  }
  if (ec) return absl::InternalError(absl::StrCat(dir, ": ", ec.message()));
  std::sort(channels.begin(), channels.end());
  uint64_t total = 0, done = 0;
  for (const auto& [name, days] : channels) {
    for (const auto& day : days) total += export_internal::FileSize(day.string());
  }
  for (const auto& [name, days] : channels) {
    SessionCutter sessions(options.session_gap_ms);
    for (const auto& day : days) {
      SM_ASSIGN_OR_RETURN(std::vector<storage::Message> msgs, ReadDay(day, users, stats));
      SM_RETURN_IF_ERROR(Deliver(name, day.string(), std::move(msgs), &sessions, sink, stats));
      ++stats->files;
      done += export_internal::FileSize(day.string());
      if (progress) progress(done, total);
    }
  }
  return absl::OkStatus();
}

}  // namespace speakermem::datasets

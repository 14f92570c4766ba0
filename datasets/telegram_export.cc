#include "datasets/telegram_export.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "datasets/chat_export_internal.h"
#include "datasets/datasets.h"

namespace speakermem::datasets {
namespace {

using export_internal::Bad;
using export_internal::Field;
using export_internal::IdField;
using nlohmann::json;

// "text": a string, or a list of strings and entities ({"type", "text"}).
absl::StatusOr<std::string> TextOf(const json& e, const std::string& where) {
  auto t = e.find("text");
  if (t == e.end() || t->is_null()) return std::string();
  if (t->is_string()) return t->get<std::string>();
  if (!t->is_array()) return Bad(where, "text", "must be a string or a list");
  std::string out;
  for (const json& part : *t) {
    if (part.is_string()) {
      out += part.get<std::string>();
    } else if (part.is_object()) {
      out += Field(part, "text");
    } else {
      return Bad(where, "text", "list items must be strings or entities");
    }
  }
  return out;
}

absl::Status ReadChat(const std::string& path, const json& chat, size_t index,
                      const ExportOptions& options, const ExportSink& sink, ExportStats* stats) {
  const std::string at = index == SIZE_MAX ? path : absl::StrCat(path, ": chat ", index);
  if (!chat.is_object()) return Bad(at, "chat", "must be an object");
  std::string channel = Field(chat, "name");
  if (channel.empty()) channel = IdField(chat, "id");
  if (channel.empty()) return Bad(at, "name", "is missing (and no id)");
  auto msgs = chat.find("messages");
  if (msgs == chat.end() || !msgs->is_array()) return Bad(at, "messages", "must be an array");
  std::vector<storage::Message> out;
  ExportStats local;
  for (size_t i = 0; i < msgs->size(); ++i) {
    const json& e = (*msgs)[i];
    const std::string where = absl::StrCat(at, ": entry ", i);
    if (!e.is_object()) return Bad(where, "message", "must be an object");
    const std::string type = Field(e, "type");
    if (type == "service") {
      const std::string action = Field(e, "action");
      ++local.skipped[action.empty() ? "service" : action];
      continue;
    }
    if (type != "message") {
      ++local.skipped["not_message"];
      continue;
    }
    storage::Message m;
    m.message_id = IdField(e, "id");
    if (m.message_id.empty()) return Bad(where, "id", "is missing");
    int64_t secs = 0;
    if (const std::string unix_s = IdField(e, "date_unixtime"); !unix_s.empty()) {
      if (!absl::SimpleAtoi(unix_s, &secs)) return Bad(where, "date_unixtime", "not a number");
      m.timestamp_ms = secs * 1000;
    } else {
      absl::StatusOr<int64_t> ts = ParseIsoTime(Field(e, "date"));
      if (!ts.ok()) return Bad(where, "date", ts.status().message());
      m.timestamp_ms = *ts;
    }
    m.speaker_id = IdField(e, "from_id");
    if (m.speaker_id.empty()) return Bad(where, "from_id", "is missing");
    m.speaker = Field(e, "from");
    if (m.speaker.empty()) m.speaker = m.speaker_id;
    m.reply_to = IdField(e, "reply_to_message_id");
    SM_ASSIGN_OR_RETURN(m.text, TextOf(e, where));
    std::string attached;
    if (e.contains("photo")) {
      attached = "[photo]";
    } else if (const std::string sticker = Field(e, "sticker_emoji"); !sticker.empty()) {
      attached = sticker;
    } else if (e.contains("file")) {
      std::string name = Field(e, "file_name");
      if (name.empty()) name = std::filesystem::path(Field(e, "file")).filename().string();
      attached = absl::StrCat("[file: ", name, "]");
    }
    if (!attached.empty()) {
      absl::StrAppend(&m.text, m.text.empty() ? "" : " ", attached);
      ++local.files_shared;
    }
    if (m.text.empty()) {
      ++local.skipped["empty"];
      continue;
    }
    local.edited += e.contains("edited");
    local.bots += e.contains("via_bot");
    out.push_back(std::move(m));
  }
  export_internal::Merge(local, stats);
  export_internal::SessionCutter sessions(options.session_gap_ms);
  return export_internal::Deliver(channel, path, std::move(out), &sessions, sink, stats);
}

}  // namespace

absl::Status ReadTelegramExport(const std::string& path, const ExportOptions& options,
                                const ExportSink& sink, ExportStats* stats,
                                const ExportProgress& progress) {
  std::string file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file = (std::filesystem::path(path) / "result.json");
  if (!std::filesystem::is_regular_file(file, ec)) {
    return absl::NotFoundError(absl::StrCat(file, ": not found"));
  }
  SM_ASSIGN_OR_RETURN(json doc, export_internal::ReadJson(file));
  if (!doc.is_object()) return Bad(file, "export", "must be a JSON object");
  if (doc.contains("messages")) {  // one chat
    SM_RETURN_IF_ERROR(ReadChat(file, doc, SIZE_MAX, options, sink, stats));
    if (progress) progress(1, 1);
    return absl::OkStatus();
  }
  auto chats = doc.find("chats");
  if (chats == doc.end() || !chats->is_object() || !chats->contains("list") ||
      !(*chats)["list"].is_array()) {
    return Bad(file, "messages", "is missing (and no chats.list)");
  }
  const json& list = (*chats)["list"];
  for (size_t i = 0; i < list.size(); ++i) {
    SM_RETURN_IF_ERROR(ReadChat(file, list[i], i, options, sink, stats));
    if (progress) progress(i + 1, list.size());
  }
  return absl::OkStatus();
}

}  // namespace speakermem::datasets

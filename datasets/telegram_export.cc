#include "datasets/telegram_export.h"

#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "datasets/chat_export_internal.h"
#include "datasets/datasets.h"
#include "datasets/json_stream.h"

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

// One message entry: a message, or nothing (skipped, counted in `local`).
absl::StatusOr<std::optional<storage::Message>> ReadMessage(const json& e, const std::string& where,
                                                            ExportStats* local) {
  if (!e.is_object()) return Bad(where, "message", "must be an object");
  const std::string type = Field(e, "type");
  if (type == "service") {
    const std::string action = Field(e, "action");
    ++local->skipped[action.empty() ? "service" : action];
    return std::nullopt;
  }
  if (type != "message") {
    ++local->skipped["not_message"];
    return std::nullopt;
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
    ++local->files_shared;
  }
  if (m.text.empty()) {
    ++local->skipped["empty"];
    return std::nullopt;
  }
  local->edited += e.contains("edited");
  local->bots += e.contains("via_bot");
  return m;
}

// The chats of an export, streamed: a one-chat export (its messages at the
// top) or a full one (chats.list), each chat's messages in batches.
class ChatReader {
 public:
  ChatReader(std::string file, const ExportOptions& options, const ExportSink& sink,
             ExportStats* stats, const ExportProgress& progress)
      : file_(std::move(file)),
        options_(options),
        sink_(sink),
        stats_(stats),
        progress_(progress) {}

  absl::Status Run() {
    SM_RETURN_IF_ERROR(export_internal::StreamArrays(
        file_, {{"messages"}, {"chats", "list", "*", "messages"}},
        [this](const json& chat, json e, size_t i) { return Element(chat, e, i); },
        [this](const json&) { return EndChat(); }, &found_));
    if (found_.arrays == 0) return Bad(file_, "messages", "is missing (and no chats.list)");
    if (progress_) progress_(size_, size_);
    return absl::OkStatus();
  }

 private:
  std::string At() const {
    return found_.path == 0 ? file_ : absl::StrCat(file_, ": chat ", chats_);
  }

  absl::Status Element(const json& chat, const json& e, size_t i) {
    if (channel_.empty()) {
      channel_ = Field(chat, "name");
      if (channel_.empty()) channel_ = IdField(chat, "id");
      if (channel_.empty()) return Bad(At(), "name", "is missing (and no id)");
    }
    SM_ASSIGN_OR_RETURN(std::optional<storage::Message> m,
                        ReadMessage(e, absl::StrCat(At(), ": entry ", i), &local_));
    return m ? batch_.Add(std::move(*m)) : absl::OkStatus();
  }

  absl::Status Deliver(std::vector<storage::Message> batch) {
    if (progress_) progress_(found_.read(), size_);
    return export_internal::Deliver(channel_, file_, std::move(batch), &*sessions_, sink_, stats_);
  }

  absl::Status EndChat() {
    SM_RETURN_IF_ERROR(batch_.Flush());
    export_internal::Merge(local_, stats_);
    ++stats_->files;
    ++chats_;
    local_ = ExportStats();
    channel_.clear();
    sessions_.emplace(options_.session_gap_ms);
    return absl::OkStatus();
  }

  const std::string file_;
  const ExportOptions& options_;
  const ExportSink& sink_;
  ExportStats* const stats_;
  const ExportProgress& progress_;
  export_internal::StreamedArrays found_;
  const uint64_t size_ = export_internal::FileSize(file_);
  size_t chats_ = 0;
  std::string channel_;
  export_internal::Batcher batch_{
      [this](std::vector<storage::Message> b) { return Deliver(std::move(b)); }};
  ExportStats local_;
  std::optional<export_internal::SessionCutter> sessions_{std::in_place, options_.session_gap_ms};
};

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
  return ChatReader(file, options, sink, stats, progress).Run();
}

}  // namespace speakermem::datasets

#include "datasets/discord_export.h"

#include <optional>
#include <utility>

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

// One message entry: a message, or nothing (skipped, counted in `local`).
absl::StatusOr<std::optional<storage::Message>> ReadMessage(const json& e, const std::string& where,
                                                            ExportStats* local) {
  if (!e.is_object()) return Bad(where, "message", "must be an object");
  const std::string type = Field(e, "type");
  if (type != "Default" && type != "Reply") {
    ++local->skipped[type.empty() ? "not_message" : type];
    return std::nullopt;
  }
  storage::Message m;
  m.message_id = IdField(e, "id");
  if (m.message_id.empty()) return Bad(where, "id", "is missing");
  absl::StatusOr<int64_t> ts = ParseIsoTime(Field(e, "timestamp"));
  if (!ts.ok()) return Bad(where, "timestamp", ts.status().message());
  m.timestamp_ms = *ts;
  auto author = e.find("author");
  if (author == e.end() || !author->is_object()) return Bad(where, "author", "is missing");
  m.speaker_id = IdField(*author, "id");
  if (m.speaker_id.empty()) return Bad(where, "author.id", "is missing");
  m.speaker = Field(*author, "nickname");
  if (m.speaker.empty()) m.speaker = Field(*author, "name");
  if (m.speaker.empty()) m.speaker = m.speaker_id;
  if (auto ref = e.find("reference"); ref != e.end() && ref->is_object()) {
    m.reply_to = IdField(*ref, "messageId");
  }
  if (auto c = e.find("content"); c != e.end() && !c->is_null() && !c->is_string()) {
    return Bad(where, "content", "must be a string");
  }
  m.text = Field(e, "content");
  if (auto files = e.find("attachments"); files != e.end() && files->is_array()) {
    for (const json& f : *files) {
      const std::string name = f.is_object() ? Field(f, "fileName") : "";
      if (name.empty()) continue;
      absl::StrAppend(&m.text, m.text.empty() ? "" : " ", "[file: ", name, "]");
      ++local->files_shared;
    }
  }
  if (m.text.empty()) {
    ++local->skipped["empty"];
    return std::nullopt;
  }
  if (auto ed = e.find("timestampEdited"); ed != e.end() && ed->is_string()) ++local->edited;
  if (auto bot = author->find("isBot"); bot != author->end() && bot->is_boolean() && *bot) {
    ++local->bots;
  }
  return m;
}

// One channel file, streamed: the channel (which DiscordChatExporter writes
// before the messages), then its messages in batches.
absl::Status ReadChannel(const std::string& path, const export_internal::BatchFn& deliver,
                         ExportStats* stats) {
  std::string channel;
  ExportStats local;
  export_internal::StreamedArrays found;
  export_internal::Batcher batch([&](std::vector<storage::Message> b) {
    return deliver(channel, std::move(b), found.read());
  });
  SM_RETURN_IF_ERROR(export_internal::StreamArrays(
      path, {{"messages"}},
      [&](const json& doc, json e, size_t i) -> absl::Status {
        if (channel.empty()) {
          auto ch = doc.find("channel");
          if (ch == doc.end() || !ch->is_object()) {
            return Bad(path, "channel", "is missing (it must come before the messages)");
          }
          channel = Field(*ch, "name");
          if (channel.empty()) channel = IdField(*ch, "id");
          if (channel.empty()) return Bad(path, "channel.name", "is missing");
        }
        SM_ASSIGN_OR_RETURN(std::optional<storage::Message> m,
                            ReadMessage(e, absl::StrCat(path, ": entry ", i), &local));
        return m ? batch.Add(std::move(*m)) : absl::OkStatus();
      },
      nullptr, &found));
  if (found.arrays == 0) return Bad(path, "messages", "must be an array");
  SM_RETURN_IF_ERROR(batch.Flush());
  export_internal::Merge(local, stats);
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadDiscordExport(const std::string& path, const ExportOptions& options,
                               const ExportSink& sink, ExportStats* stats,
                               const ExportProgress& progress) {
  return export_internal::ReadFilePerChannel(path, options, ReadChannel, sink, stats, progress);
}

}  // namespace speakermem::datasets

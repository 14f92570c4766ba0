#include "datasets/matrix_export.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "datasets/chat_export_internal.h"
#include "datasets/json_stream.h"

namespace speakermem::datasets {
namespace {

using export_internal::Bad;
using export_internal::Field;
using nlohmann::json;

// A reply's body quotes its parent first ("> <@ben:x> text" lines, then a
// blank line): the reply's own words are what follows.
std::string WithoutReplyFallback(const std::string& body) {
  if (body.rfind("> ", 0) != 0) return body;
  const size_t blank = body.find("\n\n");
  return blank == std::string::npos ? body : body.substr(blank + 2);
}

// A message event's text: a file, image, audio or video as its caption,
// otherwise its body without the reply fallback.
std::string TextOf(const json& content, ExportStats* local) {
  const std::string msgtype = Field(content, "msgtype");
  const std::string body = Field(content, "body");
  if (msgtype == "m.file" || msgtype == "m.image" || msgtype == "m.audio" || msgtype == "m.video") {
    ++local->files_shared;
    return absl::StrCat("[file: ", body, "]");
  }
  return WithoutReplyFallback(body);
}

const json* Object(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? &*it : nullptr;
}

// Pass 1 over a room file: the room's name (room_name, else the first
// event's room_id) and the latest edit of each edited event, so that pass 2
// can stream the messages with their last version.
absl::Status ReadEdits(const std::string& path, std::string* channel,
                       std::map<std::string, std::string>* edited_text) {
  export_internal::StreamedArrays found;
  SM_RETURN_IF_ERROR(export_internal::StreamArrays(
      path, {{"messages"}},
      [&](const json& doc, json e, size_t) -> absl::Status {
        if (channel->empty()) *channel = Field(doc, "room_name");
        if (!e.is_object()) return absl::OkStatus();  // pass 2 names it
        if (channel->empty()) *channel = Field(e, "room_id");
        const json* content = Object(e, "content");
        const json* rel = content != nullptr ? Object(*content, "m.relates_to") : nullptr;
        if (Field(e, "type") != "m.room.message" || rel == nullptr ||
            Field(*rel, "rel_type") != "m.replace") {
          return absl::OkStatus();
        }
        const json* fresh = Object(*content, "m.new_content");
        const std::string target = Field(*rel, "event_id");
        if (fresh != nullptr && !target.empty()) (*edited_text)[target] = Field(*fresh, "body");
        return absl::OkStatus();
      },
      nullptr, &found));
  if (found.arrays == 0) return Bad(path, "messages", "must be an array");
  if (channel->empty()) return Bad(path, "room_name", "is missing (and no room_id)");
  return absl::OkStatus();
}

// One room file, streamed twice (ReadEdits, then the messages in batches).
absl::Status ReadRoom(const std::string& path, const export_internal::BatchFn& deliver,
                      ExportStats* stats) {
  std::string channel;
  std::map<std::string, std::string> edited_text;  // event_id -> its latest edit
  SM_RETURN_IF_ERROR(ReadEdits(path, &channel, &edited_text));
  std::map<std::string, std::string> names;  // sender -> display name
  ExportStats local;
  export_internal::StreamedArrays found;
  export_internal::Batcher batch([&](std::vector<storage::Message> b) {
    return deliver(channel, std::move(b), found.read());
  });
  SM_RETURN_IF_ERROR(export_internal::StreamArrays(
      path, {{"messages"}},
      [&](const json&, json e, size_t i) -> absl::Status {
        const std::string where = absl::StrCat(path, ": entry ", i);
        if (!e.is_object()) return Bad(where, "event", "must be an object");
        const std::string type = Field(e, "type");
        const std::string sender = Field(e, "sender");
        const json* content = Object(e, "content");
        if (type == "m.room.member" && content != nullptr) {
          const std::string name = Field(*content, "displayname");
          if (!name.empty() && !sender.empty()) names[sender] = name;
        }
        if (type != "m.room.message") {
          ++local.skipped[type.empty() ? "not_message" : type];
          return absl::OkStatus();
        }
        if (const json* u = Object(e, "unsigned");
            u != nullptr && u->contains("redacted_because")) {
          ++local.skipped["deleted"];
          return absl::OkStatus();
        }
        if (content == nullptr || content->empty()) {  // redacted without the mark
          ++local.skipped["deleted"];
          return absl::OkStatus();
        }
        const json* rel = Object(*content, "m.relates_to");
        if (rel != nullptr && Field(*rel, "rel_type") == "m.replace") {
          ++local.skipped["edit"];  // applied to the event it edits
          return absl::OkStatus();
        }
        storage::Message m;
        m.message_id = Field(e, "event_id");
        if (m.message_id.empty()) return Bad(where, "event_id", "is missing");
        auto ts = e.find("origin_server_ts");
        if (ts == e.end() || !ts->is_number_integer()) {
          return Bad(where, "origin_server_ts", "must be milliseconds");
        }
        m.timestamp_ms = ts->get<int64_t>();
        if (sender.empty()) return Bad(where, "sender", "is missing");
        m.speaker_id = sender;
        auto name = names.find(sender);
        m.speaker = name != names.end() ? name->second : sender;
        if (rel != nullptr) {
          if (const json* reply = Object(*rel, "m.in_reply_to")) {
            m.reply_to = Field(*reply, "event_id");
          }
        }
        m.text = TextOf(*content, &local);
        if (m.text.empty()) {
          ++local.skipped["empty"];
          return absl::OkStatus();
        }
        if (auto ed = edited_text.find(m.message_id);
            ed != edited_text.end() && !ed->second.empty()) {
          m.text = ed->second;
          ++local.edited;
        }
        return batch.Add(std::move(m));
      },
      nullptr, &found));
  SM_RETURN_IF_ERROR(batch.Flush());
  export_internal::Merge(local, stats);
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadMatrixExport(const std::string& path, const ExportOptions& options,
                              const ExportSink& sink, ExportStats* stats,
                              const ExportProgress& progress) {
  return export_internal::ReadFilePerChannel(path, options, ReadRoom, sink, stats, progress);
}

}  // namespace speakermem::datasets

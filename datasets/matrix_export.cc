#include "datasets/matrix_export.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "datasets/chat_export_internal.h"

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

absl::Status ReadRoom(const std::string& path, const json& doc, std::string* channel,
                      std::vector<storage::Message>* out, ExportStats* stats) {
  if (!doc.is_object()) return Bad(path, "export", "must be a JSON object");
  auto events = doc.find("messages");
  if (events == doc.end() || !events->is_array()) return Bad(path, "messages", "must be an array");
  *channel = Field(doc, "room_name");
  std::map<std::string, std::string> names;        // sender -> display name
  std::map<std::string, size_t> by_event;          // event_id -> index in *out
  std::map<std::string, std::string> edited_text;  // event_id -> its latest edit
  ExportStats local;
  for (size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    const std::string where = absl::StrCat(path, ": entry ", i);
    if (!e.is_object()) return Bad(where, "event", "must be an object");
    if (channel->empty()) *channel = Field(e, "room_id");
    const std::string type = Field(e, "type");
    const std::string sender = Field(e, "sender");
    const json* content = Object(e, "content");
    if (type == "m.room.member" && content != nullptr) {
      const std::string name = Field(*content, "displayname");
      if (!name.empty() && !sender.empty()) names[sender] = name;
    }
    if (type != "m.room.message") {
      ++local.skipped[type.empty() ? "not_message" : type];
      continue;
    }
    if (const json* u = Object(e, "unsigned"); u != nullptr && u->contains("redacted_because")) {
      ++local.skipped["deleted"];
      continue;
    }
    if (content == nullptr || content->empty()) {  // redacted without the mark
      ++local.skipped["deleted"];
      continue;
    }
    const json* rel = Object(*content, "m.relates_to");
    if (rel != nullptr && Field(*rel, "rel_type") == "m.replace") {
      const json* fresh = Object(*content, "m.new_content");
      const std::string target = Field(*rel, "event_id");
      if (fresh != nullptr && !target.empty()) edited_text[target] = Field(*fresh, "body");
      ++local.skipped["edit"];  // applied to the event it edits
      continue;
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
      if (const json* reply = Object(*rel, "m.in_reply_to")) m.reply_to = Field(*reply, "event_id");
    }
    m.text = TextOf(*content, &local);
    if (m.text.empty()) {
      ++local.skipped["empty"];
      continue;
    }
    by_event[m.message_id] = out->size();
    out->push_back(std::move(m));
  }
  for (const auto& [id, text] : edited_text) {
    auto it = by_event.find(id);
    if (it == by_event.end() || text.empty()) continue;
    (*out)[it->second].text = text;
    ++local.edited;
  }
  if (channel->empty()) return Bad(path, "room_name", "is missing (and no room_id)");
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

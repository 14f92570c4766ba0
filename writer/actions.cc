#include "absl/strings/ascii.h"
#include "llm/json_extract.h"
#include "nlohmann/json.hpp"
#include "storage/layers.h"
#include "writer/writer_model.h"

namespace speakermem::writer {

using json = nlohmann::json;

std::string NormalizeLayer(const std::string& name) {
  const storage::LayerInfo* l = storage::FindLayer(name);
  return l == nullptr ? "" : l->code;
}

std::string PaperLayerName(const std::string& layer) {
  const storage::LayerInfo* l = storage::FindLayer(layer);
  return l == nullptr ? layer : l->paper;
}

namespace {

// The actions of one JSON value, as ParseWriterActions reads them.
std::vector<WriterAction> ActionsOf(const json& list) {
  std::vector<WriterAction> out;
  for (const json& a : list) {
    WriterAction w;
    if (!a.is_object()) {
      out.push_back(w);  // kUnknown: counted by validation
      continue;
    }
    auto str = [&](const char* k) {
      if (!a.contains(k)) return std::string();
      if (a[k].is_string()) return a[k].get<std::string>();
      return a[k].is_number() ? a[k].dump() : std::string();  // "entry_id": 12
    };
    w.type_name = str("action");
    if (w.type_name.empty()) w.type_name = str("type");
    std::string t = absl::AsciiStrToUpper(w.type_name);
    w.type = t == "ADD"      ? WriterAction::Type::kAdd
             : t == "UPDATE" ? WriterAction::Type::kUpdate
             : t == "NOOP"   ? WriterAction::Type::kNoop
                             : WriterAction::Type::kUnknown;
    w.owner = str("owner");
    w.source = str("source");
    std::string layer = str("layer");
    w.layer = NormalizeLayer(layer).empty() ? layer : NormalizeLayer(layer);
    w.utype = str("utype");
    w.content = str("content");
    w.entry_id = str("entry_id");
    if (w.entry_id.empty()) w.entry_id = str("id");
    if (a.contains("from_ids") && a["from_ids"].is_array()) {
      for (const json& id : a["from_ids"]) {
        if (id.is_string()) w.from_ids.push_back(id.get<std::string>());
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<WriterAction>> ParseWriterActions(const std::string& text) {
  // The value that is an action list: an object with "actions" first (prose
  // may cite "[0]" before it), then a bare list.
  std::vector<json> values;
  for (const std::string& c : llm::JsonCandidates(text)) values.push_back(json::parse(c));
  for (const json& doc : values) {
    if (doc.is_object() && doc.contains("actions") && doc["actions"].is_array()) {
      return ActionsOf(doc["actions"]);
    }
  }
  for (const json& doc : values) {
    if (doc.is_array()) return ActionsOf(doc);
  }
  if (values.empty()) return llm::ExtractJson(text).status();
  return absl::InvalidArgumentError("writer output has no \"actions\" list");
}

std::vector<WriterAction> SalvageWriterActions(const std::string& text) {
  // Complete objects after the list opens; the object cut off is not one.
  size_t key = text.find("\"actions\"");
  size_t open = text.find('[', key == std::string::npos ? 0 : key);
  if (open == std::string::npos) return {};
  json list = json::array();
  for (const std::string& c : llm::JsonCandidates(text.substr(open + 1))) {
    json v = json::parse(c);
    if (v.is_object()) list.push_back(std::move(v));
  }
  return ActionsOf(list);
}

std::string SerializeWriterActions(const std::vector<WriterAction>& actions) {
  json list = json::array();
  for (const auto& a : actions) {
    json j;
    switch (a.type) {
      case WriterAction::Type::kAdd:
        j = {{"action", "ADD"},    {"owner", a.owner},
             {"source", a.source}, {"layer", PaperLayerName(a.layer)},
             {"utype", a.utype},   {"content", a.content}};
        break;
      case WriterAction::Type::kUpdate:
        j = {{"action", "UPDATE"}, {"entry_id", a.entry_id}, {"content", a.content}};
        break;
      case WriterAction::Type::kNoop:
        j = {{"action", "NOOP"}};
        break;
      default:
        j = {{"action", a.type_name}};
    }
    if (!a.from_ids.empty() && a.type != WriterAction::Type::kNoop) j["from_ids"] = a.from_ids;
    list.push_back(std::move(j));
  }
  return json{{"actions", list}}.dump();
}

}  // namespace speakermem::writer

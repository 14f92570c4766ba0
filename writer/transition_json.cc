#include "writer/transition_json.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace speakermem::writer {
namespace {

std::string IsoTime(int64_t ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

nlohmann::json EntryJson(const std::string& id, const std::string& owner, const std::string& source,
                         const std::string& layer, const std::string& utype,
                         const std::string& content, int64_t valid_at_ms,
                         const std::vector<std::string>& from_ids,
                         const std::string& superseded_by) {
  return {{"entry_id", id},
          {"owner", owner},
          {"source", source},
          {"layer", PaperLayerName(layer)},
          {"utype", utype},
          {"content", content},
          {"ts", IsoTime(valid_at_ms)},
          {"from_ids", from_ids},
          {"links", nlohmann::json::array()},
          {"superseded_by", superseded_by}};
}

nlohmann::json ActionJson(const WriterAction& a) {
  switch (a.type) {
    case WriterAction::Type::kNoop:
      return {{"action", "NOOP"}};
    case WriterAction::Type::kUpdate:
      return {{"action", "UPDATE"}, {"entry_id", a.entry_id}, {"content", a.content}};
    case WriterAction::Type::kAdd:
      return {{"action", "ADD"},    {"owner", a.owner},
              {"source", a.source}, {"layer", PaperLayerName(a.layer)},
              {"utype", a.utype},   {"content", a.content}};
    default:
      return {{"action", a.type_name}, {"content", a.content}};
  }
}

}  // namespace

std::string TransitionJson(const Segment& seg, const DeriveTrace& trace,
                           const ValidationReport& report, const storage::SegmentApply& apply,
                           int64_t captured_ms) {
  nlohmann::json msgs = nlohmann::json::array();
  for (const auto& m : seg.messages) {
    msgs.push_back({{"speaker", m.speaker},
                    {"content", m.text},
                    {"session", m.session},
                    {"ts", IsoTime(m.timestamp_ms)},
                    {"msg_id", m.message_id},
                    {"meta", nlohmann::json::object()}});
  }
  nlohmann::json roster = nlohmann::json::array();
  for (const auto& r : trace.roster) roster.push_back(r.speaker_id);
  // The pre-state as the Writer saw it (the bounded heads), and as text.
  nlohmann::json pre_entries = nlohmann::json::array(), pre_heads = nlohmann::json::array();
  std::map<std::string, std::vector<const WriterHead*>> by_owner;
  for (const auto& h : trace.heads) {
    pre_entries.push_back(EntryJson(h.record_id, h.owner, h.source, h.layer, h.utype, h.content,
                                    h.valid_at_ms, {}, ""));
    pre_heads.push_back(h.record_id);
    by_owner[h.owner].push_back(&h);
  }
  std::string pre_text = trace.heads.empty() ? "(no derived memory yet)" : "";
  for (const auto& [owner, heads] : by_owner) {
    absl::StrAppend(&pre_text, "  [", owner, "]\n");
    for (const WriterHead* h : heads) {
      absl::StrAppend(&pre_text, "    ", h->record_id, " [", h->layer, "|", h->source, "@",
                      IsoTime(h->valid_at_ms).substr(0, 10), "] ", h->content, "\n");
    }
  }
  // The post-state: the pre-state with this segment's changes.
  std::map<std::string, std::string> superseded(apply.superseded.begin(), apply.superseded.end());
  nlohmann::json post_entries = nlohmann::json::array(), post_heads = nlohmann::json::array(),
                 edges = nlohmann::json::array();
  for (const auto& h : trace.heads) {
    auto it = superseded.find(h.record_id);
    const std::string by = it == superseded.end() ? "" : it->second;
    post_entries.push_back(EntryJson(h.record_id, h.owner, h.source, h.layer, h.utype, h.content,
                                     h.valid_at_ms, {}, by));
    if (by.empty()) post_heads.push_back(h.record_id);
  }
  nlohmann::json created = nlohmann::json::array(), updated_from = nlohmann::json::array();
  for (const auto& r : apply.new_records) {
    post_entries.push_back(EntryJson(r.record_id, r.owner, r.source, r.layer, r.utype, r.content,
                                     r.valid_at_ms, r.from_ids, ""));
    post_heads.push_back(r.record_id);
    created.push_back(r.record_id);
  }
  for (const auto& [old_id, new_id] : apply.superseded) {
    updated_from.push_back(old_id);
    edges.push_back({{"old", old_id}, {"new", new_id}});
  }
  nlohmann::json actions = nlohmann::json::array(), errors = nlohmann::json::array();
  for (const auto& a : trace.actions) actions.push_back(ActionJson(a));
  for (const auto& r : report.rejected) {
    errors.push_back({{"index", r.index}, {"reason", r.reason}});
  }
  size_t schema_errors = 0;
  for (const auto& r : report.rejected) {
    schema_errors += r.reason != "duplicate_in_batch" && r.reason != "duplicate_of_state" &&
                     r.reason != "unchanged_update" && r.reason != "over_budget";
  }
  const size_t attempted = trace.actions.size();
  nlohmann::json t = {{"session_id", seg.messages.front().session},
                      {"ts", IsoTime(seg.messages.front().timestamp_ms)},
                      {"messages", msgs},
                      {"pre_state_text", pre_text},
                      {"actions", actions},
                      {"target_text", trace.raw_text},
                      {"report",
                       {{"json_valid", trace.json_valid},
                        {"attempted", attempted},
                        {"applied", report.accepted.size()},
                        {"noop", report.noops},
                        {"errors", errors},
                        {"created_ids", created},
                        {"updated_from", updated_from},
                        {"schema_valid_actions", attempted - std::min(attempted, schema_errors)},
                        {"valid", trace.json_valid && report.rejected.empty()}}},
                      {"pre_state",
                       {{"entries", pre_entries},
                        {"heads", pre_heads},
                        {"update_edges", nlohmann::json::array()},
                        {"roster", roster}}},
                      {"post_state",
                       {{"entries", post_entries},
                        {"heads", post_heads},
                        {"update_edges", edges},
                        {"roster", roster}}},
                      {"segment_first_seq", seg.first_seq()},
                      {"segment_last_seq", seg.last_seq()},
                      {"metadata", {{"captured_ms", captured_ms}}}};
  return t.dump();
}

}  // namespace speakermem::writer

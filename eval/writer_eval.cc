#include "eval/writer_eval.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "datasets/datasets.h"
#include "nlohmann/json.hpp"
#include "storage/store.h"
#include "writer/validate.h"
#include "writer/writer_service.h"

namespace speakermem::eval {
namespace {

using json = nlohmann::json;

std::string Str(const json& j, const char* k) {
  return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
}

// Counts calls through to the wrapped model.
class CountingWriter final : public writer::WriterModel {
 public:
  CountingWriter(std::unique_ptr<writer::WriterModel> inner, size_t* calls)
      : inner_(std::move(inner)), calls_(calls) {}
  absl::StatusOr<writer::WriterOutput> Write(const writer::WriterInput& in,
                                             llm::StageCall* call) override {
    ++*calls_;
    return inner_->Write(in, call);
  }

 private:
  std::unique_ptr<writer::WriterModel> inner_;
  size_t* calls_;
};

}  // namespace

absl::StatusOr<Trajectory> LoadTrajectory(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  json doc = json::parse(ss.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("transitions") ||
      !doc["transitions"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a Writer trajectory"));
  }
  Trajectory t;
  t.network_id = Str(doc, "network_id");
  if (doc.contains("window_size") && doc["window_size"].is_number_integer()) {
    t.window = doc["window_size"].get<size_t>();
  }
  const json& transitions = doc["transitions"];
  for (size_t ti = 0; ti < transitions.size(); ++ti) {
    const json& tr = transitions[ti];
    for (const json& m : tr["messages"]) {
      storage::Message msg;
      msg.message_id = absl::StrCat(ti, ":", Str(m, "msg_id"));
      msg.speaker = Str(m, "speaker");
      msg.text = Str(m, "content");
      msg.session = Str(m, "session");
      absl::StatusOr<int64_t> ts = datasets::ParseIsoTime(Str(m, "ts"));
      msg.timestamp_ms = ts.ok() ? *ts : 1;
      t.messages.push_back(std::move(msg));
    }
    ReferenceTransition rt;
    for (const json& m : tr["messages"])
      rt.message_ids.push_back(absl::StrCat(ti, ":", Str(m, "msg_id")));
    rt.target_text = Str(tr, "target_text");
    if (rt.target_text.empty() && tr.contains("actions")) {
      rt.target_text = json{{"actions", tr["actions"]}}.dump();
    }
    if (tr.contains("report") && tr["report"].contains("created_ids")) {
      for (const json& id : tr["report"]["created_ids"]) {
        if (id.is_string()) rt.created_ids.push_back(id.get<std::string>());
      }
    }
    // The contents of the records this transition created, by their id
    // (to map later UPDATEs onto our ids).
    if (tr.contains("post_state") && tr["post_state"].contains("entries")) {
      for (const json& e : tr["post_state"]["entries"]) {
        for (const auto& id : rt.created_ids) {
          if (Str(e, "entry_id") == id) t.created_content[id] = Str(e, "content");
        }
      }
    }
    t.transitions.push_back(std::move(rt));
    for (const json& a : tr["actions"]) t.reference_updates += Str(a, "action") == "UPDATE";
  }
  if (!transitions.empty()) {
    const json& post = transitions.back()["post_state"];
    if (post.contains("entries")) {
      for (const json& e : post["entries"]) {
        if (!Str(e, "superseded_by").empty()) continue;
        t.reference.push_back(
            StateEntry{Str(e, "owner"), Str(e, "source"), Str(e, "layer"), Str(e, "content")});
      }
    }
  }
  return t;
}

namespace {

// The active entries and UPDATE edges of a channel's derived records.
absl::StatusOr<DerivedState> ReadState(storage::Store* store, const storage::ChannelRef& ch) {
  storage::RecordQuery q;
  q.include_superseded = true;
  q.limit = UINT32_MAX;
  SM_ASSIGN_OR_RETURN(std::vector<storage::Record> records, store->ListRecords(ch, q));
  std::map<std::string, const storage::Record*> by_id;
  for (const auto& r : records) by_id[r.record_id] = &r;
  DerivedState st;
  for (const auto& r : records) {
    if (r.active()) st.entries.push_back(StateEntry{r.owner, r.source, r.layer, r.content});
    for (const auto& old_id : r.supersedes) {
      auto it = by_id.find(old_id);
      if (it == by_id.end()) continue;
      st.edges.push_back(ChainEdge{r.owner, r.layer, it->second->content, r.content});
    }
  }
  return st;
}

size_t CountOnlyIn(const std::vector<StateEntry>& a, const std::vector<StateEntry>& b) {
  std::multiset<std::tuple<std::string, std::string, std::string, std::string>> rest;
  for (const auto& e : b) {
    rest.insert(
        {e.owner, e.source, writer::NormalizeLayer(e.layer), writer::NormalizeContent(e.content)});
  }
  size_t only = 0;
  for (const auto& e : a) {
    auto it = rest.find(
        {e.owner, e.source, writer::NormalizeLayer(e.layer), writer::NormalizeContent(e.content)});
    if (it == rest.end()) {
      ++only;
    } else {
      rest.erase(it);
    }
  }
  return only;
}

}  // namespace

absl::StatusOr<DerivedState> ReplayReference(const Trajectory& t, const std::string& work_dir) {
  std::filesystem::remove_all(work_dir);
  DerivedState out;
  {
    storage::StoreOptions so;
    so.path = work_dir;
    SM_ASSIGN_OR_RETURN(std::unique_ptr<storage::Store> store, storage::Store::Open(so));
    storage::ChannelRef ch{storage::kDefaultTenant, t.network_id.empty() ? "eval" : t.network_id};
    std::vector<storage::Message> msgs = t.messages;
    if (msgs.empty()) return out;
    SM_RETURN_IF_ERROR(store->AppendMessages(ch, &msgs).status());
    std::map<std::string, std::string> ours;  // reference entry id -> our record id
    for (const ReferenceTransition& tr : t.transitions) {
      std::vector<uint64_t> seqs;
      for (const auto& id : tr.message_ids) {
        SM_ASSIGN_OR_RETURN(uint64_t seq, store->FindMessageId(ch, id));
        seqs.push_back(seq);
      }
      SM_ASSIGN_OR_RETURN(std::vector<storage::Message> segment, store->GetMessagesBySeq(ch, seqs));
      if (segment.empty()) continue;
      SM_ASSIGN_OR_RETURN(storage::WriterState state, store->GetWriterState(ch));
      writer::ValidationContext ctx;
      SM_ASSIGN_OR_RETURN(std::vector<storage::RosterEntry> roster, store->GetRoster(ch));
      for (const auto& e : roster)
        ctx.roster.push_back(writer::WriterRosterMember{e.speaker_id, e.aliases});
      storage::RecordQuery heads;
      heads.limit = UINT32_MAX;
      SM_ASSIGN_OR_RETURN(std::vector<storage::Record> active, store->ListRecords(ch, heads));
      for (auto& r : active) ctx.records[r.record_id] = std::move(r);
      ctx.lookup = [&store, ch](const std::string& id) -> std::optional<storage::Record> {
        absl::StatusOr<storage::Record> r = store->GetRecord(ch, id);
        if (!r.ok()) return std::nullopt;
        return *r;
      };
      ctx.max_actions = std::max<size_t>(8, 2 * segment.size());
      absl::StatusOr<std::vector<writer::WriterAction>> actions =
          writer::ParseWriterActions(tr.target_text);
      writer::ValidationReport report;
      if (actions.ok()) {
        for (auto& a : *actions) {
          auto it = ours.find(a.entry_id);
          if (a.type == writer::WriterAction::Type::kUpdate && it != ours.end())
            a.entry_id = it->second;
        }
        report = writer::ValidateActions(*actions, ctx);
      } else {
        report.rejected.push_back(writer::Rejection{0, "invalid_json"});
      }
      out.applied += report.accepted.size();
      out.rejected += report.rejected.size();
      for (const auto& r : report.rejected) ++out.rejections[r.reason];
      storage::SegmentApply apply =
          writer::BuildApply(report, ctx, segment, state, segment.back().timestamp_ms);
      SM_RETURN_IF_ERROR(store->ApplySegment(ch, apply));
      // Map the reference's new ids onto ours by content.
      std::vector<bool> used(apply.new_records.size(), false);
      for (const auto& theirs : tr.created_ids) {
        auto c = t.created_content.find(theirs);
        if (c == t.created_content.end()) continue;
        const std::string want = writer::NormalizeContent(c->second);
        for (size_t i = 0; i < apply.new_records.size(); ++i) {
          if (!used[i] && writer::NormalizeContent(apply.new_records[i].content) == want) {
            used[i] = true;
            ours[theirs] = apply.new_records[i].record_id;
            break;
          }
        }
      }
    }
    SM_ASSIGN_OR_RETURN(DerivedState st, ReadState(store.get(), ch));
    out.entries = std::move(st.entries);
    out.edges = std::move(st.edges);
  }
  std::filesystem::remove_all(work_dir);
  return out;
}

std::vector<StateEntry> OnePerMessageBaseline(const Trajectory& t) {
  std::vector<StateEntry> out;
  for (const auto& m : t.messages) out.push_back(StateEntry{m.speaker, m.speaker, "core", m.text});
  return out;
}

absl::StatusOr<WriterEvalResult> EvaluateWriter(const Trajectory& t,
                                                std::unique_ptr<writer::WriterModel> model,
                                                const std::string& work_dir) {
  std::filesystem::remove_all(work_dir);
  WriterEvalResult res;
  {
    storage::StoreOptions so;
    so.path = work_dir;
    SM_ASSIGN_OR_RETURN(std::unique_ptr<storage::Store> store, storage::Store::Open(so));
    storage::ChannelRef ch{storage::kDefaultTenant, t.network_id.empty() ? "eval" : t.network_id};
    std::vector<storage::Message> msgs = t.messages;
    if (msgs.empty()) return res;
    SM_RETURN_IF_ERROR(store->AppendMessages(ch, &msgs).status());
    writer::WriterOptions wo;
    wo.window = t.window;
    wo.workers = 1;
    wo.idle_flush_ms = 0;
    auto service = writer::WriterService::Create(
        store.get(), std::make_unique<CountingWriter>(std::move(model), &res.writer_calls), wo,
        Clock::Real(), nullptr);
    SM_RETURN_IF_ERROR(service->Start());
    SM_RETURN_IF_ERROR(service->Flush(ch, true, std::chrono::minutes(10)));
    service->Stop();
    SM_ASSIGN_OR_RETURN(DerivedState pred, ReadState(store.get(), ch));
    res.predicted = pred;
    res.records = pred.entries.size();
    res.update_links = pred.edges.size();
    SM_ASSIGN_OR_RETURN(res.reference, ReplayReference(t, work_dir + ".reference"));
    res.sl = SpeakerLevenshtein(pred.entries, res.reference.entries);
    res.chain = ChainScore(pred.edges, res.reference.edges);
    res.memory_reward = MemoryReward(res.sl.score, res.chain);
    res.reference_only_replayed = CountOnlyIn(res.reference.entries, t.reference);
    res.reference_only_recorded = CountOnlyIn(t.reference, res.reference.entries);
  }
  std::filesystem::remove_all(work_dir);
  return res;
}

}  // namespace speakermem::eval

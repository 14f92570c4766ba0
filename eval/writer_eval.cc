#include "eval/writer_eval.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "datasets/datasets.h"
#include "nlohmann/json.hpp"
#include "storage/store.h"
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
    storage::RecordQuery q;
    q.include_superseded = true;
    q.limit = UINT32_MAX;
    SM_ASSIGN_OR_RETURN(std::vector<storage::Record> records, store->ListRecords(ch, q));
    std::vector<StateEntry> pred;
    for (const auto& r : records) {
      res.update_links += !r.supersedes.empty();
      if (!r.active()) continue;
      ++res.records;
      pred.push_back(StateEntry{r.owner, r.source, r.layer, r.content});
    }
    res.sl = SpeakerLevenshtein(pred, t.reference);
  }
  std::filesystem::remove_all(work_dir);
  return res;
}

}  // namespace speakermem::eval

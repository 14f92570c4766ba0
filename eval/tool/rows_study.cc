#include "eval/tool/rows_study.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "eval/recall_tuning.h"
#include "eval/tool/embedded_engine.h"
#include "nlohmann/json.hpp"

namespace speakermem::cli {
namespace {

using eval::QuestionScore;
using eval::Setting;

std::vector<eval::TunableConstant> Floors() {
  return {{"provenance_weight", {0, 0.25, 0.5, 1, 2, 4, 8, 16}},
          // At most 1, the most a similarity can be: memory that System 1
          // did not back can still enter on its similarity alone (System 2
          // is there to find what System 1 missed).
          {"record_floor", {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}},
          {"fallback_floor", {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6}}};
}

// Per dataset: F1 of the shown records' precision (their from_ids hold a
// gold message) and the gold coverage of those from_ids; mean over datasets.
eval::ObjectiveFn RowsObjective(const std::vector<datasets::Conversation>* convs) {
  return [convs](const std::vector<QuestionScore>& scores, const std::vector<bool>& use) {
    std::map<std::string, std::array<double, 3>> d;  // shown, relevant, coverage sum; n below
    std::map<std::string, size_t> n;
    for (const auto& q : scores) {
      if (!use[q.conversation]) continue;
      auto& a = d[(*convs)[q.conversation].dataset];
      a[0] += q.extra.at("shown");
      a[1] += q.extra.at("relevant");
      a[2] += q.extra.at("s2_coverage");
      ++n[(*convs)[q.conversation].dataset];
    }
    double total = 0;
    for (const auto& [name, a] : d) {
      double p = a[0] > 0 ? a[1] / a[0] : 0, c = a[2] / static_cast<double>(n[name]);
      total += p + c > 0 ? 2 * p * c / (p + c) : 0;
    }
    return d.empty() ? 0 : total / static_cast<double>(d.size());
  };
}

struct Figures {
  double records_per_q = 0, precision = 0, s2_coverage = 0, union_coverage = 0, s1_recall10 = 0;
  double empty_rows = 0, rows = 0;
  size_t questions = 0;
};

// Figures over the questions of `dataset`, or of conversation `only` alone
// when it is set.
Figures Summarise(const std::vector<QuestionScore>& scores,
                  const std::vector<datasets::Conversation>& convs, const std::string& dataset,
                  size_t only = SIZE_MAX) {
  Figures f;
  double shown = 0, relevant = 0;
  for (const auto& q : scores) {
    if (convs[q.conversation].dataset != dataset) continue;
    if (only != SIZE_MAX && q.conversation != only) continue;
    ++f.questions;
    shown += q.extra.at("shown");
    relevant += q.extra.at("relevant");
    f.s2_coverage += q.extra.at("s2_coverage");
    f.union_coverage += q.extra.at("union_coverage");
    f.s1_recall10 += q.recall[1];
    f.empty_rows += q.extra.at("empty_rows");
    f.rows += q.extra.at("rows");
  }
  if (f.questions == 0) return f;
  const double n = static_cast<double>(f.questions);
  f.records_per_q = shown / n;
  f.precision = shown > 0 ? 100 * relevant / shown : 0;
  f.s2_coverage *= 100 / n;
  f.union_coverage *= 100 / n;
  f.s1_recall10 *= 100 / n;
  return f;
}

class RowsStudy {
 public:
  RowsStudy(const std::vector<datasets::Conversation>& convs, engine::MemoryOptions memory)
      : convs_(convs), memory_(std::move(memory)) {}

  absl::Status Load() {
    size_t total = 0;
    for (const auto& c : convs_) total += c.messages.size();
    std::fprintf(stderr,
                 "ingesting %zu conversations (%zu messages), deriving with the offline "
                 "Writer\n",
                 convs_.size(), total);
    absl::StatusOr<std::unique_ptr<EmbeddedEngine>> e = EmbeddedEngine::Open(memory_);
    if (!e.ok()) return e.status();
    engine_ = std::move(*e);
    engine::Memory* m = engine_->memory();
    for (const auto& c : convs_) {
      storage::ChannelRef ch{storage::kDefaultTenant, c.channel};
      for (size_t i = 0; i < c.messages.size(); i += 500) {
        std::vector<storage::Message> batch(
            c.messages.begin() + i, c.messages.begin() + std::min(c.messages.size(), i + 500));
        auto r = m->Ingest(ch, {}, std::move(batch));
        if (!r.ok()) return r.status();
      }
      uint64_t newest = 0;
      auto f = m->Flush(ch, /*wait=*/true, std::chrono::minutes(30), &newest);
      if (!f.ok()) return f.status();
    }
    if (!m->WaitForEmbeddings(std::chrono::minutes(30))) {
      return absl::DeadlineExceededError("embeddings did not finish in 30 minutes");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<QuestionScore> Score(const datasets::Conversation& conv,
                                      const datasets::Question& q,
                                      const std::set<std::string>& gold, const Setting& s) {
    engine::QueryParams p;
    p.channel = {storage::kDefaultTenant, conv.channel};
    p.question = q.question;
    p.budgets.s1_top_k = 10;
    retrieval::RowParams rows;
    rows.provenance_weight = s.at("provenance_weight");
    rows.record_floor_offline = s.at("record_floor");
    rows.fallback_floor_offline = s.at("fallback_floor");
    p.rows = rows;
    absl::StatusOr<engine::QueryResult> r = engine_->memory()->Query(p, /*answer=*/false);
    if (!r.ok()) return r.status();
    QuestionScore qs;
    std::set<std::string> s1, s2, fallback;
    for (const auto& rm : r->pipeline.s1) s1.insert(rm.message.message_id);
    double shown = 0, relevant = 0, empty = 0;
    for (const auto& row : r->pipeline.s2) {
      empty += row.empty;
      for (const auto* list : {&row.records, &row.sourced}) {
        for (const auto& rec : *list) {
          ++shown;
          bool hit = false;
          for (const auto& id : rec.from_ids) {
            s2.insert(id);
            hit = hit || gold.count(id) > 0;
          }
          relevant += hit;
        }
      }
      if (row.fallback) fallback.insert(row.fallback->message_id);
    }
    auto covered = [&](const std::vector<const std::set<std::string>*>& sets) {
      size_t n = 0;
      for (const auto& g : gold) {
        bool in = false;
        for (const auto* set : sets) in = in || set->count(g) > 0;
        n += in;
      }
      return static_cast<double>(n) / static_cast<double>(gold.size());
    };
    qs.recall[1] = covered({&s1});
    if (dump_ != nullptr) Dump(conv, q, gold, *r, s);
    qs.extra = {{"shown", shown},
                {"relevant", relevant},
                {"s2_coverage", covered({&s2})},
                {"union_coverage", covered({&s1, &s2, &fallback})},
                {"empty_rows", empty},
                {"rows", static_cast<double>(r->pipeline.s2.size())}};
    return qs;
  }

  int Run(const std::string& md_out, const std::string& dump_out);

 private:
  // The report's sections: figures per configuration, the leave-one-out
  // choices, each conversation held out, and the floor's trade-off.
  std::string Overview(const std::vector<QuestionScore>& base, const std::vector<QuestionScore>& in,
                       const eval::LooResult& loo) const;
  std::string LooSection(const eval::LooResult& loo) const;
  std::string PerConversation(const eval::LooResult& loo) const;
  absl::StatusOr<std::string> TradeOff(eval::RecallTuner* tuner, const eval::LooResult& loo);
  // Every question's shown records at `setting`, one JSON line each.
  absl::Status DumpShown(const std::string& dump_out, const Setting& setting);
  // One JSON line per question: the projection, System 1 top-k and every
  // shown record with its score, the System 1 rank backing it and whether
  // its from_ids hold a gold message.
  void Dump(const datasets::Conversation& conv, const datasets::Question& q,
            const std::set<std::string>& gold, const engine::QueryResult& r, const Setting& s) {
    std::map<std::string, const storage::Message*> by_id;
    for (const auto& m : conv.messages) by_id[m.message_id] = &m;
    std::map<std::string, size_t> s1_rank;
    nlohmann::json j = {{"conversation", conv.channel},
                        {"dataset", conv.dataset},
                        {"question", q.question},
                        {"category", q.category},
                        {"issue", r.pipeline.projection.issue},
                        {"rows", r.pipeline.projection.rows}};
    for (const auto& g : gold) {
      auto m = by_id.find(g);
      j["gold"].push_back({{"id", g},
                           {"speaker", m == by_id.end() ? "" : m->second->speaker_id},
                           {"text", m == by_id.end() ? "" : m->second->text}});
    }
    for (size_t k = 0; k < r.pipeline.s1.size(); ++k) {
      const auto& m = r.pipeline.s1[k].message;
      s1_rank.emplace(m.message_id, k + 1);
      j["s1"].push_back({{"id", m.message_id}, {"gold", gold.count(m.message_id) > 0}});
    }
    for (const auto& row : r.pipeline.s2) {
      auto record = [&](const storage::Record& rec, double score, bool sourced) {
        size_t rank = 0;
        bool hit = false;
        for (const auto& id : rec.from_ids) {
          hit = hit || gold.count(id) > 0;
          auto it = s1_rank.find(id);
          if (it != s1_rank.end() && (rank == 0 || it->second < rank)) rank = it->second;
        }
        j["shown"].push_back({{"row", row.row},
                              {"owner", rec.owner},
                              {"source", rec.source},
                              {"layer", rec.layer},
                              {"content", rec.content},
                              {"from_ids", rec.from_ids},
                              {"gold", hit},
                              {"score", score},
                              {"s1_rank", rank},
                              {"sourced", sourced}});
      };
      for (size_t i = 0; i < row.records.size(); ++i) {
        record(row.records[i], i < row.scores.size() ? row.scores[i] : -1, false);
      }
      for (const auto& rec : row.sourced) record(rec, -1, true);
      if (row.empty) j["empty_rows"].push_back(row.row);
    }
    (void)s;
    std::fprintf(dump_, "%s\n", j.dump().c_str());
  }

  const std::vector<datasets::Conversation>& convs_;
  const engine::MemoryOptions memory_;
  std::unique_ptr<EmbeddedEngine> engine_;
  std::FILE* dump_ = nullptr;
};

std::string RowsStudy::Overview(const std::vector<QuestionScore>& base,
                                const std::vector<QuestionScore>& in,
                                const eval::LooResult& loo) const {
  std::set<std::string> datasets;
  for (const auto& c : convs_) datasets.insert(c.dataset);
  std::string md = "# System 2 rows on the development data\n\n";
  absl::StrAppend(&md,
                  "Generated by `speakermem eval rows` (offline provider, offline Writer, "
                  "every message derived). Retrieve at the paper's main configuration "
                  "(S1 top-10, S2 k 2, source-k 1). Records shown = row records + source-k "
                  "records; precision = share of them whose from_ids hold a gold evidence "
                  "message; coverage = share of a question's gold messages covered.\n\n");
  md +=
      "| data | configuration | questions | records per question | from_ids precision % | "
      "gold covered by S2 from_ids % | gold covered by S1 top-10 or S2 % | S1 recall@10 % | "
      "explicit empty rows (of rows) |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& d : datasets) {
    const std::vector<std::pair<std::string, const std::vector<QuestionScore>*>> configs = {
        {"no floors", &base},
        {"floors chosen on all conversations", &in},
        {"floors chosen without the conversation (LOO)", &loo.held_out}};
    for (const auto& [name, sc] : configs) {
      Figures f = Summarise(*sc, convs_, d);
      absl::StrAppend(
          &md, absl::StrFormat("| %s | %s | %zu | %.2f | %.1f | %.1f | %.1f | %.1f | "
                               "%.0f (of %.0f) |\n",
                               d, name, f.questions, f.records_per_q, f.precision, f.s2_coverage,
                               f.union_coverage, f.s1_recall10, f.empty_rows, f.rows));
    }
  }
  return md;
}

std::string RowsStudy::LooSection(const eval::LooResult& loo) const {
  std::string md =
      "\n## Leave-one-conversation-out\n\nObjective: per dataset, F1 of from_ids precision and "
      "S2 gold coverage; mean over datasets.\n\n| held-out conversation | questions | "
      "provenance_weight | record_floor | fallback_floor | objective in-sample | objective held "
      "out |\n"
      "|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < convs_.size(); ++i) {
    absl::StrAppend(&md, absl::StrFormat("| %s %s | %zu | %g | %g | %g | %.3f | %.3f |\n",
                                         convs_[i].dataset, convs_[i].channel, loo.questions[i],
                                         loo.fold_settings[i].at("provenance_weight"),
                                         loo.fold_settings[i].at("record_floor"),
                                         loo.fold_settings[i].at("fallback_floor"),
                                         loo.in_sample_recall10[i], loo.held_out_recall10[i]));
  }
  absl::StrAppend(
      &md, absl::StrFormat("| **all (in-sample choice)** | | **%g** | **%g** | **%g** | | |\n",
                           loo.in_sample.at("provenance_weight"), loo.in_sample.at("record_floor"),
                           loo.in_sample.at("fallback_floor")));
  return md;
}

// Each conversation on its own, scored with the constants chosen without it.
std::string RowsStudy::PerConversation(const eval::LooResult& loo) const {
  std::string md =
      "\n## Per conversation, held out\n\nEach conversation scored with the constants "
      "chosen on the others (the LOO rows above, conversation by conversation).\n\n| "
      "conversation | questions | records per question | from_ids precision % | gold covered "
      "by S2 from_ids % | gold covered by S1 top-10 or S2 % | explicit empty rows (of rows) "
      "|\n|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < convs_.size(); ++i) {
    Figures f = Summarise(loo.held_out, convs_, convs_[i].dataset, i);
    absl::StrAppend(
        &md, absl::StrFormat("| %s %s | %zu | %.2f | %.1f | %.1f | %.1f | %.0f (of "
                             "%.0f) |\n",
                             convs_[i].dataset, convs_[i].channel, f.questions, f.records_per_q,
                             f.precision, f.s2_coverage, f.union_coverage, f.empty_rows, f.rows));
  }
  return md;
}

// The trade-off the floor makes: every record floor of the grid at the
// other constants chosen on all conversations.
absl::StatusOr<std::string> RowsStudy::TradeOff(eval::RecallTuner* tuner,
                                                const eval::LooResult& loo) {
  std::set<std::string> datasets;
  for (const auto& c : convs_) datasets.insert(c.dataset);
  std::string md =
      "\n## Precision against coverage\n\nEvery record floor of the grid, the other "
      "constants as chosen on all conversations (in-sample: this shows the trade-off, it "
      "chooses nothing).\n\n| data | record_floor | records per question | from_ids "
      "precision % | gold covered by S2 from_ids % | gold covered by S1 top-10 or S2 % | "
      "explicit empty rows |\n|---|---|---|---|---|---|---|\n";
  for (const auto& d : datasets) {
    for (const auto& c : Floors()) {
      if (c.name != "record_floor") continue;
      for (double floor : c.grid) {
        Setting at = loo.in_sample;
        at["record_floor"] = floor;
        SM_ASSIGN_OR_RETURN(const std::vector<QuestionScore>* sc, tuner->Score(at));
        Figures f = Summarise(*sc, convs_, d);
        absl::StrAppend(&md, absl::StrFormat("| %s | %g | %.2f | %.1f | %.1f | %.1f | %.0f |\n", d,
                                             floor, f.records_per_q, f.precision, f.s2_coverage,
                                             f.union_coverage, f.empty_rows));
      }
    }
  }
  return md;
}

absl::Status RowsStudy::DumpShown(const std::string& dump_out, const Setting& setting) {
  // A fresh pass (the tuner's cache holds scores, not the records shown).
  dump_ = std::fopen(dump_out.c_str(), "w");
  if (dump_ == nullptr) return absl::NotFoundError(absl::StrCat("cannot write ", dump_out));
  absl::Status result;
  for (const auto& conv : convs_) {
    std::set<std::string> ids;
    for (const auto& m : conv.messages) ids.insert(m.message_id);
    for (const auto& q : conv.questions) {
      const std::set<std::string> gold = eval::KnownEvidence(q, ids);
      if (gold.empty()) continue;
      if (auto sc = Score(conv, q, gold, setting); !sc.ok() && result.ok()) result = sc.status();
    }
  }
  std::fclose(dump_);
  dump_ = nullptr;
  if (result.ok()) {
    std::fprintf(stderr, "shown records at the in-sample choice written to %s\n", dump_out.c_str());
  }
  return result;
}

int RowsStudy::Run(const std::string& md_out, const std::string& dump_out) {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  };
  if (absl::Status s = Load(); !s.ok()) return fail(s);
  size_t combinations = 1;
  for (const auto& c : Floors()) combinations *= c.grid.size();
  std::fprintf(stderr, "scoring %zu settings of the floors, each over every question\n",
               combinations);
  eval::RecallTuner tuner(
      &convs_,
      [this](const auto& c, const auto& q, const auto& g, const auto& s) {
        return Score(c, q, g, s);
      },
      [combinations](size_t n) {
        if (n % 50 == 0) std::fprintf(stderr, "  %zu of %zu settings scored\n", n, combinations);
      },
      RowsObjective(&convs_));
  const Setting off = {{"provenance_weight", 0}, {"record_floor", 0}, {"fallback_floor", 0}};
  absl::StatusOr<eval::LooResult> loo = eval::LeaveOneConversationOut(
      &tuner, Floors(), off, convs_.size(), eval::Search::kExhaustive);
  if (!loo.ok()) return fail(loo.status());
  absl::StatusOr<const std::vector<QuestionScore>*> base = tuner.Score(off);
  if (!base.ok()) return fail(base.status());
  absl::StatusOr<const std::vector<QuestionScore>*> in = tuner.Score(loo->in_sample);
  if (!in.ok()) return fail(in.status());
  absl::StatusOr<std::string> trade_off = TradeOff(&tuner, *loo);
  if (!trade_off.ok()) return fail(trade_off.status());
  std::string md =
      Overview(**base, **in, *loo) + LooSection(*loo) + PerConversation(*loo) + *trade_off;
  const retrieval::RowParams compiled;
  const bool same = compiled.provenance_weight == loo->in_sample.at("provenance_weight") &&
                    compiled.record_floor_offline == loo->in_sample.at("record_floor") &&
                    compiled.fallback_floor_offline == loo->in_sample.at("fallback_floor");
  absl::StrAppend(&md, "\n",
                  same ? "The compiled defaults (retrieval::RowParams, offline) equal the "
                         "in-sample choice."
                       : absl::StrFormat("WARNING: the compiled defaults (provenance %g, record "
                                         "%g, fallback %g) differ from the in-sample choice: "
                                         "update retrieval::RowParams.",
                                         compiled.provenance_weight, compiled.record_floor_offline,
                                         compiled.fallback_floor_offline),
                  "\n");
  std::printf("%s", md.c_str());
  if (!md_out.empty()) std::ofstream(md_out) << md;
  if (!dump_out.empty()) {
    if (absl::Status s = DumpShown(dump_out, loo->in_sample); !s.ok()) return fail(s);
  }
  return same ? 0 : 3;
}

}  // namespace

int RunRowsStudy(const std::vector<datasets::Conversation>& conversations,
                 const engine::MemoryOptions& memory, const std::string& md_out,
                 const std::string& dump_out) {
  RowsStudy study(conversations, memory);
  return study.Run(md_out, dump_out);
}

}  // namespace speakermem::cli

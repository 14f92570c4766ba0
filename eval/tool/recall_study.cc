#include "eval/tool/recall_study.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
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

// Setting keys. "mode": 0 hybrid pipeline, 1 BM25 only, 2 dense only.
constexpr char kMode[] = "mode";

// The tuned constants, in the order coordinate ascent visits them, each
// grid starting with "off".
std::vector<eval::TunableConstant> Constants() {
  return {{"stem", {0, 1}},
          {"speaker_weight", {0, 1, 2, 3, 4, 6, 8}},
          {"context_weight", {0, 0.25, 0.5, 0.75, 1}},
          {"context_window", {1, 2, 3}},
          {"context_decay", {1, 0.7, 0.5}},
          {"prf_weight", {0, 0.2, 0.4}},
          {"dense_weight", {0, 0.25, 0.5, 1}}};
}

// Textbook BM25 inside the pipeline: every component off.
Setting Textbook() {
  return {{kMode, 0},
          {"stem", 0},
          {"speaker_weight", 0},
          {"context_weight", 0},
          {"context_window", 1},
          {"context_decay", 1},
          {"prf_weight", 0},
          {"dense_weight", 0},
          {"select", 0}};
}

// The pipeline as it ships: every component at `s`, Select and Expand on.
Setting WithSelect(Setting s) {
  s["select"] = 1;
  return s;
}

retrieval::RecallParams ToParams(const Setting& s) {
  retrieval::RecallParams p;
  p.lexical.stem = s.at("stem") != 0;
  p.lexical.speaker_weight = s.at("speaker_weight");
  p.lexical.context_weight = s.at("context_weight");
  p.lexical.context_window = static_cast<uint32_t>(s.at("context_window"));
  p.lexical.context_decay = s.at("context_decay");
  p.lexical.prf_weight = s.at("prf_weight");
  p.dense_weight_offline = s.at("dense_weight");
  p.select = s.at("select") != 0;
  return p;
}

Setting FromParams(const retrieval::RecallParams& p) {
  Setting s = Textbook();
  s["stem"] = p.lexical.stem;
  s["speaker_weight"] = p.lexical.speaker_weight;
  s["context_weight"] = p.lexical.context_weight;
  s["context_window"] = p.lexical.context_window;
  s["context_decay"] = p.lexical.context_decay;
  s["prf_weight"] = p.lexical.prf_weight;
  s["dense_weight"] = p.dense_weight_offline;
  s["select"] = p.select;
  return s;
}

std::string Describe(const Setting& s) {
  std::string out;
  for (const auto& c : Constants()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", c.name, "=",
                    absl::StrFormat("%g", s.at(c.name)));
  }
  return out;
}

struct Row {
  std::string name;
  std::vector<QuestionScore> scores;
};

// Mean recall (percent) at kTuningKs[ki] of the questions that pass `keep`.
template <typename Keep>
double Mean(const std::vector<QuestionScore>& scores, size_t ki, Keep keep) {
  double sum = 0;
  size_t n = 0;
  for (const auto& q : scores) {
    if (!keep(q)) continue;
    sum += q.recall[ki];
    ++n;
  }
  return n == 0 ? 0 : 100.0 * sum / static_cast<double>(n);
}

class Study {
 public:
  Study(const std::vector<datasets::Conversation>& convs, const RecallStudyOptions& o)
      : convs_(convs), options_(o) {
    for (const auto& c : convs_) datasets_.insert(c.dataset);
  }

  int Run();

 private:
  absl::StatusOr<std::vector<std::string>> Rank(const datasets::Conversation& conv,
                                                const std::string& question, const Setting& s);
  absl::Status Ingest();
  std::string AblationTable(const std::vector<Row>& rows) const;
  // Recall at kTuningKs[ki] per (dataset, category).
  std::string CategoryTable(const std::vector<Row>& rows, size_t ki) const;
  // Each constant alone chosen leave-one-conversation-out, the others at
  // their in-sample values: how well that constant's choice transfers.
  absl::StatusOr<std::string> PerConstantLoo(eval::RecallTuner* tuner,
                                             const eval::LooResult& loo) const;
  std::string LooTable(const eval::LooResult& loo) const;
  // The ablation: textbook BM25, dense only, then each component in turn at
  // its in-sample value, the full pipeline in-sample and held out.
  absl::StatusOr<std::vector<Row>> Ablation(eval::RecallTuner* tuner,
                                            const eval::LooResult& loo) const;
  // The report: ablation, categories, leave-one-out tables, grids.
  absl::StatusOr<std::string> Markdown(eval::RecallTuner* tuner, const eval::LooResult& loo,
                                       const std::vector<Row>& rows,
                                       const std::string& defaults_note) const;
  void WriteJson(const std::vector<Row>& rows, const eval::LooResult& loo) const;
  void Progress(const std::string& line) const {
    if (options_.progress) std::fprintf(stderr, "%s\n", line.c_str());
  }

  const std::vector<datasets::Conversation>& convs_;
  const RecallStudyOptions options_;
  std::set<std::string> datasets_;
  std::unique_ptr<EmbeddedEngine> engine_;
};

absl::Status Study::Ingest() {
  size_t total = 0;
  for (const auto& c : convs_) total += c.messages.size();
  Progress(absl::StrCat("ingesting ", convs_.size(), " conversations (", total,
                        " messages) into an embedded instance"));
  absl::StatusOr<std::unique_ptr<EmbeddedEngine>> e = EmbeddedEngine::Open(options_.memory);
  if (!e.ok()) return e.status();
  engine_ = std::move(*e);
  for (const auto& c : convs_) {
    for (size_t i = 0; i < c.messages.size(); i += 500) {
      std::vector<storage::Message> batch(
          c.messages.begin() + i, c.messages.begin() + std::min(c.messages.size(), i + 500));
      auto r =
          engine_->memory()->Ingest({storage::kDefaultTenant, c.channel}, {}, std::move(batch));
      if (!r.ok()) return r.status();
    }
  }
  if (!engine_->memory()->WaitForEmbeddings(std::chrono::minutes(30))) {
    return absl::DeadlineExceededError("embeddings did not finish in 30 minutes");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> Study::Rank(const datasets::Conversation& conv,
                                                     const std::string& question,
                                                     const Setting& s) {
  engine::QueryParams p;
  p.channel = {storage::kDefaultTenant, conv.channel};
  p.question = question;
  p.budgets.s1_top_k = 20;
  p.budgets.s1_recall_n = 40;
  const int mode = static_cast<int>(s.at(kMode));
  p.mode = mode == 1   ? retrieval::RecallMode::kBm25
           : mode == 2 ? retrieval::RecallMode::kDense
                       : retrieval::RecallMode::kHybrid;
  p.stages = mode == 0;
  p.system2 = false;
  if (mode == 0) p.recall = ToParams(s);
  absl::StatusOr<engine::QueryResult> r = engine_->memory()->Query(p, /*answer=*/false);
  if (!r.ok()) return r.status();
  std::vector<std::string> ids;
  for (const auto& rm : r->pipeline.s1) ids.push_back(rm.message.message_id);
  return ids;
}

std::string Study::AblationTable(const std::vector<Row>& rows) const {
  std::string md = "| configuration |";
  std::string rule = "|---|";
  for (const auto& d : datasets_) {
    for (size_t k : eval::kTuningKs) {
      absl::StrAppend(&md, " ", d, " R@", k, " |");
      rule += "---|";
    }
  }
  md += "\n" + rule + "\n";
  for (const auto& r : rows) {
    absl::StrAppend(&md, "| ", r.name, " |");
    for (const auto& d : datasets_) {
      for (size_t ki = 0; ki < 3; ++ki) {
        double v = Mean(r.scores, ki, [&](const QuestionScore& q) {
          return convs_[q.conversation].dataset == d;
        });
        absl::StrAppend(&md, absl::StrFormat(" %.2f |", v));
      }
    }
    md += "\n";
  }
  return md;
}

std::string Study::CategoryTable(const std::vector<Row>& rows, size_t ki) const {
  std::set<std::pair<std::string, std::string>> cats;  // (dataset, category)
  for (const auto& q : rows.front().scores)
    cats.insert({convs_[q.conversation].dataset, q.category});
  std::string md = "| configuration |", rule = "|---|";
  for (const auto& [d, c] : cats) {
    absl::StrAppend(&md, " ", d, " ", c, " |");
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  for (const auto& r : rows) {
    absl::StrAppend(&md, "| ", r.name, " |");
    for (const auto& [d, c] : cats) {
      double v = Mean(r.scores, ki, [&, d = d, c = c](const QuestionScore& q) {
        return q.category == c && convs_[q.conversation].dataset == d;
      });
      absl::StrAppend(&md, absl::StrFormat(" %.2f |", v));
    }
    md += "\n";
  }
  return md;
}

std::string Study::LooTable(const eval::LooResult& loo) const {
  std::string md = "| held-out conversation | questions |";
  std::string rule = "|---|---|";
  for (const auto& c : Constants()) {
    absl::StrAppend(&md, " ", c.name, " |");
    rule += "---|";
  }
  md += " R@10 in-sample | R@10 held out |\n" + rule + "---|---|\n";
  for (size_t i = 0; i < convs_.size(); ++i) {
    absl::StrAppend(&md, "| ", convs_[i].dataset, " ", convs_[i].channel, " | ", loo.questions[i],
                    " |");
    for (const auto& c : Constants()) {
      absl::StrAppend(&md, absl::StrFormat(" %g |", loo.fold_settings[i].at(c.name)));
    }
    absl::StrAppend(&md, absl::StrFormat(" %.2f | %.2f |\n", 100 * loo.in_sample_recall10[i],
                                         100 * loo.held_out_recall10[i]));
  }
  absl::StrAppend(&md, "| **all (in-sample choice)** | |");
  for (const auto& c : Constants()) {
    absl::StrAppend(&md, absl::StrFormat(" **%g** |", loo.in_sample.at(c.name)));
  }
  md += " | |\n";
  return md;
}

absl::StatusOr<std::string> Study::PerConstantLoo(eval::RecallTuner* tuner,
                                                  const eval::LooResult& loo) const {
  std::string md = "| constant | in-sample value | values chosen across folds |";
  for (const auto& d : datasets_) absl::StrAppend(&md, " ", d, " in-sample | ", d, " LOO |");
  md += "\n|---|---|---|";
  for (size_t i = 0; i < datasets_.size(); ++i) md += "---|---|";
  md += "\n";
  absl::StatusOr<const std::vector<QuestionScore>*> in = tuner->Score(loo.in_sample);
  if (!in.ok()) return in.status();
  for (const auto& c : Constants()) {
    std::vector<QuestionScore> held;
    std::set<double> chosen;
    for (size_t h = 0; h < convs_.size(); ++h) {
      std::vector<bool> train(convs_.size(), true);
      train[h] = false;
      absl::StatusOr<Setting> s = tuner->Tune({c}, loo.in_sample, train, 1);
      if (!s.ok()) return s.status();
      chosen.insert(s->at(c.name));
      absl::StatusOr<const std::vector<QuestionScore>*> sc = tuner->Score(*s);
      if (!sc.ok()) return sc.status();
      for (const auto& q : **sc) {
        if (q.conversation == h) held.push_back(q);
      }
    }
    std::string values;
    for (double v : chosen)
      absl::StrAppend(&values, values.empty() ? "" : ", ", absl::StrFormat("%g", v));
    absl::StrAppend(&md, "| ", c.name, " | ", absl::StrFormat("%g", loo.in_sample.at(c.name)),
                    " | ", values, " |");
    for (const auto& d : datasets_) {
      auto of = [&](const QuestionScore& q) { return convs_[q.conversation].dataset == d; };
      absl::StrAppend(&md, absl::StrFormat(" %.2f | %.2f |", Mean(**in, 1, of), Mean(held, 1, of)));
    }
    md += "\n";
  }
  return md;
}

absl::StatusOr<std::vector<Row>> Study::Ablation(eval::RecallTuner* tuner,
                                                 const eval::LooResult& loo) const {
  std::vector<Row> rows;
  auto add_row = [&](const std::string& name, const Setting& s) -> absl::Status {
    absl::StatusOr<const std::vector<QuestionScore>*> sc = tuner->Score(s);
    if (!sc.ok()) return sc.status();
    rows.push_back(Row{name, **sc});
    return absl::OkStatus();
  };
  Setting bm25 = Textbook();
  bm25[kMode] = 1;
  Setting dense = Textbook();
  dense[kMode] = 2;
  SM_RETURN_IF_ERROR(add_row("BM25 (textbook Okapi, k1 1.2, b 0.75)", bm25));
  SM_RETURN_IF_ERROR(add_row("dense only (offline embedder)", dense));
  const std::vector<std::pair<std::string, std::vector<std::string>>> components = {
      {"+ Snowball stemming", {"stem"}},
      {"+ speaker field (BM25F)", {"speaker_weight"}},
      {"+ context of neighbouring turns", {"context_weight", "context_window", "context_decay"}},
      {"+ pseudo-relevance feedback (RM3)", {"prf_weight"}},
      {"+ dense list in the fusion", {"dense_weight"}}};
  Setting cur = Textbook();  // Select off until its own row
  const std::vector<bool> all(convs_.size(), true);
  for (const auto& [name, keys] : components) {
    Setting next = cur;
    for (const auto& k : keys) next[k] = loo.in_sample.at(k);
    if (next != cur) {
      SM_RETURN_IF_ERROR(add_row(name, next));
      cur = next;
      continue;
    }
    // A component whose chosen value is "off" is shown at its best other
    // value, measured, and not carried forward.
    Setting best;
    double best_obj = -1;
    for (const auto& c : Constants()) {
      if (c.name != keys.front()) continue;
      for (double v : c.grid) {
        if (v == cur.at(c.name)) continue;
        Setting s = cur;
        s[c.name] = v;
        SM_ASSIGN_OR_RETURN(const std::vector<QuestionScore>* sc, tuner->Score(s));
        double o = tuner->Objective(*sc, all);
        if (o > best_obj) {
          best_obj = o;
          best = s;
        }
      }
    }
    if (!best.empty()) {
      SM_RETURN_IF_ERROR(add_row(
          absl::StrCat(name, " at ", keys.front(), "=",
                       absl::StrFormat("%g", best.at(keys.front())), " (measured, not kept)"),
          best));
    }
  }
  SM_RETURN_IF_ERROR(
      add_row("+ Select and Expand (offline Select: recall's order; "
              "neighbours compete by their own score) = full, in-sample",
              loo.in_sample));
  rows.push_back(
      Row{"full, each conversation scored with constants chosen without it (LOO)", loo.held_out});
  return rows;
}

absl::StatusOr<std::string> Study::Markdown(eval::RecallTuner* tuner, const eval::LooResult& loo,
                                            const std::vector<Row>& rows,
                                            const std::string& defaults_note) const {
  std::string md = "# System 1 recall on the development data\n\n";
  absl::StatusOr<llm::EndpointConfig> embed = options_.memory.models.Resolve("embed");
  absl::StrAppend(&md, "Generated by `speakermem eval retrieval` (embedder: ",
                  embed.ok() ? embed->provider : "unknown", "). ", convs_.size(),
                  " conversations; every figure is evidence recall@k in percent, "
                  "mean over questions with evidence.\n\n");
  absl::StrAppend(&md, "## Ablation\n\n", AblationTable(rows), "\n");
  for (size_t ki = 0; ki < 3; ++ki) {
    absl::StrAppend(&md, "## Recall@", eval::kTuningKs[ki], " by category\n\n",
                    CategoryTable(rows, ki), "\n");
  }
  absl::StrAppend(&md, "## Leave-one-conversation-out\n\n",
                  "Each row: the constants chosen by coordinate ascent (2 passes over the "
                  "grids, objective = mean over datasets of mean recall@10) on the other "
                  "conversations, and the held-out conversation's recall@10 with them, beside its "
                  "recall@10 with the constants chosen on all conversations.\n\n",
                  LooTable(loo), "\n");
  SM_ASSIGN_OR_RETURN(std::string per_constant, PerConstantLoo(tuner, loo));
  absl::StrAppend(&md, "## Each constant's own leave-one-conversation-out figure\n\n",
                  "Each row tunes that constant alone per fold (the others held at their "
                  "in-sample values) and scores the held-out conversation; recall@10.\n\n",
                  per_constant, "\n");
  absl::StrAppend(&md, "Grids: ");
  for (const auto& c : Constants()) {
    std::string g;
    for (double v : c.grid) absl::StrAppend(&g, g.empty() ? "" : ", ", absl::StrFormat("%g", v));
    absl::StrAppend(&md, "`", c.name, "` {", g, "}; ");
  }
  absl::StrAppend(&md, "\n\n", defaults_note, "\n\n", tuner->settings_scored(),
                  " settings scored.\n");
  return md;
}

void Study::WriteJson(const std::vector<Row>& rows, const eval::LooResult& loo) const {
  nlohmann::json j;
  for (const auto& r : rows) {
    nlohmann::json row;
    for (const auto& d : datasets_) {
      for (size_t ki = 0; ki < 3; ++ki) {
        row[d][std::to_string(eval::kTuningKs[ki])] =
            Mean(r.scores, ki,
                 [&](const QuestionScore& q) { return convs_[q.conversation].dataset == d; });
      }
    }
    j["ablation"][r.name] = row;
  }
  for (size_t i = 0; i < convs_.size(); ++i) {
    j["loo"][convs_[i].channel] = {{"dataset", convs_[i].dataset},
                                   {"questions", loo.questions[i]},
                                   {"setting", loo.fold_settings[i]},
                                   {"recall10_in_sample", 100 * loo.in_sample_recall10[i]},
                                   {"recall10_held_out", 100 * loo.held_out_recall10[i]}};
  }
  j["in_sample_setting"] = loo.in_sample;
  std::ofstream(options_.json_out) << j.dump(2) << "\n";
}

int Study::Run() {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  };
  if (absl::Status s = Ingest(); !s.ok()) return fail(s);
  auto start = std::chrono::steady_clock::now();
  eval::RecallTuner tuner(
      &convs_, eval::RecallScore([this](const auto& c, const auto& q, const auto& s) {
        return Rank(c, q, s);
      }),
      [&](size_t n) {
        double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (options_.progress && (n % 10 == 0 || n < 5)) {
          std::fprintf(stderr, "  %zu settings scored (%.0f s)\n", n, secs);
        }
      });
  Progress("tuning every constant on all conversations, then once per held-out conversation");
  absl::StatusOr<eval::LooResult> loo =
      eval::LeaveOneConversationOut(&tuner, Constants(), WithSelect(Textbook()), convs_.size());
  if (!loo.ok()) return fail(loo.status());
  absl::StatusOr<std::vector<Row>> rows = Ablation(&tuner, *loo);
  if (!rows.ok()) return fail(rows.status());
  const Setting compiled = FromParams(retrieval::RecallParams{});
  const Setting& shipped = loo->in_sample;
  const std::string defaults_note =
      compiled == shipped
          ? "The compiled defaults (retrieval::RecallParams) equal the in-sample choice."
          : absl::StrCat("WARNING: the compiled defaults (", Describe(compiled),
                         ") differ from the in-sample choice: update retrieval::RecallParams.");
  absl::StatusOr<std::string> md = Markdown(&tuner, *loo, *rows, defaults_note);
  if (!md.ok()) return fail(md.status());
  std::printf("%s", md->c_str());
  if (!options_.md_out.empty()) std::ofstream(options_.md_out) << *md;
  if (!options_.json_out.empty()) WriteJson(*rows, *loo);
  return compiled == shipped ? 0 : 3;
}

}  // namespace

int RunRecallStudy(const std::vector<datasets::Conversation>& conversations,
                   const RecallStudyOptions& options) {
  Study study(conversations, options);
  return study.Run();
}

}  // namespace speakermem::cli

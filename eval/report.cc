#include "eval/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "eval/metrics.h"
#include "nlohmann/json.hpp"

namespace speakermem::eval {
namespace {

double Pct(const RecallStats& s, const std::map<size_t, double>& m, size_t k) {
  auto it = m.find(k);
  return s.questions == 0 || it == m.end() ? 0 : 100.0 * it->second / s.questions;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  return v[std::min(v.size() - 1, i)];
}

struct QaSummary {
  size_t questions = 0;
  double f1 = 0;  // percent
  size_t judged = 0;
  double accuracy = 0;  // percent of judged
};

QaSummary Summarize(const std::vector<const QaItem*>& items) {
  QaSummary s;
  double f1 = 0, acc = 0;
  for (const QaItem* q : items) {
    ++s.questions;
    f1 += q->token_f1;
    if (q->judge) {
      ++s.judged;
      acc += *q->judge;
    }
  }
  s.f1 = s.questions == 0 ? 0 : 100.0 * f1 / s.questions;
  s.accuracy = s.judged == 0 ? 0 : 100.0 * acc / s.judged;
  return s;
}

bool WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
  return out.good();
}

// Runs gnuplot on `script` in `dir`; false when gnuplot is missing or fails.
bool Gnuplot(const std::filesystem::path& dir, const std::string& script) {
  std::string cmd = absl::StrCat("cd '", dir.string(), "' && gnuplot '", script, "' 2>/dev/null");
  return std::system(cmd.c_str()) == 0;
}

std::string CategoryLabel(const ReportData& data, const std::string& cat) {
  auto it = data.category_names.find(cat);
  return it == data.category_names.end() ? cat : absl::StrCat(cat, " ", it->second);
}

// The answered questions, all together and by category.
struct Grouped {
  std::vector<const QaItem*> all;
  std::map<std::string, std::vector<const QaItem*>> by_cat;
};

Grouped GroupQa(const ReportData& data) {
  Grouped g;
  for (const auto& q : data.qa) {
    g.all.push_back(&q);
    g.by_cat[q.category.empty() ? "none" : q.category].push_back(&q);
  }
  return g;
}

// SocialMem's MeanQ / MeanN over the items scored.
struct SocialFigures {
  MeanQN mqn;
  size_t open_left_out = 0;
  size_t mc_items = 0;
};

SocialFigures ScoreSocial(const ReportData& data) {
  SocialFigures f;
  std::map<std::string, std::vector<double>> scores;
  for (const auto& q : data.qa) {
    f.mc_items += q.multiple_choice;
    if (q.item_score) {
      scores[q.network].push_back(*q.item_score);
    } else {
      ++f.open_left_out;
    }
  }
  f.mqn = ComputeMeanQN(scores, 10000, 20260101);
  return f;
}

nlohmann::json TokensJson(const ReportData& data) {
  nlohmann::json tokens = nlohmann::json::object();
  for (const auto& [stage, v] : data.tokens_by_stage) {
    tokens[stage] = {{"questions", v.size()}, {"mean", Mean(v)}, {"p95", Quantile(v, 0.95)}};
  }
  if (!data.tokens_per_question.empty()) {
    tokens["all"] = {{"questions", data.tokens_per_question.size()},
                     {"mean", Mean(data.tokens_per_question)},
                     {"p95", Quantile(data.tokens_per_question, 0.95)}};
  }
  return tokens;
}

nlohmann::json QaJson(const ReportData& data, const Grouped& g) {
  auto qa_json = [&](const QaSummary& s) {
    nlohmann::json o = {{"questions", s.questions}, {"token_f1", s.f1}};
    if (data.judge_configured) {
      o["judged"] = s.judged;
      o["accuracy"] = s.accuracy;
    } else {
      o["accuracy"] = nullptr;
    }
    return o;
  };
  nlohmann::json qa = qa_json(Summarize(g.all));
  qa["accuracy_note"] = data.judge_configured
                            ? "binary accuracy by the configured judge"
                            : "not measured: no judge configured (model.judge.provider)";
  if (data.judge_configured) {
    qa["judge_failures"] = data.judge_failures;
    if (data.judge_failures > 0) qa["judge_failure_example"] = data.judge_failure_example;
  }
  nlohmann::json cats = nlohmann::json::object();
  for (const auto& [c, items] : g.by_cat) cats[c] = qa_json(Summarize(items));
  qa["by_category"] = cats;
  return qa;
}

nlohmann::json SocialJson(const ReportData& data, const SocialFigures& f) {
  return {{"mean_q", f.mqn.mean_q},
          {"mean_n", f.mqn.mean_n},
          {"mean_n_ci95", {f.mqn.ci_n.lo, f.mqn.ci_n.hi}},
          {"bootstrap", "10,000 resamples of the network means, seed 20260101"},
          {"items_scored", f.mqn.questions},
          {"networks", f.mqn.networks},
          {"multiple_choice_items", f.mc_items},
          {"open_ended_left_out", f.open_left_out},
          {"note", data.judge_configured ? "open-ended items scored by the judge's partial credit"
                                         : "open-ended items left out: no judge configured"}};
}

nlohmann::json AnswersJson(const ReportData& data) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& q : data.qa) {
    nlohmann::json o = {
        {"network", q.network}, {"id", q.id}, {"category", q.category}, {"token_f1", q.token_f1}};
    if (data.include_texts) {
      o["question"] = q.question;
      o["gold"] = q.gold;
      o["answer"] = q.answer;
    }
    if (q.judge) o["judge"] = *q.judge;
    if (q.item_score) o["item_score"] = *q.item_score;
    items.push_back(o);
  }
  return items;
}

// report.json.
nlohmann::json ReportDocument(const ReportData& data, const Grouped& g, const SocialFigures& f) {
  nlohmann::json j = nlohmann::json::parse(ReportJson(data.retrieval, data.dataset));
  j["command"] = data.command;
  j["inputs"] = data.inputs;
  j["seconds"] = data.seconds;
  j["stages"] = data.stage_models;
  j["tokens_per_question"] = TokensJson(data);
  j["latency_ms"] = {{"retrieves", data.latency_ms.size()},
                     {"p50", Quantile(data.latency_ms, 0.50)},
                     {"p90", Quantile(data.latency_ms, 0.90)},
                     {"p99", Quantile(data.latency_ms, 0.99)},
                     {"max", Quantile(data.latency_ms, 1.0)}};
  j["qa"] = QaJson(data, g);
  if (data.socialmem) j["socialmem"] = SocialJson(data, f);
  j["answers"] = AnswersJson(data);
  return j;
}

std::vector<std::string> ConfigNames(const RetrievalReport& rr) {
  std::vector<std::string> c;
  for (const auto& [name, cr] : rr.configs) c.push_back(name);
  return c;
}

// recall_at_k.dat and .gp: recall@k of each configuration.
void WriteRecallPlot(const RetrievalReport& rr, const std::filesystem::path& dir) {
  const std::vector<std::string> configs = ConfigNames(rr);
  std::string dat = "# k";
  for (const auto& c : configs) absl::StrAppend(&dat, " ", c);
  dat += "\n";
  for (size_t k : rr.ks) {
    absl::StrAppend(&dat, k);
    for (const auto& c : configs) {
      const RecallStats& s = rr.configs.at(c).overall;
      absl::StrAppend(&dat, " ", absl::StrFormat("%.3f", Pct(s, s.recall, k)));
    }
    dat += "\n";
  }
  WriteFile(dir / "recall_at_k.dat", dat);
  std::string gp =
      "set terminal pngcairo noenhanced size 800,500\nset output 'recall_at_k.png'\n"
      "set title 'System 1 evidence recall@k'\nset xlabel 'k'\nset ylabel 'recall (%)'\n"
      "set key left top\nset grid\nset yrange [0:100]\n";
  std::vector<std::string> parts;
  for (size_t i = 0; i < configs.size(); ++i) {
    parts.push_back(absl::StrCat("'recall_at_k.dat' using 1:", i + 2,
                                 " with linespoints lw 2 title '", configs[i], "'"));
  }
  gp += "plot " + absl::StrJoin(parts, ", ") + "\n";
  WriteFile(dir / "recall_at_k.gp", gp);
}

// categories.dat and .gp: recall at the middle k by question category.
void WriteCategoryPlot(const ReportData& data, const std::filesystem::path& dir) {
  const RetrievalReport& rr = data.retrieval;
  const std::vector<std::string> configs = ConfigNames(rr);
  const size_t k_mid = rr.ks.size() > 1 ? rr.ks[1] : (rr.ks.empty() ? 10 : rr.ks[0]);
  std::set<std::string> categories;
  for (const auto& [name, cr] : rr.configs) {
    for (const auto& [c, s] : cr.by_category) categories.insert(c);
  }
  std::string dat = "# category";
  for (const auto& c : configs) absl::StrAppend(&dat, " ", c);
  dat += "\n";
  for (const auto& cat : categories) {
    absl::StrAppend(&dat, "\"", CategoryLabel(data, cat), "\"");
    for (const auto& c : configs) {
      const auto& bc = rr.configs.at(c).by_category;
      auto it = bc.find(cat);
      double v = it == bc.end() ? 0 : Pct(it->second, it->second.recall, k_mid);
      absl::StrAppend(&dat, " ", absl::StrFormat("%.3f", v));
    }
    dat += "\n";
  }
  WriteFile(dir / "categories.dat", dat);
  std::string gp = absl::StrCat(
      "set terminal pngcairo noenhanced size 900,500\nset output 'categories.png'\n"
      "set title 'recall@",
      k_mid,
      " by question category'\nset ylabel 'recall (%)'\n"
      "set style data histograms\nset style histogram clustered gap 1\n"
      "set style fill solid 0.8 border -1\nset yrange [0:100]\nset grid ytics\n"
      "set key left top\nset xtics rotate by -30\n");
  std::vector<std::string> parts;
  for (size_t i = 0; i < configs.size(); ++i) {
    parts.push_back(
        absl::StrCat("'categories.dat' using ", i + 2, ":xtic(1) title '", configs[i], "'"));
  }
  gp += "plot " + absl::StrJoin(parts, ", ") + "\n";
  WriteFile(dir / "categories.gp", gp);
}

// latency.dat and .gp: a histogram of Retrieve latency.
void WriteLatencyPlot(const ReportData& data, const std::filesystem::path& dir) {
  std::string dat;
  for (double ms : data.latency_ms) absl::StrAppend(&dat, absl::StrFormat("%.4f\n", ms));
  WriteFile(dir / "latency.dat", dat);
  const double top = std::max(1.0, Quantile(data.latency_ms, 0.995));
  const double width = top / 40;
  std::string gp = absl::StrCat(
      "set terminal pngcairo noenhanced size 800,500\nset output 'latency.png'\n"
      "set title 'Retrieve latency, full pipeline (",
      data.latency_ms.size(), " calls)'\nset xlabel 'ms'\nset ylabel 'calls'\nset grid\n",
      absl::StrFormat("width = %.6f\n", width),
      absl::StrFormat("set xrange [0:%.4f]\n", top + width),
      "bin(x) = width * floor(x / width) + width / 2\nset boxwidth width * 0.9\n"
      "set style fill solid 0.7\n"
      "plot 'latency.dat' using (bin($1)):(1.0) smooth freq with boxes notitle\n");
  WriteFile(dir / "latency.gp", gp);
}

// The plots' data and scripts; true when gnuplot rendered all three.
bool WritePlots(const ReportData& data, const std::filesystem::path& dir) {
  WriteRecallPlot(data.retrieval, dir);
  WriteCategoryPlot(data, dir);
  WriteLatencyPlot(data, dir);
  bool plotted = true;
  for (const char* gp : {"recall_at_k.gp", "categories.gp", "latency.gp"}) {
    plotted = Gnuplot(dir, gp) && plotted;
  }
  return plotted;
}

// report.md: the run, the stages, System 1 recall.
std::string MarkdownRecall(const ReportData& data) {
  const RetrievalReport& rr = data.retrieval;
  std::string md = absl::StrCat("# SpeakerMem evaluation: ", data.dataset, "\n\n");
  absl::StrAppend(&md, "Made by:\n\n```\n", data.command, "\n```\n\n");
  absl::StrAppend(&md, rr.questions_total, " questions; ", rr.questions_skipped,
                  " without evidence in the conversation are left out of recall; ",
                  rr.evidence_ids_dropped, " evidence ids not in the conversation dropped. ",
                  absl::StrFormat("Run time %.0f s.", data.seconds), "\n\n");
  absl::StrAppend(&md, "## Stages\n\n| stage | provider and model |\n|---|---|\n");
  for (const auto& [stage, what] : data.stage_models) {
    absl::StrAppend(&md, "| ", stage, " | ", what, " |\n");
  }
  md += "\n";
  absl::StrAppend(&md, "## System 1 evidence recall and hit (percent)\n\n| config |");
  for (size_t k : rr.ks) absl::StrAppend(&md, " recall@", k, " |");
  for (size_t k : rr.ks) absl::StrAppend(&md, " hit@", k, " |");
  md += "\n|---|";
  for (size_t i = 0; i < 2 * rr.ks.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& c : ConfigNames(rr)) {
    const RecallStats& s = rr.configs.at(c).overall;
    absl::StrAppend(&md, "| ", c, " |");
    for (size_t k : rr.ks) absl::StrAppend(&md, absl::StrFormat(" %.2f |", Pct(s, s.recall, k)));
    for (size_t k : rr.ks) absl::StrAppend(&md, absl::StrFormat(" %.2f |", Pct(s, s.hit, k)));
    md += "\n";
  }
  absl::StrAppend(&md,
                  "\n`full+s2` counts the `from_ids` of the System 2 records in the answer's "
                  "evidence as retrieved too.\n\n![recall@k](recall_at_k.png)\n\n"
                  "![by category](categories.png)\n\n");
  return md;
}

// report.md: answers by category and SocialMem's MeanQ / MeanN.
std::string MarkdownAnswers(const ReportData& data, const Grouped& g, const SocialFigures& f) {
  const QaSummary overall = Summarize(g.all);
  std::string md;
  absl::StrAppend(&md, "## Answers\n\n", overall.questions, " questions answered by the ",
                  "configured Answer stage. token-F1 ", absl::StrFormat("%.2f", overall.f1),
                  "%. Accuracy: ",
                  data.judge_configured
                      ? absl::StrFormat("%.2f%% (%zu judged; %zu verdicts failed or unreadable, "
                                        "left out)",
                                        overall.accuracy, overall.judged, data.judge_failures)
                      : std::string("not measured (no judge configured)"),
                  ".\n\n| category | questions | token-F1 | accuracy |\n|---|---|---|---|\n");
  for (const auto& [c, items] : g.by_cat) {
    QaSummary s = Summarize(items);
    absl::StrAppend(&md, "| ", CategoryLabel(data, c), " | ", s.questions,
                    absl::StrFormat(" | %.2f | ", s.f1),
                    data.judge_configured ? absl::StrFormat("%.2f", s.accuracy) : "-", " |\n");
  }
  if (data.socialmem) {
    absl::StrAppend(
        &md, "\n## SocialMem MeanQ / MeanN\n\n",
        absl::StrFormat("MeanQ %.3f, MeanN %.3f, MeanN 95%% CI [%.3f, %.3f] (10,000 bootstrap "
                        "resamples over %zu networks, seeded).",
                        f.mqn.mean_q, f.mqn.mean_n, f.mqn.ci_n.lo, f.mqn.ci_n.hi, f.mqn.networks),
        " Items scored: ", f.mqn.questions, " (", f.mc_items,
        " multiple choice); open-ended items ",
        data.judge_configured ? "scored by the judge's partial credit"
                              : absl::StrCat("left out (no judge configured): ", f.open_left_out),
        ".\n");
  }
  return md;
}

// report.md: model tokens and Retrieve latency.
std::string MarkdownCosts(const ReportData& data, bool plotted) {
  std::string md = "\n## Model tokens per question (Answer pass, by stage)\n\n";
  if (data.tokens_by_stage.empty()) {
    md += "No stage called a model (every query stage offline).\n";
  } else {
    md += "| stage | questions with a model call | mean | p95 |\n|---|---|---|---|\n";
    for (const auto& [stage, v] : data.tokens_by_stage) {
      absl::StrAppend(&md, absl::StrFormat("| %s | %zu | %.0f | %.0f |\n", stage, v.size(), Mean(v),
                                           Quantile(v, 0.95)));
    }
    absl::StrAppend(
        &md,
        absl::StrFormat("| all stages | %zu | %.0f | %.0f |\n", data.tokens_per_question.size(),
                        Mean(data.tokens_per_question), Quantile(data.tokens_per_question, 0.95)));
  }
  absl::StrAppend(&md, "\n## Retrieve latency (full pipeline)\n\n",
                  absl::StrFormat("%zu calls: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms.",
                                  data.latency_ms.size(), Quantile(data.latency_ms, 0.5),
                                  Quantile(data.latency_ms, 0.9), Quantile(data.latency_ms, 0.99),
                                  Quantile(data.latency_ms, 1.0)),
                  "\n\n![latency](latency.png)\n");
  if (!plotted) {
    md +=
        "\n(Plots not rendered: gnuplot was not found or failed; the .gp scripts and .dat "
        "files beside this file make them.)\n";
  }
  return md;
}

}  // namespace

absl::StatusOr<std::string> WriteReport(const ReportData& data, const std::string& dir_name) {
  const std::filesystem::path dir(dir_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat(dir_name, ": ", ec.message()));
  const Grouped g = GroupQa(data);
  const SocialFigures social = data.socialmem ? ScoreSocial(data) : SocialFigures{};
  if (!WriteFile(dir / "report.json", ReportDocument(data, g, social).dump(2) + "\n")) {
    return absl::InternalError(absl::StrCat(dir_name, "/report.json: cannot write"));
  }
  const bool plotted = WritePlots(data, dir);
  const std::string md =
      MarkdownRecall(data) + MarkdownAnswers(data, g, social) + MarkdownCosts(data, plotted);
  if (!WriteFile(dir / "report.md", md)) {
    return absl::InternalError(absl::StrCat(dir_name, "/report.md: cannot write"));
  }
  return md;
}

}  // namespace speakermem::eval

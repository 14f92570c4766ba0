// The evaluation report: one run of a benchmark file end to end (retrieval
// recall per configuration, answers with token-F1, judge accuracy when a
// judge is configured, SocialMem MeanQ/MeanN, Retrieve latency) written as
// JSON, a Markdown summary and PNG plots (gnuplot).
#ifndef SPEAKERMEM_EVAL_REPORT_H_
#define SPEAKERMEM_EVAL_REPORT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "eval/retrieval_eval.h"

namespace speakermem::eval {

// One answered question.
struct QaItem {
  std::string network;  // channel
  std::string id;
  std::string category;
  std::string question;
  std::string gold;
  std::string answer;
  double token_f1 = 0;
  std::optional<double> judge;  // binary verdict, when a judge is configured
  // SocialMem item score in [0, 1]: option match for multiple choice, the
  // judge's partial credit for open-ended items (absent without a judge).
  std::optional<double> item_score;
  bool multiple_choice = false;
  bool adversarial = false;  // LoCoMo category 5: abstaining is correct
  bool abstained = false;
};

struct ReportData {
  std::string dataset;  // e.g. "locomo"
  std::string command;  // the command line that made it
  std::vector<std::string> inputs;
  RetrievalReport retrieval;
  std::vector<double> latency_ms;  // full-pipeline Retrieve latencies
  std::vector<QaItem> qa;
  bool judge_configured = false;
  // Judge calls that failed or whose verdict could not be read: the item is
  // left unjudged (out of accuracy and MeanQ), counted here, never fatal.
  size_t judge_failures = 0;
  std::string judge_failure_example;  // the first failure's message
  bool socialmem = false;             // report MeanQ/MeanN
  // Display names of question categories (e.g. LoCoMo "2" -> "temporal").
  std::map<std::string, std::string> category_names;
  double seconds = 0;  // wall time of the run
  // Per-question texts (question, gold, answer) in report.json; off by
  // default, so a report on licensed benchmark data does not copy it.
  bool include_texts = false;
  // Stage -> "offline" or "provider model at base_url".
  std::map<std::string, std::string> stage_models;
  // Model tokens (in + out) per answered question, by stage, and in all.
  std::map<std::string, std::vector<double>> tokens_by_stage;
  std::vector<double> tokens_per_question;
};

// Writes report.json, report.md and the plots (recall_at_k.png,
// categories.png, latency.png) into `dir` (created). Plots need gnuplot on
// PATH; without it the data and scripts are still written and the summary
// says so. Returns the Markdown text.
absl::StatusOr<std::string> WriteReport(const ReportData& data, const std::string& dir);

}  // namespace speakermem::eval

#endif  // SPEAKERMEM_EVAL_REPORT_H_

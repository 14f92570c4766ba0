#include "eval/retrieval_eval.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace speakermem::eval {

absl::StatusOr<RetrievalReport> EvaluateRetrieval(
    const std::vector<datasets::Conversation>& conversations,
    const std::vector<std::string>& configs, const std::vector<size_t>& ks,
    const RetrieveFn& retrieve, const std::function<void(size_t, size_t)>& progress) {
  RetrievalReport rep;
  rep.ks = ks;
  size_t total = 0;
  for (const auto& c : conversations) total += c.questions.size();
  size_t done = 0;
  const size_t max_k = ks.empty() ? 0 : *std::max_element(ks.begin(), ks.end());
  (void)max_k;
  for (const auto& conv : conversations) {
    std::set<std::string> ids;
    for (const auto& m : conv.messages) ids.insert(m.message_id);
    for (const auto& q : conv.questions) {
      ++rep.questions_total;
      std::set<std::string> evidence;
      for (const auto& e : q.evidence) {
        if (ids.count(e)) {
          evidence.insert(e);
        } else {
          ++rep.evidence_ids_dropped;
        }
      }
      if (evidence.empty()) {
        ++rep.questions_skipped;
        if (progress) progress(++done, total);
        continue;
      }
      for (const auto& config : configs) {
        ConfigReport& cr = rep.configs[config];
        RecallStats& cat = cr.by_category[q.category.empty() ? "none" : q.category];
        ++cr.overall.questions;
        ++cat.questions;
        // One retrieval at the largest k; each recall@k reads its first k.
        const size_t max_k = *std::max_element(ks.begin(), ks.end());
        absl::StatusOr<std::vector<std::string>> got =
            retrieve(conv.channel, q.question, config, max_k);
        if (!got.ok()) return got.status();
        const size_t ranked =
            static_cast<size_t>(std::find(got->begin(), got->end(), std::string()) - got->begin());
        for (size_t k : ks) {
          size_t found = 0;
          std::set<std::string> seen;
          for (size_t i = 0; i < got->size(); ++i) {
            if (i >= k && i < ranked) continue;  // beyond the first k of the ranking
            found += evidence.count((*got)[i]) && seen.insert((*got)[i]).second;
          }
          double recall = static_cast<double>(found) / static_cast<double>(evidence.size());
          cr.overall.recall[k] += recall;
          cat.recall[k] += recall;
          cr.overall.hit[k] += found > 0;
          cat.hit[k] += found > 0;
        }
      }
      if (progress) progress(++done, total);
    }
  }
  return rep;
}

namespace {

nlohmann::json StatsJson(const RecallStats& s, const std::vector<size_t>& ks) {
  nlohmann::json recall = nlohmann::json::object(), hit = nlohmann::json::object();
  for (size_t k : ks) {
    double n = s.questions == 0 ? 1 : static_cast<double>(s.questions);
    auto r = s.recall.find(k);
    auto h = s.hit.find(k);
    recall[std::to_string(k)] = 100.0 * (r == s.recall.end() ? 0 : r->second) / n;
    hit[std::to_string(k)] = 100.0 * (h == s.hit.end() ? 0 : h->second) / n;
  }
  return {{"questions", s.questions}, {"recall", recall}, {"hit", hit}};
}

}  // namespace

std::string ReportJson(const RetrievalReport& report, const std::string& dataset) {
  nlohmann::json configs = nlohmann::json::object();
  for (const auto& [name, cr] : report.configs) {
    nlohmann::json j = StatsJson(cr.overall, report.ks);
    nlohmann::json cats = nlohmann::json::object();
    for (const auto& [cat, s] : cr.by_category) cats[cat] = StatsJson(s, report.ks);
    j["by_category"] = cats;
    configs[name] = j;
  }
  nlohmann::json out = {{"dataset", dataset},
                        {"configs", configs},
                        {"questions_total", report.questions_total},
                        {"questions_skipped_no_evidence", report.questions_skipped},
                        {"evidence_ids_dropped", report.evidence_ids_dropped},
                        {"metric", "System 1 evidence recall@k and hit@k, percent"}};
  return out.dump(2);
}

}  // namespace speakermem::eval

#include "eval/recall_tuning.h"

#include <set>

namespace speakermem::eval {

ObjectiveFn MeanRecallObjective(const std::vector<datasets::Conversation>* conversations) {
  return [conversations](const std::vector<QuestionScore>& scores, const std::vector<bool>& use) {
    std::map<std::string, std::pair<double, size_t>> by_dataset;
    for (const auto& q : scores) {
      if (!use[q.conversation]) continue;
      auto& [sum, n] = by_dataset[(*conversations)[q.conversation].dataset];
      sum += q.recall[1];
      ++n;
    }
    double total = 0;
    for (const auto& [name, s] : by_dataset) total += s.first / static_cast<double>(s.second);
    return by_dataset.empty() ? 0 : total / static_cast<double>(by_dataset.size());
  };
}

ScoreFn RecallScore(RankFn rank) {
  return [rank = std::move(rank)](const datasets::Conversation& conv, const datasets::Question& q,
                                  const std::set<std::string>& evidence,
                                  const Setting& setting) -> absl::StatusOr<QuestionScore> {
    absl::StatusOr<std::vector<std::string>> got = rank(conv, q.question, setting);
    if (!got.ok()) return got.status();
    QuestionScore qs;
    for (size_t i = 0; i < 3; ++i) {
      std::set<std::string> top(got->begin(), got->begin() + std::min(got->size(), kTuningKs[i]));
      size_t found = 0;
      for (const auto& e : evidence) found += top.count(e);
      qs.recall[i] = static_cast<double>(found) / static_cast<double>(evidence.size());
    }
    return qs;
  };
}

RecallTuner::RecallTuner(const std::vector<datasets::Conversation>* conversations, ScoreFn score,
                         std::function<void(size_t)> progress, ObjectiveFn objective)
    : conversations_(conversations),
      score_(std::move(score)),
      progress_(std::move(progress)),
      objective_(objective ? std::move(objective) : MeanRecallObjective(conversations)) {}

std::set<std::string> KnownEvidence(const datasets::Question& q, const std::set<std::string>& ids) {
  std::set<std::string> known;
  for (const auto& e : q.evidence) {
    if (ids.count(e)) known.insert(e);
  }
  return known;
}

absl::StatusOr<const std::vector<QuestionScore>*> RecallTuner::Score(const Setting& setting) {
  auto it = cache_.find(setting);
  if (it != cache_.end()) return it->second.get();
  auto scores = std::make_unique<std::vector<QuestionScore>>();
  for (size_t c = 0; c < conversations_->size(); ++c) {
    const datasets::Conversation& conv = (*conversations_)[c];
    std::set<std::string> ids;
    for (const auto& m : conv.messages) ids.insert(m.message_id);
    for (const auto& q : conv.questions) {
      const std::set<std::string> evidence = KnownEvidence(q, ids);
      if (evidence.empty()) continue;
      absl::StatusOr<QuestionScore> qs = score_(conv, q, evidence, setting);
      if (!qs.ok()) return qs.status();
      qs->conversation = c;
      qs->category = q.category.empty() ? "none" : q.category;
      scores->push_back(std::move(*qs));
    }
  }
  const std::vector<QuestionScore>* out = scores.get();
  cache_.emplace(setting, std::move(scores));
  if (progress_) progress_(cache_.size());
  return out;
}

absl::StatusOr<Setting> RecallTuner::Tune(const std::vector<TunableConstant>& constants,
                                          Setting start, const std::vector<bool>& train,
                                          int passes) {
  Setting current = std::move(start);
  for (int pass = 0; pass < passes; ++pass) {
    bool changed = false;
    for (const auto& c : constants) {
      double best_value = current[c.name], best = -1;
      for (double v : c.grid) {
        Setting s = current;
        s[c.name] = v;
        absl::StatusOr<const std::vector<QuestionScore>*> scores = Score(s);
        if (!scores.ok()) return scores.status();
        double o = Objective(**scores, train);
        if (o > best + 1e-12) {
          best = o;
          best_value = v;
        }
      }
      changed = changed || best_value != current[c.name];
      current[c.name] = best_value;
    }
    if (!changed) break;
  }
  return current;
}

absl::StatusOr<Setting> RecallTuner::TuneExhaustive(const std::vector<TunableConstant>& constants,
                                                    const std::vector<bool>& train) {
  Setting best_setting;
  double best = -1;
  std::vector<size_t> at(constants.size(), 0);  // an odometer over the grids
  while (true) {
    Setting s;
    for (size_t c = 0; c < constants.size(); ++c) s[constants[c].name] = constants[c].grid[at[c]];
    absl::StatusOr<const std::vector<QuestionScore>*> scores = Score(s);
    if (!scores.ok()) return scores.status();
    const double o = Objective(**scores, train);
    if (o > best + 1e-12) {
      best = o;
      best_setting = s;
    }
    size_t c = constants.size();
    while (c > 0 && ++at[c - 1] == constants[c - 1].grid.size()) at[--c] = 0;
    if (c == 0) return best_setting;
  }
}

absl::StatusOr<LooResult> LeaveOneConversationOut(RecallTuner* tuner,
                                                  const std::vector<TunableConstant>& constants,
                                                  const Setting& start, size_t conversations,
                                                  Search search) {
  auto tune = [&](const std::vector<bool>& train) {
    return search == Search::kExhaustive ? tuner->TuneExhaustive(constants, train)
                                         : tuner->Tune(constants, start, train);
  };
  LooResult r;
  std::vector<bool> all(conversations, true);
  absl::StatusOr<Setting> in = tune(all);
  if (!in.ok()) return in.status();
  r.in_sample = *in;
  absl::StatusOr<const std::vector<QuestionScore>*> in_scores = tuner->Score(r.in_sample);
  if (!in_scores.ok()) return in_scores.status();
  r.in_sample_recall10.assign(conversations, 0);
  r.held_out_recall10.assign(conversations, 0);
  r.questions.assign(conversations, 0);
  for (const auto& q : **in_scores) ++r.questions[q.conversation];
  for (size_t c = 0; c < conversations; ++c) {
    std::vector<bool> only(conversations, false);
    only[c] = true;
    r.in_sample_recall10[c] = tuner->Objective(**in_scores, only);
  }
  for (size_t held = 0; held < conversations; ++held) {
    std::vector<bool> train(conversations, true);
    train[held] = false;
    absl::StatusOr<Setting> fold = tune(train);
    if (!fold.ok()) return fold.status();
    absl::StatusOr<const std::vector<QuestionScore>*> scores = tuner->Score(*fold);
    if (!scores.ok()) return scores.status();
    std::vector<bool> only(conversations, false);
    only[held] = true;
    r.held_out_recall10[held] = tuner->Objective(**scores, only);
    for (const auto& q : **scores) {
      if (q.conversation == held) r.held_out.push_back(q);
    }
    r.fold_settings.push_back(*fold);
  }
  return r;
}

}  // namespace speakermem::eval

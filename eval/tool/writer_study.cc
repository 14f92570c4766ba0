#include "eval/tool/writer_study.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/writer_eval.h"
#include "nlohmann/json.hpp"
#include "text/text.h"
#include "writer/writer_model.h"

namespace speakermem::cli {

using text::ContentTokens;
namespace {

// The grid the constants are chosen from.
std::vector<writer::OfflineWriterParams> Grid() {
  std::vector<writer::OfflineWriterParams> grid;
  for (size_t min_content : {1, 2, 3, 4}) {
    for (double merge : {0.4, 0.2, 0.1, 0.0}) grid.push_back({min_content, merge});
  }
  return grid;
}

std::string Describe(const writer::OfflineWriterParams& p) {
  return absl::StrFormat("min_content %zu, merge %.1f", p.min_content, p.merge_similarity);
}

bool Same(const writer::OfflineWriterParams& a, const writer::OfflineWriterParams& b) {
  return a.min_content == b.min_content && a.merge_similarity == b.merge_similarity;
}

struct Cell {
  eval::WriterEvalResult result;
  double baseline = 0;
};

// What the predicted records look like.
struct Shape {
  size_t messages = 0, records = 0, written = 0, questions = 0, acks = 0;
  std::map<std::string, size_t> layers;
  void Add(const eval::Trajectory& t, const eval::WriterEvalResult& r) {
    messages += t.messages.size();
    records += r.predicted.entries.size();
    written += r.predicted.entries.size() + r.update_links;
    for (const auto& e : r.predicted.entries) {
      questions += absl::StrContains(e.content, "?") || absl::StrContains(e.content, " asks:");
      acks += ContentTokens(e.content).size() < 2;
      ++layers[e.layer];
    }
  }
};

bool IsSocialNetwork(const std::string& file) { return absl::StartsWith(file, "social_"); }

}  // namespace

int RunWriterStudy(const WriterStudyOptions& o) {
  std::vector<eval::Trajectory> trajectories;
  std::vector<std::string> names;
  for (const auto& path : o.paths) {
    absl::StatusOr<eval::Trajectory> t = eval::LoadTrajectory(path);
    if (!t.ok()) {
      std::fprintf(stderr, "error: %s\n", t.status().ToString().c_str());
      return 1;
    }
    trajectories.push_back(std::move(*t));
    names.push_back(path.substr(path.find_last_of('/') + 1));
  }
  char tmpl[] = "/tmp/speakermem-eval-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::fprintf(stderr, "error: mkdtemp failed\n");
    return 1;
  }
  const std::string work = tmpl;
  const std::vector<writer::OfflineWriterParams> grid = Grid();
  // cells[g][t]: the Writer with grid point g on trajectory t.
  std::vector<std::vector<Cell>> cells(grid.size(), std::vector<Cell>(trajectories.size()));
  for (size_t g = 0; g < grid.size(); ++g) {
    std::fprintf(stderr, "eval writer: constants %zu/%zu (%s) on %zu trajectories\n", g + 1,
                 grid.size(), Describe(grid[g]).c_str(), trajectories.size());
    for (size_t t = 0; t < trajectories.size(); ++t) {
      absl::StatusOr<eval::WriterEvalResult> r =
          eval::EvaluateWriter(trajectories[t], writer::NewOfflineWriter(grid[g]), work + "/db");
      if (!r.ok()) {
        std::fprintf(stderr, "error: %s: %s\n", names[t].c_str(), r.status().ToString().c_str());
        return 1;
      }
      cells[g][t].baseline = writer::SpeakerLevenshtein(
                                 eval::OnePerMessageBaseline(trajectories[t]), r->reference.entries)
                                 .score;
      cells[g][t].result = std::move(*r);
    }
  }
  std::filesystem::remove_all(work);

  // The grid point with the best mean SpeakerLevenshtein over every
  // trajectory but `held_out` (ties: the earlier point).
  auto choose = [&](size_t held_out) {
    size_t best = 0;
    double best_mean = -1;
    for (size_t g = 0; g < grid.size(); ++g) {
      double sum = 0;
      for (size_t t = 0; t < trajectories.size(); ++t) {
        if (t != held_out) sum += cells[g][t].result.sl.score;
      }
      if (sum > best_mean + 1e-12) {
        best_mean = sum;
        best = g;
      }
    }
    return best;
  };
  const size_t in_sample = choose(SIZE_MAX);
  const writer::OfflineWriterParams defaults;
  const bool defaults_chosen = Same(grid[in_sample], defaults);

  nlohmann::json out = {{"trajectories", nlohmann::json::array()}};
  std::string md;
  absl::StrAppend(
      &md,
      "| trajectory | SL (held out) | baseline | chain | memory reward | records | ref "
      "records | messages | constants chosen on the others |\n|---|---|---|---|---|---|---|"
      "---|---|\n");
  double sum_sl = 0, sum_base = 0, sum_chain = 0, sum_mem = 0;
  double soc_sl = 0, soc_base = 0, soc_chain = 0, soc_mem = 0;
  size_t social = 0;
  Shape shape;
  for (size_t t = 0; t < trajectories.size(); ++t) {
    const size_t g = choose(t);
    const Cell& c = cells[g][t];
    const eval::WriterEvalResult& r = c.result;
    absl::StrAppendFormat(&md, "| %s | %.4f | %.4f | %.4f | %.4f | %zu | %zu | %zu | %s |\n",
                          names[t], r.sl.score, c.baseline, r.chain, r.memory_reward,
                          r.predicted.entries.size(), r.reference.entries.size(),
                          trajectories[t].messages.size(), Describe(grid[g]));
    out["trajectories"].push_back({{"file", names[t]},
                                   {"speaker_levenshtein", r.sl.score},
                                   {"macro", r.sl.macro},
                                   {"worst_owner", r.sl.worst},
                                   {"chain", r.chain},
                                   {"memory_reward", r.memory_reward},
                                   {"one_per_message_baseline", c.baseline},
                                   {"records", r.predicted.entries.size()},
                                   {"reference_records", r.reference.entries.size()},
                                   {"update_links", r.update_links},
                                   {"reference_update_links", r.reference.edges.size()},
                                   {"messages", trajectories[t].messages.size()},
                                   {"writer_calls", r.writer_calls},
                                   {"min_content", grid[g].min_content},
                                   {"merge_similarity", grid[g].merge_similarity}});
    sum_sl += r.sl.score;
    sum_base += c.baseline;
    sum_chain += r.chain;
    sum_mem += r.memory_reward;
    if (IsSocialNetwork(names[t])) {
      ++social;
      soc_sl += r.sl.score;
      soc_base += c.baseline;
      soc_chain += r.chain;
      soc_mem += r.memory_reward;
      shape.Add(trajectories[t], r);
    }
    if (!o.dump_dir.empty()) {
      std::ofstream dump(o.dump_dir + "/" + names[t] + ".states.jsonl");
      for (const auto* st : {&r.predicted, &r.reference}) {
        for (const auto& e : st->entries) {
          dump << nlohmann::json{{"state", st == &r.predicted ? "predicted" : "reference"},
                                 {"owner", e.owner},
                                 {"source", e.source},
                                 {"layer", e.layer},
                                 {"content", e.content}}
                      .dump()
               << "\n";
        }
      }
    }
  }
  const double n = static_cast<double>(trajectories.size());
  absl::StrAppendFormat(&md, "| mean, all %zu | %.4f | %.4f | %.4f | %.4f | | | | |\n",
                        trajectories.size(), sum_sl / n, sum_base / n, sum_chain / n, sum_mem / n);
  if (social > 0) {
    const double s = static_cast<double>(social);
    absl::StrAppendFormat(&md,
                          "| mean, %zu SocialMem networks | %.4f | %.4f | %.4f | %.4f | | | | |\n",
                          social, soc_sl / s, soc_base / s, soc_chain / s, soc_mem / s);
  }
  absl::StrAppendFormat(&md,
                        "\nConstants chosen on all trajectories: %s; compiled defaults: %s%s.\n",
                        Describe(grid[in_sample]), Describe(defaults),
                        defaults_chosen ? " (the same)" : " (DIFFERENT: update the defaults)");
  if (shape.messages > 0) {
    const double m = static_cast<double>(shape.messages);
    const double rec = static_cast<double>(std::max<size_t>(1, shape.records));
    absl::StrAppendFormat(
        &md,
        "\nRecords on the SocialMem networks (held-out constants): %zu messages, %zu records "
        "active (%.2f per message), %zu written with superseded ones (%.2f per message); "
        "%zu questions (%.1f%%), %zu with fewer than two content words (%.1f%%); layers:",
        shape.messages, shape.records, static_cast<double>(shape.records) / m, shape.written,
        static_cast<double>(shape.written) / m, shape.questions, 100.0 * shape.questions / rec,
        shape.acks, 100.0 * shape.acks / rec);
    for (const auto& [layer, count] : shape.layers) {
      absl::StrAppendFormat(&md, " %s %zu (%.1f%%)", layer, count, 100.0 * count / rec);
    }
    absl::StrAppend(&md, ".\n");
    out["socialmem_records"] = {{"messages", shape.messages},  {"records", shape.records},
                                {"written", shape.written},    {"questions", shape.questions},
                                {"short_records", shape.acks}, {"layers", shape.layers}};
  }
  absl::StrAppend(&md,
                  "\nEvery grid point on all trajectories (records per message on the "
                  "SocialMem networks):\n\n| constants | mean SL | records per message |\n"
                  "|---|---|---|\n");
  for (size_t g = 0; g < grid.size(); ++g) {
    double sum = 0;
    Shape at;
    for (size_t t = 0; t < trajectories.size(); ++t) {
      sum += cells[g][t].result.sl.score;
      if (IsSocialNetwork(names[t])) at.Add(trajectories[t], cells[g][t].result);
    }
    absl::StrAppendFormat(&md, "| %s | %.4f | %.2f |\n", Describe(grid[g]), sum / n,
                          static_cast<double>(at.records) / std::max<size_t>(1, at.messages));
  }
  out["mean_speaker_levenshtein"] = sum_sl / n;
  out["mean_baseline"] = sum_base / n;
  out["mean_chain"] = sum_chain / n;
  out["mean_memory_reward"] = sum_mem / n;
  if (social > 0) {
    out["socialmem_mean_speaker_levenshtein"] = soc_sl / static_cast<double>(social);
    out["socialmem_mean_baseline"] = soc_base / static_cast<double>(social);
  }
  out["chosen_on_all"] = Describe(grid[in_sample]);
  out["defaults_chosen"] = defaults_chosen;
  if (o.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%s", md.c_str());
  }
  if (!o.md_out.empty()) {
    std::ofstream f(o.md_out);
    f << "# Offline Writer on the development trajectories\n\n"
         "Generated by `speakermem eval writer --md "
      << o.md_out
      << " ../shared/data/socialmem/trajectories/*.json`; do not edit by hand.\n\n"
         "Each trajectory is scored with the constants chosen on the other trajectories "
         "(leave-one-network-out: the best mean SpeakerLevenshtein on the others); the "
         "reference is the trajectory's actions replayed through "
         "SpeakerMem's own validation.\n\n"
      << md;
  }
  return defaults_chosen ? 0 : 3;
}

}  // namespace speakermem::cli

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
#include "absl/strings/str_join.h"
#include "eval/writer_eval.h"
#include "nlohmann/json.hpp"
#include "text/text.h"
#include "writer/speaker_levenshtein.h"
#include "writer/writer_model.h"

namespace speakermem::cli {

using text::ContentTokens;
namespace {

// The grid the constants are chosen from. Caps on a person's core records
// above two (3, or none) raise SpeakerLevenshtein a little on these
// trajectories but lower System 2 row precision (`speakermem eval rows`
// leave-one-out from_ids precision, LoCoMo / SocialMem: cap 2 34.9 / 46.4%,
// cap 3 34.3 / 45.4%, no cap 33.9 / 45.9%), so they are not in the grid.
std::vector<writer::OfflineWriterParams> Grid() {
  std::vector<writer::OfflineWriterParams> grid;
  for (size_t min_words : {0, 3, 4}) {
    for (size_t max_core : {1, 2}) {
      for (size_t min_content : {1, 2, 3, 4}) {
        for (double merge : {0.4, 0.2, 0.1, 0.0}) {
          writer::OfflineWriterParams p;
          p.min_content = min_content;
          p.merge_similarity = merge;
          p.max_core_per_segment = max_core;
          p.min_record_words = min_words;
          grid.push_back(p);
        }
      }
    }
  }
  return grid;
}

std::string Describe(const writer::OfflineWriterParams& p) {
  return absl::StrFormat("min_content %zu, merge %.1f, max_core %zu, min_words %zu", p.min_content,
                         p.merge_similarity, p.max_core_per_segment, p.min_record_words);
}

bool Same(const writer::OfflineWriterParams& a, const writer::OfflineWriterParams& b) {
  return a.min_content == b.min_content && a.merge_similarity == b.merge_similarity &&
         a.max_core_per_segment == b.max_core_per_segment &&
         a.min_record_words == b.min_record_words && a.group_arrangements == b.group_arrangements;
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

// Our records that the SpeakerLevenshtein alignment pairs with a reference
// record at a soft match of at least `floor`: what a perfect filter of what
// is not worth remembering would keep (a diagnostic, it needs the reference).
std::vector<writer::StateEntry> AlignedRecords(const std::vector<writer::StateEntry>& pred,
                                               const std::vector<writer::StateEntry>& ref,
                                               double floor) {
  const std::vector<double> matched = writer::AlignedMatches(pred, ref);
  std::vector<writer::StateEntry> kept;
  for (size_t i = 0; i < pred.size(); ++i) {
    if (matched[i] > 0 && matched[i] >= floor) kept.push_back(pred[i]);
  }
  return kept;
}

// Share of the words of `texts` that are English function words: near 0.4
// for English prose, near 0 for most other languages.
template <typename Texts, typename Get>
double EnglishShare(const Texts& texts, Get get) {
  size_t words = 0, function = 0;
  for (const auto& t : texts) {
    for (const auto& w : writer::NormalizedTokens(get(t))) {
      ++words;
      function += text::IsStopword(w);
    }
  }
  return words == 0 ? 0 : static_cast<double>(function) / static_cast<double>(words);
}

// A reference written in another language than its chat (the reference
// Writer translated it): no Writer that keeps the chat's words can match it,
// which the report says instead of averaging it in silently.
bool ReferenceInAnotherLanguage(const eval::Trajectory& t) {
  const double chat = EnglishShare(t.messages, [](const auto& m) { return m.text; });
  const double ref = EnglishShare(t.reference, [](const auto& e) { return e.content; });
  return chat > 0.2 && ref < chat / 3;
}

// Sums of the figures over trajectories.
struct Sums {
  double sl = 0, base = 0, chain = 0, mem = 0;
  size_t n = 0;
  void Add(const Cell& c) {
    sl += c.result.sl.score;
    base += c.baseline;
    chain += c.result.chain;
    mem += c.result.memory_reward;
    ++n;
  }
};

// The offline Writer on reference trajectories: every grid point on every
// trajectory, each trajectory scored with the constants chosen on the others.
class WriterStudy {
 public:
  explicit WriterStudy(const WriterStudyOptions& o) : o_(o), grid_(Grid()) {}

  int Run() {
    if (absl::Status s = Load(); !s.ok()) return Error(s);
    if (absl::Status s = Score(); !s.ok()) return Error(s);
    const size_t in_sample = Choose(SIZE_MAX);
    const writer::OfflineWriterParams defaults;
    const bool defaults_chosen = Same(grid_[in_sample], defaults);
    std::string md = HeldOut();
    const double n = static_cast<double>(trajectories_.size());
    absl::StrAppendFormat(&md, "| mean, all %zu | %.4f | %.4f | %.4f | %.4f | | | | |\n",
                          trajectories_.size(), all_.sl / n, all_.base / n, all_.chain / n,
                          all_.mem / n);
    if (social_.n > 0) {
      const double s = static_cast<double>(social_.n);
      absl::StrAppendFormat(
          &md, "| mean, %zu SocialMem networks | %.4f | %.4f | %.4f | %.4f | | | | |\n", social_.n,
          social_.sl / s, social_.base / s, social_.chain / s, social_.mem / s);
    }
    absl::StrAppendFormat(&md,
                          "\nConstants chosen on all trajectories: %s; compiled defaults: %s%s.\n",
                          Describe(grid_[in_sample]), Describe(defaults),
                          defaults_chosen ? " (the same)" : " (DIFFERENT: update the defaults)");
    md += ShapeText();
    absl::StatusOr<std::string> arrangements = ArrangementsText();
    if (!arrangements.ok()) return Error(arrangements.status());
    md += *arrangements;
    md += CeilingText();
    md += ExtractiveText();
    md += LanguageText();
    md += GridTable();
    out_["mean_speaker_levenshtein"] = all_.sl / n;
    out_["mean_baseline"] = all_.base / n;
    out_["mean_chain"] = all_.chain / n;
    out_["mean_memory_reward"] = all_.mem / n;
    if (social_.n > 0) {
      out_["socialmem_mean_speaker_levenshtein"] = social_.sl / static_cast<double>(social_.n);
      out_["socialmem_mean_baseline"] = social_.base / static_cast<double>(social_.n);
    }
    out_["chosen_on_all"] = Describe(grid_[in_sample]);
    out_["defaults_chosen"] = defaults_chosen;
    Print(md);
    return defaults_chosen ? 0 : 3;
  }

 private:
  static int Error(const absl::Status& s) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return 1;
  }

  absl::Status Load() {
    for (const auto& path : o_.paths) {
      absl::StatusOr<eval::Trajectory> t = eval::LoadTrajectory(path);
      if (!t.ok()) return absl::Status(t.status().code(), t.status().ToString());
      trajectories_.push_back(std::move(*t));
      names_.push_back(path.substr(path.find_last_of('/') + 1));
    }
    return absl::OkStatus();
  }

  // cells_[g][t]: the Writer with grid point g on trajectory t.
  absl::Status Score() {
    char tmpl[] = "/tmp/speakermem-eval-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
    const std::string work = tmpl;
    cells_.assign(grid_.size(), std::vector<Cell>(trajectories_.size()));
    for (size_t g = 0; g < grid_.size(); ++g) {
      std::fprintf(stderr, "eval writer: constants %zu/%zu (%s) on %zu trajectories\n", g + 1,
                   grid_.size(), Describe(grid_[g]).c_str(), trajectories_.size());
      for (size_t t = 0; t < trajectories_.size(); ++t) {
        absl::StatusOr<eval::WriterEvalResult> r = eval::EvaluateWriter(
            trajectories_[t], writer::NewOfflineWriter(grid_[g]), work + "/db");
        if (!r.ok()) {
          return absl::Status(r.status().code(),
                              absl::StrCat(names_[t], ": ", r.status().ToString()));
        }
        cells_[g][t].baseline =
            writer::SpeakerLevenshtein(eval::OnePerMessageBaseline(trajectories_[t]),
                                       r->reference.entries)
                .score;
        cells_[g][t].result = std::move(*r);
      }
    }
    std::filesystem::remove_all(work);
    return absl::OkStatus();
  }

  // The rule the grid leaves off (writer.offline_group_arrangements), switched
  // on at each trajectory's held-out constants: what it would change.
  absl::StatusOr<std::string> ArrangementsText() const {
    char tmpl[] = "/tmp/speakermem-eval-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
    const std::string work = tmpl;
    Sums on;
    for (size_t t = 0; t < trajectories_.size(); ++t) {
      if (!IsSocialNetwork(names_[t])) continue;
      writer::OfflineWriterParams p = grid_[Choose(t)];
      p.group_arrangements = true;
      absl::StatusOr<eval::WriterEvalResult> r =
          eval::EvaluateWriter(trajectories_[t], writer::NewOfflineWriter(p), work + "/db");
      if (!r.ok())
        return absl::Status(r.status().code(),
                            absl::StrCat(names_[t], ": ", r.status().ToString()));
      on.Add(Cell{std::move(*r), 0});
    }
    std::filesystem::remove_all(work);
    if (on.n == 0) return std::string();
    const double n = static_cast<double>(on.n);
    return absl::StrFormat(
        "\nWith `writer.offline_group_arrangements` on (off by default; not in the grid), at "
        "the same held-out constants: mean SL on the %zu SocialMem networks %.4f (off: %.4f), "
        "chain %.4f, memory reward %.4f. `speakermem eval rows --config` with it on shows what "
        "it does to the System 2 rows.\n",
        on.n, on.sl / n, social_.sl / n, on.chain / n, on.mem / n);
  }

  // The networks whose reference is in another language than the chat, and
  // the held-out mean without them (a diagnostic; it chooses nothing).
  std::string LanguageText() const {
    std::vector<std::string> foreign;
    Sums rest;
    for (size_t t = 0; t < trajectories_.size(); ++t) {
      if (!IsSocialNetwork(names_[t])) continue;
      if (ReferenceInAnotherLanguage(trajectories_[t])) {
        foreign.push_back(names_[t]);
      } else {
        rest.Add(cells_[Choose(t)][t]);
      }
    }
    if (foreign.empty() || rest.n == 0) return "";
    const double n = static_cast<double>(rest.n);
    return absl::StrFormat(
        "\nReference language: the reference records of %s are not in the chat's language "
        "(under a third of the chat's share of English function words; the reference Writer "
        "translated). No Writer that keeps the chat's words can match them. Held-out mean SL "
        "on the other %zu SocialMem networks %.4f (baseline %.4f).\n",
        absl::StrJoin(foreign, ", "), rest.n, rest.sl / n, rest.base / n);
  }

  // Where the held-out score is lost (diagnostic; it chooses nothing): the
  // SocialMem mean if our GROUP records were the reference's, and if each
  // record took the owner, source and layer of the reference record its
  // content matches best.
  std::string CeilingText() const {
    constexpr double kAlignedFloor = 0.2;
    double group = 0, coords = 0, filtered = 0;
    size_t n = 0, kept = 0, messages = 0;
    for (size_t t = 0; t < trajectories_.size(); ++t) {
      if (!IsSocialNetwork(names_[t])) continue;
      const eval::WriterEvalResult& r = cells_[Choose(t)][t].result;
      const std::vector<writer::StateEntry>& ref = r.reference.entries;
      std::vector<writer::StateEntry> with_group, with_coords;
      for (const auto& e : r.predicted.entries) {
        if (e.owner != writer::kGroupOwner) with_group.push_back(e);
        writer::StateEntry moved = e;
        double best = -1;
        for (const auto& f : ref) {
          const double m = writer::SoftMatch(e.content, f.content);
          if (m <= best) continue;
          best = m;
          moved.owner = f.owner;
          moved.source = f.source;
          moved.layer = f.layer;
        }
        with_coords.push_back(std::move(moved));
      }
      for (const auto& f : ref) {
        if (f.owner == writer::kGroupOwner) with_group.push_back(f);
      }
      group += writer::SpeakerLevenshtein(with_group, ref).score;
      coords += writer::SpeakerLevenshtein(with_coords, ref).score;
      const std::vector<writer::StateEntry> aligned =
          AlignedRecords(r.predicted.entries, ref, kAlignedFloor);
      filtered += writer::SpeakerLevenshtein(aligned, ref).score;
      kept += aligned.size();
      messages += trajectories_[t].messages.size();
      ++n;
    }
    if (n == 0) return "";
    return absl::StrFormat(
        "\nWhere the score is lost (diagnostic, held-out constants; it chooses nothing): mean "
        "SL on the %zu SocialMem networks %.4f with the reference's GROUP records in place of "
        "ours, %.4f with each of our records given the owner, source and layer of the "
        "reference record whose content it matches best (SoftMatch), %.4f (%.2f records per "
        "message) with only our records that the alignment pairs with a reference record at a "
        "soft match of %.1f or more (a perfect filter of what is not worth remembering).\n",
        n, group / static_cast<double>(n), coords / static_cast<double>(n),
        filtered / static_cast<double>(n),
        static_cast<double>(kept) / static_cast<double>(messages), kAlignedFloor);
  }

  // What a Writer that copies whole messages could reach (a diagnostic; it
  // chooses nothing): each reference record replaced by the chat message its
  // content matches best, under the reference's owner, source and layer, and
  // under the message speaker's own (a person's record as the speaker's
  // core, a GROUP record with the speaker as source); and each of our records
  // replaced by the message it matches best (what our rewording adds).
  std::string ExtractiveText() const {
    double exact = 0, speaker = 0, ours = 0, copied = 0, group_picked = 0;
    size_t n = 0;
    for (size_t t = 0; t < trajectories_.size(); ++t) {
      if (!IsSocialNetwork(names_[t])) continue;
      const eval::WriterEvalResult& r = cells_[Choose(t)][t].result;
      const std::vector<storage::Message>& messages = trajectories_[t].messages;
      if (messages.empty()) continue;
      auto best_message = [&](const std::string& content) -> const storage::Message& {
        size_t best = 0;
        double best_match = -1;
        for (size_t i = 0; i < messages.size(); ++i) {
          const double m = writer::SoftMatch(messages[i].text, content);
          if (m > best_match) best_match = m, best = i;
        }
        return messages[best];
      };
      std::vector<writer::StateEntry> as_reference, as_speaker, as_messages, picked;
      for (const auto& f : r.reference.entries) {
        const storage::Message& m = best_message(f.content);
        as_reference.push_back(writer::StateEntry{f.owner, f.source, f.layer, m.text});
        const bool group = f.owner == writer::kGroupOwner;
        as_speaker.push_back(writer::StateEntry{group ? f.owner : m.speaker, m.speaker,
                                                group ? "interaction" : "core", m.text});
        if (group) picked.push_back(writer::StateEntry{f.owner, m.speaker, f.layer, m.text});
      }
      for (const auto& e : r.predicted.entries) {
        as_messages.push_back(
            writer::StateEntry{e.owner, e.source, e.layer, best_message(e.content).text});
        if (e.owner != writer::kGroupOwner) picked.push_back(e);
      }
      exact += writer::SpeakerLevenshtein(as_reference, r.reference.entries).score;
      speaker += writer::SpeakerLevenshtein(as_speaker, r.reference.entries).score;
      ours += r.sl.score;
      copied += writer::SpeakerLevenshtein(as_messages, r.reference.entries).score;
      group_picked += writer::SpeakerLevenshtein(picked, r.reference.entries).score;
      ++n;
    }
    if (n == 0) return "";
    const double d = static_cast<double>(n);
    return absl::StrFormat(
        "\nWhat copying whole messages reaches (diagnostic; it chooses nothing): mean SL on the "
        "%zu SocialMem networks %.4f with each reference record replaced by the chat message "
        "it matches best, under the reference's owner, source and layer; %.4f under the "
        "speaker's own (a person's record as the speaker's core, a GROUP record with the "
        "speaker as source); %.4f with each of our records replaced by the message it matches "
        "best, against %.4f as we write them (what our rewording adds); %.4f with our own "
        "records but, in place of our GROUP records, for each reference GROUP record the "
        "message it matches best, its speaker as source (what choosing messages for GROUP "
        "could reach at best).\n",
        n, exact / d, speaker / d, copied / d, ours / d, group_picked / d);
  }

  // The grid point with the best mean SpeakerLevenshtein over every
  // trajectory but `held_out` (ties: the earlier point).
  size_t Choose(size_t held_out) const {
    size_t best = 0;
    double best_mean = -1;
    for (size_t g = 0; g < grid_.size(); ++g) {
      double sum = 0;
      for (size_t t = 0; t < trajectories_.size(); ++t) {
        if (t != held_out) sum += cells_[g][t].result.sl.score;
      }
      if (sum > best_mean + 1e-12) {
        best_mean = sum;
        best = g;
      }
    }
    return best;
  }

  // One row per trajectory, scored with the constants chosen on the others.
  std::string HeldOut() {
    out_ = {{"trajectories", nlohmann::json::array()}};
    std::string md =
        "| trajectory | SL (held out) | baseline | chain | memory reward | records | ref "
        "records | messages | constants chosen on the others |\n|---|---|---|---|---|---|---|"
        "---|---|\n";
    for (size_t t = 0; t < trajectories_.size(); ++t) {
      const size_t g = Choose(t);
      const Cell& c = cells_[g][t];
      const eval::WriterEvalResult& r = c.result;
      absl::StrAppendFormat(&md, "| %s | %.4f | %.4f | %.4f | %.4f | %zu | %zu | %zu | %s |\n",
                            names_[t], r.sl.score, c.baseline, r.chain, r.memory_reward,
                            r.predicted.entries.size(), r.reference.entries.size(),
                            trajectories_[t].messages.size(), Describe(grid_[g]));
      out_["trajectories"].push_back({{"file", names_[t]},
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
                                      {"messages", trajectories_[t].messages.size()},
                                      {"writer_calls", r.writer_calls},
                                      {"min_content", grid_[g].min_content},
                                      {"merge_similarity", grid_[g].merge_similarity},
                                      {"max_core_per_segment", grid_[g].max_core_per_segment},
                                      {"min_record_words", grid_[g].min_record_words},
                                      {"group_arrangements", grid_[g].group_arrangements}});
      all_.Add(c);
      if (IsSocialNetwork(names_[t])) {
        social_.Add(c);
        shape_.Add(trajectories_[t], r);
      }
      if (!o_.dump_dir.empty()) Dump(names_[t], r);
    }
    return md;
  }

  // Both states of a trajectory as JSON lines in the dump directory: the
  // active records, then the UPDATE edges of their chains.
  void Dump(const std::string& name, const eval::WriterEvalResult& r) const {
    std::ofstream dump(o_.dump_dir + "/" + name + ".states.jsonl");
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
      for (const auto& e : st->edges) {
        dump << nlohmann::json{{"state",
                                st == &r.predicted ? "predicted_update" : "reference_update"},
                               {"owner", e.owner},
                               {"layer", e.layer},
                               {"old", e.old_content},
                               {"new", e.new_content}}
                    .dump()
             << "\n";
      }
    }
  }

  // What the records on the SocialMem networks look like.
  std::string ShapeText() {
    if (shape_.messages == 0) return "";
    const double m = static_cast<double>(shape_.messages);
    const double rec = static_cast<double>(std::max<size_t>(1, shape_.records));
    std::string md = absl::StrFormat(
        "\nRecords on the SocialMem networks (held-out constants): %zu messages, %zu records "
        "active (%.2f per message), %zu written with superseded ones (%.2f per message); "
        "%zu questions (%.1f%%), %zu with fewer than two content words (%.1f%%); layers:",
        shape_.messages, shape_.records, static_cast<double>(shape_.records) / m, shape_.written,
        static_cast<double>(shape_.written) / m, shape_.questions, 100.0 * shape_.questions / rec,
        shape_.acks, 100.0 * shape_.acks / rec);
    for (const auto& [layer, count] : shape_.layers) {
      absl::StrAppendFormat(&md, " %s %zu (%.1f%%)", layer, count, 100.0 * count / rec);
    }
    absl::StrAppend(&md, ".\n");
    out_["socialmem_records"] = {{"messages", shape_.messages},  {"records", shape_.records},
                                 {"written", shape_.written},    {"questions", shape_.questions},
                                 {"short_records", shape_.acks}, {"layers", shape_.layers}};
    return md;
  }

  // Every grid point on all trajectories (in-sample: it shows, it chooses nothing).
  std::string GridTable() const {
    std::string md =
        "\nEvery grid point on all trajectories (records per message on the "
        "SocialMem networks):\n\n| constants | mean SL | mean SL, SocialMem networks | "
        "records per message |\n|---|---|---|---|\n";
    const double n = static_cast<double>(trajectories_.size());
    for (size_t g = 0; g < grid_.size(); ++g) {
      double sum = 0, social = 0;
      Shape at;
      for (size_t t = 0; t < trajectories_.size(); ++t) {
        sum += cells_[g][t].result.sl.score;
        if (!IsSocialNetwork(names_[t])) continue;
        social += cells_[g][t].result.sl.score;
        at.Add(trajectories_[t], cells_[g][t].result);
      }
      size_t networks = 0;
      for (const auto& name : names_) networks += IsSocialNetwork(name);
      absl::StrAppendFormat(&md, "| %s | %.4f | %.4f | %.2f |\n", Describe(grid_[g]), sum / n,
                            social / static_cast<double>(std::max<size_t>(1, networks)),
                            static_cast<double>(at.records) / std::max<size_t>(1, at.messages));
    }
    return md;
  }

  void Print(const std::string& md) const {
    if (o_.json) {
      std::printf("%s\n", out_.dump(2).c_str());
    } else {
      std::printf("%s", md.c_str());
    }
    if (o_.md_out.empty()) return;
    std::ofstream f(o_.md_out);
    f << "# Offline Writer on the development trajectories\n\n"
         "Generated by `speakermem eval writer --md "
      << o_.md_out
      << " ../shared/data/socialmem/trajectories/*.json`; do not edit by hand.\n\n"
         "Each trajectory is scored with the constants chosen on the other trajectories "
         "(leave-one-network-out: the best mean SpeakerLevenshtein on the others); the "
         "reference is the trajectory's actions replayed through "
         "SpeakerMem's own validation.\n\n"
      << md;
  }

  const WriterStudyOptions& o_;
  const std::vector<writer::OfflineWriterParams> grid_;
  std::vector<eval::Trajectory> trajectories_;
  std::vector<std::string> names_;
  std::vector<std::vector<Cell>> cells_;
  Sums all_, social_;
  Shape shape_;
  nlohmann::json out_;
};

}  // namespace

int RunWriterStudy(const WriterStudyOptions& o) { return WriterStudy(o).Run(); }

}  // namespace speakermem::cli

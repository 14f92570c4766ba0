#include "retrieval/compose.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "retrieval/stages.h"

namespace speakermem::retrieval {
namespace {

std::string When(int64_t ms) {
  std::string iso = FormatIsoUtc(ms);
  return absl::StrCat(iso.substr(0, 10), " ", iso.substr(11, 5));
}

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

class Composer {
 public:
  explicit Composer(const std::map<std::string, std::string>& names) : names_(names) {}

  std::string Name(const std::string& id) const {
    if (id == kRowGroup) return "the group";
    auto it = names_.find(id);
    return it == names_.end() || it->second.empty() ? id : it->second;
  }

  // One record cell. `sourced_by`: the row's person when the record is one
  // they voiced about someone else (source-k).
  std::string Cell(const storage::Record& r, const std::string& sourced_by) const {
    std::string out = absl::StrCat("  [", r.record_id, "] ");
    if (!sourced_by.empty()) {
      absl::StrAppend(
          &out, r.owner == kRowGroup
                    ? absl::StrCat("proposed by ", Name(sourced_by), " for the group: ")
                    : absl::StrCat("said by ", Name(sourced_by), " about ", Name(r.owner), ": "));
    }
    absl::StrAppend(&out, r.layer);
    if (sourced_by.empty() && r.source != r.owner) {
      absl::StrAppend(&out, r.owner == kRowGroup ? ", proposed by " : ", from ", Name(r.source));
    }
    absl::StrAppend(&out, ", ", When(r.valid_at_ms),
                    r.superseded_by.empty() ? ", current" : ", history (superseded)");
    if (r.owner == kRowGroup) absl::StrAppend(&out, ", GROUP CONCLUSION");
    absl::StrAppend(&out, ": ", OneLine(r.content), "\n");
    return out;
  }

 private:
  const std::map<std::string, std::string>& names_;
};

}  // namespace

std::string ComposeEvidencePack(const std::vector<RetrievedMessage>& s1,
                                const std::vector<S2Row>& s2,
                                const std::map<std::string, std::string>& names, bool with_memory) {
  Composer c(names);
  std::string out = "Conversation excerpts (verbatim, best first):\n";
  if (s1.empty()) out += "(none)\n";
  for (const auto& rm : s1) {
    const storage::Message& m = rm.message;
    absl::StrAppend(&out, "[", m.message_id, "] ", When(m.timestamp_ms), ", ",
                    c.Name(m.speaker_id.empty() ? m.speaker : m.speaker_id), ": ", OneLine(m.text),
                    rm.newer_than_memory ? " (NEWER THAN MEMORY)" : "", "\n");
  }
  if (!with_memory) return out;
  out += "\nMemory, by row:\n";
  if (s2.empty()) out += "(no rows)\n";
  for (const auto& row : s2) {
    std::string title = row.row == kRowGroup ? "The group" : c.Name(row.row);
    if (row.empty) {
      absl::StrAppend(&out, title, ": (none)\n");
      continue;
    }
    absl::StrAppend(&out, title, ":\n");
    for (const auto& r : row.records) out += c.Cell(r, "");
    for (const auto& r : row.sourced) out += c.Cell(r, row.row);
    if (row.fallback) {
      const storage::Message& m = *row.fallback;
      absl::StrAppend(&out, "  [", m.message_id, "] verbatim message (no record), ",
                      When(m.timestamp_ms), ": ", OneLine(m.text), "\n");
    }
  }
  return out;
}

}  // namespace speakermem::retrieval

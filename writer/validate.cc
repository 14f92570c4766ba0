#include "writer/validate.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "storage/record_id.h"
#include "text/text.h"
#include "text/tokenizer.h"

namespace speakermem::writer {

using text::FindTokenRun;
using text::IsStopword;
using text::StemmedTokens;
using text::Tokenize;
namespace {

bool SameName(const std::string& a, const std::string& b) {
  return absl::AsciiStrToLower(a) == absl::AsciiStrToLower(b);
}

// The roster id `name` refers to (id or alias, case-insensitive), or "".
std::string ResolveMember(const std::string& name, const std::vector<WriterRosterMember>& roster) {
  for (const auto& m : roster) {
    if (SameName(m.speaker_id, name)) return m.speaker_id;
  }
  for (const auto& m : roster) {
    for (const auto& a : m.aliases) {
      if (SameName(a, name)) return m.speaker_id;
    }
  }
  return "";
}

}  // namespace

std::string NormalizeContent(const std::string& content) { return text::NormalizeContent(content); }

const storage::Record* ValidationContext::Find(const std::string& id) const {
  if (index != nullptr) return index->Find(id);
  auto it = records.find(id);
  return it == records.end() ? nullptr : &it->second;
}

ValidationReport ValidateActions(const std::vector<WriterAction>& actions,
                                 const ValidationContext& ctx) {
  ValidationReport rep;
  // Current contents of the (owner, layer) pairs the ADDs touch, for
  // duplicates against the state (normalising only those heads).
  std::set<std::pair<std::string, std::string>> touched;
  for (const auto& a : actions) {
    if (a.type == WriterAction::Type::kAdd) {
      std::string layer = NormalizeLayer(a.layer);
      std::string owner =
          IsGroupLayer(layer) ? std::string(kGroupOwner) : ResolveMember(a.owner, ctx.roster);
      touched.emplace(owner, layer);
    }
  }
  std::set<std::tuple<std::string, std::string, std::string>> own_state;
  if (ctx.index == nullptr) {
    for (const auto& [id, r] : ctx.records) {
      if (r.active() && touched.count({r.owner, r.layer})) {
        own_state.emplace(r.owner, r.layer, NormalizeContent(r.content));
      }
    }
  }
  const auto& state = ctx.index != nullptr ? ctx.index->head_keys : own_state;
  std::set<std::tuple<std::string, std::string, std::string>> batch;
  std::set<std::string> updated;
  size_t applied = 0;
  for (size_t i = 0; i < actions.size(); ++i) {
    const WriterAction& a = actions[i];
    auto reject = [&](const char* reason) { rep.rejected.push_back(Rejection{i, reason}); };
    if (a.type == WriterAction::Type::kUnknown) {
      reject("unknown_action");
      continue;
    }
    if (a.type == WriterAction::Type::kNoop) {
      ++rep.noops;
      continue;
    }
    if (applied >= ctx.max_actions) {
      reject("over_budget");
      continue;
    }
    std::string content(absl::StripAsciiWhitespace(a.content));
    if (content.empty()) {
      reject("empty_content");
      continue;
    }
    if (content.size() > kMaxContentBytes) {
      reject("content_too_long");
      continue;
    }
    WriterAction out = a;
    out.content = content;
    if (a.type == WriterAction::Type::kUpdate) {
      const storage::Record* known = ctx.Find(a.entry_id);
      std::optional<storage::Record> found;
      if (known == nullptr && ctx.lookup) found = ctx.lookup(a.entry_id);
      if (known == nullptr && !found) {
        reject("missing_entry");
        continue;
      }
      const storage::Record& head = known != nullptr ? *known : *found;
      if (!head.active() || updated.count(head.record_id)) {
        reject("entry_not_active");
        continue;
      }
      if (head.operator_locked) {
        reject("operator_locked");
        continue;
      }
      if (NormalizeContent(content) == NormalizeContent(head.content)) {
        reject("unchanged_update");
        continue;
      }
      out.owner = head.owner;
      out.source = head.source;
      out.layer = head.layer;
      out.utype = head.utype;
      updated.insert(head.record_id);
    } else {
      out.layer = NormalizeLayer(a.layer);
      if (out.layer.empty()) {
        reject("bad_layer");
        continue;
      }
      const bool group = IsGroupLayer(out.layer);
      if (group) {
        if (!SameName(a.owner, kGroupOwner)) {
          reject(ResolveMember(a.owner, ctx.roster).empty() ? "unknown_owner" : "scope_mismatch");
          continue;
        }
        out.owner = kGroupOwner;
      } else {
        if (SameName(a.owner, kGroupOwner)) {
          reject("scope_mismatch");
          continue;
        }
        out.owner = ResolveMember(a.owner, ctx.roster);
        if (out.owner.empty()) {
          reject("unknown_owner");
          continue;
        }
      }
      out.source = ResolveMember(a.source, ctx.roster);
      if (out.source.empty()) {
        reject("unknown_source");
        continue;
      }
      if (out.utype.empty()) out.utype = "observation";
    }
    auto key = std::make_tuple(out.owner, out.layer, NormalizeContent(out.content));
    if (batch.count(key)) {
      reject("duplicate_in_batch");
      continue;
    }
    if (a.type == WriterAction::Type::kAdd && state.count(key)) {
      reject("duplicate_of_state");
      continue;
    }
    batch.insert(key);
    rep.accepted.push_back(std::move(out));
    ++applied;
  }
  return rep;
}

namespace {

// Up to three messages supporting a record about `owner` from `source`
// with `content`.
std::vector<const storage::Message*> Support(const std::string& owner, const std::string& source,
                                             const std::string& content,
                                             const std::vector<WriterRosterMember>& roster,
                                             const std::vector<storage::Message>& segment) {
  std::vector<std::string> names;
  for (const auto& m : roster) {
    if (m.speaker_id == owner) {
      names = m.aliases;
      names.push_back(m.speaker_id);
    }
  }
  std::vector<std::string> want = StemmedTokens(content);
  std::set<std::string> want_set(want.begin(), want.end());
  struct Scored {
    double score;
    const storage::Message* m;
  };
  std::vector<Scored> scored;
  for (const auto& m : segment) {
    bool by_owner = m.speaker_id == owner;
    bool by_source = m.speaker_id == source;
    bool names_owner = false;
    std::vector<std::string> toks = Tokenize(m.text);
    for (const auto& n : names) {
      names_owner = names_owner || FindTokenRun(toks, Tokenize(n)) >= 0;
    }
    if (owner != kGroupOwner && !by_owner && !names_owner && !by_source) continue;
    double overlap = 0;
    std::set<std::string> seen;
    for (const auto& t : StemmedTokens(m.text)) {
      if (want_set.count(t) && !IsStopword(t) && seen.insert(t).second) overlap += 1;
    }
    if (by_source) overlap += 0.5;
    scored.push_back(Scored{overlap, &m});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& a, const Scored& b) { return a.score > b.score; });
  std::vector<const storage::Message*> out;
  const double best = scored.empty() ? 0 : scored.front().score;
  for (const auto& s : scored) {
    // The best message always; others only when they support it about as well.
    if (out.size() >= 3 || (!out.empty() && s.score < std::max(1.0, 0.6 * best))) break;
    out.push_back(s.m);
  }
  if (out.empty() && !segment.empty()) out.push_back(&segment.back());
  return out;
}

// `out` and what its first message answers, which is part of its meaning
// ("sure" to "drinks at Lena's after?"): the message it replies to, else the
// segment's last earlier message by someone else.
std::vector<const storage::Message*> WithPrompt(std::vector<const storage::Message*> out,
                                                const std::vector<storage::Message>& segment) {
  if (!out.empty()) {
    const storage::Message* best_m = out.front();
    const storage::Message* prompt = nullptr;
    for (const auto& m : segment) {
      if (&m == best_m) break;
      if (!best_m->reply_to.empty() ? m.message_id == best_m->reply_to
                                    : m.speaker_id != best_m->speaker_id) {
        prompt = &m;
      }
    }
    if (prompt != nullptr && std::find(out.begin(), out.end(), prompt) == out.end()) {
      out.push_back(prompt);
    }
  }
  return out;
}

}  // namespace

storage::SegmentApply BuildApply(const ValidationReport& report, const ValidationContext& ctx,
                                 const std::vector<storage::Message>& segment,
                                 const storage::WriterState& state, int64_t now_ms) {
  storage::SegmentApply apply;
  apply.expected_cursor = state.cursor_seq;
  apply.expected_next_record = state.next_record;
  apply.new_cursor = segment.empty() ? state.cursor_seq : segment.back().seq;
  uint64_t next = state.next_record;
  const std::string pos =
      segment.empty() ? "" : absl::StrCat(segment.front().seq, "-", segment.back().seq);
  for (const WriterAction& a : report.accepted) {
    storage::Record r;
    r.record_id = storage::RecordId(next++);
    r.content = a.content;
    r.owner = a.owner;
    r.source = a.source;
    r.layer = a.layer;
    r.utype = a.utype;
    r.writer_pos = pos;
    r.session = segment.empty() ? "" : segment.back().session;
    r.created_ms = now_ms;
    // The messages the Writer drew the record from (all of them: a record
    // joining four statements cites four messages), and those that support
    // its content best.
    std::vector<const storage::Message*> from;
    for (const auto& m : segment) {
      if (std::find(a.from_ids.begin(), a.from_ids.end(), m.message_id) != a.from_ids.end()) {
        from.push_back(&m);
      }
    }
    for (const storage::Message* m : Support(a.owner, a.source, a.content, ctx.roster, segment)) {
      if (std::find(from.begin(), from.end(), m) == from.end()) from.push_back(m);
    }
    for (const storage::Message* m : WithPrompt(std::move(from), segment)) {
      r.from_ids.push_back(m->message_id);
      r.valid_at_ms = std::max(r.valid_at_ms, m->timestamp_ms);
    }
    if (a.type == WriterAction::Type::kUpdate) {
      r.supersedes.push_back(a.entry_id);
      apply.superseded.emplace_back(a.entry_id, r.record_id);
    }
    apply.new_records.push_back(std::move(r));
  }
  apply.next_record = next;
  return apply;
}

}  // namespace speakermem::writer

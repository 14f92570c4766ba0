// The rule-based Writer: turns a segment into well-formed ADD / UPDATE / NOOP
// actions without a model. Each message is read clause by clause
// (writer/offline_rules.h decides what a clause is about, for whom, in which
// layer, and states it as memory); a message's clauses about the same owner
// and layer make one record, as do a speaker's consecutive messages; what one
// member says of another reads as their word ("Dana says Bob ..."). A record
// that revises a current head (or an earlier record of this segment) of the
// same owner and layer on the same matter becomes an UPDATE of it; one
// restating it, or adding no word of matter to it, is dropped; a person's
// core records from one segment are consolidated into at most
// max_core_per_segment, each with at least min_record_words content words
// but the most informative; a GROUP record's source is the member whose messages
// in the segment carried most of its matter; a segment with nothing worth
// remembering is a NOOP.
#include <algorithm>
#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "text/similarity.h"
#include "text/text.h"
#include "text/tokenizer.h"
#include "writer/offline_rules.h"
#include "writer/writer_model.h"

namespace speakermem::writer {

using text::Tokenize;
namespace {

// Content words of a record without the roster's names: every record of a
// person carries their name, which says nothing about its matter.
std::vector<std::string> ContentTokens(absl::string_view text,
                                       const absl::flat_hash_set<std::string>& names) {
  std::vector<std::string> out;
  for (auto& t : text::ContentTokens(text)) {
    if (!names.contains(t)) out.push_back(std::move(t));
  }
  return out;
}

bool HasAny(const std::vector<std::string>& toks, const absl::flat_hash_set<std::string>& set) {
  for (const auto& t : toks) {
    if (set.contains(t)) return true;
  }
  return false;
}

// Words that say a statement replaces an earlier one.
const absl::flat_hash_set<std::string>& RevisionWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "instead", "changed", "switched", "cancelled", "canceled", "anymore",
      "longer",  "revised", "updated",  "update",    "moves",    "moved"};
  return *s;
}

const absl::flat_hash_set<std::string>& UpdateCues() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "actually", "instead", "changed", "change",    "moved",    "moves",    "now",    "anymore",
      "longer",   "update",  "updated", "cancelled", "canceled", "switched", "revised"};
  return *s;
}

// The words of a record that say something of its matter: not those that
// only announce it ("decision:", "update:", "the group decided").
std::set<std::string> MatterWords(const std::vector<std::string>& tokens) {
  static const absl::flat_hash_set<std::string> kMeta = {
      "decision", "decided", "update", "updated", "final", "confirmed", "agreed", "okay", "group"};
  std::set<std::string> out;
  for (const auto& t : tokens) {
    if (!kMeta.contains(t)) out.insert(t);
  }
  return out;
}

// Jaccard similarity of two records' matter words, so a restatement
// compares equal.
double Jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return text::Jaccard(MatterWords(a), MatterWords(b));
}

// Jaccard against a current head: "says", which opens every profile
// record ("Josh says Priya ..."), is no word of its matter.
double HeadJaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::set<std::string> sa = MatterWords(a), sb = MatterWords(b);
  sa.erase("says");
  sb.erase("says");
  return text::Jaccard(sa, sb);
}

// True when `a` adds no word of matter to `b` ("Porto it is" after "the
// offsite moves to Porto").
bool AddsNothing(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const std::set<std::string> sa = MatterWords(a), sb = MatterWords(b);
  if (sa.empty()) return false;
  return std::includes(sb.begin(), sb.end(), sa.begin(), sa.end());
}

// `earlier` and `more` as one record's content: a second "The group
// decided: " is dropped, the group's decision is stated once.
std::string JoinStatements(absl::string_view earlier, absl::string_view separator,
                           absl::string_view more) {
  if (absl::StartsWith(earlier, offline::kGroupDecided)) {
    absl::ConsumePrefix(&more, offline::kGroupDecided);
  }
  return absl::StrCat(earlier, separator, more);
}

// Adds the message ids in `more` that `ids` lacks, in order.
void AddFrom(const std::vector<std::string>& more, std::vector<std::string>* ids) {
  for (const auto& id : more) {
    if (std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
  }
}

// A state entry the Writer can revise: a current head or an ADD of this
// segment (entry_id empty until applied; updates to those are merged).
struct Slot {
  std::string entry_id;  // head id; empty for this segment's own ADDs
  std::string owner, source, layer;
  std::vector<std::string> tokens;
  size_t action = SIZE_MAX;  // index into actions for this segment's ADDs
  int64_t valid_at_ms = 0;   // heads: when their state began
};

class OfflineWriter final : public WriterModel {
 public:
  explicit OfflineWriter(const OfflineWriterParams& params) : params_(params) {}

  absl::StatusOr<WriterOutput> Write(const WriterInput& in, llm::StageCall* call) override {
    absl::flat_hash_set<std::string> names;
    for (const auto& r : in.roster) {
      for (const auto& a : r.aliases) {
        for (auto& t : Tokenize(a)) names.insert(std::move(t));
      }
      for (auto& t : Tokenize(r.speaker_id)) names.insert(std::move(t));
    }
    std::vector<Slot> slots;
    for (const auto& h : in.heads) {
      slots.push_back(Slot{h.record_id, h.owner, h.source, h.layer, ContentTokens(h.content, names),
                           SIZE_MAX, h.valid_at_ms});
    }
    std::vector<WriterAction> actions;
    std::vector<size_t> previous;  // ADDs the previous message wrote
    for (size_t i = 0; i < in.messages.size(); ++i) {
      // A speaker's consecutive messages are often one thought split up.
      const bool run = i > 0 && in.messages[i - 1].speaker_id == in.messages[i].speaker_id;
      std::vector<size_t> written;
      for (WriterAction& a : Read(in, i)) {
        if (actions.size() >= in.max_actions) break;
        if (run && JoinRun(a, previous, names, &slots, &actions, &written)) continue;
        const size_t before = actions.size();
        Place(std::move(a), names, &slots, &actions);
        if (actions.size() > before) written.push_back(before);
      }
      previous = std::move(written);
    }
    ConsolidateCore(params_.max_core_per_segment, params_.min_record_words, names, &actions);
    AttributeGroupRecords(in, names, &actions);
    if (actions.empty()) {
      WriterAction noop;
      noop.type = WriterAction::Type::kNoop;
      noop.type_name = "NOOP";
      actions.push_back(noop);
    }
    WriterOutput out;
    out.actions = std::move(actions);
    out.raw_text = SerializeWriterActions(out.actions);
    if (call != nullptr) call->note = "offline rule-based writer";
    return out;
  }

 private:
  // The records message `i` of the segment carries: one per owner and layer,
  // its clauses joined in order.
  std::vector<WriterAction> Read(const WriterInput& in, size_t i) const {
    const WriterMessage& m = in.messages[i];
    offline::MessageContext ctx;
    ctx.roster = &in.roster;
    ctx.min_content = params_.min_content;
    ctx.group_arrangements = params_.group_arrangements;
    ctx.speaker = offline::Speaker{m.speaker_id, m.speaker.empty() ? m.speaker_id : m.speaker};
    // "you" is the person replied to, else the segment's previous speaker.
    std::string addressee = m.reply_to_speaker_id;
    for (size_t j = i; addressee.empty() && j-- > 0;) {
      if (in.messages[j].speaker_id != m.speaker_id) addressee = in.messages[j].speaker_id;
    }
    if (addressee == m.speaker_id) addressee.clear();
    // Between two people, "you" is the other one even in a segment's first
    // message.
    if (addressee.empty() && in.roster.size() == 2) {
      for (const auto& r : in.roster) {
        if (r.speaker_id != m.speaker_id) addressee = r.speaker_id;
      }
    }
    for (const auto& r : in.roster) {
      if (!addressee.empty() && r.speaker_id == addressee) {
        ctx.addressee =
            offline::Speaker{r.speaker_id, r.aliases.empty() ? r.speaker_id : r.aliases.front()};
      }
    }
    using Kind = offline::ClauseReading::Kind;
    std::vector<WriterAction> out;
    for (const offline::ClauseReading& c : offline::ReadMessage(m.text, ctx)) {
      if (c.kind == Kind::kNothing || c.content.empty()) continue;
      std::string owner = c.kind == Kind::kSelf ? m.speaker_id : c.about;
      std::string layer = c.kind == Kind::kSelf        ? "core"
                          : c.kind == Kind::kOther     ? "profile"
                          : c.kind == Kind::kGroupPlan ? "interaction"
                                                       : "insight";
      auto same = std::find_if(out.begin(), out.end(), [&](const WriterAction& a) {
        return a.owner == owner && a.layer == layer;
      });
      if (same != out.end()) {
        // A clause that was a sentence of its own stays one ("Lisbon gets
        // Bob's vote. Cheap flights and great food"), not a capital after a
        // comma.
        const bool sentence = absl::ascii_isupper(static_cast<unsigned char>(c.content[0]));
        same->content = JoinStatements(same->content, sentence ? ". " : ", ", c.content);
        if (c.utype == "stance") same->utype = c.utype;
        continue;
      }
      WriterAction a;
      a.type = WriterAction::Type::kAdd;
      a.type_name = "ADD";
      a.owner = std::move(owner);
      a.layer = std::move(layer);
      a.source = m.speaker_id;
      a.utype = c.utype;
      a.content = c.content;
      a.from_ids = {m.message_id};
      out.push_back(std::move(a));
    }
    for (auto& a : out) {
      a.content[0] = absl::ascii_toupper(static_cast<unsigned char>(a.content[0]));
      // What one member says of another is their word, and reads as such.
      if (a.layer == "profile") {
        // "Bob says no flights after nine", "Bob says Dana looks well".
        const std::string first = absl::AsciiStrToLower(a.content.substr(0, a.content.find(' ')));
        // "Bev saw Marcus limping" names its speaker already.
        if (absl::StartsWith(a.content, absl::StrCat(ctx.speaker.name, " "))) continue;
        if (text::IsStopword(first) || first == "no" || first == "not")
          a.content[0] = absl::ascii_tolower(static_cast<unsigned char>(a.content[0]));
        a.content = absl::StrCat(ctx.speaker.name, " says ", a.content);
      }
    }
    return out;
  }

  // Adds `a`, or joins it to this segment's record of the same owner, layer
  // and source on the same matter, or turns it into an UPDATE of the head it
  // revises, or drops it when it restates one.
  void Place(WriterAction a, const absl::flat_hash_set<std::string>& names,
             std::vector<Slot>* slots, std::vector<WriterAction>* actions) const {
    std::vector<std::string> tokens = ContentTokens(a.content, names);
    const std::vector<std::string> words = Tokenize(a.content);
    const bool cue = HasAny(words, UpdateCues());
    // A GROUP record is the group's whoever restates it; a person's record
    // stays with the member who said it.
    const bool any_source = IsGroupLayer(a.layer);
    Slot* head = nullptr;  // best current head (or this segment's UPDATE of it)
    Slot* own = nullptr;   // best ADD of this segment
    double head_sim = -1, own_sim = -1;
    for (Slot& s : *slots) {
      if (s.owner != a.owner || s.layer != a.layer) continue;
      if (!any_source && s.source != a.source) continue;
      if (AddsNothing(tokens, s.tokens)) return;  // said already
      // Against a head, "Dana says" of a member's profile is not matter.
      double sim = s.entry_id.empty() ? Jaccard(tokens, s.tokens) : HeadJaccard(tokens, s.tokens);
      Slot*& best = s.entry_id.empty() ? own : head;
      double& best_sim = s.entry_id.empty() ? own_sim : head_sim;
      if (sim > best_sim || (sim == best_sim && sim >= 0)) {  // ties: the latest
        best_sim = sim;
        best = &s;
      }
    }
    if (std::max(head_sim, own_sim) >= 0.9) return;  // restated unchanged
    // "Still in the same chair": what continues does not revise.
    const bool continues = HasAny(words, {"still"}) && !HasAny(words, RevisionWords());
    bool revises_head =
        head != nullptr && !continues && (head_sim >= 0.4 || (cue && head_sim >= 0.12));
    // "Change of plan: Porto instead" shares no word with "the offsite is in
    // Lisbon": an explicit revision of a group plan with nothing closer in
    // this segment revises the group's latest plan.
    static const absl::flat_hash_set<std::string> kExplicit = {
        "instead", "changed", "switched", "cancelled", "canceled", "anymore", "revised"};
    if (!revises_head && own == nullptr && a.layer == "interaction" && HasAny(words, kExplicit)) {
      for (Slot& s : *slots) {
        if (s.entry_id.empty() || s.owner != a.owner || s.layer != a.layer) continue;
        if (!any_source && s.source != a.source) continue;
        if (head == nullptr || head_sim < 0.12 || s.valid_at_ms > head->valid_at_ms) head = &s;
        head_sim = 0;
        revises_head = true;
      }
    }
    if (revises_head && head_sim >= own_sim) {
      if (head->action != SIZE_MAX) {
        Join(&(*actions)[head->action], a, tokens, head, words);
        return;
      }
      WriterAction u;
      u.type = WriterAction::Type::kUpdate;
      u.type_name = "UPDATE";
      u.entry_id = head->entry_id;
      u.content = a.content;
      u.owner = a.owner;
      u.layer = a.layer;
      u.source = a.source;
      u.utype = a.utype;
      u.from_ids = a.from_ids;
      // The chain keeps matching on everything said about its matter, and
      // later statements in this segment revise this UPDATE, not the head.
      head->tokens.insert(head->tokens.end(), tokens.begin(), tokens.end());
      head->action = actions->size();
      actions->push_back(std::move(u));
      return;
    }
    WriterAction* earlier = own != nullptr ? &(*actions)[own->action] : nullptr;
    if (own != nullptr && own_sim >= params_.merge_similarity &&
        earlier->content.size() + a.content.size() <= kMaxJoined) {
      Join(earlier, a, tokens, own, words);
      return;
    }
    slots->push_back(Slot{"", a.owner, a.source, a.layer, tokens, actions->size()});
    actions->push_back(std::move(a));
  }

  // Joins `a` to the ADD of the same owner, layer and source that the
  // speaker's previous message wrote, if any; true when joined.
  static bool JoinRun(const WriterAction& a, const std::vector<size_t>& previous,
                      const absl::flat_hash_set<std::string>& names, std::vector<Slot>* slots,
                      std::vector<WriterAction>* actions, std::vector<size_t>* written) {
    for (size_t k : previous) {
      WriterAction& p = (*actions)[k];
      if (p.type != WriterAction::Type::kAdd || p.owner != a.owner || p.layer != a.layer ||
          p.source != a.source || p.content.size() + a.content.size() > kMaxJoined) {
        continue;
      }
      auto slot = std::find_if(slots->begin(), slots->end(),
                               [k](const Slot& s) { return s.action == k && s.entry_id.empty(); });
      if (slot == slots->end()) continue;
      Join(&p, a, ContentTokens(a.content, names), &*slot, Tokenize(a.content));
      written->push_back(k);
      return true;
    }
    return false;
  }

  // The same matter again within this segment: a revision replaces the
  // earlier statement, anything else adds to it.
  static void Join(WriterAction* earlier, const WriterAction& a,
                   const std::vector<std::string>& tokens, Slot* slot,
                   const std::vector<std::string>& words) {
    const bool revision = HasAny(words, RevisionWords()) && Jaccard(tokens, slot->tokens) >= 0.4;
    if (revision || earlier->content.size() + a.content.size() > kMaxJoined) {
      earlier->content = a.content;
      earlier->from_ids = a.from_ids;
    } else {
      earlier->content = JoinStatements(earlier->content, "; ", a.content);
      AddFrom(a.from_ids, &earlier->from_ids);
    }
    if (a.utype == "stance") earlier->utype = a.utype;
    slot->tokens.insert(slot->tokens.end(), tokens.begin(), tokens.end());
  }

  // Keeps at most `max_records` (0: any number) new core records per person,
  // the most informative (most content words; ties: the earlier), each with
  // at least `min_words` content words but the first. Each of the others joins the
  // kept one it shares most content words with (none shared: the nearest in
  // the segment), unless that would make it unreadably long; a record's
  // statements stay in message order.
  static void ConsolidateCore(size_t max_records, size_t min_words,
                              const absl::flat_hash_set<std::string>& names,
                              std::vector<WriterAction>* actions) {
    std::map<std::string, std::vector<size_t>> by_owner;  // ADD indexes, in order
    for (size_t i = 0; i < actions->size(); ++i) {
      const WriterAction& a = (*actions)[i];
      if (a.type == WriterAction::Type::kAdd && a.layer == "core") by_owner[a.owner].push_back(i);
    }
    std::vector<size_t> into(actions->size(), SIZE_MAX);  // joined record -> kept one
    for (const auto& [owner, adds] : by_owner) {
      std::vector<std::pair<std::vector<std::string>, size_t>> ranked;  // (content words, index)
      for (size_t i : adds) ranked.emplace_back(ContentTokens((*actions)[i].content, names), i);
      std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
        return x.first.size() > y.first.size();
      });
      // Kept: the most informative, at most max_records, each with at least
      // min_words content words (the most informative one in any case).
      size_t max = max_records == 0 ? ranked.size() : std::min(max_records, ranked.size());
      while (max > 1 && ranked[max - 1].first.size() < min_words) --max;
      if (max == ranked.size()) continue;
      std::map<size_t, size_t> length;  // kept index -> joined length
      for (size_t k = 0; k < max; ++k)
        length[ranked[k].second] = (*actions)[ranked[k].second].content.size();
      for (size_t r = max; r < ranked.size(); ++r) {
        const size_t i = ranked[r].second;
        size_t best = 0, best_distance = SIZE_MAX;
        double best_sim = -1;
        for (size_t k = 0; k < max; ++k) {
          const size_t j = ranked[k].second;
          const double sim = Jaccard(ranked[r].first, ranked[k].first);
          const size_t distance = i > j ? i - j : j - i;
          // Ties: the nearer, then the earlier.
          if (sim > best_sim || (sim == best_sim && (distance < best_distance ||
                                                     (distance == best_distance && j < best)))) {
            best_sim = sim, best_distance = distance, best = j;
          }
        }
        const WriterAction& extra = (*actions)[i];
        if (length[best] + extra.content.size() > kMaxJoined) continue;
        length[best] += extra.content.size() + 2;
        if (extra.utype == "stance") (*actions)[best].utype = "stance";
        into[i] = best;
      }
      for (const auto& [j, unused] : length) {
        std::vector<absl::string_view> texts;
        std::vector<std::string> from;
        for (size_t i : adds) {
          if (i != j && into[i] != j) continue;
          texts.push_back((*actions)[i].content);
          AddFrom((*actions)[i].from_ids, &from);
        }
        if (texts.size() > 1) {
          (*actions)[j].content = absl::StrJoin(texts, "; ");
          (*actions)[j].from_ids = std::move(from);
        }
      }
    }
    size_t out = 0;
    for (size_t i = 0; i < actions->size(); ++i) {
      if (into[i] != SIZE_MAX) continue;
      if (out != i) (*actions)[out] = std::move((*actions)[i]);
      ++out;
    }
    actions->resize(out);
  }

  // A GROUP record is the group's, and its source is the member who carried
  // its matter in this segment: the one whose messages share the most of its
  // content words (stems; names aside), not whoever happened to state its
  // final form. Ties keep the member who stated it.
  static void AttributeGroupRecords(const WriterInput& in,
                                    const absl::flat_hash_set<std::string>& names,
                                    std::vector<WriterAction>* actions) {
    if (std::none_of(actions->begin(), actions->end(), [](const WriterAction& a) {
          return a.type == WriterAction::Type::kAdd && IsGroupLayer(a.layer);
        })) {
      return;  // most segments: no message needs reading again
    }
    std::vector<std::set<std::string>> words;  // per message
    for (const auto& m : in.messages) {
      std::set<std::string> w;
      for (const auto& t : ContentTokens(m.text, names)) w.insert(text::Stem(t));
      words.push_back(std::move(w));
    }
    for (WriterAction& a : *actions) {
      if (a.type != WriterAction::Type::kAdd || !IsGroupLayer(a.layer)) continue;
      std::set<std::string> matter;
      for (const auto& t : MatterWords(ContentTokens(a.content, names)))
        matter.insert(text::Stem(t));
      std::map<std::string, size_t> carried;
      for (size_t i = 0; i < in.messages.size(); ++i) {
        size_t shared = 0;
        for (const auto& t : words[i]) shared += matter.count(t);
        carried[in.messages[i].speaker_id] += shared;
      }
      size_t best = carried[a.source];
      for (const auto& [speaker, n] : carried) {
        if (n > best) best = n, a.source = speaker;
      }
    }
  }

  // A joined record stays readable.
  static constexpr size_t kMaxJoined = 400;
  OfflineWriterParams params_;
};

}  // namespace

std::unique_ptr<WriterModel> NewOfflineWriter(const OfflineWriterParams& params) {
  return std::make_unique<OfflineWriter>(params);
}

}  // namespace speakermem::writer

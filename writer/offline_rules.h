// The offline Writer's reading of one message: which clauses carry something
// worth remembering, about whom, in which layer, stated as memory. Pure
// functions of text and roster (no store, no threads), so each rule can be
// tested on sentences written for it.
//
// A message is cut into clauses (sentence ends, semicolons, line breaks,
// emoji used as punctuation). Each clause is read in turn:
//   * questions, acknowledgements, reactions ("It looks amazing", "Your team
//     sounds intense"), cheering on and thanks ("You've got this", "Your
//     support means a lot") and filler carry nothing (a
//     suggestion put as a question, "what about the noodle bar?", "we could
//     drive up Friday?", is the speaker's stance: "Dana suggests ..."), nor
//     does advice or a request ("Ask Sam", "Take one trip at a time"): it
//     says what the speaker would have someone do, not what is so; nor
//     does where someone is at this moment ("on my way", "running late",
//     "just getting in, it's late here"); a condition the speaker sets or a
//     thing that is there ("That depends on the lineup", "There's a cafe at
//     the end") opens like a reaction but is a statement;
//   * hedges and intensifiers ("just", "genuinely", "though"; a closing
//     "... but let's see", "we'll see", which arranges nothing) are dropped
//     wherever they stand, leading discourse markers ("yeah", "anyway") and
//     vocatives ("Priya, ...", "Rashida what ...", "Yusuf we ...", "Kwame
//     I'm ...", "Tobenna my love ...", a kinship word no member goes by:
//     "Mum ...") too, a
//     vocative naming the addressee;
//   * agreeing with a member's point ("Cass makes a fair point about ...")
//     or calling a member's plan the right one ("Imogen's dinner is the
//     right plan", "Sasha's idea is the right one") is the speaker's
//     stance, bare agreement ("Kwame is right", "you're probably right")
//     nothing; "we'll see what ..." waits to know and is the speaker's own;
//   * the subject decides the owner: "I" the speaker, "you" the addressee,
//     a roster name that member, "we"/"let's" the group ("let's" wherever it
//     stands; two members' joint arrangement, "Preet and I will go", too);
//     a clause with no subject of its own ("Near Soho is good") is the
//     speaker's;
//   * the layer follows the meaning: the group's plans and decisions
//     (also on a member's proposal: "Kwame's Saturday is confirmed", "...
//     from now on"; several members' positions: "Vera and Marcus in favour,
//     Claudette against"; with group_arrangements on a member's arrangement
//     for everyone; a request tied to an occasion: "please ... this time")
//     are GROUP interaction, its norms and standing requests ("please
//     submit receipts ...") GROUP insight, what one
//     member says of another that member's profile (source: the speaker), a
//     person's own facts, needs and stances their core;
// and the clause is rewritten in the third person with names ("I have" ->
// "Mei has", "we need" -> "the group needs"); a choice the group made that
// does not name the group is stated as "The group decided: ...".
#ifndef SPEAKERMEM_WRITER_OFFLINE_RULES_H_
#define SPEAKERMEM_WRITER_OFFLINE_RULES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "writer/writer_model.h"

namespace speakermem::writer::offline {

// Emoji, pictographs and emoticons out; an emoji between words becomes a
// sentence end; dashes and quotes normalised; whitespace collapsed.
std::string CleanText(absl::string_view text);

// Clauses of cleaned text, in order, each keeping its final '?' or '!'.
std::vector<std::string> SplitClauses(absl::string_view cleaned);

struct Speaker {
  std::string speaker_id;
  std::string name;  // display name
};

// Who a message is about when it says "you": the person it replies to,
// else the previous speaker of the segment; empty when unknown.
struct MessageContext {
  Speaker speaker;
  Speaker addressee;
  const std::vector<WriterRosterMember>* roster = nullptr;
  size_t min_content = 2;           // OfflineWriterParams::min_content
  bool group_arrangements = false;  // OfflineWriterParams::group_arrangements
  bool own_circle = false;          // the message names the speaker's own circle
};

struct ClauseReading {
  enum class Kind {
    kNothing,    // question, acknowledgement, reaction, filler
    kSelf,       // the speaker's own matter: core
    kOther,      // about another member: their profile, source the speaker
    kGroupPlan,  // a plan or decision of the group: GROUP interaction
    kGroupNorm,  // a norm or recurring pattern: GROUP insight
  };
  Kind kind = Kind::kNothing;
  std::string about;    // kOther: the member's speaker id
  std::string utype;    // fact, stance, observation, decision
  std::string content;  // stated as memory
  std::string why;      // the rule that decided, for tests and traces
  Speaker addressed;    // a member the clause opened by addressing, if any
};

// How a choice of the group is stated when the clause does not name the
// group: "The group decided: the offsite is in Lisbon".
inline constexpr absl::string_view kGroupDecided = "The group decided: ";

ClauseReading ReadClause(absl::string_view clause, const MessageContext& ctx);

// The clauses of one message read in order.
std::vector<ClauseReading> ReadMessage(absl::string_view text, const MessageContext& ctx);

}  // namespace speakermem::writer::offline

#endif  // SPEAKERMEM_WRITER_OFFLINE_RULES_H_

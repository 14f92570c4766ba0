// The words of a clause as the offline Writer's rules read them, and the
// third-person rewrite that states a clause as memory. Internal to the
// offline Writer (writer/offline_rules.cc, its tests); light to include.
#ifndef SPEAKERMEM_WRITER_OFFLINE_WORDS_H_
#define SPEAKERMEM_WRITER_OFFLINE_WORDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "writer/offline_lexicon.h"
#include "writer/offline_rules.h"

namespace speakermem::writer::offline {

struct Word {
  std::string text;   // as written, punctuation removed from both ends
  std::string lower;  // lower-cased, curly apostrophes straightened
  std::string tail;   // trailing punctuation (",", "?", ...)
};

// The words of a clause split on spaces; emoticons are dropped, quotes and
// brackets taken off, trailing punctuation kept in `tail`.
std::vector<Word> Words(absl::string_view clause);

bool In(const std::string& w, const Set& set);
bool HasWord(const std::vector<Word>& ws, const Set& set);

// Words that are not function words.
size_t ContentCount(const std::vector<Word>& ws);

// The roster member a capitalised word names (display name or id), if any.
const WriterRosterMember* Member(const Word& w, const MessageContext& ctx);

// Only greetings, thanks and reactions, maybe with the names of those they
// are for ("Congrats Leon", "Thanks Jordan").
bool PhaticOnly(const std::vector<Word>& ws, const MessageContext& ctx);

// "Classic Leon response", "Great walk today everyone", "Nice find": a
// short clause that only judges a thing, a reaction (with a comma, "Great,
// I'll book it", the word is a marker before the matter and only it goes).
bool ReactionToAThing(const std::vector<Word>& ws);

// How many words after a member's name (or "you") say the speaker agrees
// with them ("is right", "'s right", "is probably right", "you're so right",
// "makes a fair point", "has a point"); 0 if none.
size_t AgreementLength(const std::vector<Word>& ws);

// "Imogen's dinner is the right plan": a member's proposal endorsed, the
// speaker's stance on the thing named.
bool Endorsed(const std::vector<Word>& ws);

// "Show went well", "Check is in the post": a word that could open advice
// ("Show me", "Check the times") followed by an auxiliary or "went" names a
// thing, the subject of that verb.
bool NounBeforeVerb(const std::vector<Word>& ws);

// "Don't get used to it but I'd take a booth over a dinner": the index of
// the first-person subject after "but" that opens the speaker's own
// statement; 0 if there is none.
size_t OwnClauseAfterBut(const std::vector<Word>& ws);

// A clause whose subject is the group ("we", "let's", "the team") that
// arranges something: a future or a modal at its verb ("we'll", "we should",
// "we need to", "we're going to", "the team needs"), a decision word, a
// time, or a verb of arranging ("book", "meet", "plan"). "We do all kinds
// of dances", "We've come so far", "We all have our own paths", "We'd have
// a great time" (a guess) do not.
bool GroupArranges(const std::vector<Word>& ws);

// "... from now on": a standing decision.
bool FromNowOn(const std::vector<Word>& ws);

// A time the clause is tied to: a day, a date, "next week", "in six weeks".
bool HasTime(const std::vector<Word>& ws);

// "Your team sounds intense", "You look well", "It looks so real": what a
// thing or a person seems like to the speaker, a judgement and nothing more
// (short, the judgement its last word), a reaction. "Dana seems tired" is not
// a judgement of this kind and stays.
bool Appraisal(const std::vector<Word>& ws);

// "That depends on the seller lineup", "There's a cafe in the village at
// the end": a condition the speaker sets, a thing that is there. Opened
// like a reaction ("That's huge", "There's something there") but a
// statement of its own.
bool StatementNotReaction(const std::vector<Word>& ws);

// How many words open `ws` only to mark it ("Yeah", "Oh", "Fair enough,",
// "Great news,", "You won't believe it -"): a marker that can be a word of the clause ("All the
// kids", "Same layout next year", "Look at the size of it") only when it stands apart, with
// punctuation or before a subject ("Same, I'll bring a stove").
size_t LeadingMarker(const std::vector<Word>& ws);

// "Sorry to hear that", "Glad to hear it went well", "So happy for you",
// "Proud of you both": a feeling about what another said or did, a
// reaction ("Happy to help with the move" offers something, and stays).
bool ReactionToNews(const std::vector<Word>& ws);

// "You've got this", "Even when it's tough, you got this", "Hang in there":
// cheering someone on; "Your support means a lot", "Your belief in me means
// the world": thanks. Neither is memory ("The ferry means a lot of waiting"
// and "I've got this week off" are).
bool CheerOrThanks(const std::vector<Word>& ws);

// Where someone is at this moment ("on my way", "running ten minutes
// behind", "heading out in 10", "see everyone Sunday"): true now, not worth
// remembering.
bool MomentaryStatus(const std::vector<Word>& ws);

// "My kids are so excited", "our family camping trip", "my students": the
// message names a circle of the speaker's own, which its "we" then means.
bool NamesOwnCircle(const std::vector<Word>& ws);

// "Let's keep chasing our dreams", "We'll make it through this", "We can
// do great things together": a wish for "us" with nothing arranged (no
// time, no plan), which is not remembered.
bool Encouragement(const std::vector<Word>& ws);

// The name a member goes by: their first alias, else their id.
std::string NameOf(const WriterRosterMember& r);

// Rewrites `ws` in the third person: "I/me/my" become `self` ("my" after the
// clause has named the speaker: "their"), "you/your" become `you` (empty:
// left as written), and the verb after a rewritten subject agrees with it
// ("I have" -> "Mei has").
std::string Rewrite(std::vector<Word> ws, const std::string& self, const std::string& you);

// "Prefer the chicken", "Been wanting to try it", "Going alone": a chat
// statement about the speaker with its "I" left out. Puts the "I" (or
// "I've", "I'm") back in front and returns true when the opening verb can
// only be the speaker's; "Will be fun", "Going there is a trek" (a gerund
// as the subject) and anything else are left as they are.
bool RestoreDroppedI(std::vector<Word>* ws);

// The clause without its hedges and intensifiers; "not really" keeps its
// "really", and a clause made only of them is kept as it is.
std::vector<Word> DropHedges(std::vector<Word> ws);

}  // namespace speakermem::writer::offline

#endif  // SPEAKERMEM_WRITER_OFFLINE_WORDS_H_

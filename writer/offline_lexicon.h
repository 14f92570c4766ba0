// The offline Writer's word lists: which words open, mark, subject or date a
// clause (writer/offline_rules.cc reads clauses with them), and English verb
// agreement for the third-person rewrite. All lower-case.
#ifndef SPEAKERMEM_WRITER_OFFLINE_LEXICON_H_
#define SPEAKERMEM_WRITER_OFFLINE_LEXICON_H_

#include <string>

#include "absl/container/flat_hash_set.h"

namespace speakermem::writer::offline {

using Set = absl::flat_hash_set<std::string>;

// Discourse markers, interjections and reactions that open a clause and carry
// nothing of its matter ("yeah", "honestly", "anyway").
const Set& Markers();
// Words greetings, thanks, acknowledgements and reactions are made of.
const Set& Phatic();
// Subjects: "I" and its forms, "you", the group ("we", "let's"), third-person
// pronouns, demonstratives that open a reaction ("that's").
const Set& FirstPersonSubject();
const Set& SecondPersonSubject();
const Set& GroupSubject();
const Set& ThirdPronoun();
const Set& Demonstrative();
// What opens a question without its mark: wh-words, auxiliaries and the
// subjects an auxiliary is inverted with ("are you", "does anyone").
const Set& QuestionOpeners();
const Set& WhWords();
const Set& Auxiliaries();
const Set& InvertedSubjects();
// The meaning of a clause: a plan, a decision, a norm, a stance, a view.
const Set& PlanCues();
const Set& DecisionWords();
const Set& NormWords();
const Set& StanceWords();
const Set& ViewVerbs();
// Words that, right after a member's name, show the name addresses them
// ("Yusuf we went ...", "Luca that's it", "Marcus the south face ...").
const Set& AfterAddress();
// Words after "you" that make it several people ("you two", "you all").
const Set& SeveralAddressees();
// Words after which "you" opens a clause of its own ("I know you want ...",
// "tell me what you want").
const Set& ClauseOpeners();
// What one calls someone dear after "my": "my love", "my darling".
const Set& Endearments();
// Kinship and endearment terms used to address someone ("Mum, ...").
const Set& KinVocatives();
// Third-person verbs that show a kinship word is the subject ("Dad says").
const Set& ThirdPersonVerbs();
// Words that end a clause, so a name after them addresses someone ("I'm
// not inventing it Dani"); and words after which a name is their object
// ("told Sam", "with Sam" is a stopword), not an address.
const Set& ClauseEnders();
const Set& TakesAPerson();
// Common verbs in their base form: a clause opening with one is advice or a
// request to the person addressed.
const Set& ImperativeVerbs();
// Verbs that open a chat statement whose "I" was left out ("Prefer the
// chicken", "Hate being the complicated one"): none is a common request.
// Verbs of opinion and feeling ("Love this", "Hope it goes well", "Think
// so") are not among them: opening a clause, they react to what was said.
const Set& DroppedIVerbs();
// Verbs whose "-ing" form opens a chat statement with "I'm" left out
// ("Going alone", "Asking for Cass", "Still building the team").
const Set& DroppedImVerbs();
// Hedges and intensifiers that colour a clause and say nothing of its matter
// ("I'm genuinely tired" is "tired"): dropped wherever they stand.
const Set& Hedges();
// Words that may sit between a subject and its verb ("I actually enjoy").
bool IsAdverb(const std::string& w);
// The verb form after a third-person subject ("have" -> "has").
std::string ThirdPersonVerb(const std::string& verb);
// A day, month, part of the day or clock time ("saturday", "7pm", "11:30").
bool IsTimeWord(const std::string& w);

}  // namespace speakermem::writer::offline

#endif  // SPEAKERMEM_WRITER_OFFLINE_LEXICON_H_

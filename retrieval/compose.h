// Compose (DESIGN 3, step 5): the one evidence pack the answerer sees.
#ifndef SPEAKERMEM_RETRIEVAL_COMPOSE_H_
#define SPEAKERMEM_RETRIEVAL_COMPOSE_H_

#include <map>
#include <string>
#include <vector>

#include "retrieval/pipeline.h"

namespace speakermem::retrieval {

// Renders the evidence pack as text, in display names (`names`: speaker id
// -> display name; an id without one is shown as it is):
//
//   Conversation excerpts (verbatim, best first):
//   [s2-05] 2026-03-09 14:12, Alice: <text> (NEWER THAN MEMORY)
//
//   Memory, by row:
//   Alice:
//     [r000000000002] core, 2026-03-02 09:20, current: <content>
//     [r000000000001] profile, from Bob, 2026-03-01 10:00, history (superseded): <content>
//     [r000000000007] said by Alice about Bob: profile, 2026-03-02 09:15, current: <content>
//     [s1-03] verbatim message (no record), 2026-03-02 09:04: <text>
//   Bob: (none)
//   The group:
//     [r000000000009] interaction, proposed by Alice, ..., current, GROUP CONCLUSION: <content>
//
// Cells of a row come in the order the row holds them (a full-tense chain
// oldest first). `with_memory` false (no_s2) leaves the memory part out.
// Thread-safe.
std::string ComposeEvidencePack(const std::vector<RetrievedMessage>& s1,
                                const std::vector<S2Row>& s2,
                                const std::map<std::string, std::string>& names, bool with_memory);

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_COMPOSE_H_

// `speakermem eval rows`: what System 2 rows add to the evidence, and the
// leave-one-conversation-out choice of their relevance floors.
#ifndef SPEAKERMEM_EVAL_TOOL_ROWS_STUDY_H_
#define SPEAKERMEM_EVAL_TOOL_ROWS_STUDY_H_

#include <string>
#include <vector>

#include "datasets/datasets.h"
#include "engine/memory.h"

namespace speakermem::cli {

// Ingests `conversations` into an embedded instance, derives every message
// with the offline Writer, tunes the floors, prints markdown tables on
// stdout (and to `md_out` when given). Returns the process exit code: 3 when
// the compiled defaults are not the floors chosen on all conversations.
// `dump_out`, when given, receives one JSON line per question with the
// records shown at the in-sample choice (for diagnosis).
int RunRowsStudy(const std::vector<datasets::Conversation>& conversations,
                 const engine::MemoryOptions& memory, const std::string& md_out,
                 const std::string& dump_out);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_EVAL_TOOL_ROWS_STUDY_H_

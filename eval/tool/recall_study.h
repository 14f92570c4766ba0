// `speakermem eval retrieval` on an embedded instance: the ablation of
// System 1 recall and the leave-one-conversation-out choice of its
// constants.
#ifndef SPEAKERMEM_EVAL_TOOL_RECALL_STUDY_H_
#define SPEAKERMEM_EVAL_TOOL_RECALL_STUDY_H_

#include <string>
#include <vector>

#include "datasets/datasets.h"
#include "engine/memory.h"

namespace speakermem::cli {

struct RecallStudyOptions {
  engine::MemoryOptions memory;  // the embedded instance (models, writer)
  std::string json_out;          // empty: none
  std::string md_out;            // empty: none
  bool progress = true;          // progress lines on stderr
};

// Ingests `conversations` into an embedded instance, tunes every recall
// constant with leave-one-conversation-out, prints the ablation and the
// per-conversation tables (markdown) on stdout and writes them where asked.
// Returns the process exit code.
int RunRecallStudy(const std::vector<datasets::Conversation>& conversations,
                   const RecallStudyOptions& options);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_EVAL_TOOL_RECALL_STUDY_H_

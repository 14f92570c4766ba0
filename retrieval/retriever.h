// Plain result types of System 1 retrieval, shared by the pipeline and its
// callers.
#ifndef SPEAKERMEM_RETRIEVAL_RETRIEVER_H_
#define SPEAKERMEM_RETRIEVAL_RETRIEVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/types.h"

namespace speakermem::storage {
class Store;
}

namespace speakermem::retrieval {

class LexicalIndex;

struct RetrievalRequest {
  storage::ChannelRef channel;
  std::string question;
  std::string asker;
  int64_t start_ms = 0;  // inclusive; 0 = unbounded
  int64_t end_ms = 0;    // exclusive; 0 = unbounded
  uint32_t top_k = 10;   // System 1 messages returned
};

struct RetrievedMessage {
  storage::Message message;
  double score = 0;
  std::string why;  // why it was kept, e.g. "bm25 rank 1"
};

// Time and model use of one stage of a request.
struct StageTrace {
  std::string stage;
  double latency_ms = 0;
  uint32_t model_calls = 0;
  uint64_t tokens_in = 0;
  uint64_t tokens_out = 0;
  std::string note;
};

struct RetrievalResult {
  std::vector<RetrievedMessage> messages;  // best first
  std::vector<StageTrace> trace;
};

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_RETRIEVER_H_

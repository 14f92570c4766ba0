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

namespace speakermem::retrieval {

struct RetrievedMessage {
  storage::Message message;
  double score = 0;
  std::string why;  // why it was kept, e.g. "bm25 rank 1"
  // Said after the channel's Writer cursor: no System 2 record can reflect
  // it yet, so it is newer than all of memory.
  bool newer_than_memory = false;
};

// How far System 2 lags System 1 in a channel when the query ran.
struct Freshness {
  uint64_t newest_seq = 0;           // the channel's newest message
  uint64_t derived_through_seq = 0;  // the Writer cursor: derived (or parked) up to here
  uint64_t lag_messages = 0;         // newest_seq - derived_through_seq
  // Message time from the oldest unwritten message to the newest one; 0
  // when nothing is unwritten.
  int64_t lag_ms = 0;
  // The query waited for the Writer first (strict freshness).
  bool waited = false;
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

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_RETRIEVER_H_

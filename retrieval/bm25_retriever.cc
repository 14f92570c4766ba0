#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "retrieval/bm25_index.h"
#include "retrieval/retriever.h"
#include "storage/store.h"

namespace speakermem::retrieval {
namespace {

class Bm25Retriever final : public Retriever {
 public:
  Bm25Retriever(storage::Store* store, const LexicalIndex* index)
      : store_(store), index_(index) {}

  absl::StatusOr<RetrievalResult> Retrieve(const RetrievalRequest& req) override {
    if (req.question.empty()) {
      return absl::InvalidArgumentError("question: must not be empty");
    }
    if (req.top_k == 0) return absl::InvalidArgumentError("top_k: must be positive");
    SM_RETURN_IF_ERROR(store_->GetChannelInfo(req.channel).status());
    auto t0 = std::chrono::steady_clock::now();
    std::vector<ScoredSeq> hits =
        index_->Search(req.channel, req.question, req.top_k, req.start_ms, req.end_ms);
    auto t1 = std::chrono::steady_clock::now();
    std::vector<uint64_t> seqs;
    seqs.reserve(hits.size());
    for (const auto& h : hits) seqs.push_back(h.seq);
    SM_ASSIGN_OR_RETURN(std::vector<storage::Message> msgs,
                        store_->GetMessagesBySeq(req.channel, seqs));
    auto t2 = std::chrono::steady_clock::now();

    RetrievalResult result;
    size_t j = 0;
    for (size_t i = 0; i < hits.size() && j < msgs.size(); ++i) {
      if (msgs[j].seq != hits[i].seq) continue;  // deleted since indexed
      RetrievedMessage rm;
      rm.message = std::move(msgs[j++]);
      rm.score = hits[i].score;
      rm.why = absl::StrCat("bm25 rank ", i + 1);
      result.messages.push_back(std::move(rm));
    }
    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    result.trace.push_back(StageTrace{"s1_bm25", ms(t1 - t0), 0, 0, 0,
                                      absl::StrCat(hits.size(), " hits")});
    result.trace.push_back(StageTrace{"fetch", ms(t2 - t1), 0, 0, 0, ""});
    return result;
  }

 private:
  storage::Store* const store_;
  const LexicalIndex* const index_;
};

}  // namespace

std::unique_ptr<Retriever> NewBm25Retriever(storage::Store* store,
                                            const LexicalIndex* index) {
  return std::make_unique<Bm25Retriever>(store, index);
}

}  // namespace speakermem::retrieval

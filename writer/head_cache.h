// The heads the Writer is shown for a segment: a per-channel cache of the
// current heads with a word index, and the bounded, ranked selection of the
// heads a segment gets (writer.max_heads, writer.head_token_budget).
// Internal to writer/.
#ifndef SPEAKERMEM_WRITER_HEAD_CACHE_H_
#define SPEAKERMEM_WRITER_HEAD_CACHE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "storage/store.h"
#include "storage/types.h"
#include "writer/segmenter.h"
#include "writer/validate.h"
#include "writer/writer_model.h"
#include "writer/writer_service.h"

namespace speakermem::writer {

// A channel's current heads, kept in step with the Writer's own applies so a
// segment does not re-read every record of the channel. Reloaded when the
// record counter moved by other hands (corrections, re-derivation).
struct HeadCache {
  uint64_t next_record = 0;
  std::map<std::string, storage::Record> heads;
  // (owner, layer, normalised content) of the heads, for duplicate checks.
  std::set<std::tuple<std::string, std::string, std::string>> keys;
  // Each head by its record number ("r000000000042" -> 42: record ids are
  // fixed width, so their order is the numbers' order), with its stemmed
  // content words, computed once. `record` points into `heads`.
  struct Entry {
    const storage::Record* record = nullptr;
    std::vector<std::string> tokens;
  };
  absl::flat_hash_map<uint64_t, Entry> entries;
  // Word -> heads using it, and each owner's heads, as ascending record
  // numbers: the candidates BoundHeads ranks, so a segment costs what it
  // touches, not the channel's size.
  std::unordered_map<std::string, std::vector<uint64_t>> postings;
  std::map<std::string, std::vector<uint64_t>> by_owner;

  void Put(const storage::Record& r);
  void Erase(const std::string& id);
  // Reloads the channel's heads from `store` when its record counter
  // (`next_record`, from its WriterState) moved by other hands.
  absl::Status Refresh(storage::Store* store, const storage::ChannelRef& ch, uint64_t next_record);
  // Folds in a segment applied at record counter `before`, when the cache
  // was current then (otherwise the next Refresh reloads it).
  void Fold(const storage::SegmentApply& apply, uint64_t before);
};

// The heads shown to the Writer for `seg`: candidates (heads sharing a word
// with the segment, the most recent heads of its speakers and of GROUP; every
// head of `ctx` without a cache) ranked by tier and word overlap, within the
// segment's share of options.max_heads and options.head_token_budget.
std::vector<WriterHead> BoundHeads(const ValidationContext& ctx, const Segment& seg,
                                   const HeadCache* cache, const WriterOptions& options);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_HEAD_CACHE_H_

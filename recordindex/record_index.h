// A channel's System 2 records indexed for reading: every record, current
// and superseded, in id (creation) order, each with its stemmed words; the
// current heads by owner, by source and by word, with their duplicate keys;
// every node by owner and by word. The Writer reads it for the heads a
// segment is shown and the checks its actions pass; the query path for its
// rows, chains and full tense. Records are append-only per channel, so the
// index grows by Append; a re-derivation or a deletion rebuilds it.
#ifndef SPEAKERMEM_RECORDINDEX_RECORD_INDEX_H_
#define SPEAKERMEM_RECORDINDEX_RECORD_INDEX_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "storage/types.h"

namespace speakermem::recordindex {

struct RecordIndex {
  // The channel's record counter (WriterState::next_record) this reflects.
  uint64_t next_record = 0;
  std::vector<storage::Record> records;          // id order
  std::vector<std::vector<std::string>> tokens;  // per record: stemmed, sorted, unique
  std::vector<std::vector<uint32_t>> token_ids;  // the same, interned, ascending
  std::unordered_map<std::string, uint32_t> token_id;
  // Per record, once the query path has embedded it (shorter than `records`
  // until then; the Writer does not read vectors).
  std::vector<std::shared_ptr<const std::vector<float>>> vectors;
  std::map<std::string, size_t> by_id;
  // Positions, ascending. Heads only:
  size_t head_count = 0;
  std::map<std::string, std::vector<size_t>> heads_by_owner;
  std::map<std::string, std::vector<size_t>> heads_by_source;
  // Stemmed word (not a stopword) -> heads containing it.
  std::unordered_map<std::string, std::vector<size_t>> postings;
  // (owner, layer, text::NormalizeContent(content)) of every head, for the
  // Writer's duplicate checks.
  std::set<std::tuple<std::string, std::string, std::string>> head_keys;
  // Every record:
  std::map<std::string, std::vector<size_t>> nodes_by_owner;
  std::unordered_map<std::string, std::vector<size_t>> node_postings;

  // The record with this id (current or superseded), or null.
  const storage::Record* Find(const std::string& record_id) const;
  // Appends records newer than every indexed one, in id order, and applies
  // their chain links (what they supersede stops being a head).
  void Append(std::vector<storage::Record> fresh);
};

}  // namespace speakermem::recordindex

#endif  // SPEAKERMEM_RECORDINDEX_RECORD_INDEX_H_

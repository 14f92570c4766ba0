#include "recordindex/record_index.h"

#include <algorithm>

#include "text/text.h"

namespace speakermem::recordindex {

using text::IsStopword;

namespace {

void EraseSorted(std::vector<size_t>* v, size_t i) {
  auto it = std::lower_bound(v->begin(), v->end(), i);
  if (it != v->end() && *it == i) v->erase(it);
}

}  // namespace

const storage::Record* RecordIndex::Find(const std::string& record_id) const {
  auto it = by_id.find(record_id);
  return it == by_id.end() ? nullptr : &records[it->second];
}

void RecordIndex::Append(std::vector<storage::Record> fresh) {
  const size_t first_new = records.size();
  for (auto& r : fresh) records.push_back(std::move(r));
  for (size_t i = first_new; i < records.size(); ++i) {
    const storage::Record& r = records[i];
    std::vector<std::string> toks = text::StemmedTokens(r.content);
    std::sort(toks.begin(), toks.end());
    toks.erase(std::unique(toks.begin(), toks.end()), toks.end());
    std::vector<uint32_t> ids;
    for (const auto& tkn : toks) {
      auto [it, added] = token_id.try_emplace(tkn, static_cast<uint32_t>(token_id.size()));
      ids.push_back(it->second);
    }
    std::sort(ids.begin(), ids.end());
    token_ids.push_back(std::move(ids));
    tokens.push_back(std::move(toks));
    by_id[r.record_id] = i;
    nodes_by_owner[r.owner].push_back(i);
    for (const auto& tkn : tokens.back()) {
      if (!IsStopword(tkn)) node_postings[tkn].push_back(i);
    }
    if (!r.active()) continue;
    ++head_count;
    heads_by_owner[r.owner].push_back(i);
    heads_by_source[r.source].push_back(i);
    head_keys.emplace(r.owner, r.layer, text::NormalizeContent(r.content));
    for (const auto& tkn : tokens.back()) {
      if (!IsStopword(tkn)) postings[tkn].push_back(i);
    }
  }
  // The new records' chain links: their predecessors stop being heads.
  for (size_t i = first_new; i < records.size(); ++i) {
    for (const auto& old_id : records[i].supersedes) {
      auto found = by_id.find(old_id);
      if (found == by_id.end()) continue;
      const size_t o = found->second;
      storage::Record& old = records[o];
      if (!old.active()) continue;
      old.superseded_by = records[i].record_id;
      --head_count;
      EraseSorted(&heads_by_owner[old.owner], o);
      EraseSorted(&heads_by_source[old.source], o);
      head_keys.erase({old.owner, old.layer, text::NormalizeContent(old.content)});
      for (const auto& tkn : tokens[o]) {
        auto p = postings.find(tkn);
        if (p != postings.end()) EraseSorted(&p->second, o);
      }
    }
  }
}

}  // namespace speakermem::recordindex

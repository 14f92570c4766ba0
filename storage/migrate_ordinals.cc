#include "storage/migrate_ordinals.h"

#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rocksdb/write_batch.h"
#include "storage/keys.h"
#include "storage/values.pb.h"

namespace speakermem::storage {
namespace {

// A format-1 key's remainder after the channel prefix: `r<name>` or
// `s<name>\0<seq>`; format-2 ones have the ordinal mark after the letter.
bool IsFormat1(absl::string_view rest, char letter) {
  return rest.size() >= 2 && rest[0] == letter && rest[1] != keys::kOrdinalMark;
}

// Writes `batch` once it holds `at_least` operations (0: whatever it holds).
rocksdb::Status Drain(rocksdb::DB* db, rocksdb::WriteBatch* batch, int at_least) {
  if (batch->Count() == 0 || batch->Count() < at_least) return rocksdb::Status::OK();
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status s = db->Write(wo, batch);
  batch->Clear();
  return s;
}

// Per channel: the ordinals already given (a run cut short) and the names
// still keyed by name (format 1), which get the next ones.
struct Channel {
  std::map<std::string, uint32_t> ordinal;               // speaker id -> ordinal
  std::map<std::string, StoredRosterEntry> old_entries;  // by name, format 1
  uint32_t next = 1;
};

rocksdb::Status ReadRosters(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                            std::map<ChannelRef, Channel>* channels) {
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), meta));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ChannelRef ch;
    absl::string_view rest;
    if (!keys::ParseChannelKey(absl::string_view(it->key().data(), it->key().size()), &ch, &rest) ||
        rest.empty() || rest[0] != 'r') {
      continue;
    }
    StoredRosterEntry sr;
    if (!sr.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return rocksdb::Status::Corruption("roster record is corrupt");
    }
    Channel& c = (*channels)[ch];
    if (IsFormat1(rest, 'r')) {
      c.old_entries[std::string(rest.substr(1))] = sr;
    } else {
      c.ordinal[sr.speaker_id()] = sr.ordinal();
      c.next = std::max(c.next, sr.ordinal() + 1);
    }
  }
  return it->status();
}

// 1. Roster entries keyed by name get the next ordinals; the channel record
//    learns the next ordinal. One write per channel.
rocksdb::Status MoveRosters(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                            std::map<ChannelRef, Channel>* channels, size_t* moved) {
  for (auto& [ch, c] : *channels) {
    if (c.old_entries.empty()) continue;
    rocksdb::WriteBatch batch;
    for (auto& [name, sr] : c.old_entries) {
      const uint32_t ordinal = c.next++;
      c.ordinal[name] = ordinal;
      sr.set_speaker_id(name);
      sr.set_ordinal(ordinal);
      batch.Put(meta, keys::RosterKey(ch, ordinal), sr.SerializeAsString());
      batch.Delete(meta, keys::RosterPrefix(ch) + name);
      ++*moved;
    }
    std::string value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), meta, keys::ChannelInfoKey(ch), &value);
    if (!s.ok() && !s.IsNotFound()) return s;
    if (s.ok()) {
      StoredChannel sc;
      if (!sc.ParseFromString(value))
        return rocksdb::Status::Corruption("channel record is corrupt");
      sc.set_next_speaker_ordinal(c.next);
      batch.Put(meta, keys::ChannelInfoKey(ch), sc.SerializeAsString());
    }
    s = Drain(db, &batch, 0);
    if (!s.ok()) return s;
  }
  return rocksdb::Status::OK();
}

// 2. The by-speaker index: `s<name>\0<seq>` -> `s\x01<ordinal><seq>`.
rocksdb::Status RewriteSpeakerIndex(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* index,
                                    const std::map<ChannelRef, Channel>& channels,
                                    size_t* rewritten) {
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), index));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ChannelRef ch;
    absl::string_view rest;
    if (!keys::ParseChannelKey(absl::string_view(it->key().data(), it->key().size()), &ch, &rest) ||
        !IsFormat1(rest, 's')) {
      continue;
    }
    const size_t nul = rest.find('\0');
    if (nul == absl::string_view::npos || rest.size() != nul + 9) {
      return rocksdb::Status::Corruption("speaker index key is malformed");
    }
    const std::string name(rest.substr(1, nul - 1));
    auto c = channels.find(ch);
    if (c == channels.end() || c->second.ordinal.count(name) == 0) {
      return rocksdb::Status::Corruption(
          absl::StrCat("a speaker index key of channel '", ch.channel, "' has no roster entry"));
    }
    batch.Put(
        index,
        keys::SpeakerKey(ch, c->second.ordinal.at(name), keys::DecodeBE64(rest.substr(nul + 1, 8))),
        "");
    batch.Delete(index, it->key());
    ++*rewritten;
    rocksdb::Status s = Drain(db, &batch, 10000);
    if (!s.ok()) return s;
  }
  if (!it->status().ok()) return it->status();
  return Drain(db, &batch, 0);
}

}  // namespace

rocksdb::Status MigrateSpeakerOrdinals(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                                       rocksdb::ColumnFamilyHandle* index,
                                       const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& what) {
    if (progress) progress(what);
  };
  std::map<ChannelRef, Channel> channels;
  rocksdb::Status s = ReadRosters(db, meta, &channels);
  if (!s.ok()) return s;
  size_t moved = 0;
  s = MoveRosters(db, meta, &channels, &moved);
  if (!s.ok()) return s;
  say(absl::StrCat(moved, " roster entries keyed by ordinal"));
  size_t rewritten = 0;
  s = RewriteSpeakerIndex(db, index, channels, &rewritten);
  if (!s.ok()) return s;
  say(absl::StrCat(rewritten, " speaker index keys keyed by ordinal"));
  // 3. The old keys leave the files.
  rocksdb::CompactRangeOptions all;
  all.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (auto* family : {meta, index}) {
    s = db->CompactRange(all, family, nullptr, nullptr);
    if (!s.ok()) return s;
  }
  return rocksdb::Status::OK();
}

}  // namespace speakermem::storage

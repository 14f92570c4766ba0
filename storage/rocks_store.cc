// RocksDB implementation of Store: opening, messages, channels and roster.
// The class is declared in rocks_store_internal.h; records, vectors,
// deletion and maintenance are in rocks_derived.cc.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/checkpoint.h"
#include "rocksdb/utilities/options_util.h"
#include "rocksdb/write_batch.h"
#include "storage/index_hint.h"
#include "storage/keys.h"
#include "storage/layers.h"
#include "storage/migrate_ordinals.h"
#include "storage/rocks_store_internal.h"
#include "storage/store.h"
#include "storage/values.pb.h"

namespace speakermem::storage {

const char* const kColumnFamilyNames[kNumColumnFamilies] = {
    "default", "episodic", "core", "profile", "interaction", "insight", "meta", "index", "vectors"};

namespace rocks_internal {

absl::Status RocksStore::Init() {
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kDefault), keys::kFormatVersionKey, &value);
  if (s.IsNotFound()) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    return FromRocks(db_->Put(wo, cf(ColumnFamily::kDefault), keys::kFormatVersionKey,
                              std::to_string(kFormatVersion)),
                     "write format version");
  }
  SM_RETURN_IF_ERROR(FromRocks(s, "read format version"));
  int version = 0;
  try {
    version = std::stoi(value);
  } catch (...) {
    return absl::DataLossError(absl::StrCat("store format version is unreadable: '", value, "'"));
  }
  if (version > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store at ", options_.path, " has format version ", version, ", newer than this build's ",
        kFormatVersion, "; refusing to open it (upgrade speakermemd)"));
  }
  if (version < kFormatVersion) {
    // Format 1 -> 2: speaker names leave the keys (storage/keys.h).
    LOG_INFO("migrating store format")
        .Int("from", version)
        .Int("to", kFormatVersion)
        .Str("path", options_.path);
    SM_RETURN_IF_ERROR(FromRocks(
        MigrateSpeakerOrdinals(
            db_.get(), cf(ColumnFamily::kMeta), cf(ColumnFamily::kIndex),
            [](const std::string& what) { LOG_INFO("store migration").Str("done", what); }),
        "migrate speaker keys to ordinals"));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    SM_RETURN_IF_ERROR(FromRocks(db_->Put(wo, cf(ColumnFamily::kDefault), keys::kFormatVersionKey,
                                          std::to_string(kFormatVersion)),
                                 "write format version"));
    LOG_INFO("store migrated").Int("format_version", kFormatVersion);
  }
  return absl::OkStatus();
}

std::shared_ptr<ChannelState> RocksStore::StateFor(const ChannelRef& ch) {
  absl::MutexLock lock(&states_mu_);
  auto& slot = states_[ch];
  if (!slot) slot = std::make_shared<ChannelState>();
  return slot;
}

absl::StatusOr<ChannelInfo> RocksStore::ReadChannelInfo(const ChannelRef& ch, bool* exists,
                                                        const rocksdb::Snapshot* snap) {
  std::string value;
  rocksdb::Status s =
      db_->Get(ReadAt(snap), cf(ColumnFamily::kMeta), keys::ChannelInfoKey(ch), &value);
  ChannelInfo info;
  info.channel = ch.channel;
  *exists = false;
  if (s.IsNotFound()) return info;
  SM_RETURN_IF_ERROR(FromRocks(s, "read channel info"));
  StoredChannel sc;
  if (!sc.ParseFromString(value)) {
    return absl::DataLossError("channel info record is corrupt");
  }
  *exists = true;
  info.message_count = sc.message_count();
  info.last_seq = sc.last_seq();
  info.speaker_count = sc.speaker_count();
  info.first_message_ms = sc.first_message_ms();
  info.last_message_ms = sc.last_message_ms();
  info.next_speaker_ordinal = std::max<uint32_t>(1, sc.next_speaker_ordinal());
  return info;
}

absl::Status RocksStore::LoadState(const ChannelRef& ch, ChannelState* state) {
  if (state->loaded) return absl::OkStatus();
  bool exists = false;
  SM_ASSIGN_OR_RETURN(state->info, ReadChannelInfo(ch, &exists));
  state->exists = exists;
  state->roster.clear();
  const std::string prefix = keys::RosterPrefix(ch);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kMeta)));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    StoredRosterEntry sr;
    if (!sr.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError("roster record is corrupt");
    }
    RosterEntry e;
    e.speaker_id = sr.speaker_id();
    e.ordinal = sr.ordinal();
    e.aliases.assign(sr.aliases().begin(), sr.aliases().end());
    e.first_seen_ms = sr.first_seen_ms();
    e.last_seen_ms = sr.last_seen_ms();
    e.message_count = sr.message_count();
    state->roster[e.speaker_id] = std::move(e);
  }
  SM_RETURN_IF_ERROR(FromRocks(it->status(), "scan roster"));
  state->loaded = true;
  return absl::OkStatus();
}

absl::StatusOr<AppendResult> RocksStore::AppendMessages(const ChannelRef& ch,
                                                        std::vector<Message>* messages) {
  std::shared_ptr<ChannelState> state = StateFor(ch);
  std::lock_guard<std::mutex> lock(state->mu);
  SM_RETURN_IF_ERROR(LoadState(ch, state.get()));

  // Which client ids are stored already?
  std::vector<std::string> id_keys;
  std::vector<size_t> id_index;
  std::vector<size_t> id_slot(messages->size(), SIZE_MAX);  // message -> its key in id_keys
  for (size_t i = 0; i < messages->size(); ++i) {
    if (!(*messages)[i].message_id.empty()) {
      id_slot[i] = id_keys.size();
      id_keys.push_back(keys::MessageIdKey(ch, (*messages)[i].message_id));
      id_index.push_back(i);
    }
  }
  std::vector<uint64_t> existing_seq(messages->size(), 0);
  if (!id_keys.empty()) {
    std::vector<rocksdb::Slice> slices(id_keys.begin(), id_keys.end());
    std::vector<rocksdb::ColumnFamilyHandle*> cfs(id_keys.size(), cf(ColumnFamily::kIndex));
    std::vector<std::string> values;
    std::vector<rocksdb::Status> statuses =
        db_->MultiGet(rocksdb::ReadOptions(), cfs, slices, &values);
    for (size_t j = 0; j < statuses.size(); ++j) {
      if (statuses[j].ok()) {
        existing_seq[id_index[j]] = keys::DecodeBE64(values[j]);
      } else if (!statuses[j].IsNotFound()) {
        return FromRocks(statuses[j], "look up message id");
      }
    }
  }

  AppendResult result;
  result.messages.resize(messages->size());
  ChannelInfo info = state->info;
  absl::flat_hash_map<std::string, RosterEntry> touched;
  absl::flat_hash_map<std::string, uint64_t> batch_ids;
  rocksdb::WriteBatch batch;
  std::string value;
  StoredMessage sm;
  // The secondary keys are put after the messages, each kind together: the
  // memtable inserts a run of neighbouring keys cheaply, while keys of
  // several kinds interleaved cost it a full search each (about 3x the write
  // time). No session/turn key is written: nothing reads one (stores written
  // before still hold them; forgetting a message deletes its).
  std::vector<std::pair<std::string, std::string>> id_keys_out;
  std::vector<std::string> speaker_keys;
  id_keys_out.reserve(messages->size());
  speaker_keys.reserve(messages->size());
  for (size_t i = 0; i < messages->size(); ++i) {
    Message& m = (*messages)[i];
    AppendedMessage& out = result.messages[i];
    if (!m.message_id.empty()) {
      auto dup = batch_ids.find(m.message_id);
      uint64_t prior =
          existing_seq[i] ? existing_seq[i] : (dup != batch_ids.end() ? dup->second : 0);
      if (prior != 0) {
        out = AppendedMessage{m.message_id, prior, true};
        ++result.duplicates;
        continue;
      }
    }
    m.seq = ++info.last_seq;
    if (m.message_id.empty()) m.message_id = absl::StrCat("~", m.seq);
    if (m.speaker_id.empty()) m.speaker_id = m.speaker;
    batch_ids[m.message_id] = m.seq;
    out = AppendedMessage{m.message_id, m.seq, false};
    if (result.first_seq == 0) result.first_seq = m.seq;
    result.last_seq = m.seq;
    ++result.stored;

    sm.Clear();
    ToStored(m, &sm);
    sm.SerializeToString(&value);
    batch.Put(cf(ColumnFamily::kEpisodic), keys::MessageKey(ch, m.seq), value);
    std::string seq_be;
    keys::AppendBE64(m.seq, &seq_be);
    // The key looked up above is written as it is (a message without an id
    // got "~seq" just now and has none yet).
    id_keys_out.emplace_back(id_slot[i] != SIZE_MAX ? std::move(id_keys[id_slot[i]])
                                                    : keys::MessageIdKey(ch, m.message_id),
                             std::move(seq_be));

    auto t = touched.find(m.speaker_id);
    if (t == touched.end()) {
      auto r = state->roster.find(m.speaker_id);
      RosterEntry e;
      if (r != state->roster.end()) {
        e = r->second;
      } else {
        e.speaker_id = m.speaker_id;
        e.ordinal = info.next_speaker_ordinal++;
        e.first_seen_ms = m.timestamp_ms;
        e.last_seen_ms = m.timestamp_ms;
      }
      t = touched.emplace(m.speaker_id, std::move(e)).first;
    }
    RosterEntry& e = t->second;
    speaker_keys.push_back(keys::SpeakerKey(ch, e.ordinal, m.seq));
    if (std::find(e.aliases.begin(), e.aliases.end(), m.speaker) == e.aliases.end()) {
      e.aliases.push_back(m.speaker);
    }
    e.first_seen_ms = std::min(e.first_seen_ms, m.timestamp_ms);
    e.last_seen_ms = std::max(e.last_seen_ms, m.timestamp_ms);
    ++e.message_count;

    ++info.message_count;
    if (info.first_message_ms == 0 || m.timestamp_ms < info.first_message_ms) {
      info.first_message_ms = m.timestamp_ms;
    }
    info.last_message_ms = std::max(info.last_message_ms, m.timestamp_ms);
  }
  if (result.stored == 0) return result;
  std::sort(id_keys_out.begin(), id_keys_out.end());
  std::sort(speaker_keys.begin(), speaker_keys.end());
  for (const auto& [key, seq_be] : id_keys_out) batch.Put(cf(ColumnFamily::kIndex), key, seq_be);
  for (const auto& key : speaker_keys) batch.Put(cf(ColumnFamily::kIndex), key, "");

  size_t new_speakers = 0;
  for (const auto& [id, e] : touched) {
    if (!state->roster.contains(id)) ++new_speakers;
    PutRosterEntry(ch, id, e, &batch);
  }
  info.speaker_count += static_cast<uint32_t>(new_speakers);
  PutChannelInfo(ch, info, &batch);

  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  SM_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "append messages"));

  // Durable: publish the new state.
  state->info = info;
  state->exists = true;
  for (auto& [id, e] : touched) state->roster[id] = std::move(e);
  return result;
}

absl::Status RocksStore::ScanAll(const ChannelRef& ch, const MessageQuery& q, MessagePage* page,
                                 const rocksdb::Snapshot* snap) {
  const std::string prefix = keys::ChannelPrefix(ch);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(ReadAt(snap), cf(ColumnFamily::kEpisodic)));
  uint32_t scanned = 0;
  StoredMessage sm;
  for (it->Seek(keys::MessageKey(ch, q.after_seq + 1));
       it->Valid() && it->key().starts_with(prefix); it->Next()) {
    uint64_t seq = keys::DecodeBE64(absl::string_view(it->key().data() + prefix.size(), 8));
    if (page->messages.size() >= q.limit || scanned >= q.max_scan) {
      page->next_after_seq = seq - 1;
      return absl::OkStatus();
    }
    ++scanned;
    if (!sm.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat("message ", seq, " is corrupt"));
    }
    Message m = FromStored(sm, seq);
    if (InTimeRange(m, q.start_ms, q.end_ms)) page->messages.push_back(std::move(m));
  }
  return FromRocks(it->status(), "scan messages");
}

absl::Status RocksStore::ScanBySpeaker(const ChannelRef& ch, const MessageQuery& q,
                                       MessagePage* page) {
  uint32_t ordinal = 0;
  {
    std::shared_ptr<ChannelState> state = StateFor(ch);
    std::lock_guard<std::mutex> lock(state->mu);
    SM_RETURN_IF_ERROR(LoadState(ch, state.get()));
    auto r = state->roster.find(q.speaker_id);
    if (r == state->roster.end()) return absl::OkStatus();  // no such speaker: no messages
    ordinal = r->second.ordinal;
  }
  const std::string prefix = keys::SpeakerPrefix(ch, ordinal);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kIndex)));
  uint32_t scanned = 0;
  std::vector<uint64_t> batch;
  auto drain = [&]() -> absl::Status {
    SM_ASSIGN_OR_RETURN(std::vector<Message> ms, GetMessagesBySeq(ch, batch));
    for (auto& m : ms) {
      if (InTimeRange(m, q.start_ms, q.end_ms)) page->messages.push_back(std::move(m));
    }
    batch.clear();
    return absl::OkStatus();
  };
  for (it->Seek(keys::SpeakerKey(ch, ordinal, q.after_seq + 1));
       it->Valid() && it->key().starts_with(prefix); it->Next()) {
    uint64_t seq = keys::DecodeBE64(absl::string_view(it->key().data() + prefix.size(), 8));
    if (page->messages.size() + batch.size() >= q.limit || scanned >= q.max_scan) {
      SM_RETURN_IF_ERROR(drain());
      if (page->messages.size() >= q.limit || scanned >= q.max_scan) {
        page->next_after_seq = seq - 1;
        return absl::OkStatus();
      }
    }
    ++scanned;
    batch.push_back(seq);
  }
  SM_RETURN_IF_ERROR(FromRocks(it->status(), "scan speaker index"));
  return drain();
}

absl::StatusOr<MessagePage> RocksStore::ScanMessages(const ChannelRef& ch, const MessageQuery& q) {
  bool exists = false;
  SM_ASSIGN_OR_RETURN(ChannelInfo info, ReadChannelInfo(ch, &exists));
  (void)info;
  if (!exists) return absl::NotFoundError(absl::StrCat("channel '", ch.channel, "' not found"));
  MessagePage page;
  if (q.limit == 0) return page;
  if (q.speaker_id.empty()) {
    SM_RETURN_IF_ERROR(ScanAll(ch, q, &page));
  } else {
    SM_RETURN_IF_ERROR(ScanBySpeaker(ch, q, &page));
  }
  return page;
}

absl::StatusOr<std::vector<Message>> RocksStore::GetMessagesBySeq(
    const ChannelRef& ch, const std::vector<uint64_t>& seqs) {
  std::vector<Message> out;
  if (seqs.empty()) return out;
  std::vector<std::string> ks;
  ks.reserve(seqs.size());
  for (uint64_t s : seqs) ks.push_back(keys::MessageKey(ch, s));
  std::vector<rocksdb::Slice> slices(ks.begin(), ks.end());
  std::vector<rocksdb::ColumnFamilyHandle*> cfs(ks.size(), cf(ColumnFamily::kEpisodic));
  std::vector<std::string> values;
  std::vector<rocksdb::Status> st = db_->MultiGet(rocksdb::ReadOptions(), cfs, slices, &values);
  out.reserve(seqs.size());
  StoredMessage sm;
  for (size_t i = 0; i < st.size(); ++i) {
    if (st[i].IsNotFound()) continue;
    SM_RETURN_IF_ERROR(FromRocks(st[i], "get message"));
    if (!sm.ParseFromString(values[i])) {
      return absl::DataLossError(absl::StrCat("message ", seqs[i], " is corrupt"));
    }
    out.push_back(FromStored(sm, seqs[i]));
  }
  return out;
}

absl::StatusOr<uint64_t> RocksStore::FindMessageId(const ChannelRef& ch,
                                                   const std::string& message_id) {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kIndex),
                               keys::MessageIdKey(ch, message_id), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("message '", message_id, "' not found"));
  }
  SM_RETURN_IF_ERROR(FromRocks(s, "find message id"));
  return keys::DecodeBE64(value);
}

absl::StatusOr<std::vector<RosterEntry>> RocksStore::GetRoster(const ChannelRef& ch) {
  std::shared_ptr<ChannelState> state = StateFor(ch);
  std::lock_guard<std::mutex> lock(state->mu);
  SM_RETURN_IF_ERROR(LoadState(ch, state.get()));
  if (!state->exists) {
    return absl::NotFoundError(absl::StrCat("channel '", ch.channel, "' not found"));
  }
  std::vector<RosterEntry> out;
  out.reserve(state->roster.size());
  for (const auto& [id, e] : state->roster) out.push_back(e);
  std::sort(out.begin(), out.end(),
            [](const RosterEntry& a, const RosterEntry& b) { return a.speaker_id < b.speaker_id; });
  return out;
}

absl::StatusOr<std::string> RocksStore::ResolveSpeaker(const ChannelRef& ch,
                                                       const std::string& name) {
  SM_ASSIGN_OR_RETURN(std::vector<RosterEntry> roster, GetRoster(ch));
  for (const auto& e : roster) {
    if (e.speaker_id == name) return e.speaker_id;
  }
  for (const auto& e : roster) {
    for (const auto& a : e.aliases) {
      if (a == name) return e.speaker_id;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("speaker '", name, "' not found in channel '", ch.channel, "'"));
}

absl::StatusOr<ChannelInfo> RocksStore::GetChannelInfo(const ChannelRef& ch) {
  bool exists = false;
  SM_ASSIGN_OR_RETURN(ChannelInfo info, ReadChannelInfo(ch, &exists));
  if (!exists) {
    return absl::NotFoundError(absl::StrCat("channel '", ch.channel, "' not found"));
  }
  return info;
}

absl::StatusOr<std::vector<ChannelInfo>> RocksStore::ListChannels(const std::string& tenant,
                                                                  const std::string& after,
                                                                  uint32_t limit) {
  std::vector<ChannelInfo> out;
  const std::string tprefix = keys::TenantPrefix(tenant);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kMeta)));
  std::string start = tprefix;
  if (!after.empty()) {
    start += after;
    start.push_back('\x01');
  }
  it->Seek(start);
  while (it->Valid() && it->key().starts_with(tprefix) && out.size() < limit) {
    ChannelRef ch;
    absl::string_view rest;
    std::string key = it->key().ToString();
    if (!keys::ParseChannelKey(key, &ch, &rest)) {
      return absl::DataLossError("malformed meta key");
    }
    if (rest == "c") {
      StoredChannel sc;
      if (!sc.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
        return absl::DataLossError("channel info record is corrupt");
      }
      ChannelInfo info;
      info.channel = ch.channel;
      info.message_count = sc.message_count();
      info.last_seq = sc.last_seq();
      info.speaker_count = sc.speaker_count();
      info.first_message_ms = sc.first_message_ms();
      info.last_message_ms = sc.last_message_ms();
      out.push_back(std::move(info));
    }
    // Skip the rest of this channel's keys (its roster).
    it->Seek(keys::ChannelPrefixEnd(ch));
  }
  SM_RETURN_IF_ERROR(FromRocks(it->status(), "list channels"));
  return out;
}

absl::Status RocksStore::ForEachChannel(
    const std::function<absl::Status(const ChannelRef&, const ChannelInfo&)>& fn) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kMeta)));
  it->SeekToFirst();
  while (it->Valid()) {
    ChannelRef ch;
    absl::string_view rest;
    std::string key = it->key().ToString();
    if (!keys::ParseChannelKey(key, &ch, &rest)) {
      return absl::DataLossError("malformed meta key");
    }
    bool exists = false;
    SM_ASSIGN_OR_RETURN(ChannelInfo info, ReadChannelInfo(ch, &exists));
    if (exists) SM_RETURN_IF_ERROR(fn(ch, info));
    it->Seek(keys::ChannelPrefixEnd(ch));
  }
  return FromRocks(it->status(), "scan channels");
}

absl::Status RocksStore::ForEachMessage(
    const std::function<absl::Status(const ChannelRef&, const Message&)>& fn) {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(ColumnFamily::kEpisodic)));
  StoredMessage sm;
  ChannelRef ch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    absl::string_view rest;
    if (!keys::ParseChannelKey(absl::string_view(it->key().data(), it->key().size()), &ch, &rest) ||
        rest.size() != 8) {
      return absl::DataLossError("malformed message key");
    }
    if (!sm.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError("message record is corrupt");
    }
    SM_RETURN_IF_ERROR(fn(ch, FromStored(sm, keys::DecodeBE64(rest))));
  }
  return FromRocks(it->status(), "scan all messages");
}

}  // namespace rocks_internal

namespace {

rocksdb::ColumnFamilyOptions CfOptions(const StoreOptions& options,
                                       std::shared_ptr<rocksdb::Cache> cache, ColumnFamily family) {
  rocksdb::ColumnFamilyOptions cfo;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  // The vectors family is only scanned (at startup), never probed by key:
  // a bloom filter there would be built at every flush for nothing.
  if (family != ColumnFamily::kVectors) t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // Index and filter blocks live in the block cache (bounded memory), but
  // partitioned, with the top level and level-0 ones pinned and the rest in
  // the cache's high-priority pool: a point read then never reloads a whole
  // file's index because data blocks pushed it out.
  t.cache_index_and_filter_blocks = true;
  t.cache_index_and_filter_blocks_with_high_priority = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  t.pin_top_level_index_and_filter = true;
  t.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  t.partition_filters = true;
  cfo.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  // Levels 0 and 1 stay uncompressed: they are rewritten soon anyway, and
  // compressing every flush takes CPU from ingest on a small machine; the
  // levels below hold most of the data and are compressed.
  cfo.compression_per_level = {rocksdb::kNoCompression,  rocksdb::kNoCompression,
                               rocksdb::kLZ4Compression, rocksdb::kLZ4Compression,
                               rocksdb::kLZ4Compression, rocksdb::kLZ4Compression,
                               rocksdb::kLZ4Compression};
  cfo.compression = rocksdb::kLZ4Compression;
  cfo.bottommost_compression = rocksdb::kZSTD;
  if (family == ColumnFamily::kVectors) {
    cfo.compression_per_level.clear();
    // Floats do not compress; don't spend compaction CPU trying.
    cfo.compression = rocksdb::kNoCompression;
    cfo.bottommost_compression = rocksdb::kNoCompression;
  }
  if (family == ColumnFamily::kIndex) {
    cfo.memtable_insert_with_hint_prefix_extractor = NewIndexHintPrefix();
    // Ingest looks up every new message id (is it stored already?), nearly
    // always in vain: a whole-key bloom filter on the memtable answers those
    // misses without searching it.
    cfo.memtable_whole_key_filtering = true;
    cfo.memtable_prefix_bloom_size_ratio = 0.05;
  }
  if (family == ColumnFamily::kEpisodic || family == ColumnFamily::kIndex) {
    cfo.write_buffer_size = 32u << 20;
  } else {
    cfo.write_buffer_size = 8u << 20;
  }
  return cfo;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("store path is empty");
  rocksdb::DBOptions dbo;
  dbo.create_if_missing = true;
  dbo.create_missing_column_families = true;
  dbo.IncreaseParallelism(std::max(1, options.background_threads));
  // Flushes and compactions keep normal CPU priority: starved of CPU by the
  // Writer they let level-0 files pile up, which slows every read and
  // finally stalls writes.
  dbo.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  dbo.max_total_wal_size = 256u << 20;
  dbo.keep_log_file_num = 5;

  // Refuse unknown column families from a newer build before opening.
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(dbo, options.path, &existing).ok()) {
    for (const auto& name : existing) {
      if (std::find(std::begin(kColumnFamilyNames), std::end(kColumnFamilyNames), name) ==
          std::end(kColumnFamilyNames)) {
        return absl::FailedPreconditionError(
            absl::StrCat("store at ", options.path, " has column family '", name,
                         "' unknown to this build; it was written by a newer version"));
      }
    }
  }

  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (int i = 0; i < kNumColumnFamilies; ++i) {
    descs.emplace_back(kColumnFamilyNames[i],
                       CfOptions(options, cache, static_cast<ColumnFamily>(i)));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(dbo, options.path, descs, &handles, &raw);
  if (!s.ok()) return rocks_internal::FromRocks(s, absl::StrCat("open store at ", options.path));
  std::unique_ptr<rocksdb::DB> db(raw);
  auto store =
      std::make_unique<rocks_internal::RocksStore>(options, std::move(db), std::move(handles));
  SM_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace speakermem::storage

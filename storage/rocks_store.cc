// RocksDB implementation of Store. The only place RocksDB statuses are
// converted (FromRocks).
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
#include "storage/store.h"
#include "storage/values.pb.h"

namespace speakermem::storage {

const char* const kColumnFamilyNames[kNumColumnFamilies] = {
    "default", "episodic", "core", "profile", "interaction", "insight", "meta", "index", "vectors"};

namespace {

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(context, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(msg);
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain() || s.IsIOError()) {
    return absl::UnavailableError(msg);
  }
  if (s.IsInvalidArgument() || s.IsNotSupported()) {
    return absl::FailedPreconditionError(msg);
  }
  return absl::InternalError(msg);
}

Message FromStored(const StoredMessage& sm, uint64_t seq) {
  Message m;
  m.message_id = sm.message_id();
  m.seq = seq;
  m.speaker = sm.speaker();
  m.speaker_id = sm.speaker_id().empty() ? sm.speaker() : sm.speaker_id();
  m.text = sm.text();
  m.timestamp_ms = sm.timestamp_ms();
  m.session = sm.session();
  m.turn = sm.turn();
  m.reply_to = sm.reply_to();
  m.metadata.insert(sm.metadata().begin(), sm.metadata().end());
  return m;
}

void ToStored(const Message& m, StoredMessage* sm) {
  sm->set_message_id(m.message_id);
  sm->set_speaker(m.speaker);
  if (m.speaker_id != m.speaker) sm->set_speaker_id(m.speaker_id);
  sm->set_text(m.text);
  sm->set_timestamp_ms(m.timestamp_ms);
  sm->set_session(m.session);
  sm->set_turn(m.turn);
  sm->set_reply_to(m.reply_to);
  for (const auto& [k, v] : m.metadata) (*sm->mutable_metadata())[k] = v;
}

bool InTimeRange(const Message& m, int64_t start_ms, int64_t end_ms) {
  if (start_ms != 0 && m.timestamp_ms < start_ms) return false;
  if (end_ms != 0 && m.timestamp_ms >= end_ms) return false;
  return true;
}

// The column family of each layer, in storage/layers.h's table order.
constexpr ColumnFamily kLayerFamilies[] = {ColumnFamily::kCore, ColumnFamily::kProfile,
                                           ColumnFamily::kInteraction, ColumnFamily::kInsight};
static_assert(sizeof(kLayerFamilies) / sizeof(kLayerFamilies[0]) == kLayerCount);

absl::StatusOr<ColumnFamily> LayerFamily(const std::string& layer) {
  for (size_t i = 0; i < kLayerCount; ++i) {
    if (layer == kLayerTable[i].code) return kLayerFamilies[i];
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown layer '", layer, "'"));
}

Record FromStoredRecord(const StoredRecord& sr, std::string id, std::string layer) {
  Record r;
  r.record_id = std::move(id);
  r.layer = std::move(layer);
  r.content = sr.content();
  r.source = sr.source();
  r.owner = sr.owner();
  r.utype = sr.utype();
  r.event = sr.event();
  r.valid_at_ms = sr.valid_at_ms();
  r.from_ids.assign(sr.from_ids().begin(), sr.from_ids().end());
  r.supersedes.assign(sr.supersedes().begin(), sr.supersedes().end());
  r.superseded_by = sr.superseded_by();
  r.writer_pos = sr.writer_pos();
  r.session = sr.session();
  r.created_ms = sr.created_ms();
  r.operator_locked = sr.operator_locked();
  r.support_changed = sr.support_changed();
  return r;
}

void ToStoredRecord(const Record& r, StoredRecord* sr) {
  sr->set_content(r.content);
  sr->set_source(r.source);
  sr->set_owner(r.owner);
  sr->set_utype(r.utype);
  sr->set_event(r.event);
  sr->set_valid_at_ms(r.valid_at_ms);
  for (const auto& f : r.from_ids) sr->add_from_ids(f);
  for (const auto& f : r.supersedes) sr->add_supersedes(f);
  sr->set_superseded_by(r.superseded_by);
  sr->set_writer_pos(r.writer_pos);
  sr->set_session(r.session);
  sr->set_created_ms(r.created_ms);
  sr->set_operator_locked(r.operator_locked);
  sr->set_support_changed(r.support_changed);
}

// Cached per-channel state owned by the single writer process. Loaded from
// the store on first use; replaced only after a successful write.
struct ChannelState {
  std::mutex mu;
  bool loaded = false;                                   // guarded by mu
  bool exists = false;                                   // guarded by mu
  ChannelInfo info;                                      // guarded by mu
  absl::flat_hash_map<std::string, RosterEntry> roster;  // guarded by mu
};

class RocksStore final : public Store {
 public:
  RocksStore(const StoreOptions& options, std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles)
      : options_(options), db_(std::move(db)), handles_(std::move(handles)) {}

  ~RocksStore() override {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    db_->Close();
  }

  absl::Status Init();

  absl::StatusOr<AppendResult> AppendMessages(const ChannelRef& channel,
                                              std::vector<Message>* messages) override;
  absl::StatusOr<MessagePage> ScanMessages(const ChannelRef& channel,
                                           const MessageQuery& query) override;
  absl::StatusOr<std::vector<Message>> GetMessagesBySeq(const ChannelRef& channel,
                                                        const std::vector<uint64_t>& seqs) override;
  absl::StatusOr<uint64_t> FindMessageId(const ChannelRef& channel,
                                         const std::string& message_id) override;
  absl::StatusOr<std::vector<RosterEntry>> GetRoster(const ChannelRef& channel) override;
  absl::StatusOr<std::string> ResolveSpeaker(const ChannelRef& channel,
                                             const std::string& name) override;
  absl::StatusOr<ChannelInfo> GetChannelInfo(const ChannelRef& channel) override;
  absl::StatusOr<std::vector<ChannelInfo>> ListChannels(const std::string& tenant,
                                                        const std::string& after,
                                                        uint32_t limit) override;
  absl::Status ForEachMessage(
      const std::function<absl::Status(const ChannelRef&, const Message&)>& fn) override;
  absl::Status ForEachChannel(
      const std::function<absl::Status(const ChannelRef&, const ChannelInfo&)>& fn) override;
  uint64_t ApproximateSizeBytes() override;
  absl::Status Flush() override;

  absl::StatusOr<WriterState> GetWriterState(const ChannelRef& channel) override;
  absl::Status SetFlushUntil(const ChannelRef& channel, uint64_t seq) override;
  absl::Status ApplySegment(const ChannelRef& channel, const SegmentApply& apply) override;
  absl::StatusOr<std::vector<Record>> ListRecords(const ChannelRef& channel,
                                                  const RecordQuery& query) override;
  absl::Status ReplaceDerived(const ChannelRef& channel, const std::vector<Record>& records,
                              const WriterState& state) override;
  absl::Status PutVectors(const ChannelRef& channel, VectorKind kind,
                          const std::vector<uint64_t>& ids,
                          const std::vector<std::vector<float>>& vectors) override;
  absl::Status ForEachVector(
      const std::function<absl::Status(const ChannelRef&, VectorKind, uint64_t,
                                       const std::vector<float>&)>& fn) override;
  absl::Status DropAllVectors() override;
  absl::StatusOr<std::string> GetSetting(const std::string& key) override;
  absl::Status PutSetting(const std::string& key, const std::string& value) override;
  absl::StatusOr<Record> GetRecord(const ChannelRef& channel,
                                   const std::string& record_id) override;
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> ListTransitions(
      const ChannelRef& ch, uint64_t after_seq, uint32_t limit) override;
  absl::Status ApplyDeletion(const ChannelRef& ch, const DeletionPlan& plan) override;
  absl::Status DeleteChannel(const ChannelRef& ch) override;
  absl::Status CompactChannel(const ChannelRef& ch) override;
  absl::Status Checkpoint(const std::string& dir) override;
  absl::StatusOr<std::vector<ParkedSegment>> ListParked(const ChannelRef& channel) override;

 private:
  absl::StatusOr<WriterState> ReadWriterState(const ChannelRef& ch);
  void PutRosterEntry(const ChannelRef& ch, const std::string& id, const RosterEntry& e,
                      rocksdb::WriteBatch* batch);
  void PutChannelInfo(const ChannelRef& ch, const ChannelInfo& info, rocksdb::WriteBatch* batch);
  absl::Status PutRecord(const ChannelRef& ch, const Record& r, rocksdb::WriteBatch* batch);
  rocksdb::ColumnFamilyHandle* cf(ColumnFamily f) const { return handles_[static_cast<int>(f)]; }
  std::shared_ptr<ChannelState> StateFor(const ChannelRef& ch);
  // REQUIRES: state->mu held.
  absl::Status LoadState(const ChannelRef& ch, ChannelState* state);
  absl::StatusOr<ChannelInfo> ReadChannelInfo(const ChannelRef& ch, bool* exists);
  absl::Status ScanBySpeaker(const ChannelRef& ch, const MessageQuery& q, MessagePage* page);
  absl::Status ScanAll(const ChannelRef& ch, const MessageQuery& q, MessagePage* page);

  // Constant after construction.
  const StoreOptions options_;
  const std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;

  absl::Mutex states_mu_;
  std::map<ChannelRef, std::shared_ptr<ChannelState>> states_ ABSL_GUARDED_BY(states_mu_);
};

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

absl::StatusOr<ChannelInfo> RocksStore::ReadChannelInfo(const ChannelRef& ch, bool* exists) {
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kMeta), keys::ChannelInfoKey(ch), &value);
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
  // memtable inserts a run of neighbouring keys cheaply, while keys of four
  // kinds interleaved cost it a full search each (about 3x the write time).
  std::vector<std::pair<std::string, std::string>> id_keys_out;
  std::vector<std::string> speaker_keys, turn_keys;
  id_keys_out.reserve(messages->size());
  speaker_keys.reserve(messages->size());
  turn_keys.reserve(messages->size());
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
    turn_keys.push_back(keys::SessionTurnKey(ch, m.session, m.turn, m.seq));
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
  for (const auto& key : turn_keys) batch.Put(cf(ColumnFamily::kIndex), key, "");

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

absl::Status RocksStore::ScanAll(const ChannelRef& ch, const MessageQuery& q, MessagePage* page) {
  const std::string prefix = keys::ChannelPrefix(ch);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kEpisodic)));
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

absl::StatusOr<WriterState> RocksStore::ReadWriterState(const ChannelRef& ch) {
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kMeta), keys::WriterStateKey(ch), &value);
  WriterState w;
  if (s.IsNotFound()) return w;
  SM_RETURN_IF_ERROR(FromRocks(s, "read writer state"));
  StoredWriterState sw;
  if (!sw.ParseFromString(value)) return absl::DataLossError("writer state is corrupt");
  w.cursor_seq = sw.cursor_seq();
  w.next_record = std::max<uint64_t>(1, sw.next_record());
  w.flush_until = sw.flush_until();
  w.segments = sw.segments();
  return w;
}

absl::StatusOr<WriterState> RocksStore::GetWriterState(const ChannelRef& ch) {
  return ReadWriterState(ch);
}

absl::Status RocksStore::SetFlushUntil(const ChannelRef& ch, uint64_t seq) {
  std::shared_ptr<ChannelState> state = StateFor(ch);
  std::lock_guard<std::mutex> lock(state->mu);
  SM_ASSIGN_OR_RETURN(WriterState w, ReadWriterState(ch));
  if (seq <= w.flush_until) return absl::OkStatus();
  StoredWriterState sw;
  sw.set_cursor_seq(w.cursor_seq);
  sw.set_next_record(w.next_record);
  sw.set_flush_until(seq);
  sw.set_segments(w.segments);
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return FromRocks(
      db_->Put(wo, cf(ColumnFamily::kMeta), keys::WriterStateKey(ch), sw.SerializeAsString()),
      "set flush mark");
}

void RocksStore::PutRosterEntry(const ChannelRef& ch, const std::string& id, const RosterEntry& e,
                                rocksdb::WriteBatch* batch) {
  StoredRosterEntry sr;
  for (const auto& a : e.aliases) sr.add_aliases(a);
  sr.set_first_seen_ms(e.first_seen_ms);
  sr.set_last_seen_ms(e.last_seen_ms);
  sr.set_message_count(e.message_count);
  sr.set_speaker_id(id);
  sr.set_ordinal(e.ordinal);
  batch->Put(cf(ColumnFamily::kMeta), keys::RosterKey(ch, e.ordinal), sr.SerializeAsString());
}

void RocksStore::PutChannelInfo(const ChannelRef& ch, const ChannelInfo& info,
                                rocksdb::WriteBatch* batch) {
  StoredChannel sc;
  sc.set_message_count(info.message_count);
  sc.set_last_seq(info.last_seq);
  sc.set_speaker_count(info.speaker_count);
  sc.set_first_message_ms(info.first_message_ms);
  sc.set_last_message_ms(info.last_message_ms);
  sc.set_next_speaker_ordinal(info.next_speaker_ordinal);
  batch->Put(cf(ColumnFamily::kMeta), keys::ChannelInfoKey(ch), sc.SerializeAsString());
}

absl::Status RocksStore::PutRecord(const ChannelRef& ch, const Record& r,
                                   rocksdb::WriteBatch* batch) {
  SM_ASSIGN_OR_RETURN(ColumnFamily family, LayerFamily(r.layer));
  StoredRecord sr;
  ToStoredRecord(r, &sr);
  batch->Put(cf(family), keys::RecordKey(ch, r.record_id), sr.SerializeAsString());
  batch->Put(cf(ColumnFamily::kIndex), keys::RecordLayerKey(ch, r.record_id), r.layer);
  return absl::OkStatus();
}

absl::Status RocksStore::ApplySegment(const ChannelRef& ch, const SegmentApply& apply) {
  std::shared_ptr<ChannelState> state = StateFor(ch);
  std::lock_guard<std::mutex> lock(state->mu);
  SM_ASSIGN_OR_RETURN(WriterState w, ReadWriterState(ch));
  if (w.cursor_seq != apply.expected_cursor) {
    return absl::AbortedError(
        absl::StrCat("writer cursor is at ", w.cursor_seq, ", expected ", apply.expected_cursor));
  }
  if (apply.expected_next_record != 0 && w.next_record != apply.expected_next_record) {
    return absl::AbortedError("records were written meanwhile; derive again");
  }
  rocksdb::WriteBatch batch;
  for (const Record& r : apply.new_records) SM_RETURN_IF_ERROR(PutRecord(ch, r, &batch));
  for (const auto& [old_id, new_id] : apply.superseded) {
    SM_ASSIGN_OR_RETURN(Record old, GetRecord(ch, old_id));
    old.superseded_by = new_id;
    SM_RETURN_IF_ERROR(PutRecord(ch, old, &batch));
  }
  StoredWriterState sw;
  sw.set_cursor_seq(apply.new_cursor);
  sw.set_next_record(std::max(apply.next_record, w.next_record));
  sw.set_flush_until(w.flush_until);
  sw.set_segments(w.segments + (apply.new_cursor != apply.expected_cursor ? 1 : 0));
  batch.Put(cf(ColumnFamily::kMeta), keys::WriterStateKey(ch), sw.SerializeAsString());
  if (apply.park) {
    StoredParked sp;
    sp.set_last_seq(apply.parked.last_seq);
    sp.set_reason(apply.parked.reason);
    sp.set_attempts(apply.parked.attempts);
    sp.set_parked_ms(apply.parked.parked_ms);
    batch.Put(cf(ColumnFamily::kMeta), keys::ParkedKey(ch, apply.parked.first_seq),
              sp.SerializeAsString());
  }
  if (!apply.transition.empty()) {
    batch.Put(cf(ColumnFamily::kMeta), keys::TransitionKey(ch, apply.transition_seq),
              apply.transition);
  }
  if (apply.unpark_first_seq != 0) {
    batch.Delete(cf(ColumnFamily::kMeta), keys::ParkedKey(ch, apply.unpark_first_seq));
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return FromRocks(db_->Write(wo, &batch), "apply writer segment");
}

absl::Status RocksStore::ReplaceDerived(const ChannelRef& ch, const std::vector<Record>& records,
                                        const WriterState& state) {
  std::shared_ptr<ChannelState> lock_state = StateFor(ch);
  std::lock_guard<std::mutex> lock(lock_state->mu);
  rocksdb::WriteBatch batch;
  const std::string begin = keys::ChannelPrefix(ch), end = keys::ChannelPrefixEnd(ch);
  for (ColumnFamily f : kLayerFamilies) batch.DeleteRange(cf(f), begin, end);
  std::string x_begin = begin + "x", x_end = begin + "y";
  batch.DeleteRange(cf(ColumnFamily::kIndex), x_begin, x_end);
  std::string p_begin = keys::ParkedPrefix(ch), p_end = begin + "q";
  batch.DeleteRange(cf(ColumnFamily::kMeta), p_begin, p_end);
  for (const Record& r : records) SM_RETURN_IF_ERROR(PutRecord(ch, r, &batch));
  StoredWriterState sw;
  sw.set_cursor_seq(state.cursor_seq);
  sw.set_next_record(state.next_record);
  sw.set_flush_until(state.flush_until);
  sw.set_segments(state.segments);
  batch.Put(cf(ColumnFamily::kMeta), keys::WriterStateKey(ch), sw.SerializeAsString());
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return FromRocks(db_->Write(wo, &batch), "replace derived state");
}

absl::Status RocksStore::PutVectors(const ChannelRef& ch, VectorKind kind,
                                    const std::vector<uint64_t>& ids,
                                    const std::vector<std::vector<float>>& vectors) {
  if (ids.size() != vectors.size()) return absl::InvalidArgumentError("ids and vectors differ");
  rocksdb::WriteBatch batch;
  std::string value;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto& v = vectors[i];
    uint32_t dim = static_cast<uint32_t>(v.size());
    value.assign(reinterpret_cast<const char*>(&dim), sizeof(dim));
    value.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    batch.Put(cf(ColumnFamily::kVectors), keys::VectorKey(ch, static_cast<char>(kind), ids[i]),
              value);
  }
  return FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "put vectors");
}

absl::Status RocksStore::ForEachVector(
    const std::function<absl::Status(const ChannelRef&, VectorKind, uint64_t,
                                     const std::vector<float>&)>& fn) {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(ColumnFamily::kVectors)));
  ChannelRef ch;
  std::vector<float> v;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    absl::string_view rest;
    if (!keys::ParseChannelKey(absl::string_view(it->key().data(), it->key().size()), &ch, &rest) ||
        rest.size() != 9 || it->value().size() < 4) {
      return absl::DataLossError("malformed vector entry");
    }
    uint32_t dim = 0;
    std::memcpy(&dim, it->value().data(), 4);
    if (it->value().size() != 4 + dim * sizeof(float)) {
      return absl::DataLossError("vector entry has the wrong size");
    }
    v.resize(dim);
    std::memcpy(v.data(), it->value().data() + 4, dim * sizeof(float));
    SM_RETURN_IF_ERROR(
        fn(ch, static_cast<VectorKind>(rest[0]), keys::DecodeBE64(rest.substr(1)), v));
  }
  return FromRocks(it->status(), "scan vectors");
}

absl::Status RocksStore::DropAllVectors() {
  rocksdb::WriteBatch batch;
  // Every key sorts below "\xff..." (tenants are names without control bytes).
  batch.DeleteRange(cf(ColumnFamily::kVectors), "", std::string(16, '\xff'));
  return FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "drop vectors");
}

absl::StatusOr<std::string> RocksStore::GetSetting(const std::string& key) {
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kDefault), "setting/" + key, &value);
  if (s.IsNotFound()) return std::string();
  SM_RETURN_IF_ERROR(FromRocks(s, "read setting"));
  return value;
}

absl::Status RocksStore::PutSetting(const std::string& key, const std::string& value) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Put(wo, cf(ColumnFamily::kDefault), "setting/" + key, value),
                   "write setting");
}

absl::StatusOr<Record> RocksStore::GetRecord(const ChannelRef& ch, const std::string& record_id) {
  std::string layer;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kIndex),
                               keys::RecordLayerKey(ch, record_id), &layer);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("record '", record_id, "' not found"));
  }
  SM_RETURN_IF_ERROR(FromRocks(s, "find record"));
  SM_ASSIGN_OR_RETURN(ColumnFamily family, LayerFamily(layer));
  std::string value;
  s = db_->Get(rocksdb::ReadOptions(), cf(family), keys::RecordKey(ch, record_id), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("record '", record_id, "' not found"));
  }
  SM_RETURN_IF_ERROR(FromRocks(s, "read record"));
  StoredRecord sr;
  if (!sr.ParseFromString(value)) return absl::DataLossError("record is corrupt");
  return FromStoredRecord(sr, record_id, layer);
}

absl::StatusOr<std::vector<Record>> RocksStore::ListRecords(const ChannelRef& ch,
                                                            const RecordQuery& q) {
  const std::string prefix = keys::ChannelPrefix(ch);
  std::vector<Record> out;
  StoredRecord sr;
  for (size_t i = 0; i < kLayerCount; ++i) {
    if (!q.layer.empty() && q.layer != kLayerTable[i].code) continue;
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), cf(kLayerFamilies[i])));
    std::string start = prefix + q.after_id;
    if (!q.after_id.empty()) start.push_back('\0');
    for (it->Seek(start); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      if (!sr.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
        return absl::DataLossError("record is corrupt");
      }
      if (!q.owner.empty() && sr.owner() != q.owner) continue;
      if (!q.include_superseded && !sr.superseded_by().empty()) continue;
      out.push_back(
          FromStoredRecord(sr, it->key().ToString().substr(prefix.size()), kLayerTable[i].code));
    }
    SM_RETURN_IF_ERROR(FromRocks(it->status(), "scan records"));
  }
  std::sort(out.begin(), out.end(),
            [](const Record& a, const Record& b) { return a.record_id < b.record_id; });
  if (out.size() > q.limit) out.resize(q.limit);
  return out;
}

absl::StatusOr<std::vector<ParkedSegment>> RocksStore::ListParked(const ChannelRef& ch) {
  const std::string prefix = keys::ParkedPrefix(ch);
  std::vector<ParkedSegment> out;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kMeta)));
  StoredParked sp;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (!sp.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError("parked segment is corrupt");
    }
    ParkedSegment p;
    p.first_seq = keys::DecodeBE64(absl::string_view(it->key().data() + prefix.size(), 8));
    p.last_seq = sp.last_seq();
    p.reason = sp.reason();
    p.attempts = sp.attempts();
    p.parked_ms = sp.parked_ms();
    out.push_back(std::move(p));
  }
  SM_RETURN_IF_ERROR(FromRocks(it->status(), "scan parked segments"));
  return out;
}

absl::Status RocksStore::ApplyDeletion(const ChannelRef& ch, const DeletionPlan& plan) {
  std::shared_ptr<ChannelState> state = StateFor(ch);
  std::lock_guard<std::mutex> lock(state->mu);
  SM_RETURN_IF_ERROR(LoadState(ch, state.get()));
  if (!state->exists)
    return absl::NotFoundError(absl::StrCat("channel '", ch.channel, "' not found"));
  std::vector<uint64_t> seqs = plan.delete_seqs;
  for (const auto& m : plan.rewrite_messages) seqs.push_back(m.seq);
  SM_ASSIGN_OR_RETURN(std::vector<Message> current, GetMessagesBySeq(ch, seqs));
  std::map<uint64_t, Message> by_seq;
  for (auto& m : current) by_seq[m.seq] = std::move(m);

  rocksdb::WriteBatch batch;
  ChannelInfo info = state->info;
  auto roster = state->roster;
  for (uint64_t seq : plan.delete_seqs) {
    auto it = by_seq.find(seq);
    if (it == by_seq.end()) continue;
    const Message& m = it->second;
    batch.Delete(cf(ColumnFamily::kEpisodic), keys::MessageKey(ch, seq));
    batch.Delete(cf(ColumnFamily::kIndex), keys::MessageIdKey(ch, m.message_id));
    auto speaker = roster.find(m.speaker_id);
    if (speaker != roster.end()) {
      batch.Delete(cf(ColumnFamily::kIndex), keys::SpeakerKey(ch, speaker->second.ordinal, seq));
    }
    batch.Delete(cf(ColumnFamily::kIndex), keys::SessionTurnKey(ch, m.session, m.turn, seq));
    batch.Delete(cf(ColumnFamily::kVectors),
                 keys::VectorKey(ch, static_cast<char>(VectorKind::kMessage), seq));
    if (info.message_count > 0) --info.message_count;
    auto r = roster.find(m.speaker_id);
    if (r != roster.end() && r->second.message_count > 0) --r->second.message_count;
  }
  StoredMessage sm;
  std::string value;
  for (const Message& m : plan.rewrite_messages) {
    auto it = by_seq.find(m.seq);
    if (it == by_seq.end()) continue;
    Message edited = it->second;
    edited.text = m.text;
    edited.metadata = m.metadata;
    sm.Clear();
    ToStored(edited, &sm);
    sm.SerializeToString(&value);
    batch.Put(cf(ColumnFamily::kEpisodic), keys::MessageKey(ch, m.seq), value);
    // Its old vector no longer describes it.
    batch.Delete(cf(ColumnFamily::kVectors),
                 keys::VectorKey(ch, static_cast<char>(VectorKind::kMessage), m.seq));
  }
  for (const Record& r : plan.upsert_records) SM_RETURN_IF_ERROR(PutRecord(ch, r, &batch));
  for (const std::string& id : plan.delete_records) {
    std::string layer;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kIndex),
                                 keys::RecordLayerKey(ch, id), &layer);
    if (s.IsNotFound()) continue;
    SM_RETURN_IF_ERROR(FromRocks(s, "look up record layer"));
    SM_ASSIGN_OR_RETURN(ColumnFamily family, LayerFamily(layer));
    batch.Delete(cf(family), keys::RecordKey(ch, id));
    batch.Delete(cf(ColumnFamily::kIndex), keys::RecordLayerKey(ch, id));
    uint64_t n = 0;
    if (id.size() > 1 && absl::SimpleAtoi(absl::string_view(id).substr(1), &n)) {
      batch.Delete(cf(ColumnFamily::kVectors),
                   keys::VectorKey(ch, static_cast<char>(VectorKind::kRecord), n));
    }
  }
  for (uint64_t first : plan.delete_transitions) {
    batch.Delete(cf(ColumnFamily::kMeta), keys::TransitionKey(ch, first));
  }
  for (const std::string& id : plan.delete_roster) {
    auto gone = roster.find(id);
    if (gone == roster.end()) continue;
    batch.Delete(cf(ColumnFamily::kMeta), keys::RosterKey(ch, gone->second.ordinal));
    roster.erase(gone);
    if (info.speaker_count > 0) --info.speaker_count;
  }
  for (const auto& [id, e] : roster) {
    auto before = state->roster.find(id);
    if (before != state->roster.end() && before->second.message_count == e.message_count) continue;
    PutRosterEntry(ch, id, e, &batch);
  }
  PutChannelInfo(ch, info, &batch);  // last_seq kept: seqs are never reused
  rocksdb::WriteOptions wo;
  wo.sync = true;  // a deletion is acknowledged only once it cannot come back
  SM_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "apply deletion"));
  state->info = info;
  state->roster = std::move(roster);
  return absl::OkStatus();
}

absl::Status RocksStore::DeleteChannel(const ChannelRef& ch) {
  std::shared_ptr<ChannelState> state = StateFor(ch);
  std::lock_guard<std::mutex> lock(state->mu);
  SM_RETURN_IF_ERROR(LoadState(ch, state.get()));
  if (!state->exists)
    return absl::NotFoundError(absl::StrCat("channel '", ch.channel, "' not found"));
  rocksdb::WriteBatch batch;
  const std::string begin = keys::ChannelPrefix(ch), end = keys::ChannelPrefixEnd(ch);
  for (int f = 0; f < kNumColumnFamilies; ++f) {
    if (static_cast<ColumnFamily>(f) == ColumnFamily::kDefault) continue;
    batch.DeleteRange(handles_[f], begin, end);
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  SM_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "delete channel"));
  state->exists = false;
  state->loaded = false;
  state->info = ChannelInfo{};
  state->roster.clear();
  return absl::OkStatus();
}

absl::Status RocksStore::Checkpoint(const std::string& dir) {
  rocksdb::Checkpoint* raw = nullptr;
  SM_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw), "checkpoint"));
  std::unique_ptr<rocksdb::Checkpoint> cp(raw);
  // Flushing first keeps the checkpoint free of a WAL to replay.
  return FromRocks(cp->CreateCheckpoint(dir, /*log_size_for_flush=*/0), "create checkpoint");
}

absl::Status RocksStore::CompactChannel(const ChannelRef& ch) {
  const std::string begin = keys::ChannelPrefix(ch), end = keys::ChannelPrefixEnd(ch);
  rocksdb::Slice b(begin), e(end);
  rocksdb::CompactRangeOptions o;
  o.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  // Every memtable first (the default family's too): the deleted entries
  // land in files compaction sees, and the write-ahead logs that still
  // hold them become obsolete and are deleted.
  SM_RETURN_IF_ERROR(FromRocks(db_->Flush(rocksdb::FlushOptions(), handles_), "flush"));
  for (int f = 0; f < kNumColumnFamilies; ++f) {
    if (static_cast<ColumnFamily>(f) == ColumnFamily::kDefault) continue;
    SM_RETURN_IF_ERROR(FromRocks(db_->CompactRange(o, handles_[f], &b, &e), "compact channel"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> RocksStore::ListTransitions(
    const ChannelRef& ch, uint64_t after_seq, uint32_t limit) {
  const std::string prefix = keys::TransitionPrefix(ch);
  std::vector<std::pair<uint64_t, std::string>> out;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kMeta)));
  for (it->Seek(keys::TransitionKey(ch, after_seq + 1));
       it->Valid() && it->key().starts_with(prefix) && out.size() < limit; it->Next()) {
    out.emplace_back(keys::DecodeBE64(absl::string_view(it->key().data() + prefix.size(), 8)),
                     it->value().ToString());
  }
  SM_RETURN_IF_ERROR(FromRocks(it->status(), "scan captured transitions"));
  return out;
}

uint64_t RocksStore::ApproximateSizeBytes() {
  uint64_t sst = 0, mem = 0, wal = 0;
  db_->GetAggregatedIntProperty("rocksdb.total-sst-files-size", &sst);
  db_->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &mem);
  rocksdb::VectorLogPtr logs;
  if (db_->GetSortedWalFiles(logs).ok()) {
    for (const auto& l : logs) wal += l->SizeFileBytes();
  }
  return sst + mem + wal;
}

absl::Status RocksStore::Flush() {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  std::vector<rocksdb::ColumnFamilyHandle*> hs(handles_.begin(), handles_.end());
  return FromRocks(db_->Flush(fo, hs), "flush");
}

rocksdb::ColumnFamilyOptions CfOptions(const StoreOptions& options,
                                       std::shared_ptr<rocksdb::Cache> cache, ColumnFamily family) {
  rocksdb::ColumnFamilyOptions cfo;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
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
  cfo.compression = rocksdb::kLZ4Compression;
  cfo.bottommost_compression = rocksdb::kZSTD;
  if (family == ColumnFamily::kVectors) {
    // Floats do not compress; don't spend compaction CPU trying.
    cfo.compression = rocksdb::kNoCompression;
    cfo.bottommost_compression = rocksdb::kNoCompression;
  }
  if (family == ColumnFamily::kIndex) {
    cfo.memtable_insert_with_hint_prefix_extractor = NewIndexHintPrefix();
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
  if (!s.ok()) return FromRocks(s, absl::StrCat("open store at ", options.path));
  std::unique_ptr<rocksdb::DB> db(raw);
  auto store = std::make_unique<RocksStore>(options, std::move(db), std::move(handles));
  SM_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace speakermem::storage

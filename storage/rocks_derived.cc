// RocksDB implementation of Store, continued: the Writer's state, records
// and segments, vectors, settings, deletion, checkpoints and maintenance.
#include <algorithm>
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
#include "storage/vector_codec.h"

namespace speakermem::storage::rocks_internal {

absl::StatusOr<WriterState> RocksStore::ReadWriterState(const ChannelRef& ch,
                                                        const rocksdb::Snapshot* snap) {
  std::string value;
  rocksdb::Status s =
      db_->Get(ReadAt(snap), cf(ColumnFamily::kMeta), keys::WriterStateKey(ch), &value);
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
    EncodeVector(vectors[i], &value);
    batch.Put(cf(ColumnFamily::kVectors), keys::VectorKey(ch, static_cast<char>(kind), ids[i]),
              value);
  }
  // A message's vector skips the WAL: it is derived from the message's text,
  // and one lost in a crash is embedded again at startup (Memory queues the
  // messages the store has no vector for). Sharing the WAL, the vectors
  // (then 1 KB per message, dense) queued every ingest append behind them:
  // ingest read 63k-71k msg/s with it and 79k-124k without (chunks of 25
  // and 500).
  // A record's vector keeps the WAL.
  rocksdb::WriteOptions wo;
  wo.disableWAL = kind == VectorKind::kMessage;
  return FromRocks(db_->Write(wo, &batch), "put vectors");
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
        rest.size() != 9) {
      return absl::DataLossError("malformed vector entry");
    }
    SM_RETURN_IF_ERROR(DecodeVector(absl::string_view(it->value().data(), it->value().size()), &v));
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
  // One snapshot for every layer's column family: with an iterator each at
  // its own instant, a segment applied during the scan showed its profile
  // records without its core ones, and a reader that continues after the
  // newest id it saw (the query path's record index) lost those for good.
  const rocksdb::Snapshot* snap = db_->GetSnapshot();
  absl::StatusOr<std::vector<Record>> out = ReadRecords(ch, q, snap);
  db_->ReleaseSnapshot(snap);
  return out;
}

absl::StatusOr<std::vector<Record>> RocksStore::ReadRecords(const ChannelRef& ch,
                                                            const RecordQuery& q,
                                                            const rocksdb::Snapshot* snap) {
  const std::string prefix = keys::ChannelPrefix(ch);
  std::vector<Record> out;
  StoredRecord sr;
  for (size_t i = 0; i < kLayerCount; ++i) {
    if (!q.layer.empty() && q.layer != kLayerTable[i].code) continue;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ReadAt(snap), cf(kLayerFamilies[i])));
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

void RocksStore::DeleteMessagesInto(const ChannelRef& ch, const std::vector<uint64_t>& seqs,
                                    const std::map<uint64_t, Message>& by_seq, ChannelInfo* info,
                                    absl::flat_hash_map<std::string, RosterEntry>* roster,
                                    rocksdb::WriteBatch* batch) {
  for (uint64_t seq : seqs) {
    auto it = by_seq.find(seq);
    if (it == by_seq.end()) continue;
    const Message& m = it->second;
    batch->Delete(cf(ColumnFamily::kEpisodic), keys::MessageKey(ch, seq));
    batch->Delete(cf(ColumnFamily::kIndex), keys::MessageIdKey(ch, m.message_id));
    auto speaker = roster->find(m.speaker_id);
    if (speaker != roster->end()) {
      batch->Delete(cf(ColumnFamily::kIndex), keys::SpeakerKey(ch, speaker->second.ordinal, seq));
    }
    // Written by earlier versions only (storage/keys.h).
    batch->Delete(cf(ColumnFamily::kIndex), keys::SessionTurnKey(ch, m.session, m.turn, seq));
    batch->Delete(cf(ColumnFamily::kVectors),
                  keys::VectorKey(ch, static_cast<char>(VectorKind::kMessage), seq));
    if (info->message_count > 0) --info->message_count;
    if (speaker != roster->end() && speaker->second.message_count > 0) {
      --speaker->second.message_count;
    }
  }
}

void RocksStore::RewriteMessagesInto(const ChannelRef& ch, const std::vector<Message>& rewrites,
                                     const std::map<uint64_t, Message>& by_seq,
                                     rocksdb::WriteBatch* batch) {
  StoredMessage sm;
  std::string value;
  for (const Message& m : rewrites) {
    auto it = by_seq.find(m.seq);
    if (it == by_seq.end()) continue;
    Message edited = it->second;
    edited.text = m.text;
    edited.metadata = m.metadata;
    sm.Clear();
    ToStored(edited, &sm);
    sm.SerializeToString(&value);
    batch->Put(cf(ColumnFamily::kEpisodic), keys::MessageKey(ch, m.seq), value);
    // Its old vector no longer describes it.
    batch->Delete(cf(ColumnFamily::kVectors),
                  keys::VectorKey(ch, static_cast<char>(VectorKind::kMessage), m.seq));
  }
}

absl::Status RocksStore::DeleteRecordsInto(const ChannelRef& ch,
                                           const std::vector<std::string>& ids,
                                           rocksdb::WriteBatch* batch) {
  for (const std::string& id : ids) {
    std::string layer;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kIndex),
                                 keys::RecordLayerKey(ch, id), &layer);
    if (s.IsNotFound()) continue;
    SM_RETURN_IF_ERROR(FromRocks(s, "look up record layer"));
    SM_ASSIGN_OR_RETURN(ColumnFamily family, LayerFamily(layer));
    batch->Delete(cf(family), keys::RecordKey(ch, id));
    batch->Delete(cf(ColumnFamily::kIndex), keys::RecordLayerKey(ch, id));
    uint64_t n = 0;
    if (id.size() > 1 && absl::SimpleAtoi(absl::string_view(id).substr(1), &n)) {
      batch->Delete(cf(ColumnFamily::kVectors),
                    keys::VectorKey(ch, static_cast<char>(VectorKind::kRecord), n));
    }
  }
  return absl::OkStatus();
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
  DeleteMessagesInto(ch, plan.delete_seqs, by_seq, &info, &roster, &batch);
  RewriteMessagesInto(ch, plan.rewrite_messages, by_seq, &batch);
  for (const Record& r : plan.upsert_records) SM_RETURN_IF_ERROR(PutRecord(ch, r, &batch));
  SM_RETURN_IF_ERROR(DeleteRecordsInto(ch, plan.delete_records, &batch));
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

}  // namespace speakermem::storage::rocks_internal

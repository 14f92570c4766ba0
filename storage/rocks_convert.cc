// Stored values to and from the store's types, and the one place RocksDB
// statuses become absl::Status (FromRocks).
#include "absl/strings/str_cat.h"
#include "storage/layers.h"
#include "storage/rocks_store_internal.h"

namespace speakermem::storage::rocks_internal {

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

}  // namespace speakermem::storage::rocks_internal

// Deletions and edits that propagate from System 1 to everything derived
// from it: records, chain links, vectors, the lexical and dense indexes,
// cached snapshots and captured Writer transitions.
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "engine/memory.h"
#include "nlohmann/json.hpp"
#include "retrieval/bm25_index.h"
#include "storage/layers.h"
#include "storage/record_id.h"
#include "storage/validation.h"

namespace speakermem::engine {

// What to remove or change: messages (by seq), an edit's new text, and for
// ForgetSpeaker the speaker whose records go whole.
struct Memory::DeletionTarget {
  std::vector<storage::Message> messages;  // the messages deleted or edited
  bool edit = false;
  std::string new_text;
  std::string forget_speaker;  // speaker id
};

namespace {

constexpr auto kExclusiveTimeout = std::chrono::minutes(2);

// All messages of a channel (or of one speaker), in order.
absl::StatusOr<std::vector<storage::Message>> ScanAll(storage::Store* store,
                                                      const storage::ChannelRef& ch,
                                                      const std::string& speaker_id) {
  std::vector<storage::Message> out;
  storage::MessageQuery q;
  q.limit = 5000;
  q.speaker_id = speaker_id;
  for (;;) {
    SM_ASSIGN_OR_RETURN(storage::MessagePage page, store->ScanMessages(ch, q));
    for (auto& m : page.messages) out.push_back(std::move(m));
    if (page.next_after_seq == 0) break;
    q.after_seq = page.next_after_seq;
  }
  return out;
}

}  // namespace

absl::Status Memory::RebuildLexical(const storage::ChannelRef& channel) {
  SM_ASSIGN_OR_RETURN(std::vector<storage::Message> all, ScanAll(store_.get(), channel, ""));
  lexical_->Replace(channel, all);
  return absl::OkStatus();
}

absl::StatusOr<Memory::DeletionResult> Memory::RemoveData(const storage::ChannelRef& ch,
                                                          const DeletionTarget& target) {
  DeletionResult result;
  std::set<std::string> gone_ids;
  std::set<uint64_t> gone_seqs;
  for (const auto& m : target.messages) {
    gone_ids.insert(m.message_id);
    gone_seqs.insert(m.seq);
  }
  storage::DeletionPlan plan;
  if (target.edit) {
    for (const auto& m : target.messages) {
      storage::Message edited = m;
      edited.text = target.new_text;
      plan.rewrite_messages.push_back(std::move(edited));
    }
    result.messages_edited = target.messages.size();
  } else {
    plan.delete_seqs.assign(gone_seqs.begin(), gone_seqs.end());
    result.messages_deleted = target.messages.size();
  }

  // Records: the speaker's own and sourced ones go whole; others lose the
  // deleted support, and go when none is left (an edit keeps them all).
  storage::RecordQuery all;
  all.include_superseded = true;
  all.limit = UINT32_MAX;
  SM_ASSIGN_OR_RETURN(std::vector<storage::Record> records, store_->ListRecords(ch, all));
  std::map<std::string, const storage::Record*> by_id;
  for (const auto& r : records) by_id[r.record_id] = &r;
  std::set<std::string> doomed;
  std::map<std::string, storage::Record> changed;
  for (const auto& r : records) {
    if (!target.forget_speaker.empty() &&
        (r.owner == target.forget_speaker || r.source == target.forget_speaker)) {
      doomed.insert(r.record_id);
      continue;
    }
    std::vector<std::string> rest;
    for (const auto& f : r.from_ids) {
      if (!gone_ids.count(f)) rest.push_back(f);
    }
    if (rest.size() == r.from_ids.size()) continue;  // does not cite them
    if (target.edit) {
      storage::Record c = r;
      c.support_changed = true;
      changed[r.record_id] = std::move(c);
    } else if (rest.empty()) {
      doomed.insert(r.record_id);
    } else {
      storage::Record c = r;
      c.from_ids = std::move(rest);
      c.support_changed = true;
      changed[r.record_id] = std::move(c);
    }
  }
  // Chain repair: a removed node's nearest surviving predecessor and
  // successor are linked to each other (a removed head makes its
  // predecessor the head again).
  auto editable = [&](const std::string& id) -> storage::Record& {
    auto it = changed.find(id);
    if (it == changed.end()) it = changed.emplace(id, *by_id.at(id)).first;
    return it->second;
  };
  for (const auto& id : doomed) {
    const storage::Record* x = by_id.at(id);
    std::string pred = x->supersedes.empty() ? "" : x->supersedes.front();
    while (!pred.empty() && doomed.count(pred) && by_id.count(pred)) {
      const auto& s = by_id.at(pred)->supersedes;
      pred = s.empty() ? "" : s.front();
    }
    std::string succ = x->superseded_by;
    while (!succ.empty() && doomed.count(succ) && by_id.count(succ))
      succ = by_id.at(succ)->superseded_by;
    if (!succ.empty() && by_id.count(succ)) {
      storage::Record& s = editable(succ);
      s.supersedes.clear();
      if (!pred.empty() && by_id.count(pred)) s.supersedes.push_back(pred);
    }
    if (!pred.empty() && by_id.count(pred)) editable(pred).superseded_by = succ;
  }
  for (const auto& id : doomed) changed.erase(id);
  for (auto& [id, r] : changed) plan.upsert_records.push_back(std::move(r));
  plan.delete_records.assign(doomed.begin(), doomed.end());
  result.records_deleted = doomed.size();
  result.records_updated = plan.upsert_records.size();

  // Captured transitions holding any of the messages.
  SM_ASSIGN_OR_RETURN(auto transitions, store_->ListTransitions(ch, 0, UINT32_MAX));
  for (const auto& [first, text] : transitions) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    uint64_t last = first;
    if (j.is_object() && j.contains("segment_last_seq") &&
        j["segment_last_seq"].is_number_unsigned()) {
      last = j["segment_last_seq"].get<uint64_t>();
    }
    auto hit = gone_seqs.lower_bound(first);
    if (hit != gone_seqs.end() && *hit <= last) plan.delete_transitions.push_back(first);
  }
  result.transitions_deleted = plan.delete_transitions.size();
  if (!target.forget_speaker.empty()) plan.delete_roster.push_back(target.forget_speaker);

  {
    // No embedding lands for a deleted message or record while this runs.
    std::unique_lock<std::shared_mutex> gate(write_gate_);
    SM_RETURN_IF_ERROR(store_->ApplyDeletion(ch, plan));
    SM_RETURN_IF_ERROR(
        vectors_->Remove(ch, std::vector<uint64_t>(gone_seqs.begin(), gone_seqs.end())));
    pipeline_->Forget(ch);
  }
  SM_RETURN_IF_ERROR(RebuildLexical(ch));
  if (target.edit) {
    std::vector<Embedder::Item> items;
    for (const auto& m : target.messages)
      items.push_back(Embedder::Item{ch, m.seq, target.new_text, ""});
    embedder_->Enqueue(std::move(items));
  }
  // Records that changed keep their vectors (content unchanged); the row
  // stage's snapshot is rebuilt from the store on next use.
  ReportStored(ch.tenant, -static_cast<int64_t>(result.messages_deleted));
  return result;
}

absl::StatusOr<Memory::DeletionResult> Memory::DeleteMessages(
    const storage::ChannelRef& channel, const std::vector<std::string>& message_ids) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  absl::StatusOr<DeletionResult> result;
  absl::Status s = writer_->Exclusive(
      channel, kExclusiveTimeout,
      [&]() -> absl::Status {
        DeletionTarget target;
        std::vector<uint64_t> seqs;
        for (const auto& id : message_ids) {
          absl::StatusOr<uint64_t> seq = store_->FindMessageId(channel, id);
          if (absl::IsNotFound(seq.status())) continue;  // gone already
          SM_RETURN_IF_ERROR(seq.status());
          seqs.push_back(*seq);
        }
        SM_ASSIGN_OR_RETURN(target.messages, store_->GetMessagesBySeq(channel, seqs));
        result = RemoveData(channel, target);
        return result.status();
      },
      /*forget=*/false);
  SM_RETURN_IF_ERROR(s);
  if (result.ok() && result->messages_deleted > 0) (void)store_->CompactChannel(channel);
  return result;
}

absl::StatusOr<Memory::DeletionResult> Memory::EditMessage(const storage::ChannelRef& channel,
                                                           const std::string& message_id,
                                                           const std::string& text) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  storage::Message probe;
  probe.message_id = message_id;
  probe.speaker = "x";
  probe.text = text;
  probe.timestamp_ms = 1;
  std::vector<storage::Message> one = {probe};
  SM_RETURN_IF_ERROR(storage::ValidateMessages(channel.channel, {}, one, options_.limits));
  absl::StatusOr<DeletionResult> result;
  absl::Status s = writer_->Exclusive(
      channel, kExclusiveTimeout,
      [&]() -> absl::Status {
        SM_ASSIGN_OR_RETURN(uint64_t seq, store_->FindMessageId(channel, message_id));
        DeletionTarget target;
        SM_ASSIGN_OR_RETURN(target.messages, store_->GetMessagesBySeq(channel, {seq}));
        if (target.messages.empty()) return absl::NotFoundError("message not found");
        if (target.messages.front().text == text) {
          result = DeletionResult{};  // unchanged: nothing to do
          return absl::OkStatus();
        }
        target.edit = true;
        target.new_text = text;
        result = RemoveData(channel, target);
        return result.status();
      },
      /*forget=*/false);
  SM_RETURN_IF_ERROR(s);
  if (result.ok() && result->messages_edited > 0) (void)store_->CompactChannel(channel);
  return result;
}

absl::StatusOr<Memory::DeletionResult> Memory::ForgetSpeaker(const storage::ChannelRef& channel,
                                                             const std::string& speaker) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  if (speaker.empty()) return absl::InvalidArgumentError("speaker: must not be empty");
  absl::StatusOr<DeletionResult> result;
  absl::Status s = writer_->Exclusive(
      channel, kExclusiveTimeout,
      [&]() -> absl::Status {
        absl::StatusOr<std::string> id = store_->ResolveSpeaker(channel, speaker);
        DeletionTarget target;
        if (absl::IsNotFound(id.status())) {
          // Not (or no longer) in the roster: still purge records naming
          // the id, so a retry after a partial failure completes.
          target.forget_speaker = speaker;
        } else {
          SM_RETURN_IF_ERROR(id.status());
          target.forget_speaker = *id;
          SM_ASSIGN_OR_RETURN(target.messages, ScanAll(store_.get(), channel, *id));
        }
        result = RemoveData(channel, target);
        return result.status();
      },
      /*forget=*/false);
  SM_RETURN_IF_ERROR(s);
  if (result.ok()) (void)store_->CompactChannel(channel);
  return result;
}

absl::StatusOr<bool> Memory::DeleteChannel(const storage::ChannelRef& channel) {
  uint64_t removed = 0;  // messages the channel held
  absl::Status s = writer_->Exclusive(
      channel, kExclusiveTimeout,
      [&]() -> absl::Status {
        std::unique_lock<std::shared_mutex> gate(write_gate_);
        SM_ASSIGN_OR_RETURN(storage::ChannelInfo info, store_->GetChannelInfo(channel));
        SM_RETURN_IF_ERROR(store_->DeleteChannel(channel));
        removed = info.message_count;
        vectors_->Drop(channel, ShardDir());
        lexical_->Drop(channel);
        pipeline_->Forget(channel);
        return absl::OkStatus();
      },
      /*forget=*/true);
  if (absl::IsNotFound(s)) return false;
  SM_RETURN_IF_ERROR(s);
  ReportStored(channel.tenant, -static_cast<int64_t>(removed));
  absl::Status c = store_->CompactChannel(channel);
  if (!c.ok()) LOG_WARN("compaction after channel deletion failed").Str("error", c.message());
  return true;
}

}  // namespace speakermem::engine

namespace speakermem::engine {

absl::StatusOr<std::pair<uint64_t, uint64_t>> Memory::ImportChannel(
    const storage::ChannelRef& channel, std::vector<storage::Message> messages,
    std::vector<storage::Record> records, uint64_t writer_cursor_seq) {
  SM_RETURN_IF_ERROR(storage::ValidateName("channel", channel.channel, options_.limits, false));
  if (store_->GetChannelInfo(channel).ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "channel '", channel.channel, "' exists; delete it first or import under another name"));
  }
  if (messages.empty()) return absl::InvalidArgumentError("the export holds no messages");
  // Validate everything before writing anything.
  const size_t batch = std::max<size_t>(1, options_.limits.max_batch_messages);
  for (size_t i = 0; i < messages.size(); i += batch) {
    std::vector<storage::Message> part(messages.begin() + i,
                                       messages.begin() + std::min(messages.size(), i + batch));
    absl::Status s = storage::ValidateMessages(channel.channel, {}, part, options_.limits);
    if (!s.ok())
      return absl::InvalidArgumentError(absl::StrCat("message block at ", i, ": ", s.message()));
  }
  std::set<std::string> message_ids, record_ids;
  for (const auto& m : messages) {
    if (m.message_id.empty()) return absl::InvalidArgumentError("an exported message has no id");
    if (!message_ids.insert(m.message_id).second) {
      return absl::InvalidArgumentError(absl::StrCat("message id '", m.message_id, "' repeats"));
    }
  }
  uint64_t next_record = 1;
  for (const auto& r : records) {
    uint64_t n = storage::RecordNumber(r.record_id);
    if (n == 0)
      return absl::InvalidArgumentError(absl::StrCat("record id '", r.record_id, "' is malformed"));
    if (!record_ids.insert(r.record_id).second) {
      return absl::InvalidArgumentError(absl::StrCat("record id '", r.record_id, "' repeats"));
    }
    const storage::LayerInfo* layer = storage::FindLayer(r.layer);
    if (layer == nullptr || r.layer != layer->code) {
      return absl::InvalidArgumentError(absl::StrCat("record ", r.record_id, ": unknown layer"));
    }
    next_record = std::max(next_record, n + 1);
  }
  for (auto& r : records) {
    for (const auto& p : r.supersedes) {
      if (!record_ids.count(p)) {
        return absl::InvalidArgumentError(
            absl::StrCat("record ", r.record_id, " supersedes unknown ", p));
      }
    }
    if (!r.superseded_by.empty() && !record_ids.count(r.superseded_by)) {
      return absl::InvalidArgumentError(
          absl::StrCat("record ", r.record_id, " is superseded by unknown ", r.superseded_by));
    }
    std::vector<std::string> kept;
    for (auto& f : r.from_ids) {
      if (message_ids.count(f)) kept.push_back(std::move(f));
    }
    r.from_ids = std::move(kept);
  }
  uint64_t new_cursor = 0, last_seq = 0;
  absl::Status s = writer_->Exclusive(
      channel, std::chrono::minutes(2),
      [&]() -> absl::Status {
        for (size_t i = 0; i < messages.size(); i += batch) {
          std::vector<storage::Message> part(
              messages.begin() + i, messages.begin() + std::min(messages.size(), i + batch));
          std::vector<uint64_t> old_seqs;
          for (auto& m : part) {
            old_seqs.push_back(m.seq);
            m.seq = 0;
          }
          SM_ASSIGN_OR_RETURN(storage::AppendResult r, store_->AppendMessages(channel, &part));
          for (size_t j = 0; j < part.size(); ++j) {
            if (old_seqs[j] != 0 && old_seqs[j] <= writer_cursor_seq) new_cursor = part[j].seq;
          }
          last_seq = r.last_seq;
          lexical_->AddBatch(channel, part);
          std::vector<Embedder::Item> items;
          for (auto& m : part) items.push_back(Embedder::Item{channel, m.seq, m.text, ""});
          embedder_->Enqueue(std::move(items));
        }
        storage::SegmentApply apply;
        apply.expected_cursor = 0;
        apply.new_cursor = new_cursor;
        apply.next_record = next_record;
        apply.new_records = records;
        SM_RETURN_IF_ERROR(store_->ApplySegment(channel, apply));
        std::vector<Embedder::Item> items;
        for (const auto& r : records)
          items.push_back(Embedder::Item{channel, 0, r.content, r.record_id});
        embedder_->Enqueue(std::move(items));
        return absl::OkStatus();
      },
      /*forget=*/false);
  SM_RETURN_IF_ERROR(s);
  writer_->Notify(channel, last_seq);
  ReportStored(channel.tenant, static_cast<int64_t>(messages.size()));
  return std::make_pair(static_cast<uint64_t>(messages.size()),
                        static_cast<uint64_t>(records.size()));
}

absl::StatusOr<std::pair<std::string, uint64_t>> Memory::Backup(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "." || name == ".." ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
          std::string::npos) {
    return absl::InvalidArgumentError("name: 1-128 of letters, digits, '-', '_', '.'");
  }
  const std::string base =
      options_.backup_dir.empty() ? options_.store.path + ".backups" : options_.backup_dir;
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  if (ec) return absl::InternalError(absl::StrCat("backup dir ", base, ": ", ec.message()));
  const std::string dir = (std::filesystem::path(base) / name).string();
  if (std::filesystem::exists(dir, ec)) {
    return absl::AlreadyExistsError(absl::StrCat("backup '", name, "' exists"));
  }
  SM_RETURN_IF_ERROR(store_->Checkpoint(dir));
  uint64_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file()) bytes += e.file_size();
  }
  LOG_INFO("backup written").Str("path", dir).Int("bytes", static_cast<int64_t>(bytes));
  return std::make_pair(dir, bytes);
}

}  // namespace speakermem::engine

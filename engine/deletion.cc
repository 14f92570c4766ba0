// Deletions and edits that propagate from System 1 to everything derived
// from it: records, chain links, vectors, the lexical and dense indexes,
// cached snapshots and captured Writer transitions.
#include <map>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "engine/memory.h"
#include "nlohmann/json.hpp"
#include "retrieval/bm25_index.h"

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
    while (!succ.empty() && doomed.count(succ) && by_id.count(succ)) succ = by_id.at(succ)->superseded_by;
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
    if (j.is_object() && j.contains("segment_last_seq") && j["segment_last_seq"].is_number_unsigned()) {
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
    for (const auto& m : target.messages) items.push_back(Embedder::Item{ch, m.seq, target.new_text, ""});
    embedder_->Enqueue(std::move(items));
  }
  // Records that changed keep their vectors (content unchanged); the row
  // stage's snapshot is rebuilt from the store on next use.
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
  absl::Status s = writer_->Exclusive(
      channel, kExclusiveTimeout,
      [&]() -> absl::Status {
        std::unique_lock<std::shared_mutex> gate(write_gate_);
        SM_RETURN_IF_ERROR(store_->DeleteChannel(channel));
        vectors_->Drop(channel, ShardDir());
        lexical_->Drop(channel);
        pipeline_->Forget(channel);
        return absl::OkStatus();
      },
      /*forget=*/true);
  if (absl::IsNotFound(s)) return false;
  SM_RETURN_IF_ERROR(s);
  absl::Status c = store_->CompactChannel(channel);
  if (!c.ok()) LOG_WARN("compaction after channel deletion failed").Str("error", c.message());
  return true;
}

}  // namespace speakermem::engine

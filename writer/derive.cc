#include "writer/derive.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace speakermem::writer {

Derivation DeriveSegment(storage::Store* store, recordindex::ChannelIndexes* indexes,
                         const storage::ChannelRef& ch, const Segment& seg, WriterModel* model,
                         const WriterOptions& options, const DeriveHooks& hooks, bool trace) {
  Derivation d;
  ValidationContext* ctx = &d.ctx;
  absl::StatusOr<std::vector<storage::RosterEntry>> roster = store->GetRoster(ch);
  if (!roster.ok()) {
    d.report = roster.status();
    return d;
  }
  for (const auto& e : *roster) ctx->roster.push_back(WriterRosterMember{e.speaker_id, e.aliases});
  ctx->lookup = [store, ch](const std::string& id) -> std::optional<storage::Record> {
    absl::StatusOr<storage::Record> r = store->GetRecord(ch, id);
    if (!r.ok()) return std::nullopt;
    return *r;
  };
  ctx->max_actions = std::max<size_t>(8, 2 * seg.messages.size());

  WriterInput in;
  in.roster = ctx->roster;
  {
    absl::StatusOr<recordindex::IndexView> view = indexes->Current(ch);
    if (!view.ok()) {
      d.report = view.status();
      return d;
    }
    in.heads = BoundHeads(*ctx, seg, &**view, options);
  }
  in.max_actions = ctx->max_actions;
  in.messages = ToWriterMessages(store, ch, seg.messages);
  absl::Status last = absl::UnknownError("no attempt");
  int backoff = options.retry_backoff_ms;
  for (int a = 0; a < std::max(1, options.max_attempts); ++a) {
    ++d.attempts;
    llm::StageCall call;
    absl::StatusOr<WriterOutput> out = model->Write(in, &call);
    if (hooks.usage) hooks.usage(call.usage.tokens_in + call.usage.tokens_out);
    if (trace && out.ok()) {
      d.trace.heads = in.heads;
      d.trace.roster = in.roster;
      d.trace.raw_text = out->raw_text;
      d.trace.actions = out->actions;
      d.trace.json_valid = out->parse_error.empty();
    }
    if (out.ok() && out->parse_error.empty()) {
      absl::StatusOr<recordindex::IndexView> view = indexes->Current(ch);
      if (!view.ok()) {
        d.report = view.status();
        return d;
      }
      ctx->index = &**view;
      d.report = ValidateActions(out->actions, *ctx);
      ctx->index = nullptr;
      return d;
    }
    if (out.ok()) {
      ++d.invalid_json;
      last = absl::InvalidArgumentError(absl::StrCat("invalid_json: ", out->parse_error));
    } else {
      last = out.status();
    }
    LOG_WARN("writer attempt failed")
        .Str("channel", ch.channel)
        .Int("first_seq", static_cast<int64_t>(seg.first_seq()))
        .Int("attempt", a + 1)
        .Str("error", last.message());
    if (a + 1 < options.max_attempts) {
      if (hooks.backoff && !hooks.backoff(std::chrono::milliseconds(backoff))) {
        d.report = absl::CancelledError("stopping");
        return d;
      }
      backoff *= 2;
    }
  }
  d.report = last;
  return d;
}

storage::SegmentApply ApplyFor(const Derivation& d, const Segment& seg,
                               const storage::WriterState& state, int64_t now_ms,
                               std::string* outcome) {
  if (d.report.ok()) {
    if (outcome != nullptr) {
      *outcome =
          d.report->accepted.empty() && !d.report->rejected.empty() ? "all_rejected" : "applied";
    }
    return BuildApply(*d.report, d.ctx, seg.messages, state, now_ms);
  }
  // The model kept failing: set the segment aside and move on, so the
  // channel's later messages are not held up. It is retried later.
  storage::SegmentApply apply;
  apply.expected_cursor = state.cursor_seq;
  apply.new_cursor = seg.last_seq();
  apply.next_record = state.next_record;
  apply.park = true;
  apply.parked =
      storage::ParkedSegment{seg.first_seq(), seg.last_seq(),
                             std::string(d.report.status().message()), d.attempts, now_ms};
  if (outcome != nullptr) *outcome = "parked";
  return apply;
}

}  // namespace speakermem::writer

#include "writer/correction.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "storage/record_id.h"
#include "writer/validate.h"

namespace speakermem::writer {

absl::StatusOr<std::string> CorrectionText(absl::string_view content) {
  std::string text(absl::StripAsciiWhitespace(content));
  if (text.empty()) return absl::InvalidArgumentError("content: must not be empty");
  if (text.size() > kMaxContentBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("content: ", text.size(), " bytes; the limit is ", kMaxContentBytes));
  }
  return text;
}

absl::StatusOr<storage::SegmentApply> CorrectionApply(const storage::Record& old,
                                                      const std::string& text,
                                                      const storage::WriterState& state,
                                                      int64_t now_ms) {
  if (!old.active()) {
    return absl::FailedPreconditionError(absl::StrCat("record ", old.record_id,
                                                      " is superseded by ", old.superseded_by,
                                                      "; correct the current head"));
  }
  storage::Record r;
  r.record_id = storage::RecordId(state.next_record);
  r.content = text;
  r.source = "operator";
  r.owner = old.owner;
  r.layer = old.layer;
  r.utype = old.utype;
  r.from_ids = old.from_ids;
  r.valid_at_ms = now_ms;
  r.created_ms = now_ms;
  r.writer_pos = "operator";
  r.session = old.session;
  r.supersedes = {old.record_id};
  r.operator_locked = true;
  storage::SegmentApply apply;
  apply.expected_cursor = apply.new_cursor = state.cursor_seq;
  apply.expected_next_record = state.next_record;
  apply.next_record = state.next_record + 1;
  apply.superseded = {{old.record_id, r.record_id}};
  apply.new_records = {std::move(r)};
  return apply;
}

}  // namespace speakermem::writer

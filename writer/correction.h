// An operator's correction of a derived record (WriterService::Correct): a
// new head in the operator's words, locked against the Writer, that
// supersedes the record corrected (history kept). Internal to writer/.
#ifndef SPEAKERMEM_WRITER_CORRECTION_H_
#define SPEAKERMEM_WRITER_CORRECTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/types.h"

namespace speakermem::writer {

// The correction's text, trimmed; INVALID_ARGUMENT when empty or over the
// records' content limit.
absl::StatusOr<std::string> CorrectionText(absl::string_view content);

// The write that supersedes `old` (a current head) with a locked record of
// `text` at the channel's `state`; FAILED_PRECONDITION when `old` is
// superseded already. The store refuses it (ABORTED) when the Writer wrote
// meanwhile.
absl::StatusOr<storage::SegmentApply> CorrectionApply(const storage::Record& old,
                                                      const std::string& text,
                                                      const storage::WriterState& state,
                                                      int64_t now_ms);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_CORRECTION_H_

// Validation of System 1 input. Pure functions: no store access.
#ifndef SPEAKERMEM_STORAGE_VALIDATION_H_
#define SPEAKERMEM_STORAGE_VALIDATION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "storage/types.h"

namespace speakermem::storage {

// Limits on ingested input; every one is a server config knob (limits.*).
struct IngestLimits {
  // Maximum bytes of a message's text. Default: 32 KiB.
  size_t max_text_bytes = 32 * 1024;
  // Maximum messages in one Ingest request or stream chunk. Default: 1000.
  size_t max_batch_messages = 1000;
  // Maximum bytes of channel, message_id, speaker, speaker_id, session and
  // reply_to. Default: 256.
  size_t max_name_bytes = 256;
  // Metadata: entries, key bytes, value bytes. Defaults: 32, 128, 1024.
  size_t max_metadata_entries = 32;
  size_t max_metadata_key_bytes = 128;
  size_t max_metadata_value_bytes = 1024;
};

// Speaker names that may not be used: they name rows of the query language.
// Compared case-insensitively.
inline constexpr const char* kReservedSpeakerNames[] = {kGroupOwner, kAllMembers};

// Earliest and latest accepted timestamps: (0, 9999-12-31T23:59:59.999Z].
inline constexpr int64_t kMaxTimestampMs = 253402300799999;

// OK, or INVALID_ARGUMENT "<field>: <reason>" for a channel or tenant name:
// non-empty, at most max_name_bytes, valid UTF-8, no control characters.
absl::Status ValidateName(absl::string_view field, absl::string_view value,
                          const IngestLimits& limits, bool allow_empty);

// Validates a whole batch for `channel`. Returns the first problem as
// INVALID_ARGUMENT "messages[<i>].<field>: <reason>". `message_channels[i]`
// is the channel named inside message i (may be empty, meaning the request's
// channel); pass an empty vector when messages carry none.
absl::Status ValidateMessages(absl::string_view channel,
                              const std::vector<absl::string_view>& message_channels,
                              const std::vector<Message>& messages, const IngestLimits& limits);

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_VALIDATION_H_

#include "storage/validation.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace speakermem::storage {
namespace {

bool HasControl(absl::string_view s, bool allow_whitespace) {
  for (unsigned char c : s) {
    if (c == 0x7F) return true;
    if (c < 0x20) {
      if (allow_whitespace && (c == '\n' || c == '\t' || c == '\r')) continue;
      return true;
    }
  }
  return false;
}

absl::Status Bad(absl::string_view prefix, absl::string_view field, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(prefix, field, ": ", reason));
}

absl::Status CheckName(absl::string_view prefix, absl::string_view field, absl::string_view value,
                       const IngestLimits& limits, bool allow_empty) {
  if (value.empty()) {
    return allow_empty ? absl::OkStatus() : Bad(prefix, field, "must not be empty");
  }
  if (value.size() > limits.max_name_bytes) {
    return Bad(prefix, field,
               absl::StrCat("is ", value.size(), " bytes; the limit is ", limits.max_name_bytes));
  }
  if (!IsValidUtf8(value)) return Bad(prefix, field, "is not valid UTF-8");
  if (HasControl(value, false)) {
    return Bad(prefix, field, "must not contain control characters");
  }
  return absl::OkStatus();
}

bool IsReserved(absl::string_view name) {
  std::string upper = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(name));
  for (const char* r : kReservedSpeakerNames) {
    if (upper == r) return true;
  }
  return false;
}

absl::Status ValidateOne(const std::string& p, const Message& m, const IngestLimits& limits) {
  if (absl::Status s = CheckName(p, "message_id", m.message_id, limits, true); !s.ok()) {
    return s;
  }
  if (!m.message_id.empty() && m.message_id[0] == '~') {
    return Bad(p, "message_id", "must not start with '~' (reserved for server ids)");
  }
  if (absl::Status s = CheckName(p, "speaker", m.speaker, limits, false); !s.ok()) return s;
  if (absl::StripAsciiWhitespace(m.speaker).empty()) {
    return Bad(p, "speaker", "must not be blank");
  }
  if (IsReserved(m.speaker)) {
    return Bad(p, "speaker", absl::StrCat("'", m.speaker, "' is a reserved name"));
  }
  if (absl::Status s = CheckName(p, "speaker_id", m.speaker_id, limits, true); !s.ok()) {
    return s;
  }
  if (IsReserved(m.speaker_id)) {
    return Bad(p, "speaker_id", absl::StrCat("'", m.speaker_id, "' is a reserved name"));
  }
  if (m.text.empty()) return Bad(p, "text", "must not be empty");
  if (m.text.size() > limits.max_text_bytes) {
    return Bad(p, "text",
               absl::StrCat("is ", m.text.size(), " bytes; the limit is ", limits.max_text_bytes));
  }
  if (!IsValidUtf8(m.text)) return Bad(p, "text", "is not valid UTF-8");
  if (m.text.find('\0') != std::string::npos) {
    return Bad(p, "text", "must not contain NUL characters");
  }
  if (m.timestamp_ms == 0) {
    return Bad(p, "timestamp_ms", "is missing (must be milliseconds since the epoch, > 0)");
  }
  if (m.timestamp_ms < 0) {
    return Bad(p, "timestamp_ms",
               absl::StrCat("is ", m.timestamp_ms, ", before the epoch (must be > 0)"));
  }
  if (m.timestamp_ms > kMaxTimestampMs) {
    return Bad(p, "timestamp_ms", "is out of range (after year 9999)");
  }
  if (absl::Status s = CheckName(p, "session", m.session, limits, true); !s.ok()) return s;
  if (m.turn < 0) return Bad(p, "turn", "must not be negative");
  if (absl::Status s = CheckName(p, "reply_to", m.reply_to, limits, true); !s.ok()) return s;
  if (m.metadata.size() > limits.max_metadata_entries) {
    return Bad(p, "metadata",
               absl::StrCat("has ", m.metadata.size(), " entries; the limit is ",
                            limits.max_metadata_entries));
  }
  for (const auto& [k, v] : m.metadata) {
    IngestLimits key_limits = limits;
    key_limits.max_name_bytes = limits.max_metadata_key_bytes;
    if (absl::Status s = CheckName(p, "metadata key", k, key_limits, false); !s.ok()) {
      return s;
    }
    if (v.size() > limits.max_metadata_value_bytes) {
      return Bad(
          p, absl::StrCat("metadata[", k, "]"),
          absl::StrCat("is ", v.size(), " bytes; the limit is ", limits.max_metadata_value_bytes));
    }
    if (!IsValidUtf8(v)) return Bad(p, absl::StrCat("metadata[", k, "]"), "is not valid UTF-8");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateName(absl::string_view field, absl::string_view value,
                          const IngestLimits& limits, bool allow_empty) {
  return CheckName("", field, value, limits, allow_empty);
}

absl::Status ValidateMessages(absl::string_view channel,
                              const std::vector<absl::string_view>& message_channels,
                              const std::vector<Message>& messages, const IngestLimits& limits) {
  if (absl::Status s = ValidateName("channel", channel, limits, false); !s.ok()) return s;
  if (messages.empty()) return absl::InvalidArgumentError("messages: must not be empty");
  if (messages.size() > limits.max_batch_messages) {
    return absl::InvalidArgumentError(absl::StrCat("messages: batch has ", messages.size(),
                                                   " messages; the limit is ",
                                                   limits.max_batch_messages));
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string prefix = absl::StrCat("messages[", i, "].");
    if (i < message_channels.size() && !message_channels[i].empty() &&
        message_channels[i] != channel) {
      // Checked as a name first: an error message never quotes bytes that
      // are not UTF-8 (they would make the reply itself undecodable).
      if (absl::Status s = CheckName(prefix, "channel", message_channels[i], limits, false);
          !s.ok()) {
        return s;
      }
      return Bad(prefix, "channel",
                 absl::StrCat("'", message_channels[i], "' differs from the request's channel '",
                              channel, "'"));
    }
    if (absl::Status s = ValidateOne(prefix, messages[i], limits); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace speakermem::storage

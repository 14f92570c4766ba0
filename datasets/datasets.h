// Loaders for conversation data: plain JSONL, LoCoMo (locomo10.json layout)
// and SocialMem network files. They produce channels of System 1 messages
// plus the questions that come with them.
#ifndef SPEAKERMEM_DATASETS_DATASETS_H_
#define SPEAKERMEM_DATASETS_DATASETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/types.h"

namespace speakermem::datasets {

struct Question {
  std::string id;
  std::string question;
  std::string answer;
  std::string category;               // "1".."5" (LoCoMo), "Q1".."Q8" (SocialMem)
  std::vector<std::string> evidence;  // message ids, split and trimmed
  std::string answer_format;          // SocialMem: multiple_choice, long_form...
  std::vector<std::string> options;
  std::string correct_option;
  bool adversarial = false;  // LoCoMo category 5 (unanswerable)
};

struct Conversation {
  std::string channel;
  std::string dataset;                     // the file's format: "locomo", "socialmem" or "jsonl"
  std::vector<storage::Message> messages;  // in conversation order
  std::vector<Question> questions;
  std::vector<std::string> speakers;  // display names, as listed by the file
};

enum class Format { kAuto, kJsonl, kLocomo, kSocialMem };

// Parses "jsonl", "locomo", "socialmem", "auto".
absl::StatusOr<Format> ParseFormat(absl::string_view name);

// Loads `path`. kAuto detects the format from the content: a JSON array of
// objects with "conversation" is LoCoMo, an object with "sessions" is
// SocialMem, anything else is JSONL. `default_channel` names the channel for
// JSONL lines without one and overrides SocialMem's network id when set.
// INVALID_ARGUMENT "<path>:<line>: <field>: <reason>" on bad input,
// NOT_FOUND when the file does not exist.
absl::StatusOr<std::vector<Conversation>> LoadFile(const std::string& path, Format format,
                                                   const std::string& default_channel);

absl::StatusOr<std::vector<Conversation>> LoadLocomo(const std::string& path);
absl::StatusOr<Conversation> LoadSocialMem(const std::string& path);
// JSONL: one JSON object per line. A line with "speaker" is a message
// {channel?, message_id?, speaker, speaker_id?, text, timestamp (ISO-8601
// string or epoch milliseconds), session?, turn?, reply_to?, metadata?};
// a line with "question" is a question {channel?, question, answer?,
// evidence?: [ids] | "id; id", category?} for its channel. Blank lines and
// lines starting with # are skipped.
absl::StatusOr<std::vector<Conversation>> LoadJsonl(const std::string& path,
                                                    const std::string& default_channel);

// ISO-8601 date or date-time; without a zone it is UTC. Accepts
// "2025-10-06", "2025-10-06T12:08:00", "2025-10-06 12:08:00.250",
// "...Z", "...+02:00". INVALID_ARGUMENT otherwise.
absl::StatusOr<int64_t> ParseIsoTime(absl::string_view s);
// LoCoMo session time "1:56 pm on 8 May, 2023" as UTC milliseconds.
absl::StatusOr<int64_t> ParseLocomoTime(absl::string_view s);

// Splits an evidence string packing several ids ("D8:6; D9:17", "D1:3,D1:5").
std::vector<std::string> SplitEvidence(absl::string_view s);

}  // namespace speakermem::datasets

#endif  // SPEAKERMEM_DATASETS_DATASETS_H_

// History import from a Slack workspace export (the folder Slack's "Export
// data" produces, unzipped): users.json, then one folder per channel of
// daily files YYYY-MM-DD.json, each a JSON array of message objects.
//
// Mapping (docs/import.md):
//   speaker_id  the user id (U...), or the bot id for bot messages
//   speaker     the user's display name (profile.display_name, else
//               real_name, else name), or the bot's username
//   message_id  the message's ts ("1700000000.000100"): unique in its
//               channel and stable, so re-importing stores nothing twice
//   timestamp   ts in UTC milliseconds
//   reply_to    thread_ts, for thread replies
//   session     "s" + the ts of the session's first message; a session
//               ends after an idle gap (ExportOptions::session_gap_ms)
//   text        mentions, channel links and URLs written out (<@U1> ->
//               @Ann, <url|label> -> label), HTML entities decoded, each
//               shared file appended as "[file: title]"
// Edits: the export holds the last version, which is imported. Deleted
// messages (tombstones), joins, leaves, topic and other channel events are
// skipped and counted.
#ifndef SPEAKERMEM_DATASETS_SLACK_EXPORT_H_
#define SPEAKERMEM_DATASETS_SLACK_EXPORT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "storage/types.h"

namespace speakermem::datasets {

struct ExportOptions {
  // A gap longer than this between two messages of a channel starts a new
  // session (platforms have none). Default: 4 hours.
  int64_t session_gap_ms = 4 * 3600 * 1000;
};

struct ExportStats {
  size_t files = 0;     // daily files read
  size_t messages = 0;  // messages delivered
  size_t edited = 0;    // of which edited (their last version)
  size_t bots = 0;      // of which written by bots
  size_t files_shared = 0;
  // Skipped entries by reason: the event's subtype ("channel_join",
  // "tombstone", ...), "empty" (no text, no file), "not_message".
  std::map<std::string, size_t> skipped;
};

// One channel's messages from one daily file, in time order.
struct ExportBatch {
  std::string channel;
  std::string file;  // the daily file they came from
  std::vector<storage::Message> messages;
};

// Reads the export at `dir` channel by channel, each channel's daily files
// in date order, calling `sink` once per daily file: only one file's
// messages are held at a time. `progress` (optional) is called after each
// file with (files done, files in all). Stops at the first error: NOT_FOUND
// for a missing folder, INVALID_ARGUMENT "<file>: entry <i>: <field>:
// <reason>" on malformed input (that file's messages are not delivered), or
// whatever `sink` returns.
absl::Status ReadSlackExport(const std::string& dir, const ExportOptions& options,
                             const std::function<absl::Status(ExportBatch)>& sink,
                             ExportStats* stats,
                             const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace speakermem::datasets

#endif  // SPEAKERMEM_DATASETS_SLACK_EXPORT_H_

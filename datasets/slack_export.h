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

#include <string>

#include "datasets/chat_export.h"

namespace speakermem::datasets {

// Reads the export at `dir` channel by channel, each channel's daily files
// in date order, calling `sink` once per daily file: only one file's
// messages are held at a time. `progress` (optional) is called after each
// file with (files done, files in all). Stops at the first error: NOT_FOUND
// for a missing folder, INVALID_ARGUMENT "<file>: entry <i>: <field>:
// <reason>" on malformed input (that file's messages are not delivered), or
// whatever `sink` returns.
absl::Status ReadSlackExport(const std::string& dir, const ExportOptions& options,
                             const ExportSink& sink, ExportStats* stats,
                             const ExportProgress& progress = nullptr);

}  // namespace speakermem::datasets

#endif  // SPEAKERMEM_DATASETS_SLACK_EXPORT_H_

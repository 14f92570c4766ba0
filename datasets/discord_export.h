// History import from Discord channel exports in DiscordChatExporter's JSON
// layout (one file per channel: "guild", "channel", "messages").
//
// Mapping (docs/import.md):
//   speaker_id  author.id (Discord's snowflake)
//   speaker     author.nickname, else author.name
//   message_id  id
//   timestamp   timestamp (ISO-8601 with offset) in UTC milliseconds
//   reply_to    reference.messageId (replies)
//   channel     channel.name
//   text        content, each attachment appended as "[file: fileName]"
// Messages of type Default and Reply are imported (edits: the export holds
// the last version); every other type (joins, pins, calls, renames,
// thread creation...) is skipped and counted by type.
#ifndef SPEAKERMEM_DATASETS_DISCORD_EXPORT_H_
#define SPEAKERMEM_DATASETS_DISCORD_EXPORT_H_

#include <string>

#include "datasets/chat_export.h"

namespace speakermem::datasets {

// `path`: one export file, or a folder of them (read in name order).
absl::Status ReadDiscordExport(const std::string& path, const ExportOptions& options,
                               const ExportSink& sink, ExportStats* stats,
                               const ExportProgress& progress = nullptr);

}  // namespace speakermem::datasets

#endif  // SPEAKERMEM_DATASETS_DISCORD_EXPORT_H_

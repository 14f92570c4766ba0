// History import from Telegram Desktop's JSON export (result.json): one
// chat ("name", "messages") or the whole account ("chats": {"list": [...]}).
//
// Mapping (docs/import.md):
//   speaker_id  from_id ("user123456")
//   speaker     from
//   message_id  id
//   timestamp   date_unixtime (seconds) in milliseconds; without it, date
//               read as UTC
//   reply_to    reply_to_message_id
//   channel     the chat's name (else its id)
//   text        text, a string or a list of strings and entities (each
//               entity's "text"); a photo appended as "[photo]", a file as
//               "[file: file_name]", a sticker as its emoji
// Service messages (type "service": group creation, joins, pins, calls...)
// are skipped and counted by their action. Edited messages carry their
// last version.
#ifndef SPEAKERMEM_DATASETS_TELEGRAM_EXPORT_H_
#define SPEAKERMEM_DATASETS_TELEGRAM_EXPORT_H_

#include <string>

#include "datasets/chat_export.h"

namespace speakermem::datasets {

// `path`: result.json, or the export folder holding it.
absl::Status ReadTelegramExport(const std::string& path, const ExportOptions& options,
                                const ExportSink& sink, ExportStats* stats,
                                const ExportProgress& progress = nullptr);

}  // namespace speakermem::datasets

#endif  // SPEAKERMEM_DATASETS_TELEGRAM_EXPORT_H_

// History import from Matrix room exports in Element's JSON format
// ("room_name", "messages": the room's events).
//
// Mapping (docs/import.md):
//   speaker_id  sender ("@ann:example.org")
//   speaker     the display name the sender's m.room.member event set
//               (the latest before the message), else the sender id
//   message_id  event_id
//   timestamp   origin_server_ts (milliseconds)
//   reply_to    content["m.relates_to"]["m.in_reply_to"].event_id
//   channel     room_name (else the room id)
//   text        content.body without the quoted reply fallback ("> ..."
//               lines before the first blank line); files, images, audio
//               and video as "[file: body]"
// An edit (m.relates_to rel_type m.replace) replaces the text of the event
// it edits and is not imported itself; redacted (deleted) events are
// skipped; state events (membership, name, topic...) and reactions are
// skipped and counted by type.
#ifndef SPEAKERMEM_DATASETS_MATRIX_EXPORT_H_
#define SPEAKERMEM_DATASETS_MATRIX_EXPORT_H_

#include <string>

#include "datasets/chat_export.h"

namespace speakermem::datasets {

// `path`: one export file, or a folder of them (read in name order).
absl::Status ReadMatrixExport(const std::string& path, const ExportOptions& options,
                              const ExportSink& sink, ExportStats* stats,
                              const ExportProgress& progress = nullptr);

}  // namespace speakermem::datasets

#endif  // SPEAKERMEM_DATASETS_MATRIX_EXPORT_H_

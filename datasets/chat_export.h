// History import from chat platforms' own export formats (docs/import.md):
// the common types, and one entry point over the formats. Each format's
// mapping is documented in its header (slack_export.h) or reader.
#ifndef SPEAKERMEM_DATASETS_CHAT_EXPORT_H_
#define SPEAKERMEM_DATASETS_CHAT_EXPORT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "storage/types.h"

namespace speakermem::datasets {

struct ExportOptions {
  // A gap longer than this between two messages of a channel starts a new
  // session (platforms have none). Default: 4 hours.
  int64_t session_gap_ms = 4 * 3600 * 1000;
};

struct ExportStats {
  size_t files = 0;     // export files read
  size_t messages = 0;  // messages delivered
  size_t edited = 0;    // of which edited (their last version)
  size_t bots = 0;      // of which written by bots
  size_t files_shared = 0;
  // Skipped entries by reason: the event's type or subtype
  // ("channel_join", "tombstone", "GuildMemberJoin", "create_group",
  // "m.room.member", ...), "deleted", "empty" (no text, no file),
  // "not_message".
  std::map<std::string, size_t> skipped;
};

// One channel's messages from one export file, in time order.
struct ExportBatch {
  std::string channel;
  std::string file;  // the export file they came from
  std::vector<storage::Message> messages;
};

using ExportSink = std::function<absl::Status(ExportBatch)>;
// (bytes of the export read, bytes in all), after each file and each
// batch of a streamed one.
using ExportProgress = std::function<void(uint64_t, uint64_t)>;

// The export formats: "slack", "discord", "telegram", "matrix".
bool IsExportFormat(absl::string_view format);

// Reads the export at `path` in `format`, calling `sink` per export file
// (Slack: per daily file) with its messages in time order, each channel's
// sessions cut by options.session_gap_ms. Stops at the first error:
// NOT_FOUND for a missing path, INVALID_ARGUMENT "<file>: entry <i>:
// <field>: <reason>" on malformed input (that file's messages are not
// delivered), or whatever `sink` returns.
absl::Status ReadExport(absl::string_view format, const std::string& path,
                        const ExportOptions& options, const ExportSink& sink, ExportStats* stats,
                        const ExportProgress& progress = nullptr);

}  // namespace speakermem::datasets

#endif  // SPEAKERMEM_DATASETS_CHAT_EXPORT_H_

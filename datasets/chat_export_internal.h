// Helpers the export readers share. Internal to datasets/.
#ifndef SPEAKERMEM_DATASETS_CHAT_EXPORT_INTERNAL_H_
#define SPEAKERMEM_DATASETS_CHAT_EXPORT_INTERNAL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "datasets/chat_export.h"
#include "nlohmann/json.hpp"

namespace speakermem::datasets::export_internal {

// INVALID_ARGUMENT "<where>: <field>: <why>".
absl::Status Bad(const std::string& where, absl::string_view field, absl::string_view why);

// The file parsed as JSON; NOT_FOUND when it cannot be opened,
// INVALID_ARGUMENT "<path>: not JSON" otherwise.
absl::StatusOr<nlohmann::json> ReadJson(const std::string& path);

// j[key] when it is a string, else "".
std::string Field(const nlohmann::json& j, const char* key);

// j[key] as text: a string as is, a number written out, else "".
std::string IdField(const nlohmann::json& j, const char* key);

// The file's size in bytes (0 when unknown).
uint64_t FileSize(const std::string& path);

// `path` itself when it is a file, else the folder's *.json files in name
// order; NOT_FOUND when it is neither.
absl::StatusOr<std::vector<std::string>> JsonFiles(const std::string& path);

// One channel's sessions: a new one after an idle gap longer than gap_ms,
// named "s" + the id of its first message.
class SessionCutter {
 public:
  explicit SessionCutter(int64_t gap_ms) : gap_ms_(gap_ms) {}
  const std::string& Of(const storage::Message& m);

 private:
  const int64_t gap_ms_;
  int64_t last_ms_ = 0;
  std::string session_;
};

// Sorts by time (stably), cuts sessions, counts and delivers messages of
// `channel` read from `file` (a whole file, or one batch of a streamed one).
absl::Status Deliver(const std::string& channel, const std::string& file,
                     std::vector<storage::Message> messages, SessionCutter* sessions,
                     const ExportSink& sink, ExportStats* stats);

// Streamed single-file exports deliver their messages in batches of this
// many (exporters write them in time order; each batch is sorted).
constexpr size_t kStreamBatch = 10000;

// Collects a streamed file's messages and hands them to `deliver` in
// batches of kStreamBatch; Flush hands on the rest.
class Batcher {
 public:
  using Deliver = std::function<absl::Status(std::vector<storage::Message>)>;
  explicit Batcher(Deliver deliver) : deliver_(std::move(deliver)) {}

  absl::Status Add(storage::Message m) {
    batch_.push_back(std::move(m));
    return batch_.size() < kStreamBatch ? absl::OkStatus() : Flush();
  }
  absl::Status Flush() {
    if (batch_.empty()) return absl::OkStatus();
    std::vector<storage::Message> out;
    out.swap(batch_);
    return deliver_(std::move(out));
  }

 private:
  const Deliver deliver_;
  std::vector<storage::Message> batch_;
};

// Adds a file's counts (local) to the export's.
void Merge(const ExportStats& local, ExportStats* into);

// Formats with one channel per export file (Discord, Matrix): `read`
// streams one file, handing its channel's messages to `deliver` in batches;
// the files are read in name order, a channel split over several files
// keeps one session sequence.
// `read` is how far into the file the batch ends (progress).
using BatchFn = std::function<absl::Status(const std::string& channel,
                                           std::vector<storage::Message> batch, uint64_t read)>;
using ChannelFileReader = std::function<absl::Status(const std::string& path,
                                                     const BatchFn& deliver, ExportStats* stats)>;
absl::Status ReadFilePerChannel(const std::string& path, const ExportOptions& options,
                                const ChannelFileReader& read, const ExportSink& sink,
                                ExportStats* stats, const ExportProgress& progress);

}  // namespace speakermem::datasets::export_internal

#endif  // SPEAKERMEM_DATASETS_CHAT_EXPORT_INTERNAL_H_

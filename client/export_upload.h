// Streams a chat export's batches (datasets/chat_export.h) into the server:
// consecutive files of one channel share one ingest stream, up to a bound
// of messages held, so an export of many small daily files is not a stream
// per file. Used by `speakermem ingest --format ...` and import_bench.
#ifndef SPEAKERMEM_CLIENT_EXPORT_UPLOAD_H_
#define SPEAKERMEM_CLIENT_EXPORT_UPLOAD_H_

#include <string>
#include <vector>

#include "client/client.h"
#include "datasets/chat_export.h"

namespace speakermem::cli {

class ExportUploader {
 public:
  // `prefix` goes in front of every channel name; at most `max_pending`
  // messages are held before they are sent.
  ExportUploader(client::Client* client, client::StreamOptions options, std::string prefix,
                 size_t max_pending = 20000)
      : client_(client), options_(options), prefix_(std::move(prefix)), max_(max_pending) {}

  // The export reader's sink: holds the batch, sending what was held first
  // when the channel changes or the bound is reached.
  absl::Status Add(datasets::ExportBatch batch);
  // Sends what is held. Call once the reader is done.
  absl::Status Finish();

  size_t stored() const { return stored_; }
  size_t duplicates() const { return duplicates_; }
  size_t rejected_chunks() const { return rejected_; }
  // "<first file> .. <last file>: <reason>" per rejected chunk.
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  client::Client* const client_;
  const client::StreamOptions options_;
  const std::string prefix_;
  const size_t max_;
  std::string channel_, first_file_, last_file_;
  std::vector<v1::DialogueMessage> pending_;
  size_t stored_ = 0, duplicates_ = 0, rejected_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_CLIENT_EXPORT_UPLOAD_H_

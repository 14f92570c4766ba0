#include "client/export_upload.h"

#include "absl/strings/str_cat.h"
#include "client/cli_common.h"

namespace speakermem::cli {

absl::Status ExportUploader::Add(datasets::ExportBatch batch) {
  if (!pending_.empty() &&
      (batch.channel != channel_ || pending_.size() + batch.messages.size() > max_)) {
    if (absl::Status s = Finish(); !s.ok()) return s;
  }
  if (pending_.empty()) {
    channel_ = batch.channel;
    first_file_ = batch.file;
  }
  last_file_ = batch.file;
  for (const auto& m : batch.messages) pending_.push_back(ToWire(m));
  return absl::OkStatus();
}

absl::Status ExportUploader::Finish() {
  if (pending_.empty()) return absl::OkStatus();
  const std::string files =
      first_file_ == last_file_ ? first_file_ : absl::StrCat(first_file_, " .. ", last_file_);
  size_t rejected = 0;
  absl::Status s = client_->IngestStream(
      prefix_ + channel_, pending_, options_,
      [&](const v1::IngestAck& ack) {
        if (ack.has_error()) {
          errors_.push_back(absl::StrCat(files, ": ", ack.error().message()));
        } else {
          stored_ += ack.stored();
          duplicates_ += ack.duplicates();
        }
      },
      &rejected);
  rejected_ += rejected;
  pending_.clear();
  return s;
}

}  // namespace speakermem::cli

#include "datasets/chat_export.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "datasets/chat_export_internal.h"
#include "datasets/discord_export.h"
#include "datasets/matrix_export.h"
#include "datasets/slack_export.h"
#include "datasets/telegram_export.h"

namespace speakermem::datasets {

namespace export_internal {

absl::Status Bad(const std::string& where, absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", field, ": ", why));
}

absl::StatusOr<nlohmann::json> ReadJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(ss.str(), nullptr, false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON"));
  return doc;
}

std::string Field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string IdField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return "";
}

absl::StatusOr<std::vector<std::string>> JsonFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return std::vector<std::string>{path};
  if (!fs::is_directory(path, ec)) return absl::NotFoundError(absl::StrCat(path, ": not found"));
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  }
  if (ec) return absl::InternalError(absl::StrCat(path, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  if (files.empty()) return absl::NotFoundError(absl::StrCat(path, ": no .json files"));
  return files;
}

uint64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

const std::string& SessionCutter::Of(const storage::Message& m) {
  if (session_.empty() || m.timestamp_ms - last_ms_ > gap_ms_) session_ = "s" + m.message_id;
  last_ms_ = std::max(last_ms_, m.timestamp_ms);
  return session_;
}

absl::Status Deliver(const std::string& channel, const std::string& file,
                     std::vector<storage::Message> messages, SessionCutter* sessions,
                     const ExportSink& sink, ExportStats* stats) {
  std::stable_sort(messages.begin(), messages.end(),
                   [](const storage::Message& a, const storage::Message& b) {
                     return a.timestamp_ms < b.timestamp_ms;
                   });
  for (auto& m : messages) m.session = sessions->Of(m);
  stats->messages += messages.size();
  if (messages.empty()) return absl::OkStatus();
  return sink(ExportBatch{channel, file, std::move(messages)});
}

void Merge(const ExportStats& local, ExportStats* into) {
  into->edited += local.edited;
  into->bots += local.bots;
  into->files_shared += local.files_shared;
  for (const auto& [why, n] : local.skipped) into->skipped[why] += n;
}

absl::Status ReadFilePerChannel(const std::string& path, const ExportOptions& options,
                                const ChannelFileReader& read, const ExportSink& sink,
                                ExportStats* stats, const ExportProgress& progress) {
  SM_ASSIGN_OR_RETURN(std::vector<std::string> files, JsonFiles(path));
  std::map<std::string, SessionCutter> sessions;
  uint64_t total = 0, done = 0;
  for (const auto& f : files) total += FileSize(f);
  for (const std::string& file : files) {
    BatchFn deliver = [&](const std::string& channel, std::vector<storage::Message> batch,
                          uint64_t read) {
      auto cut = sessions.try_emplace(channel, options.session_gap_ms).first;
      SM_RETURN_IF_ERROR(Deliver(channel, file, std::move(batch), &cut->second, sink, stats));
      if (progress) progress(done + read, total);
      return absl::OkStatus();
    };
    SM_RETURN_IF_ERROR(read(file, deliver, stats));
    ++stats->files;
    done += FileSize(file);
    if (progress) progress(done, total);
  }
  return absl::OkStatus();
}

}  // namespace export_internal

bool IsExportFormat(absl::string_view format) {
  return format == "slack" || format == "discord" || format == "telegram" || format == "matrix";
}

absl::Status ReadExport(absl::string_view format, const std::string& path,
                        const ExportOptions& options, const ExportSink& sink, ExportStats* stats,
                        const ExportProgress& progress) {
  if (format == "slack") return ReadSlackExport(path, options, sink, stats, progress);
  if (format == "discord") return ReadDiscordExport(path, options, sink, stats, progress);
  if (format == "telegram") return ReadTelegramExport(path, options, sink, stats, progress);
  if (format == "matrix") return ReadMatrixExport(path, options, sink, stats, progress);
  return absl::InvalidArgumentError(
      absl::StrCat("format '", format, "': expected slack, discord, telegram or matrix"));
}

}  // namespace speakermem::datasets

#include "client/cli_import.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/export_upload.h"
#include "datasets/chat_export.h"

namespace speakermem::cli {

bool IsExportFormat(const std::string& format) { return datasets::IsExportFormat(format); }

int CmdImport(client::Client* c, const Args& args) {
  if (args.positional.size() < 2) return Usage("ingest: give at least one export folder");
  datasets::ExportOptions options;
  if (args.Has("session-gap")) {
    absl::Duration gap;
    if (!absl::ParseDuration(args.Get("session-gap"), &gap) || gap <= absl::ZeroDuration()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "--session-gap: '", args.Get("session-gap"), "' is not a duration like 30m or 4h")));
    }
    options.session_gap_ms = absl::ToInt64Milliseconds(gap);
  }
  client::StreamOptions so;
  absl::StatusOr<uint32_t> chunk = UintFlag(args, "chunk", 500);
  if (!chunk.ok()) return Fail(chunk.status());
  so.chunk_size = *chunk;
  const bool json = args.Has("json");
  const bool tty = isatty(STDERR_FILENO) && !json;
  ExportUploader upload(c, so, args.Get("channel-prefix"));
  datasets::ExportStats stats;
  const auto start = std::chrono::steady_clock::now();
  auto progress = [&](uint64_t done, uint64_t total) {
    if (!tty) return;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double eta = done > 0 && total >= done
                     ? secs * static_cast<double>(total - done) / static_cast<double>(done)
                     : 0;
    std::fprintf(stderr, "\r%.1f/%.1f MB  %zu files  %zu messages  %.0f msg/s  ETA %.0fs ",
                 done / 1e6, total / 1e6, stats.files, stats.messages,
                 secs > 0 ? stats.messages / secs : 0.0, eta);
    std::fflush(stderr);
  };
  for (size_t i = 1; i < args.positional.size(); ++i) {
    absl::Status s = datasets::ReadExport(
        args.Get("format"), args.positional[i], options,
        [&](datasets::ExportBatch batch) { return upload.Add(std::move(batch)); }, &stats,
        progress);
    // The files read before a malformed one are valid: they are sent.
    absl::Status sent = upload.Finish();
    if (s.ok()) s = sent;
    if (tty) std::fputs("\n", stderr);
    if (!s.ok()) return Fail(s);
  }
  const size_t stored = upload.stored(), duplicates = upload.duplicates(),
               rejected = upload.rejected_chunks();
  const std::vector<std::string>& errors = upload.errors();
  size_t skipped = 0;
  std::string skipped_list;
  for (const auto& [why, n] : stats.skipped) {
    skipped += n;
    absl::StrAppend(&skipped_list, skipped_list.empty() ? "" : ", ", why, " ", n);
  }
  if (json) {
    std::string by_reason;
    for (const auto& [why, n] : stats.skipped) {
      absl::StrAppend(&by_reason, by_reason.empty() ? "" : ",", "\"", why, "\":", n);
    }
    std::printf(
        "{\"files\":%zu,\"messages\":%zu,\"stored\":%zu,\"duplicates\":%zu,"
        "\"rejected_chunks\":%zu,\"edited\":%zu,\"bots\":%zu,\"files_shared\":%zu,"
        "\"skipped\":{%s}}\n",
        stats.files, stats.messages, stored, duplicates, rejected, stats.edited, stats.bots,
        stats.files_shared, by_reason.c_str());
  } else {
    std::printf(
        "%zu files, %zu messages: %zu stored, %zu duplicates, %zu chunks rejected\n"
        "  %zu edited (last version), %zu by bots, %zu shared files as captions\n"
        "  %zu skipped%s%s%s\n",
        stats.files, stats.messages, stored, duplicates, rejected, stats.edited, stats.bots,
        stats.files_shared, skipped, skipped_list.empty() ? "" : " (", skipped_list.c_str(),
        skipped_list.empty() ? "" : ")");
  }
  for (const auto& e : errors) std::fprintf(stderr, "  rejected: %s\n", e.c_str());
  return rejected > 0 ? 1 : 0;
}

}  // namespace speakermem::cli

// History import at scale: a generated Slack export (--messages messages in
// --channels channels, daily files of --per-file messages) read by the
// export reader alone, then imported through gRPC into a server in this
// process as `speakermem ingest --format slack` does. The same messages as
// one JSONL file, loaded whole by the JSONL loader, are the same-run
// baseline. Then the single-file formats: the same number of messages as
// one Discord channel file, one Telegram result.json (in --channels chats)
// and one Matrix room file, each read by its streaming reader beside
// parsing the same file whole (what a reader holding the export would
// need). Peak resident memory is measured per phase (the kernel's peak is
// reset before each).
//
//   build/bench/import_bench [--messages N] [--channels C] [--per-file M]
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "client/client.h"
#include "client/export_upload.h"
#include "common/allocator.h"
#include "common/clock.h"
#include "common/log.h"
#include "datasets/chat_export.h"
#include "datasets/datasets.h"
#include "nlohmann/json.hpp"
#include "server/server.h"

namespace speakermem::bench {
namespace {

struct Options {
  size_t messages = 1000000;
  size_t channels = 10;
  size_t per_file = 1000;
};

// Resets the kernel's peak resident set of this process (Linux 4.0+).
void ResetPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Peak resident set since the last reset, in MiB.
double PeakMiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// Writes the export and the same messages as JSONL; returns the bytes of
// the export.
uintmax_t Generate(const Options& opt, const std::string& dir, const std::string& jsonl) {
  namespace fs = std::filesystem;
  Corpus corpus(11);
  nlohmann::json users = nlohmann::json::array();
  for (int u = 0; u < 20; ++u) {
    users.push_back({{"id", absl::StrCat("U", 100 + u)},
                     {"name", absl::StrCat("user", u)},
                     {"profile", {{"display_name", absl::StrCat("Person ", u)}}}});
  }
  fs::create_directories(dir);
  std::ofstream(dir + "/users.json") << users.dump();
  std::ofstream lines(jsonl);
  const size_t per_channel = opt.messages / opt.channels;
  uintmax_t bytes = 0;
  for (size_t c = 0; c < opt.channels; ++c) {
    const std::string name = absl::StrCat("channel-", c);
    fs::create_directories(dir + "/" + name);
    int64_t t = 1700000000;  // seconds
    for (size_t done = 0, day = 0; done < per_channel; ++day) {
      nlohmann::json msgs = nlohmann::json::array();
      for (size_t i = 0; i < opt.per_file && done < per_channel; ++i, ++done) {
        t += 1 + static_cast<int64_t>(corpus.rng()() % 60);
        const std::string ts = absl::StrCat(t, ".", 100000 + i);
        const std::string user = absl::StrCat("U", 100 + corpus.rng()() % 20);
        const std::string text = corpus.Sentence(6, 30);
        msgs.push_back({{"type", "message"}, {"user", user}, {"text", text}, {"ts", ts}});
        nlohmann::json line = {{"channel", name},  {"speaker", user},       {"speaker_id", user},
                               {"message_id", ts}, {"timestamp", t * 1000}, {"text", text}};
        lines << line.dump() << "\n";
      }
      char file[32];
      std::snprintf(file, sizeof(file), "/%04zu-01-01.json", 2000 + day);  // name order = day order
      const std::string path = dir + "/" + name + file;
      std::ofstream(path) << msgs.dump();
      bytes += fs::file_size(path);
    }
  }
  return bytes;
}

// Imports the export at `dir` through gRPC into a server in this process
// (storing under `data_dir`), as `speakermem ingest --format slack` does,
// and prints the rate; false on failure.
bool ImportThroughGrpc(const Options& opt, const std::string& dir, const std::string& data_dir) {
  server::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "";
  config.memory.store.path = data_dir;
  auto srv = server::Server::Start(config);
  if (!srv.ok() || !(*srv)->WaitUntilReady(std::chrono::seconds(30))) return false;
  client::ClientOptions co;
  co.addr = absl::StrCat("127.0.0.1:", (*srv)->port());
  auto client = client::Client::Connect(co);
  client::StreamOptions so;
  so.chunk_size = 500;
  cli::ExportUploader upload(client.get(), so, "");
  datasets::ExportStats grpc_stats;
  ResetPeak();
  auto start = std::chrono::steady_clock::now();
  absl::Status s = datasets::ReadExport(
      "slack", dir, {}, [&](datasets::ExportBatch b) { return upload.Add(std::move(b)); },
      &grpc_stats);
  if (s.ok()) s = upload.Finish();
  if (s.ok() && upload.rejected_chunks() > 0) s = absl::InternalError("chunks rejected");
  const size_t stored = upload.stored();
  double grpc_secs = SecondsSince(start);
  if (!s.ok() || stored != opt.messages) {
    std::fprintf(stderr, "import failed: %s (%zu stored)\n", s.ToString().c_str(), stored);
    return false;
  }
  std::printf("%-44s %12.0f %14.0f\n", "imported through gRPC (server in process)",
              stored / grpc_secs, PeakMiB());
  std::printf("\n%zu messages stored in %zu channels in %.1f s\n", stored, opt.channels, grpc_secs);
  client.reset();
  (*srv)->Shutdown(std::chrono::milliseconds(1000));
  return true;
}

// One message of a single-file export, as its exporter writes it.
std::string DiscordMessage(size_t i, int64_t ms, int user, const std::string& text) {
  nlohmann::json m = {{"id", absl::StrCat(1000000 + i)},
                      {"type", i % 10 == 3 ? "Reply" : "Default"},
                      {"timestamp", FormatIsoUtc(ms)},
                      {"author",
                       {{"id", absl::StrCat(500 + user)},
                        {"name", absl::StrCat("user", user)},
                        {"nickname", absl::StrCat("Person ", user)},
                        {"isBot", false}}},
                      {"content", text},
                      {"attachments", nlohmann::json::array()}};
  if (i % 10 == 3) m["reference"] = {{"messageId", absl::StrCat(1000000 + i - 1)}};
  return m.dump();
}

std::string TelegramMessage(size_t i, int64_t ms, int user, const std::string& text) {
  nlohmann::json m = {{"id", i + 1},
                      {"type", "message"},
                      {"date", FormatIsoUtc(ms).substr(0, 19)},
                      {"date_unixtime", absl::StrCat(ms / 1000)},
                      {"from", absl::StrCat("Person ", user)},
                      {"from_id", absl::StrCat("user", 500 + user)},
                      {"text", text}};
  if (i % 10 == 3) m["reply_to_message_id"] = i;
  return m.dump();
}

std::string MatrixMessage(size_t i, int64_t ms, int user, const std::string& text) {
  nlohmann::json m = {{"type", "m.room.message"},
                      {"sender", absl::StrCat("@user", user, ":example.org")},
                      {"event_id", absl::StrCat("$ev", i)},
                      {"origin_server_ts", ms},
                      {"content", {{"msgtype", "m.text"}, {"body", text}}}};
  return m.dump();
}

// Writes `n` messages as one export file of `format` without holding it;
// Telegram's are split over `chats` chats. Returns the file's bytes.
uintmax_t GenerateSingleFile(const std::string& format, size_t n, size_t chats,
                             const std::string& path) {
  Corpus corpus(13);
  std::ofstream out(path);
  auto next = [&](size_t i, std::string (*write)(size_t, int64_t, int, const std::string&)) {
    const int64_t ms = 1700000000000 + static_cast<int64_t>(i) * 7000;
    return write(i, ms, static_cast<int>(corpus.rng()() % 20), corpus.Sentence(6, 30));
  };
  if (format == "discord") {
    out << R"({"guild":{"id":"1","name":"Bench"},"channel":{"id":"2","name":"general"},"messages":[)";
    for (size_t i = 0; i < n; ++i) out << (i ? "," : "") << next(i, DiscordMessage);
    out << "],\"messageCount\":" << n << "}";
  } else if (format == "telegram") {
    out << R"({"about":"bench","chats":{"about":"bench","list":[)";
    const size_t per_chat = n / chats;
    for (size_t c = 0, i = 0; c < chats; ++c) {
      out << (c ? "," : "") << R"({"name":"chat-)" << c << R"(","type":"private_group","id":)"
          << c + 1 << R"(,"messages":[)";
      const size_t end = c + 1 == chats ? n : i + per_chat;
      for (size_t first = i; i < end; ++i)
        out << (i > first ? "," : "") << next(i, TelegramMessage);
      out << "]}";
    }
    out << "]}}";
  } else {
    out << R"({"room_name":"bench-room","messages":[)";
    for (size_t i = 0; i < n; ++i) out << (i ? "," : "") << next(i, MatrixMessage);
    out << "]}";
  }
  out.close();
  return std::filesystem::file_size(path);
}

// The single-file formats: each streaming reader beside parsing the same
// file whole. False on failure.
bool SingleFileFormats(const Options& opt, const std::string& root) {
  std::printf("Single-file exports of %zu messages (Telegram: %zu chats in one result.json)\n",
              opt.messages, opt.channels);
  std::printf("%-44s %12s %14s %10s\n", "", "msg/s", "peak RSS MiB", "MiB");
  for (const char* format : {"discord", "telegram", "matrix"}) {
    const std::string path = absl::StrCat(root, "/", format, ".json");
    const double mib = GenerateSingleFile(format, opt.messages, opt.channels, path) / 1048576.0;
    datasets::ExportStats stats;
    size_t seen = 0;
    ResetPeak();
    auto start = std::chrono::steady_clock::now();
    absl::Status s = datasets::ReadExport(
        format, path, {},
        [&](datasets::ExportBatch b) {
          seen += b.messages.size();
          return absl::OkStatus();
        },
        &stats);
    const double secs = SecondsSince(start), peak = PeakMiB();
    if (!s.ok() || seen != opt.messages) {
      std::fprintf(stderr, "%s read failed: %s (%zu messages)\n", format, s.ToString().c_str(),
                   seen);
      return false;
    }
    std::printf("%-44s %12.0f %14.0f %10.0f\n", absl::StrCat(format, " reader, streaming").c_str(),
                seen / secs, peak, mib);
    // The baseline: the file parsed whole, nothing else done.
    ResetPeak();
    start = std::chrono::steady_clock::now();
    std::ifstream in(path, std::ios::binary);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    const double whole_secs = SecondsSince(start), whole_peak = PeakMiB();
    if (doc.is_discarded()) return false;
    doc = nlohmann::json();
    ReleaseFreeMemory();  // the next measurement starts from a small process
    std::printf("%-44s %12.0f %14.0f\n", "  same file parsed whole (baseline)",
                opt.messages / whole_secs, whole_peak);
    std::printf("%-44s %12.2f %14.2f\n", "  streaming / whole", whole_secs / secs,
                peak / whole_peak);
    std::filesystem::remove(path);
  }
  return true;
}

int Run(const Options& opt) {
  SetLogLevel(LogLevel::kWarn);
  std::printf("History import, %u hardware threads, %s allocator\n",
              std::thread::hardware_concurrency(), AllocatorName());
  const std::string root =
      (std::filesystem::temp_directory_path() / absl::StrCat("speakermem-import-", getpid()))
          .string();
  const std::string dir = root + "/export", jsonl = root + "/same.jsonl";
  // The single-file formats first, while the process is small.
  std::filesystem::create_directories(root);
  if (!SingleFileFormats(opt, root)) return 1;
  std::printf("\n");
  auto start = std::chrono::steady_clock::now();
  uintmax_t bytes = Generate(opt, dir, jsonl);
  std::printf(
      "generated a Slack export of %zu messages: %zu channels, daily files of %zu messages, "
      "%.0f MiB (%.1f s)\n\n",
      opt.messages, opt.channels, opt.per_file, bytes / 1048576.0, SecondsSince(start));
  std::printf("%-44s %12s %14s\n", "", "msg/s", "peak RSS MiB");

  // The reader alone.
  datasets::ExportStats stats;
  ResetPeak();
  start = std::chrono::steady_clock::now();
  size_t seen = 0;
  absl::Status s = datasets::ReadExport(
      "slack", dir, {},
      [&](datasets::ExportBatch b) {
        seen += b.messages.size();
        return absl::OkStatus();
      },
      &stats);
  double read_secs = SecondsSince(start);
  if (!s.ok() || seen != opt.messages) {
    std::fprintf(stderr, "read failed: %s (%zu messages)\n", s.ToString().c_str(), seen);
    return 1;
  }
  const double read_rate = seen / read_secs, read_peak = PeakMiB();
  std::printf("%-44s %12.0f %14.0f\n", "Slack export reader, a daily file at a time", read_rate,
              read_peak);

  // The baseline: the JSONL loader, which holds the whole file.
  ResetPeak();
  start = std::chrono::steady_clock::now();
  auto convs = datasets::LoadFile(jsonl, datasets::Format::kJsonl, "");
  double jsonl_secs = SecondsSince(start);
  size_t loaded = 0;
  if (convs.ok()) {
    for (const auto& c : *convs) loaded += c.messages.size();
  }
  const double jsonl_peak = PeakMiB();
  if (loaded != opt.messages) {
    std::fprintf(stderr, "JSONL load failed\n");
    return 1;
  }
  convs = std::vector<datasets::Conversation>();
  std::printf("%-44s %12.0f %14.0f\n", "same messages as JSONL, loaded whole (baseline)",
              loaded / jsonl_secs, jsonl_peak);
  std::printf("%-44s %12.2f %14.2f\n", "reader / baseline", read_rate / (loaded / jsonl_secs),
              read_peak / jsonl_peak);

  // Imported through gRPC, as `speakermem ingest --format slack` does.
  if (!ImportThroughGrpc(opt, dir, root + "/data")) return 1;
  std::filesystem::remove_all(root);
  return 0;
}

}  // namespace
}  // namespace speakermem::bench

int main(int argc, char** argv) {
  speakermem::bench::Options opt;
  speakermem::bench::ParseFlags(argc, argv,
                                {{"--messages", &opt.messages},
                                 {"--channels", &opt.channels},
                                 {"--per-file", &opt.per_file}});
  if (opt.channels == 0 || opt.per_file == 0 || opt.messages < opt.channels) {
    std::fprintf(stderr,
                 "import_bench: --channels and --per-file must be positive, "
                 "--messages at least --channels\n");
    return 2;
  }
  return speakermem::bench::Run(opt);
}

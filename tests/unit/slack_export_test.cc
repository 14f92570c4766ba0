// The Slack export reader on the hand-written sample (examples/slack_export):
// every mapping rule of datasets/slack_export.h, and malformed input.
#include "datasets/slack_export.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/test_util.h"

namespace speakermem::datasets {
namespace {

constexpr char kSample[] = SPEAKERMEM_SOURCE_DIR "/examples/slack_export";

struct Read {
  std::map<std::string, std::vector<storage::Message>> by_channel;
  std::vector<std::string> files;
  ExportStats stats;
};

Read ReadAll(const std::string& dir, ExportOptions options = {}) {
  Read r;
  REQUIRE_OK(ReadSlackExport(
      dir, options,
      [&](ExportBatch b) {
        r.files.push_back(std::filesystem::path(b.file).filename().string());
        for (auto& m : b.messages) r.by_channel[b.channel].push_back(std::move(m));
        return absl::OkStatus();
      },
      &r.stats));
  return r;
}

const storage::Message& ById(const std::vector<storage::Message>& msgs, const std::string& id) {
  for (const auto& m : msgs) {
    if (m.message_id == id) return m;
  }
  FAIL("no message " << id);
  return msgs.front();
}

TEST_CASE("Slack export: people, ids, threads, text and skipped events", "[import][slack]") {
  Read r = ReadAll(kSample);
  REQUIRE(r.by_channel.size() == 2);
  const auto& general = r.by_channel["general"];
  REQUIRE(general.size() == 7);
  REQUIRE(r.by_channel["random"].size() == 1);
  // Channels in name order, each one's days in date order.
  CHECK(r.files ==
        std::vector<std::string>{"2026-03-02.json", "2026-03-03.json", "2026-03-02.json"});

  // The thread's parent and its reply: the platform's ts is the id.
  const auto& parent = general[0];
  CHECK(parent.message_id == "1772445480.000100");
  CHECK(parent.timestamp_ms == 1772445480000);
  CHECK(parent.speaker_id == "U01ANN");
  CHECK(parent.speaker == "ann");  // profile.display_name
  CHECK(parent.reply_to.empty());  // thread_ts == ts: the parent itself
  const auto& reply = general[1];
  CHECK(reply.speaker == "Ben Ito");  // empty display_name: real_name
  CHECK(reply.reply_to == parent.message_id);
  CHECK(reply.text == "Yes, room 4B. @ann can you bring the board?");
  // The edit: its last version.
  CHECK(general[2].text == "I'll bring the board and the markers");
  // A bot: its bot id and username.
  CHECK(general[3].speaker_id == "B01DEPLOY");
  CHECK(general[3].speaker == "deploybot");
  // A file share: the file as a caption.
  CHECK(general[4].speaker == "cy");  // only a name
  CHECK(general[4].text == "Slides from last time [file: Retro slides]");
  // Links, channel links, mentions and entities written out.
  CHECK(general[5].text == "Notes are up <3");
  CHECK(general[6].text == "Thanks @cy! See #random for photos");

  CHECK(r.stats.files == 3);
  CHECK(r.stats.messages == 8);
  CHECK(r.stats.edited == 1);
  CHECK(r.stats.bots == 1);
  CHECK(r.stats.files_shared == 1);
  CHECK(r.stats.skipped ==
        std::map<std::string, size_t>{{"channel_join", 1}, {"channel_topic", 1}, {"tombstone", 1}});
}

TEST_CASE("Slack export: sessions are cut by the idle gap, named by their first message",
          "[import][slack]") {
  Read r = ReadAll(kSample);
  const auto& g = r.by_channel["general"];
  // Day one: 09:58 to 12:00, no gap over 4 hours; day two starts a new one.
  for (size_t i = 0; i < 5; ++i) CHECK(g[i].session == "s" + g[0].message_id);
  CHECK(g[5].session == "s" + g[5].message_id);
  CHECK(g[6].session == g[5].session);
  // With a one-hour gap the bot's 11:30 message (1.5 h after 10:03) opens
  // a session of its own.
  ExportOptions hour;
  hour.session_gap_ms = 3600 * 1000;
  Read h = ReadAll(kSample, hour);
  const auto& hg = h.by_channel["general"];
  CHECK(hg[2].session == "s" + hg[0].message_id);
  CHECK(hg[3].session == "s" + hg[3].message_id);
  // Reading again gives the same ids and sessions (re-import is idempotent).
  Read again = ReadAll(kSample);
  for (size_t i = 0; i < g.size(); ++i) {
    CHECK(again.by_channel["general"][i].message_id == g[i].message_id);
    CHECK(again.by_channel["general"][i].session == g[i].session);
  }
}

TEST_CASE("Slack export: a malformed daily file names the entry and delivers nothing of it",
          "[import][slack]") {
  testing::TempDir dir;
  const std::filesystem::path root = dir.Sub("export");
  std::filesystem::create_directories(root / "general");
  auto write = [](const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p) << text;
  };
  write(root / "users.json", R"([{"id": "U1", "name": "ann"}])");
  write(root / "general" / "2026-03-01.json",
        R"([{"type": "message", "user": "U1", "text": "fine", "ts": "1772359200.000100"}])");
  write(root / "general" / "2026-03-02.json",
        R"([{"type": "message", "user": "U1", "text": "ok", "ts": "1772445600.000100"},
            {"type": "message", "user": "U1", "text": "no ts here"}])");
  std::vector<std::string> delivered;
  ExportStats unused;
  absl::Status s = ReadSlackExport(
      root.string(), {},
      [&](ExportBatch b) {
        for (const auto& m : b.messages) delivered.push_back(m.text);
        return absl::OkStatus();
      },
      &unused);
  REQUIRE(absl::IsInvalidArgument(s));
  CHECK_THAT(std::string(s.message()), Catch::Contains("2026-03-02.json: entry 1: ts: is missing"));
  CHECK(delivered == std::vector<std::string>{"fine"});

  write(root / "general" / "2026-03-02.json",
        R"([{"type": "message", "user": "U1", "text": "ok", "ts": "yesterday"}])");
  ExportStats stats;
  s = ReadSlackExport(
      root.string(), {}, [](ExportBatch) { return absl::OkStatus(); }, &stats);
  CHECK_THAT(std::string(s.message()), Catch::Contains("entry 0: ts: 'yesterday'"));
  write(root / "general" / "2026-03-02.json", "[{");
  s = ReadSlackExport(
      root.string(), {}, [](ExportBatch) { return absl::OkStatus(); }, &stats);
  CHECK_THAT(std::string(s.message()), Catch::Contains("2026-03-02.json: not JSON"));
  CHECK(absl::IsNotFound(ReadSlackExport(
      dir.Sub("missing"), {}, [](ExportBatch) { return absl::OkStatus(); }, &stats)));
}

}  // namespace
}  // namespace speakermem::datasets

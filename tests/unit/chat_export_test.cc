// The Discord, Telegram and Matrix export readers on their hand-written
// samples (examples/*_export): the mapping rules in each reader's header,
// skipped events, malformed input. Slack: slack_export_test.cc.
#include "datasets/chat_export.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/test_util.h"

namespace speakermem::datasets {
namespace {

struct Read {
  std::map<std::string, std::vector<storage::Message>> by_channel;
  ExportStats stats;
};

Read ReadAll(const std::string& format, const std::string& path, ExportOptions options = {}) {
  Read r;
  REQUIRE_OK(ReadExport(
      format, path, options,
      [&](ExportBatch b) {
        for (auto& m : b.messages) r.by_channel[b.channel].push_back(std::move(m));
        return absl::OkStatus();
      },
      &r.stats));
  return r;
}

std::string Example(const std::string& rel) { return SPEAKERMEM_SOURCE_DIR "/examples/" + rel; }

absl::Status ReadText(const std::string& format, const std::string& path) {
  ExportStats stats;
  return ReadExport(
      format, path, {}, [](ExportBatch) { return absl::OkStatus(); }, &stats);
}

TEST_CASE("Discord export (DiscordChatExporter JSON)", "[import][discord]") {
  Read r = ReadAll("discord", Example("discord_export"));
  REQUIRE(r.by_channel.count("planning") == 1);
  const auto& msgs = r.by_channel["planning"];
  REQUIRE(msgs.size() == 6);
  CHECK(msgs[0].message_id == "200000000000000002");
  CHECK(msgs[0].timestamp_ms == 1772445600000);  // 11:00+01:00 is 10:00 UTC
  CHECK(msgs[0].speaker_id == "100000000000000001");
  CHECK(msgs[0].speaker == "Ann");  // the nickname
  CHECK(msgs[1].speaker == "ben");  // no nickname: the user name
  CHECK(msgs[1].reply_to == "200000000000000002");
  CHECK(msgs[1].timestamp_ms == 1772445750500);
  CHECK(msgs[2].text == "Great, budget is 4000 EUR");
  CHECK(msgs[4].text == "[file: contract.pdf]");
  CHECK(msgs[5].session != msgs[0].session);  // the next day
  CHECK(msgs[4].session == "s" + msgs[0].message_id);
  CHECK(r.stats.edited == 1);
  CHECK(r.stats.bots == 1);
  CHECK(r.stats.files_shared == 1);
  CHECK(r.stats.skipped ==
        std::map<std::string, size_t>{{"ChannelPinnedMessage", 1}, {"GuildMemberJoin", 1}});
}

TEST_CASE("Telegram Desktop export (result.json)", "[import][telegram]") {
  Read r = ReadAll("telegram", Example("telegram_export"));
  REQUIRE(r.by_channel.count("Book club") == 1);
  const auto& msgs = r.by_channel["Book club"];
  REQUIRE(msgs.size() == 5);
  CHECK(msgs[0].message_id == "2");
  CHECK(msgs[0].speaker_id == "user111");
  CHECK(msgs[0].speaker == "Ann");
  CHECK(msgs[0].timestamp_ms == 1772445660000);
  CHECK(msgs[1].reply_to == "2");
  CHECK(msgs[1].text == "Yes! Review here: https://example.org/review worth a read");
  CHECK(msgs[2].text == "My copy [photo]");
  CHECK(msgs[3].text == "[file: schedule.pdf]");
  CHECK(msgs[4].text == "\xF0\x9F\x91\x8D");  // the sticker's emoji
  CHECK(r.stats.edited == 1);
  CHECK(r.stats.files_shared == 3);
  CHECK(r.stats.skipped == std::map<std::string, size_t>{{"create_group", 1}, {"pin_message", 1}});
}

TEST_CASE("Matrix room export (Element JSON)", "[import][matrix]") {
  Read r = ReadAll("matrix", Example("matrix_export"));
  REQUIRE(r.by_channel.count("Team standup") == 1);
  const auto& msgs = r.by_channel["Team standup"];
  REQUIRE(msgs.size() == 4);
  CHECK(msgs[0].message_id == "$ev4");
  CHECK(msgs[0].speaker_id == "@ann:example.org");
  CHECK(msgs[0].speaker == "Ann");  // from the membership event
  CHECK(msgs[1].speaker == "Ben I.");
  CHECK(msgs[1].reply_to == "$ev4");
  CHECK(msgs[1].text == "Works for me");                          // the quoted fallback dropped
  CHECK(msgs[2].text == "Agenda: release notes and the budget");  // its edit
  CHECK(msgs[3].text == "[file: notes.pdf]");
  CHECK(r.stats.edited == 1);
  CHECK(r.stats.skipped == std::map<std::string, size_t>{{"deleted", 1},
                                                         {"edit", 1},
                                                         {"m.reaction", 1},
                                                         {"m.room.create", 1},
                                                         {"m.room.member", 2}});
}

TEST_CASE("A single-file export larger than a batch streams in batches with one session run",
          "[import]") {
  testing::TempDir dir;
  const std::string file = dir.Sub("big.json");
  {
    std::ofstream out(file);
    out << R"({"room_name": "big", "messages": [)";
    for (int i = 0; i < 25000; ++i) {
      out << (i ? "," : "") << R"({"type": "m.room.message", "sender": "@a:x", "event_id": "$)" << i
          << R"(", "origin_server_ts": )" << 1700000000000 + i * 60000LL
          << R"(, "content": {"msgtype": "m.text", "body": "message )" << i << R"("}})";
    }
    // An edit at the very end still gives the first message its last version.
    out << R"(, {"type": "m.room.message", "sender": "@a:x", "event_id": "$edit",
      "origin_server_ts": 1800000000000, "content": {"msgtype": "m.text", "body": "* fixed",
      "m.new_content": {"msgtype": "m.text", "body": "fixed"},
      "m.relates_to": {"rel_type": "m.replace", "event_id": "$0"}}}]})";
  }
  std::vector<size_t> batches;
  std::vector<storage::Message> all;
  ExportStats stats;
  REQUIRE_OK(ReadExport(
      "matrix", file, {},
      [&](ExportBatch b) {
        batches.push_back(b.messages.size());
        for (auto& m : b.messages) all.push_back(std::move(m));
        return absl::OkStatus();
      },
      &stats));
  CHECK(batches == std::vector<size_t>{10000, 10000, 5000});
  REQUIRE(all.size() == 25000);
  CHECK(all.front().text == "fixed");
  CHECK(all.back().text == "message 24999");
  CHECK(stats.edited == 1);
  CHECK(stats.files == 1);
  CHECK(stats.messages == 25000);
  // One minute apart: one session across the batches.
  CHECK(all.front().session == "s$0");
  CHECK(all.back().session == "s$0");
}

TEST_CASE("Export readers name the malformed entry, and unknown formats are refused", "[import]") {
  testing::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.Sub(name)) << text;
    return dir.Sub(name);
  };
  absl::Status s = ReadText("discord", write("d.json", R"({"channel": {"name": "x"}, "messages": [
        {"id": "1", "type": "Default", "timestamp": "2026-03-02T10:00:00+00:00",
         "author": {"id": "7", "name": "a"}, "content": "ok"},
        {"id": "2", "type": "Default", "timestamp": "yesterday",
         "author": {"id": "7", "name": "a"}, "content": "no"}]})"));
  CHECK_THAT(std::string(s.message()), Catch::Contains("d.json: entry 1: timestamp"));
  s = ReadText("telegram", write("t.json", R"({"name": "c", "messages": [
        {"id": 1, "type": "message", "date_unixtime": "1772445600", "text": "who?"}]})"));
  CHECK_THAT(std::string(s.message()), Catch::Contains("t.json: entry 0: from_id: is missing"));
  s = ReadText("matrix", write("m.json", R"({"room_name": "r", "messages": [
        {"type": "m.room.message", "sender": "@a:x", "event_id": "$1",
         "origin_server_ts": "noon", "content": {"msgtype": "m.text", "body": "hi"}}]})"));
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("m.json: entry 0: origin_server_ts: must be milliseconds"));
  CHECK(absl::IsNotFound(ReadText("discord", dir.Sub("missing"))));
  CHECK(absl::IsInvalidArgument(ReadText("irc", dir.Sub("d.json"))));
  CHECK(IsExportFormat("matrix"));
  CHECK_FALSE(IsExportFormat("jsonl"));
}

}  // namespace
}  // namespace speakermem::datasets

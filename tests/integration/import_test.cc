// `speakermem ingest --format slack` against a real speakermemd: the sample
// export lands in its channels with speakers, ids and thread links, and a
// second import stores nothing.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "nlohmann/json.hpp"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::TestServer;

nlohmann::json Import(const TestServer& ts, const testing::TempDir& dir,
                      const std::string& format = "slack") {
  const std::string log = dir.Sub("import.log");
  std::string cmd = std::string(SPEAKERMEM_CLI_PATH) + " --addr " + ts.addr() +
                    " --json ingest --format " + format + " " + SPEAKERMEM_SOURCE_DIR +
                    "/examples/" + format + "_export > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  INFO(ss.str());
  REQUIRE(rc == 0);
  return nlohmann::json::parse(ss.str());
}

TEST_CASE("a Slack export imports into its channels, and again stores nothing", "[import][slack]") {
  TestServer ts;
  testing::TempDir dir;
  nlohmann::json first = Import(ts, dir);
  CHECK(first["files"] == 3);
  CHECK(first["messages"] == 8);
  CHECK(first["stored"] == 8);
  CHECK(first["duplicates"] == 0);
  CHECK(first["skipped"]["tombstone"] == 1);
  nlohmann::json second = Import(ts, dir);
  CHECK(second["stored"] == 0);
  CHECK(second["duplicates"] == 8);

  v1::GetMessagesRequest req;
  req.set_channel("general");
  auto page = ts.client()->GetMessages(req);
  REQUIRE_OK(page);
  REQUIRE(page->messages_size() == 7);
  const auto& parent = page->messages(0);
  const auto& reply = page->messages(1);
  CHECK(parent.message_id() == "1772445480.000100");
  CHECK(parent.speaker() == "ann");
  CHECK(parent.speaker_id() == "U01ANN");
  CHECK(reply.reply_to() == parent.message_id());
  CHECK(reply.text() == "Yes, room 4B. @ann can you bring the board?");
  CHECK(page->messages(5).session() != parent.session());  // the next day
  v1::GetMessagesRequest random;
  random.set_channel("random");
  auto r = ts.client()->GetMessages(random);
  REQUIRE_OK(r);
  CHECK(r->messages_size() == 1);
}

TEST_CASE("Discord, Telegram and Matrix exports import through the same command", "[import]") {
  TestServer ts;
  testing::TempDir dir;
  for (const auto& [format, channel, count] :
       std::vector<std::tuple<std::string, std::string, int>>{{"discord", "planning", 6},
                                                              {"telegram", "Book club", 5},
                                                              {"matrix", "Team standup", 4}}) {
    INFO(format);
    nlohmann::json first = Import(ts, dir, format);
    CHECK(first["stored"] == count);
    nlohmann::json again = Import(ts, dir, format);
    CHECK(again["duplicates"] == count);
    v1::GetMessagesRequest req;
    req.set_channel(channel);
    auto page = ts.client()->GetMessages(req);
    REQUIRE_OK(page);
    CHECK(page->messages_size() == count);
  }
}

TEST_CASE("a malformed daily file stops the import after storing the files before it",
          "[import][slack]") {
  TestServer ts;
  testing::TempDir dir;
  const std::filesystem::path root = dir.Sub("export");
  std::filesystem::create_directories(root / "general");
  std::ofstream(root / "users.json") << R"([{"id": "U1", "name": "ann"}])";
  std::ofstream(root / "general" / "2026-03-01.json")
      << R"([{"type": "message", "user": "U1", "text": "first day", "ts": "1772359200.000100"}])";
  std::ofstream(root / "general" / "2026-03-02.json")
      << R"([{"type": "message", "user": "U1", "text": "fine", "ts": "1772445600.000100"},
             {"type": "message", "user": "U1", "text": "no ts"}])";
  const std::string log = dir.Sub("bad.log");
  std::string cmd = std::string(SPEAKERMEM_CLI_PATH) + " --addr " + ts.addr() +
                    " ingest --format slack " + root.string() + " > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  INFO(ss.str());
  CHECK(WEXITSTATUS(rc) == 2);
  CHECK_THAT(ss.str(), Catch::Contains("2026-03-02.json: entry 1: ts: is missing"));
  v1::GetMessagesRequest req;
  req.set_channel("general");
  auto page = ts.client()->GetMessages(req);
  REQUIRE_OK(page);
  REQUIRE(page->messages_size() == 1);
  CHECK(page->messages(0).text() == "first day");
}

}  // namespace
}  // namespace speakermem

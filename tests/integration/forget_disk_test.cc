// Keys carry no personal data: after ForgetSpeaker and a restart, no file of
// the store, RocksDB's MANIFEST included, holds the speaker's name or words;
// a store written with speaker names in its keys (format 1) is migrated
// when opened.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::Say;
using testing::TestServer;

// The files under `dir` holding `needle`, by name.
std::vector<std::string> FilesHolding(const std::string& dir, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(needle) != std::string::npos) out.push_back(e.path().filename().string());
  }
  return out;
}

void Forget(client::Client* c, const std::string& channel, const std::string& speaker) {
  v1::ForgetSpeakerRequest f;
  f.set_channel(channel);
  f.set_speaker(speaker);
  REQUIRE_OK(c->ForgetSpeaker(f));
}

TEST_CASE("after ForgetSpeaker and a restart no file holds the speaker's name or words",
          "[deletion][keys]") {
  // The Writer stays idle, so the meta column family holds the channel
  // record and the roster only: with names in keys, a roster key would be
  // the largest key of its file and so written into the MANIFEST.
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 3600000; });
  std::vector<std::pair<std::string, std::string>> lines;
  for (int i = 0; i < 8; ++i) {
    lines.push_back({"Quinevere", absl::StrCat("My marmoset collection grows, round ", i)});
    lines.push_back({"Dorian", absl::StrCat("The Lisbon venue works for me, round ", i)});
  }
  Say(ts.client(), "team", lines, 0);
  ts.Restart();  // everything in SST files and the MANIFEST
  // Her name is in values (SST files), never in a key: no MANIFEST names her.
  std::vector<std::string> holding = FilesHolding(ts.data_dir(), "Quinevere");
  INFO("files holding the name: " << absl::StrJoin(holding, ", "));
  REQUIRE(!holding.empty());
  for (const auto& f : holding) CHECK(f.rfind("MANIFEST", 0) != 0);
  // Her messages by speaker come from the speaker index.
  v1::GetMessagesRequest gm;
  gm.set_channel("team");
  gm.set_speaker("Quinevere");
  auto before = ts.client()->GetMessages(gm);
  REQUIRE_OK(before);
  CHECK(before->messages_size() == 8);

  Forget(ts.client(), "team", "Quinevere");
  ts.Restart();
  INFO("files holding the name: " << absl::StrJoin(FilesHolding(ts.data_dir(), "Quinevere"), ", "));
  CHECK(FilesHolding(ts.data_dir(), "Quinevere").empty());
  CHECK(FilesHolding(ts.data_dir(), "marmoset").empty());
  // The others are untouched.
  gm.set_speaker("Dorian");
  auto dorian = ts.client()->GetMessages(gm);
  REQUIRE_OK(dorian);
  CHECK(dorian->messages_size() == 8);
}

TEST_CASE("a store written with speaker names in its keys is migrated when opened",
          "[deletion][keys][migration]") {
  testing::TempDir dir;
  const std::string data = dir.Sub("data");
  std::filesystem::create_directories(data);
  const std::string tar =
      absl::StrCat("tar -xzf '", SPEAKERMEM_TESTDATA_DIR, "/store_format1.tar.gz' -C '", data, "'");
  REQUIRE(std::system(tar.c_str()) == 0);
  REQUIRE(!FilesHolding(data, "Zephyrine").empty());
  TestServer ts([&](server::ServerConfig* c) {
    c->memory.store.path = data;
    c->memory.writer.idle_flush_ms = 0;
  });
  auto* c = ts.client();
  v1::GetRosterRequest gr;
  gr.set_channel("legacy");
  auto roster = c->GetRoster(gr);
  REQUIRE_OK(roster);
  std::map<std::string, uint64_t> counts;
  for (const auto& s : roster->speakers()) counts[s.speaker_id()] = s.message_count();
  CHECK(counts == std::map<std::string, uint64_t>{{"Bartholomew", 2}, {"Zephyrine", 2}});
  // The speaker index, now keyed by ordinal, still finds each one's messages.
  v1::GetMessagesRequest gm;
  gm.set_channel("legacy");
  gm.set_speaker("Zephyrine");
  auto z = c->GetMessages(gm);
  REQUIRE_OK(z);
  REQUIRE(z->messages_size() == 2);
  CHECK(z->messages(0).message_id() == "l1");
  CHECK(z->messages(1).message_id() == "l3");
  // New speakers get new ordinals; old ones keep theirs.
  Say(c, "legacy", {{"Ulla", "I can lend a smoker for the hives"}, {"Bartholomew", "Great"}}, 10);
  roster = c->GetRoster(gr);
  REQUIRE_OK(roster);
  counts.clear();
  for (const auto& s : roster->speakers()) counts[s.speaker_id()] = s.message_count();
  CHECK(counts ==
        std::map<std::string, uint64_t>{{"Bartholomew", 3}, {"Ulla", 1}, {"Zephyrine", 2}});
  gm.set_speaker("Ulla");
  auto u = c->GetMessages(gm);
  REQUIRE_OK(u);
  CHECK(u->messages_size() == 1);
  // And forgetting a migrated speaker leaves no trace on disk either.
  Forget(c, "legacy", "Zephyrine");
  ts.Restart();
  INFO("files holding the name: " << absl::StrJoin(FilesHolding(data, "Zephyrine"), ", "));
  CHECK(FilesHolding(data, "Zephyrine").empty());
  CHECK(FilesHolding(data, "bees on the roof").empty());
}

}  // namespace
}  // namespace speakermem

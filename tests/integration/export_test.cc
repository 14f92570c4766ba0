// Export, import and backup through the real server.
#include <catch2/catch.hpp>
#include <filesystem>

#include "server/server.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::TestServer;

void Chat(client::Client* c, const std::string& channel, int n, int offset = 0) {
  v1::IngestRequest req;
  req.set_channel(channel);
  const char* who[] = {"Alice", "Bob", "Carol"};
  const char* what[] = {"I prefer the beach venue in Lisbon", "Actually I now prefer Porto",
                        "We decided to book the Lisbon venue", "I think the budget is too tight"};
  for (int i = offset; i < offset + n; ++i) {
    auto* m = req.add_messages();
    m->set_message_id("m" + std::to_string(i));
    m->set_speaker(who[i % 3]);
    m->set_text(std::string(what[i % 4]) + " #" + std::to_string(i));
    m->set_timestamp_ms(1700000000000 + i * 60000);
    m->set_session("s" + std::to_string(i / 20));
    (*m->mutable_metadata())["k"] = "v" + std::to_string(i);
  }
  REQUIRE_OK(c->Ingest(req));
}

std::vector<v1::DerivedRecord> Records(client::Client* c, const std::string& channel) {
  v1::ListRecordsRequest req;
  req.set_channel(channel);
  req.set_include_superseded(true);
  req.set_page_size(1000);
  auto r = c->ListRecords(req);
  REQUIRE_OK(r);
  return {r->records().begin(), r->records().end()};
}

TEST_CASE("a channel moves by export, import, delete", "[export]") {
  TestServer a([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  TestServer b([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  Chat(a.client(), "move", 60);
  testing::FlushWait(a.client(), "move");
  Chat(a.client(), "move", 7, 60);  // not derived yet on a: b derives them
  std::vector<v1::ChannelItem> items;
  REQUIRE_OK(a.client()->ExportChannel("move", [&](const v1::ChannelItem& it) {
    items.push_back(it);
    return absl::OkStatus();
  }));
  REQUIRE(items.size() >= 68);
  REQUIRE(items.front().has_header());
  CHECK(items.front().header().messages() == 67);
  auto imported = b.client()->ImportChannel(items);
  REQUIRE_OK(imported);
  CHECK(imported->messages() == 67);
  // Same messages (ids, speakers, texts, metadata), same records and chains.
  auto ma = testing::AllMessages(a.client(), "move"), mb = testing::AllMessages(b.client(), "move");
  REQUIRE(ma.size() == mb.size());
  for (size_t i = 0; i < ma.size(); ++i) {
    CHECK(ma[i].message_id() == mb[i].message_id());
    CHECK(ma[i].text() == mb[i].text());
    CHECK(ma[i].speaker() == mb[i].speaker());
    CHECK(ma[i].metadata().at("k") == mb[i].metadata().at("k"));
  }
  auto ra = Records(a.client(), "move"), rb = Records(b.client(), "move");
  REQUIRE(rb.size() >= ra.size());
  for (size_t i = 0; i < ra.size(); ++i) {
    CHECK(ra[i].record_id() == rb[i].record_id());
    CHECK(ra[i].content() == rb[i].content());
    CHECK(ra[i].superseded_by() == rb[i].superseded_by());
  }
  // b continues after the exported cursor: the 7 underived messages get
  // derived there, once.
  testing::FlushWait(b.client(), "move");
  testing::FlushWait(a.client(), "move");
  CHECK(Records(b.client(), "move").size() == Records(a.client(), "move").size());
  // Importing over an existing channel is refused; delete completes the move.
  CHECK(b.client()->ImportChannel(items).status().code() == absl::StatusCode::kFailedPrecondition);
  v1::DeleteChannelRequest del;
  del.set_channel("move");
  REQUIRE_OK(a.client()->DeleteChannel(del));
  // A query on the new node answers from the moved data.
  v1::QueryRequest q;
  q.set_channel("move");
  q.set_question("Which venue did the group book?");
  auto r = b.client()->Query(q);
  REQUIRE_OK(r);
  CHECK(r->evidence_size() > 0);
  // Bad exports are refused whole.
  std::vector<v1::ChannelItem> headless(items.begin() + 1, items.end());
  CHECK(b.client()->ImportChannel(headless).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a backup is a consistent checkpoint a server starts from", "[backup]") {
  testing::TempDir backups;
  TestServer ts([&](server::ServerConfig* c) {
    c->memory.writer.idle_flush_ms = 0;
    c->memory.backup_dir = backups.path();
  });
  Chat(ts.client(), "b", 40);
  testing::FlushWait(ts.client(), "b");
  v1::BackupRequest req;
  req.set_name("before");
  auto r = ts.client()->Backup(req);
  REQUIRE_OK(r);
  CHECK(r->bytes() > 0);
  CHECK(ts.client()->Backup(req).status().code() == absl::StatusCode::kAlreadyExists);
  req.set_name("../escape");
  CHECK(ts.client()->Backup(req).status().code() == absl::StatusCode::kInvalidArgument);
  Chat(ts.client(), "b", 10, 40);  // after the backup
  const size_t records_at_backup = Records(ts.client(), "b").size();
  // Restore: a server started on (a copy of) the checkpoint.
  testing::TempDir restore;
  std::filesystem::copy(backups.path() + "/before", restore.Sub("data"),
                        std::filesystem::copy_options::recursive);
  server::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "";
  config.memory.store.path = restore.Sub("data");
  auto restored = server::Server::Start(config);
  REQUIRE_OK(restored);
  REQUIRE((*restored)->WaitUntilReady(std::chrono::seconds(30)));
  client::ClientOptions o;
  o.addr = "127.0.0.1:" + std::to_string((*restored)->port());
  auto c = client::Client::Connect(o);
  CHECK(testing::AllMessages(c.get(), "b").size() == 40);
  CHECK(Records(c.get(), "b").size() == records_at_backup);
  (*restored)->Shutdown(std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace speakermem

// Process-level tests of the real speakermemd binary: kill -9 right after an
// acknowledged ingest loses nothing; SIGTERM shuts down cleanly.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "tests/integration/daemon.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using speakermem::testing::AllMessages;
using speakermem::testing::Daemon;
using speakermem::testing::TempDir;

v1::IngestRequest Batch(int b, int n) {
  v1::IngestRequest req;
  req.set_channel("durable");
  for (int i = 0; i < n; ++i) {
    int k = b * n + i;
    auto* m = req.add_messages();
    m->set_message_id(absl::StrCat("id-", k));
    m->set_speaker(k % 2 ? "Bob" : "Alice");
    m->set_text(absl::StrCat("acknowledged message ", k));
    m->set_timestamp_ms(1700000000000 + k);
  }
  return req;
}

TEST_CASE("kill -9 right after acknowledged ingest loses nothing", "[crash]") {
  TempDir dir;
  Daemon d(dir.path());
  d.Start();
  constexpr int kBatches = 20, kPer = 50;
  for (int b = 0; b < kBatches; ++b) {
    auto r = d.client()->Ingest(Batch(b, kPer));
    REQUIRE_OK(r);
    REQUIRE(r->stored() == kPer);
  }
  // The last acknowledgement has just arrived: kill without warning.
  int status = d.Kill(SIGKILL);
  CHECK(WIFSIGNALED(status));

  d.Start();
  auto msgs = AllMessages(d.client(), "durable");
  REQUIRE(msgs.size() == kBatches * kPer);
  std::set<std::string> ids;
  for (size_t i = 0; i < msgs.size(); ++i) {
    CHECK(msgs[i].seq() == i + 1);
    ids.insert(msgs[i].message_id());
  }
  CHECK(ids.size() == kBatches * kPer);
  // The index was rebuilt from the store.
  v1::QueryRequest q;
  q.set_channel("durable");
  q.set_question("acknowledged message 999");
  auto ans = d.client()->Query(q);
  REQUIRE_OK(ans);
  REQUIRE(ans->evidence_size() > 0);
  CHECK(ans->evidence(0).message().message_id() == "id-999");
  // A client that never saw the acks re-sends: nothing is stored twice.
  auto again = d.client()->Ingest(Batch(kBatches - 1, kPer));
  REQUIRE_OK(again);
  CHECK(again->duplicates() == kPer);
  CHECK(again->stored() == 0);
}

// Message vectors are written without the WAL (they are derived from the
// text): those a crash loses are embedded again when the server starts.
TEST_CASE("kill -9 after the embedder caught up: dense search finds every message again",
          "[crash]") {
  TempDir dir;
  Daemon d(dir.path());
  d.Start();
  constexpr int kBatches = 4, kPer = 50;
  uint64_t last = 0;
  for (int b = 0; b < kBatches; ++b) {
    auto r = d.client()->Ingest(Batch(b, kPer));
    REQUIRE_OK(r);
    last = r->last_seq();
  }
  v1::FlushRequest f;
  f.set_channel("durable");
  f.set_wait(true);
  f.set_wait_embeddings(true);
  f.set_timeout_ms(30000);
  REQUIRE_OK(d.client()->Flush(f));
  int status = d.Kill(SIGKILL);
  CHECK(WIFSIGNALED(status));

  d.Start();
  v1::QueryRequest q;
  q.set_channel("durable");
  q.set_question("acknowledged message 199");
  q.set_mode(v1::DENSE_ONLY);
  q.set_min_seq(last);  // waits for the dense index to hold every message
  auto r = d.client()->Retrieve(q);
  REQUIRE_OK(r);
  bool found = false;
  for (const auto& e : r->evidence()) found = found || e.message().message_id() == "id-199";
  CHECK(found);
}

TEST_CASE("SIGTERM shuts down gracefully with exit code 0", "[crash]") {
  TempDir dir;
  Daemon d(dir.path());
  d.Start();
  REQUIRE_OK(d.client()->Ingest(Batch(0, 10)));
  int status = d.Kill(SIGTERM);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  d.Start();
  CHECK(AllMessages(d.client(), "durable").size() == 10);
}

}  // namespace
}  // namespace speakermem

// ------------------------------------------------------ Writer crash safety

#include <atomic>
#include <sstream>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/writer_script.h"

namespace speakermem {
namespace {

// One ADD per message line of the Writer prompt, tagged with a call number,
// so a segment applied twice would leave two records for one message.
testing::FakeReply TaggedEchoWriter(const testing::FakeRequest& req, int call) {
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& m : testing::WriterPromptMessages(req)) {
    actions.push_back({{"action", "ADD"},
                       {"owner", m.speaker},
                       {"source", m.speaker},
                       {"layer", "per_speaker_core"},
                       {"utype", "fact"},
                       {"content", m.text + " call " + std::to_string(call)}});
  }
  return testing::FakeReply{
      200, testing::FakeModelServer::ChatBody(nlohmann::json{{"actions", actions}}.dump())};
}

v1::IngestRequest ChannelBatch(const std::string& channel, int n) {
  v1::IngestRequest req;
  req.set_channel(channel);
  for (int i = 0; i < n; ++i) {
    auto* m = req.add_messages();
    m->set_message_id(absl::StrCat(channel, "-", i));
    m->set_speaker(i % 2 ? "Bob" : "Alice");
    m->set_text(absl::StrCat("statement ", i, " about the plan"));
    m->set_timestamp_ms(1700000000000 + i);
    m->set_session("s1");
  }
  return req;
}

// Records per message text ("<text> call N" -> "<text>").
std::map<std::string, int> RecordsPerMessage(client::Client* c, const std::string& channel) {
  std::map<std::string, int> out;
  for (const auto& r : testing::AllRecords(c, channel)) {
    ++out[r.content().substr(0, r.content().rfind(" call "))];
  }
  return out;
}

TEST_CASE("kill -9 while segments are being written loses none and applies none twice",
          "[crash][writer-service]") {
  constexpr int kChannels = 6, kPer = 37;
  testing::FakeModelServer fake;
  std::atomic<int> calls{0};
  std::atomic<int> delay_ms{150};
  fake.SetDefault([&](const testing::FakeRequest& r) {
    testing::FakeReply reply = TaggedEchoWriter(r, ++calls);
    reply.delay_ms = delay_ms.load();
    return reply;
  });
  TempDir dir;
  Daemon d(dir.path(),
           {"--model.writer.provider=openai", "--model.writer.base_url=" + fake.base_url(),
            "--model.writer.max_retries=0", "--writer.workers=2", "--writer.window=10",
            "--writer.idle_flush_ms=0"});
  d.Start();
  for (int c = 0; c < kChannels; ++c) {
    REQUIRE_OK(d.client()->Ingest(ChannelBatch(absl::StrCat("ch", c), kPer)));
    v1::FlushRequest f;
    f.set_channel(absl::StrCat("ch", c));
    REQUIRE_OK(d.client()->Flush(f));  // tails eligible too; no wait
  }
  // Let some segments be applied and others be mid-call, then kill.
  for (int i = 0; i < 1000 && !(calls >= 4 && fake.in_flight() > 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  int derived_before = 0;
  for (int c = 0; c < kChannels; ++c) {
    derived_before += static_cast<int>(RecordsPerMessage(d.client(), absl::StrCat("ch", c)).size());
  }
  const int in_flight_at_kill = fake.in_flight();
  d.Kill(SIGKILL);
  INFO("records before the kill: " << derived_before
                                   << ", model calls in flight: " << in_flight_at_kill);
  CHECK(in_flight_at_kill > 0);              // model calls were in flight
  CHECK(derived_before < kChannels * kPer);  // segments were pending

  delay_ms = 0;
  d.Start();
  for (int c = 0; c < kChannels; ++c) {
    v1::FlushRequest f;
    f.set_channel(absl::StrCat("ch", c));
    f.set_wait(true);
    f.set_timeout_ms(60000);
    auto r = d.client()->Flush(f);
    REQUIRE_OK(r);
    REQUIRE(r->cursor_seq() == kPer);
    // Every message derived exactly once, as in an uninterrupted run.
    auto per = RecordsPerMessage(d.client(), absl::StrCat("ch", c));
    CHECK(per.size() == kPer);
    for (const auto& [msg, n] : per) {
      INFO(msg);
      CHECK(n == 1);
    }
  }
}

}  // namespace
}  // namespace speakermem

// ------------------------------------------- 20 SIGKILLs at random moments

#include <random>

namespace speakermem {
namespace {

// What the clients of one run share with the test: acknowledged ids, the
// RPCs in flight, the next message number.
struct Traffic {
  std::set<std::string> acked;  // message ids whose Ingest was acknowledged
  std::mutex acked_mu;
  std::atomic<int> in_call{0};
  std::atomic<bool> stop{false};
  int next = 0;  // used by the ingest thread only
};

// A client whose calls give up after 5 s (the server may be killed under them).
std::unique_ptr<client::Client> ConnectWithTimeout(const std::string& addr) {
  client::ClientOptions o;
  o.addr = addr;
  o.timeout_ms = 5000;
  return client::Client::Connect(o);
}

// A steady stream of batches of 15 the Writer can follow, each flushed so
// short tails become eligible too; ends when stopped or the server is gone.
void IngestUntilStopped(const std::string& addr, const std::vector<std::string>& channels,
                        Traffic* t) {
  auto c = ConnectWithTimeout(addr);
  for (int batch = 0; !t->stop.load(); ++batch) {
    v1::IngestRequest req;
    req.set_channel(channels[batch % channels.size()]);
    std::vector<std::string> ids;
    for (int i = 0; i < 15; ++i, ++t->next) {
      auto* m = req.add_messages();
      m->set_message_id(absl::StrCat("msg", t->next));
      ids.push_back(m->message_id());
      m->set_speaker(t->next % 2 ? "Bob" : "Alice");
      m->set_text(absl::StrCat("statement ", t->next, " about the plan"));
      m->set_timestamp_ms(1700000000000 + t->next);
      m->set_session("s1");
    }
    ++t->in_call;
    auto r = c->Ingest(req);
    --t->in_call;
    if (!r.ok()) break;  // the server is gone
    {
      std::lock_guard<std::mutex> lock(t->acked_mu);
      t->acked.insert(ids.begin(), ids.end());
    }
    v1::FlushRequest f;
    f.set_channel(req.channel());
    (void)c->Flush(f);
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
}

// Queries all the while, so RPCs are in flight at the kill.
void QueryUntilStopped(const std::string& addr, const std::vector<std::string>& channels,
                       Traffic* t) {
  auto c = ConnectWithTimeout(addr);
  for (int i = 0; !t->stop.load(); ++i) {
    v1::QueryRequest q;
    q.set_channel(channels[i % channels.size()]);
    q.set_question("What was said about the plan?");
    ++t->in_call;
    auto r = c->Retrieve(q);
    --t->in_call;
    if (!r.ok() && r.status().code() == absl::StatusCode::kUnavailable) break;
  }
}

// After a restart: every acknowledged message is there exactly once, and
// once derived, every message has exactly one record. Returns the number of
// messages stored.
size_t CheckExactlyOnce(client::Client* c, const std::vector<std::string>& channels,
                        std::set<std::string> acked) {
  size_t total = 0;
  for (const auto& ch : channels) {
    auto msgs = AllMessages(c, ch);
    std::set<std::string> ids;
    for (const auto& m : msgs) {
      INFO(m.message_id());
      CHECK(ids.insert(m.message_id()).second);  // never twice
    }
    total += msgs.size();
    v1::FlushRequest f;
    f.set_channel(ch);
    f.set_wait(true);
    f.set_timeout_ms(120000);
    auto r = c->Flush(f);
    REQUIRE_OK(r);
    CHECK(r->cursor_seq() == r->newest_seq());
    auto per = RecordsPerMessage(c, ch);
    CHECK(per.size() == msgs.size());
    for (const auto& [msg, n] : per) {
      INFO(msg);
      CHECK(n == 1);
    }
    for (const auto& id : ids) acked.erase(id);
  }
  CHECK(acked.empty());  // nothing acknowledged was lost
  return total;
}

TEST_CASE("20 SIGKILLs at random moments of ingest and Writer activity lose and repeat nothing",
          "[crash][writer-service]") {
  constexpr int kKills = 20;
  const std::vector<std::string> channels = {"k0", "k1", "k2"};
  testing::FakeModelServer fake;
  std::atomic<int> calls{0};
  std::mt19937 rng(20261130);
  std::mutex rng_mu;
  fake.SetDefault([&](const testing::FakeRequest& r) {
    testing::FakeReply reply = TaggedEchoWriter(r, ++calls);
    std::lock_guard<std::mutex> lock(rng_mu);
    reply.delay_ms = static_cast<int>(rng() % 40);
    return reply;
  });
  TempDir dir;
  Daemon d(dir.path(),
           {"--model.writer.provider=openai", "--model.writer.base_url=" + fake.base_url(),
            "--model.writer.max_retries=0", "--writer.workers=2", "--writer.window=10",
            "--writer.idle_flush_ms=0"});
  Traffic t;
  int kills_with_model_calls_in_flight = 0, kills_mid_ingest = 0;
  for (int round = 0; round < kKills; ++round) {
    d.Start();
    t.stop = false;
    t.in_call = 0;
    std::thread ingest([&] { IngestUntilStopped(d.addr(), channels, &t); });
    std::thread queries([&] { QueryUntilStopped(d.addr(), channels, &t); });
    int wait_ms;
    {
      std::lock_guard<std::mutex> lock(rng_mu);
      wait_ms = 50 + static_cast<int>(rng() % 350);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    kills_with_model_calls_in_flight += fake.in_flight() > 0;
    kills_mid_ingest += t.in_call.load() > 0;
    int status = d.Kill(SIGKILL);
    CHECK(WIFSIGNALED(status));
    t.stop = true;
    ingest.join();
    queries.join();
  }
  INFO("kills with Writer model calls in flight: "
       << kills_with_model_calls_in_flight << ", with RPCs in flight: " << kills_mid_ingest);
  CHECK(kills_with_model_calls_in_flight >= 5);
  CHECK(kills_mid_ingest >= 5);
  WARN("20 kills: " << kills_with_model_calls_in_flight << " with model calls in flight, "
                    << kills_mid_ingest << " with RPCs in flight; " << t.acked.size()
                    << " messages acknowledged");
  d.Start();
  CHECK(CheckExactlyOnce(d.client(), channels, t.acked) >= 100);
}

}  // namespace
}  // namespace speakermem

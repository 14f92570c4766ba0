// A model endpoint failing 30% of calls (timeouts, HTTP 500s, dropped
// connections, malformed JSON): ingest never fails, every segment is written
// or parked with its reason, and the server stays up.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::FakeModelServer;
using testing::FakeReply;
using testing::FakeRequest;

// The Writer's model endpoint, failing 30% of calls evenly over four kinds
// of fault (timeout, HTTP 500, dropped connection, truncated JSON);
// otherwise one ADD for the first message line of the segment.
class FaultyWriterModel {
 public:
  FakeReply operator()(const FakeRequest& req) {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls;
    const int roll = static_cast<int>(rng_() % 100);
    if (roll < 30) return Fault(roll % 4);
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    std::string user = body["messages"][1]["content"].get<std::string>();
    size_t at = user.find("New messages:\n");
    std::string line = user.substr(at + 14, user.find('\n', at + 14) - at - 14);
    nlohmann::json add = {{"action", "ADD"},   {"owner", "Alice"},
                          {"source", "Alice"}, {"layer", "per_speaker_core"},
                          {"utype", "fact"},   {"content", "Alice noted " + line.substr(0, 40)}};
    return FakeReply{200, FakeModelServer::ChatBody(nlohmann::json{{"actions", {add}}}.dump())};
  }

  std::map<std::string, int> faults;  // read after the run
  int calls = 0;

 private:
  FakeReply Fault(int kind) {
    switch (kind) {
      case 0:
        ++faults["timeout"];
        return FakeReply{200, FakeModelServer::ChatBody(R"({"actions":[]})"), {}, 1500};
      case 1:
        ++faults["http 500"];
        return FakeReply{500, R"({"error":{"message":"internal"}})"};
      case 2: {
        ++faults["dropped"];
        FakeReply r;
        r.drop = true;
        return r;
      }
      default:
        ++faults["malformed json"];
        return FakeReply{200, FakeModelServer::ChatBody("{\"actions\": [ {\"action\": \"ADD\", ")};
    }
  }

  std::mutex mu_;
  std::mt19937 rng_{30};
};

// Ten rounds of 20 messages into each channel; ingest never waits on, or
// fails with, the model.
void IngestRounds(client::Client* c, const std::vector<std::string>& channels) {
  int ingested = 0;
  for (int round = 0; round < 10; ++round) {
    for (const auto& ch : channels) {
      v1::IngestRequest req;
      req.set_channel(ch);
      for (int i = 0; i < 20; ++i, ++ingested) {
        auto* m = req.add_messages();
        m->set_message_id("m" + std::to_string(ingested));
        m->set_speaker(i % 2 ? "Bob" : "Alice");
        m->set_text("message " + std::to_string(ingested) + " about the release plan");
        m->set_timestamp_ms(1700000000000 + ingested * 1000);
        m->set_session("s1");
      }
      auto r = c->Ingest(req);
      REQUIRE_OK(r);
      CHECK(r->stored() == 20);
    }
  }
}

TEST_CASE("with 30% of model calls failing, ingest succeeds and every segment is written or parked",
          "[fault][writer-service]") {
  FakeModelServer fake;
  auto model = std::make_shared<FaultyWriterModel>();
  fake.SetDefault([model](const FakeRequest& req) { return (*model)(req); });
  std::string url = fake.base_url();
  testing::TestServer ts([url](server::ServerConfig* c) {
    REQUIRE_OK(c->models.SetOverride("writer", "provider", "openai"));
    REQUIRE_OK(c->models.SetOverride("writer", "base_url", url));
    REQUIRE_OK(c->models.SetOverride("writer", "max_retries", "0"));
    REQUIRE_OK(c->models.SetOverride("writer", "attempt_timeout_ms", "300"));
    REQUIRE_OK(c->models.SetOverride("writer", "timeout_ms", "400"));
    c->memory.writer.window = 10;
    c->memory.writer.workers = 2;
    c->memory.writer.max_attempts = 2;
    c->memory.writer.retry_backoff_ms = 10;
    c->memory.writer.idle_flush_ms = 0;
    c->memory.writer.parked_retry_ms = 86400000;  // keep parked ones parked for the count
  });
  auto* c = ts.client();
  const std::vector<std::string> channels = {"f0", "f1", "f2", "f3"};
  IngestRounds(c, channels);
  size_t parked = 0, covered_by_records = 0, total = 0;
  std::map<std::string, int> reasons;
  for (const auto& ch : channels) {
    v1::FlushRequest f;
    f.set_channel(ch);
    f.set_wait(true);
    f.set_timeout_ms(120000);
    auto done = c->Flush(f);
    REQUIRE_OK(done);
    CHECK(done->cursor_seq() == done->newest_seq());
    v1::ListParkedRequest lp;
    lp.set_channel(ch);
    auto p = c->ListParked(lp);
    REQUIRE_OK(p);
    std::set<uint64_t> parked_seqs;
    for (const auto& seg : p->segments()) {
      CHECK_FALSE(seg.reason().empty());
      ++reasons[seg.reason().substr(0, seg.reason().find(':'))];
      for (uint64_t s = seg.first_seq(); s <= seg.last_seq(); ++s) parked_seqs.insert(s);
      ++parked;
    }
    // Every segment (200 messages / window 10 = 20 per channel) was either
    // applied (the fake writes one record per segment) or parked.
    v1::ListRecordsRequest lr;
    lr.set_channel(ch);
    lr.set_page_size(1000);
    auto recs = c->ListRecords(lr);
    REQUIRE_OK(recs);
    covered_by_records += recs->records_size();
    total += 20;
    CHECK(static_cast<size_t>(recs->records_size()) + p->segments_size() == 20);
  }
  std::string fault_text, reason_text;
  for (const auto& [k, n] : model->faults) fault_text += k + "=" + std::to_string(n) + " ";
  for (const auto& [k, n] : reasons) reason_text += k + "=" + std::to_string(n) + " ";
  WARN(model->calls << " model calls, faults: " << fault_text << "; segments written "
                    << covered_by_records << ", parked " << parked << " (" << reason_text << ")");
  CHECK(covered_by_records + parked == total);
  CHECK(model->faults.size() == 4);  // every kind of fault happened
  // Still serving.
  v1::QueryRequest q;
  q.set_channel("f0");
  q.set_question("release plan");
  REQUIRE_OK(c->Query(q));
}

}  // namespace
}  // namespace speakermem

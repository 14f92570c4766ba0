// Auth and tenancy through the real server: every RPC needs a key, tenants
// never see, count or touch each other's data, admin RPCs need an admin key,
// and TLS for gRPC and the metrics port.
#include "server/auth.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::TestServer;

std::unique_ptr<client::Client> As(const TestServer& ts, const std::string& key) {
  client::ClientOptions o;
  o.addr = ts.addr();
  o.api_key = key;
  return client::Client::Connect(o);
}

TestServer::Configure WithKeys(const std::string& keys_file) {
  return [keys_file](server::ServerConfig* c) {
    std::ofstream(keys_file) << server::HashApiKey("key-acme") << " acme\n"
                             << server::HashApiKey("key-globex") << " globex\n"
                             << server::HashApiKey("key-admin") << " acme admin\n";
    c->auth_enabled = true;
    c->auth_keys_file = keys_file;
    c->memory.writer.idle_flush_ms = 0;
  };
}

v1::IngestRequest Batch(const std::string& channel, const std::string& speaker, int n) {
  v1::IngestRequest req;
  req.set_channel(channel);
  for (int i = 0; i < n; ++i) {
    auto* m = req.add_messages();
    m->set_message_id(speaker + std::to_string(i));
    m->set_speaker(speaker);
    m->set_text("the secret plan number " + std::to_string(i) + " from " + speaker);
    m->set_timestamp_ms(1700000000000 + i * 1000);
    m->set_session("s1");
  }
  return req;
}

// A server with auth on, acme's channel "plans" of 30 messages, a client
// per key, and a request of every RPC aimed at that channel.
class AcmePlans {
 public:
  AcmePlans()
      : ts_(WithKeys(keys_dir_.Sub("keys"))),
        none(As(ts_, "")),
        wrong(As(ts_, "not-a-key")),
        acme(As(ts_, "key-acme")),
        globex(As(ts_, "key-globex")),
        admin(As(ts_, "key-admin")) {
    REQUIRE_OK(acme->Ingest(Batch("plans", "Alice", 30)));
    testing::FlushWait(acme.get(), "plans");
    gm.set_channel("plans");
    gr.set_channel("plans");
    q.set_channel("plans");
    q.set_question("What is the secret plan?");
    fl.set_channel("plans");
    lr.set_channel("plans");
    gre.set_channel("plans");
    gre.set_record_id("r000000000001");
    lp.set_channel("plans");
    cr.set_channel("plans");
    cr.set_record_id("r000000000001");
    cr.set_content("corrected");
    rd.set_channel("plans");
    lt.set_channel("plans");
    auto* m = sw.add_segment();
    m->set_speaker("A");
    m->set_text("hi");
    m->set_timestamp_ms(1);
    sw.set_output(R"({"actions":[{"action":"NOOP"}]})");
  }

  // The unary RPCs of the channel's reads and the Writer's inspection.
  std::vector<absl::Status> ReadRpcs(client::Client* c) {
    std::vector<absl::Status> out;
    out.push_back(c->Ingest(Batch("plans", "Mallory", 1)).status());
    out.push_back(c->GetMessages(gm).status());
    out.push_back(c->GetRoster(gr).status());
    out.push_back(c->ListChannels(lc).status());
    out.push_back(c->Query(q).status());
    out.push_back(c->Retrieve(q).status());
    out.push_back(c->Flush(fl).status());
    out.push_back(c->ListRecords(lr).status());
    out.push_back(c->GetRecord(gre).status());
    out.push_back(c->ListParked(lp).status());
    out.push_back(c->CorrectRecord(cr).status());
    out.push_back(c->Rederive(rd).status());
    out.push_back(c->ListTransitions(lt).status());
    out.push_back(c->ScoreWriterActions(sw).status());
    return out;
  }

  // The streams, deletions, export, import and backup.
  std::vector<absl::Status> ChangeRpcs(client::Client* c) {
    std::vector<absl::Status> out;
    out.push_back(
        c->IngestStream("plans", {Batch("plans", "Mallory", 1).messages(0)}, {}, nullptr));
    v1::DeleteMessagesRequest dm;
    dm.set_channel("plans");
    dm.add_message_ids("Alice0");
    out.push_back(c->DeleteMessages(dm).status());
    v1::EditMessageRequest em;
    em.set_channel("plans");
    em.set_message_id("Alice0");
    em.set_text("x");
    out.push_back(c->EditMessage(em).status());
    v1::ForgetSpeakerRequest fs;
    fs.set_channel("plans");
    fs.set_speaker("Alice");
    out.push_back(c->ForgetSpeaker(fs).status());
    v1::DeleteChannelRequest dc;
    dc.set_channel("plans");
    out.push_back(c->DeleteChannel(dc).status());
    out.push_back(
        c->ExportChannel("plans", [](const v1::ChannelItem&) { return absl::OkStatus(); }));
    v1::ChannelItem header;
    header.mutable_header()->set_channel("imported");
    header.mutable_header()->set_format_version(1);
    out.push_back(c->ImportChannel({header}).status());
    v1::BackupRequest backup;
    backup.set_name("b1");
    out.push_back(c->Backup(backup).status());
    return out;
  }

 private:
  testing::TempDir keys_dir_;
  TestServer ts_;

 public:
  std::unique_ptr<client::Client> none, wrong, acme, globex, admin;
  v1::GetMessagesRequest gm;
  v1::GetRosterRequest gr;
  v1::ListChannelsRequest lc;
  v1::QueryRequest q;
  v1::FlushRequest fl;
  v1::ListRecordsRequest lr;
  v1::GetRecordRequest gre;
  v1::ListParkedRequest lp;
  v1::CorrectRecordRequest cr;
  v1::RederiveRequest rd;
  v1::ListTransitionsRequest lt;
  v1::ScoreWriterActionsRequest sw;
};

TEST_CASE_METHOD(AcmePlans, "with auth on, no key or a wrong key is UNAUTHENTICATED on every RPC",
                 "[auth][tenancy]") {
  for (auto* c : {none.get(), wrong.get()}) {
    std::vector<absl::Status> results = ReadRpcs(c);
    for (const absl::Status& s : ChangeRpcs(c)) results.push_back(s);
    for (size_t i = 0; i < results.size(); ++i) {
      INFO("rpc #" << i << ": " << results[i].ToString());
      CHECK(results[i].code() == absl::StatusCode::kUnauthenticated);
    }
  }
}

TEST_CASE_METHOD(AcmePlans, "another tenant sees and counts nothing of acme's", "[auth][tenancy]") {
  // Reads of acme's channel: NOT_FOUND (the channel does not exist for
  // globex); admin RPCs: PERMISSION_DENIED before anything else.
  CHECK(globex->GetMessages(gm).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->GetRoster(gr).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->Query(q).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->Retrieve(q).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->Flush(fl).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->ListRecords(lr).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->GetRecord(gre).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->ListParked(lp).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->ListTransitions(lt).status().code() == absl::StatusCode::kNotFound);
  CHECK(globex->CorrectRecord(cr).status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(globex->Rederive(rd).status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(acme->CorrectRecord(cr).status().code() == absl::StatusCode::kPermissionDenied);
  auto channels = globex->ListChannels(lc);
  REQUIRE_OK(channels);
  CHECK(channels->channels_size() == 0);
  REQUIRE_OK(globex->ScoreWriterActions(sw));  // stateless, but keyed
  // Writing the same channel name makes globex's own channel.
  REQUIRE_OK(globex->Ingest(Batch("plans", "Bob", 3)));
  CHECK(testing::AllMessages(globex.get(), "plans").size() == 3);
  CHECK(testing::AllMessages(acme.get(), "plans").size() == 30);
  auto acme_channels = acme->ListChannels(lc);
  REQUIRE_OK(acme_channels);
  REQUIRE(acme_channels->channels_size() == 1);
  CHECK(acme_channels->channels(0).message_count() == 30);
  auto evidence = globex->Retrieve(q);
  REQUIRE_OK(evidence);
  for (const auto& e : evidence->evidence()) CHECK(e.message().speaker() == "Bob");
  // The admin key of acme can run acme's admin RPCs.
  REQUIRE_OK(admin->CorrectRecord(cr));
}

TEST_CASE_METHOD(AcmePlans, "another tenant's deletions touch nothing of acme's",
                 "[auth][tenancy]") {
  REQUIRE_OK(globex->Ingest(Batch("plans", "Bob", 3)));  // globex's own "plans"
  v1::DeleteMessagesRequest dm;
  dm.set_channel("plans");
  dm.add_message_ids("Alice0");
  v1::ForgetSpeakerRequest fs;
  fs.set_channel("plans");
  fs.set_speaker("Alice");
  v1::EditMessageRequest em;
  em.set_channel("plans");
  em.set_message_id("Alice1");
  em.set_text("hijacked");
  v1::DeleteChannelRequest dc;
  dc.set_channel("acme-only");
  REQUIRE_OK(acme->Ingest(Batch("acme-only", "Alice", 2)));
  auto gone = globex->DeleteChannel(dc);
  REQUIRE_OK(gone);
  CHECK_FALSE(gone->existed());
  CHECK(globex->EditMessage(em).status().code() == absl::StatusCode::kNotFound);
  // In globex's "plans" (Bob's), Alice's ids and name are unknown.
  auto dmr = globex->DeleteMessages(dm);
  REQUIRE_OK(dmr);
  CHECK(dmr->counts().messages_deleted() == 0);
  auto fsr = globex->ForgetSpeaker(fs);
  REQUIRE_OK(fsr);
  CHECK(fsr->counts().messages_deleted() == 0);
  CHECK(globex->ExportChannel("acme-only", [](const v1::ChannelItem&) { return absl::OkStatus(); })
            .code() == absl::StatusCode::kNotFound);
  v1::BackupRequest backup;
  backup.set_name("by-globex");
  CHECK(globex->Backup(backup).status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(testing::AllMessages(acme.get(), "plans").size() == 30);
  CHECK(testing::AllMessages(acme.get(), "acme-only").size() == 2);
  CHECK(testing::AllMessages(acme.get(), "plans")[1].text().find("hijacked") == std::string::npos);
}

// A self-signed certificate for 127.0.0.1 made with the openssl tool.
bool MakeCert(const testing::TempDir& dir) {
  std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost "
      "-addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout " +
      dir.Sub("key.pem") + " -out " + dir.Sub("cert.pem") + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("TLS on gRPC and the metrics port", "[auth][tls]") {
  testing::TempDir dir;
  REQUIRE(MakeCert(dir));
  TestServer ts(
      [&](server::ServerConfig* c) {
        c->tls_cert_file = dir.Sub("cert.pem");
        c->tls_key_file = dir.Sub("key.pem");
      },
      /*metrics=*/true);
  client::ClientOptions o;
  o.addr = ts.addr();
  o.tls_root_certs = Slurp(dir.Sub("cert.pem"));
  auto tls = client::Client::Connect(o);
  REQUIRE_OK(tls->Ingest(Batch("t", "Alice", 2)));
  // Plaintext is refused.
  o.tls_root_certs.clear();
  o.timeout_ms = 3000;
  auto plain = client::Client::Connect(o);
  CHECK(plain->Ingest(Batch("t", "Alice", 1)).status().code() == absl::StatusCode::kUnavailable);
  // The metrics port speaks HTTPS only.
  const int mport = ts.server()->metrics_port();
  std::string out = dir.Sub("metrics.txt");
  std::string curl = "curl -s --max-time 5 --cacert " + dir.Sub("cert.pem") +
                     " https://127.0.0.1:" + std::to_string(mport) + "/metrics -o " + out;
  REQUIRE(std::system(curl.c_str()) == 0);
  CHECK(Slurp(out).find("speakermem_ingested_messages_total") != std::string::npos);
  std::string insecure =
      "curl -s --max-time 5 http://127.0.0.1:" + std::to_string(mport) + "/metrics -o /dev/null";
  CHECK(std::system(insecure.c_str()) != 0);
}

}  // namespace
}  // namespace speakermem

namespace speakermem {
namespace {

TEST_CASE("per-tenant limits answer RESOURCE_EXHAUSTED and quotas follow deletions", "[limits]") {
  testing::TempDir keys_dir;
  auto configure = WithKeys(keys_dir.Sub("keys"));
  TestServer ts([&](server::ServerConfig* c) {
    configure(c);
    c->tenant_limits.max_stored_messages = 50;
    c->tenant_limits.messages_per_second = 1000;
    c->tenant_limits.burst_messages = 45;
  });
  auto acme = As(ts, "key-acme");
  auto globex = As(ts, "key-globex");
  REQUIRE_OK(acme->Ingest(Batch("q", "Alice", 40)));
  // Over the burst: refused whole, nothing stored.
  auto burst = acme->Ingest(Batch("q2", "Alice", 46));
  CHECK(burst.status().code() == absl::StatusCode::kResourceExhausted);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // refill
  // Over the quota (40 + 20 > 50).
  auto over = acme->Ingest(Batch("q2", "Bob", 20));
  CHECK(over.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(over.status().message()).find("quota") != std::string::npos);
  REQUIRE_OK(globex->Ingest(Batch("q", "Bob", 40)));  // quotas are per tenant
  v1::DeleteChannelRequest del;
  del.set_channel("q");
  REQUIRE_OK(acme->DeleteChannel(del));
  REQUIRE_OK(acme->Ingest(Batch("q2", "Bob", 20)));  // room again
  // The engine reports every change: deleted messages and a forgotten
  // speaker free room too.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // refill
  REQUIRE_OK(acme->Ingest(Batch("q3", "Carol", 30)));           // 50 of 50
  CHECK(acme->Ingest(Batch("q3", "Dan", 1)).status().code() ==
        absl::StatusCode::kResourceExhausted);
  v1::DeleteMessagesRequest dm;
  dm.set_channel("q3");
  for (int i = 0; i < 10; ++i) dm.add_message_ids("Carol" + std::to_string(i));
  REQUIRE_OK(acme->DeleteMessages(dm));
  REQUIRE_OK(acme->Ingest(Batch("q3", "Dan", 10)));  // the 10 deleted
  CHECK(acme->Ingest(Batch("q3", "Eve", 1)).status().code() ==
        absl::StatusCode::kResourceExhausted);
  v1::ForgetSpeakerRequest fs;
  fs.set_channel("q2");
  fs.set_speaker("Bob");
  REQUIRE_OK(acme->ForgetSpeaker(fs));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // refill
  REQUIRE_OK(acme->Ingest(Batch("q3", "Eve", 20)));             // Bob's 20
}

}  // namespace
}  // namespace speakermem

#include <atomic>

#include "tests/fake/fake_model_server.h"

namespace speakermem {
namespace {

TEST_CASE("a tenant over its daily token budget gets no more Writer calls, and nothing is lost",
          "[limits][writer-service]") {
  testing::FakeModelServer fake;
  std::atomic<int> calls{0};
  fake.SetDefault([&](const testing::FakeRequest&) {
    ++calls;
    testing::FakeReply r;
    r.body = testing::FakeModelServer::ChatBody(R"({"actions":[{"action":"NOOP"}]})");  // 18 tokens
    return r;
  });
  std::string url = fake.base_url();
  testing::TestServer ts([url](server::ServerConfig* c) {
    REQUIRE_OK(c->models.SetOverride("writer", "provider", "openai"));
    REQUIRE_OK(c->models.SetOverride("writer", "base_url", url));
    c->memory.writer.window = 10;
    c->memory.writer.workers = 1;
    c->memory.writer.idle_flush_ms = 0;
    c->tenant_limits.tokens_per_day = 40;  // room for three calls (0, 18, 36 < 40)
  });
  REQUIRE_OK(ts.client()->Ingest(Batch("budget", "Alice", 50)));  // five segments
  v1::FlushRequest f;
  f.set_channel("budget");
  f.set_wait(true);
  f.set_timeout_ms(2000);
  auto r = ts.client()->Flush(f);
  CHECK(r.status().code() == absl::StatusCode::kDeadlineExceeded);  // deferred, not done
  CHECK(calls.load() == 3);
  // Nothing is lost: the rest stays pending (cursor at 30 of 50).
  f.set_wait(false);
  auto state = ts.client()->Flush(f);
  REQUIRE_OK(state);
  CHECK(state->cursor_seq() == 30);
  CHECK(state->newest_seq() == 50);
  // Queries that use no model keep working for the tenant.
  v1::QueryRequest q;
  q.set_channel("budget");
  q.set_question("What is the secret plan?");
  REQUIRE_OK(ts.client()->Query(q));
}

}  // namespace
}  // namespace speakermem

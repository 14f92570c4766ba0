// An in-process speakermemd on an ephemeral loopback port with a temporary
// data dir, plus a real client connected to it.
#ifndef SPEAKERMEM_TESTS_INTEGRATION_TEST_SERVER_H_
#define SPEAKERMEM_TESTS_INTEGRATION_TEST_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "server/server.h"
#include "tests/test_util.h"

namespace speakermem::testing {

class TestServer {
 public:
  using Configure = std::function<void(server::ServerConfig*)>;
  explicit TestServer(Configure configure = nullptr, bool metrics = false)
      : configure_(std::move(configure)), metrics_(metrics) {
    Start();
  }

  void Start() {
    server::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.metrics_listen = metrics_ ? "127.0.0.1:0" : "";
    config.memory.store.path = dir_.Sub("data");
    config.shutdown_grace_ms = 1000;
    if (configure_) configure_(&config);
    auto s = server::Server::Start(config);
    REQUIRE_OK(s);
    server_ = std::move(*s);
    REQUIRE(server_->WaitUntilReady(std::chrono::seconds(30)));
    client::ClientOptions opts;
    opts.addr = absl::StrCat("127.0.0.1:", server_->port());
    client_ = client::Client::Connect(opts);
  }

  void Stop() {
    client_.reset();
    if (server_) server_->Shutdown(std::chrono::milliseconds(1000));
    server_.reset();
  }

  void Restart() {
    Stop();
    Start();
  }

  ~TestServer() { Stop(); }

  client::Client* client() { return client_.get(); }
  server::Server* server() { return server_.get(); }
  std::string addr() const { return absl::StrCat("127.0.0.1:", server_->port()); }

  std::string data_dir() const { return dir_.Sub("data"); }
  const TempDir& dir() const { return dir_; }

 private:
  const Configure configure_;
  const bool metrics_;
  TempDir dir_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<client::Client> client_;
};

// Every derived record of `channel`, superseded ones included, paging
// through ListRecords.
inline std::vector<v1::DerivedRecord> AllRecords(client::Client* c, const std::string& channel) {
  std::vector<v1::DerivedRecord> out;
  v1::ListRecordsRequest req;
  req.set_channel(channel);
  req.set_include_superseded(true);
  req.set_page_size(1000);
  do {
    auto page = c->ListRecords(req);
    REQUIRE_OK(page);
    for (const auto& r : page->records()) out.push_back(r);
    req.set_page_token(page->next_page_token());
  } while (!req.page_token().empty());
  return out;
}

// Every message of `channel`, paging through GetMessages.
inline std::vector<v1::DialogueMessage> AllMessages(client::Client* c, const std::string& channel) {
  std::vector<v1::DialogueMessage> out;
  v1::GetMessagesRequest req;
  req.set_channel(channel);
  req.set_page_size(1000);
  do {
    auto page = c->GetMessages(req);
    REQUIRE_OK(page);
    for (const auto& m : page->messages()) out.push_back(m);
    req.set_page_token(page->next_page_token());
  } while (!req.page_token().empty());
  return out;
}

// Flush(wait) of `channel`: returns when the Writer has derived everything
// stored so far.
inline void FlushWait(client::Client* c, const std::string& channel) {
  v1::FlushRequest f;
  f.set_channel(channel);
  f.set_wait(true);
  f.set_timeout_ms(60000);
  auto r = c->Flush(f);
  REQUIRE_OK(r);
  CHECK(r->cursor_seq() == r->newest_seq());
}

// Ingests `lines` (speaker, text) into `channel` as one request: ids
// "m<offset+i>", a minute apart from 2023-11-14, session "s1".
inline void Say(client::Client* c, const std::string& channel,
                const std::vector<std::pair<std::string, std::string>>& lines, int offset) {
  v1::IngestRequest req;
  req.set_channel(channel);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto* m = req.add_messages();
    m->set_message_id("m" + std::to_string(offset + i));
    m->set_speaker(lines[i].first);
    m->set_text(lines[i].second);
    m->set_timestamp_ms(1700000000000 + (offset + static_cast<int64_t>(i)) * 60000);
    m->set_session("s1");
  }
  REQUIRE_OK(c->Ingest(req));
}

// The body of GET /metrics on loopback `port`.
std::string HttpGetMetrics(int port);

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_INTEGRATION_TEST_SERVER_H_

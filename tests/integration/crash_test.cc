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
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using speakermem::testing::AllMessages;
using speakermem::testing::TempDir;

// A speakermemd child process on ephemeral ports.
class Daemon {
 public:
  explicit Daemon(const std::string& dir) : dir_(dir) {}
  ~Daemon() {
    if (pid_ > 0) Kill(SIGKILL);
  }

  void Start() {
    std::string port_file = dir_ + "/ports";
    std::remove(port_file.c_str());
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::string log = dir_ + "/speakermemd.log";
      FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      execl(SPEAKERMEMD_PATH, SPEAKERMEMD_PATH, "--data-dir", (dir_ + "/data").c_str(),
            "--listen", "127.0.0.1:0", "--metrics-listen", "", "--port-file", port_file.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int port = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(port_file);
      if (in >> port && port > 0) break;
      int status = 0;
      REQUIRE(waitpid(pid_, &status, WNOHANG) == 0);  // still running
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(port > 0);
    client::ClientOptions opts;
    opts.addr = absl::StrCat("127.0.0.1:", port);
    client_ = client::Client::Connect(opts);
    REQUIRE_OK(client_->WaitForServing(30000));
  }

  // Sends `sig` and reaps the process; returns its wait status.
  int Kill(int sig) {
    REQUIRE(kill(pid_, sig) == 0);
    int status = 0;
    REQUIRE(waitpid(pid_, &status, 0) == pid_);
    pid_ = -1;
    client_.reset();
    return status;
  }

  client::Client* client() { return client_.get(); }

 private:
  const std::string dir_;
  pid_t pid_ = -1;
  std::unique_ptr<client::Client> client_;
};

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

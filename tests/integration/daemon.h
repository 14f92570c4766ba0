// A real speakermemd child process on ephemeral ports, for process-level
// tests (kill -9, clusters behind a proxy).
#ifndef SPEAKERMEM_TESTS_INTEGRATION_DAEMON_H_
#define SPEAKERMEM_TESTS_INTEGRATION_DAEMON_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "tests/test_util.h"

namespace speakermem::testing {

// A speakermemd child process on ephemeral ports.
class Daemon {
 public:
  explicit Daemon(const std::string& dir, std::vector<std::string> extra = {})
      : dir_(dir), extra_(std::move(extra)) {}
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
      std::vector<std::string> args = {
          SPEAKERMEMD_PATH,   "--data-dir", dir_ + "/data", "--listen", "127.0.0.1:0",
          "--metrics-listen", "",           "--port-file",  port_file};
      args.insert(args.end(), extra_.begin(), extra_.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(SPEAKERMEMD_PATH, argv.data());
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
    port_ = port;
    client::ClientOptions opts;
    opts.addr = absl::StrCat("127.0.0.1:", port);
    addr_ = opts.addr;
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
  const std::string& addr() const { return addr_; }
  int port() const { return port_; }

 private:
  std::string addr_;
  int port_ = 0;
  const std::string dir_;
  const std::vector<std::string> extra_;
  pid_t pid_ = -1;
  std::unique_ptr<client::Client> client_;
};

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_INTEGRATION_DAEMON_H_

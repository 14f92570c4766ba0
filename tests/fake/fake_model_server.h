// A fake OpenAI-compatible HTTP server on loopback for tests and benchmarks:
// scripted replies per stage (from the X-SpeakerMem-Stage header) and fault
// injection (delay, status codes with headers, dropped connections, any
// body). It speaks real HTTP/1.1 with keep-alive, so the client's curl path
// is exercised end to end.
#ifndef SPEAKERMEM_TESTS_FAKE_FAKE_MODEL_SERVER_H_
#define SPEAKERMEM_TESTS_FAKE_FAKE_MODEL_SERVER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace speakermem::testing {

struct FakeReply {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  int delay_ms = 0;   // before answering
  bool drop = false;  // close the connection without answering
};

struct FakeRequest {
  std::string method;
  std::string path;
  std::string stage;                           // X-SpeakerMem-Stage
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// Thread-safe. Serves until destroyed.
class FakeModelServer {
 public:
  FakeModelServer();
  ~FakeModelServer();
  FakeModelServer(const FakeModelServer&) = delete;
  FakeModelServer& operator=(const FakeModelServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port>/v1"
  std::string base_url() const;

  // Queues a reply for the next request of `stage` ("" = any stage). Queued
  // replies are used first, in order; then the default handler.
  void Enqueue(const std::string& stage, FakeReply reply);
  // Replaces the default handler (initially: a chat completion whose content
  // is "{}", or deterministic 8-dimensional embeddings).
  void SetDefault(std::function<FakeReply(const FakeRequest&)> handler);

  std::vector<FakeRequest> requests() const;
  int count(const std::string& stage) const;
  // Most requests ever handled at the same time.
  int max_in_flight() const { return max_in_flight_.load(); }
  // Requests being handled right now (received, reply not yet sent).
  int in_flight() const { return in_flight_.load(); }
  void Reset();

  // Body of a chat completion whose message content is `content`.
  static std::string ChatBody(const std::string& content, const std::string& finish_reason = "stop",
                              bool with_usage = true);
  static std::string EmbeddingsBody(const std::vector<std::vector<float>>& vectors);

 private:
  void AcceptLoop();
  void Serve(int fd);
  FakeReply Dispatch(const FakeRequest& req);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};

  mutable std::mutex mu_;
  std::vector<std::thread> workers_;                      // guarded by mu_
  std::vector<int> conns_;                                // guarded by mu_
  std::map<std::string, std::deque<FakeReply>> queued_;   // guarded by mu_
  std::function<FakeReply(const FakeRequest&)> default_;  // guarded by mu_
  std::vector<FakeRequest> seen_;                         // guarded by mu_
};

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_FAKE_FAKE_MODEL_SERVER_H_

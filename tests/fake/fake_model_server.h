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
  // A request with "stream": true gets a 200 chat completion as server-sent
  // events: its content in pieces of `stream_piece` bytes (never inside a
  // UTF-8 sequence), `stream_delay_ms` apart, then the finish reason, the
  // usage when asked for (stream_options.include_usage) and [DONE].
  // `ignore_stream` answers such a request with the plain JSON body.
  int stream_delay_ms = 0;
  size_t stream_piece = 8;
  bool ignore_stream = false;
  // Closes the connection after this many events (0: sends them all).
  int stream_cut_after = 0;
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
  // Streamed replies the client stopped reading before the end.
  int streams_cut() const { return streams_cut_.load(); }
  // Streamed replies sent to the end.
  int streams_done() const { return streams_done_.load(); }
  void Reset();

  // Body of a chat completion whose message content is `content`.
  static std::string ChatBody(const std::string& content, const std::string& finish_reason = "stop",
                              bool with_usage = true);
  static std::string EmbeddingsBody(const std::vector<std::vector<float>>& vectors);

 private:
  void AcceptLoop();
  void Serve(int fd);
  // Sends `reply` as server-sent events; false when the client went away.
  bool SendStream(int fd, const FakeReply& reply, bool include_usage);
  FakeReply Dispatch(const FakeRequest& req);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  std::atomic<int> streams_cut_{0};
  std::atomic<int> streams_done_{0};

  mutable std::mutex mu_;
  std::vector<std::thread> workers_;                      // guarded by mu_
  std::vector<int> conns_;                                // guarded by mu_
  std::map<std::string, std::deque<FakeReply>> queued_;   // guarded by mu_
  std::function<FakeReply(const FakeRequest&)> default_;  // guarded by mu_
  std::vector<FakeRequest> seen_;                         // guarded by mu_
};

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_FAKE_FAKE_MODEL_SERVER_H_

// A minimal HTTP/1.1 server for Prometheus' text exposition on GET /metrics.
//
// Why not prometheus-cpp's Exposer: it serves from civetweb threads created
// with a small fixed stack, and static TLS of libraries we link (OpenBLAS,
// through FAISS, carries 60 KiB of it) is carved from every thread's stack,
// so a scrape overflowed it and crashed the process. Our threads use the
// default stack. It also avoids the Exposer's ~2 s blocking destructor.
#ifndef SPEAKERMEM_SERVER_METRICS_HTTP_H_
#define SPEAKERMEM_SERVER_METRICS_HTTP_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace speakermem::server {

// Serves until destroyed. Thread-safe.
class MetricsHttpServer {
 public:
  // `render` returns the exposition text; called per request. Binds
  // host:port (port 0 picks one). UNAVAILABLE when it cannot bind. With a
  // PEM certificate and key it serves HTTPS only (INVALID_ARGUMENT when they
  // do not load).
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& address, std::function<std::string()> render,
      const std::string& tls_cert_file = "", const std::string& tls_key_file = "");
  ~MetricsHttpServer();

  int port() const { return port_; }

 private:
  MetricsHttpServer(int fd, int port, std::function<std::string()> render, void* ssl_ctx);
  void AcceptLoop();
  void Serve(int fd);

  const int listen_fd_;
  const int port_;
  const std::function<std::string()> render_;
  void* const ssl_ctx_;  // SSL_CTX*, null without TLS
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
};

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_METRICS_HTTP_H_

#include "server/metrics_http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/net.h"

namespace speakermem::server {

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& address, std::function<std::string()> render,
    const std::string& tls_cert_file, const std::string& tls_key_file) {
  SSL_CTX* ctx = nullptr;
  if (!tls_cert_file.empty() || !tls_key_file.empty()) {
    ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, tls_cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, tls_key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      char err[256];
      ERR_error_string_n(ERR_get_error(), err, sizeof(err));
      SSL_CTX_free(ctx);
      return absl::InvalidArgumentError(
          absl::StrCat("metrics TLS: cannot load ", tls_cert_file, " / ", tls_key_file, ": ", err));
    }
  }
  auto fail = [&](absl::Status s) {
    if (ctx != nullptr) SSL_CTX_free(ctx);
    return s;
  };
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("metrics address '", address, "': expected host:port")));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port_s = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), port_s.c_str(), &hints, &res) != 0 ||
      res == nullptr) {
    return fail(
        absl::UnavailableError(absl::StrCat("metrics address '", address, "': cannot resolve")));
  }
  int fd = socket(res->ai_family, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
    std::string err = std::strerror(errno);
    freeaddrinfo(res);
    if (fd >= 0) close(fd);
    return fail(
        absl::UnavailableError(absl::StrCat("cannot serve metrics on ", address, ": ", err)));
  }
  freeaddrinfo(res);
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  int bound = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return std::unique_ptr<MetricsHttpServer>(
      new MetricsHttpServer(fd, bound, std::move(render), ctx));
}

MetricsHttpServer::MetricsHttpServer(int fd, int port, std::function<std::string()> render,
                                     void* ssl_ctx)
    : listen_fd_(fd), port_(port), render_(std::move(render)), ssl_ctx_(ssl_ctx) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

MetricsHttpServer::~MetricsHttpServer() {
  stopping_.store(true);
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  if (ssl_ctx_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
}

void MetricsHttpServer::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    // Scrapes are rare and short: serve them one at a time, with a timeout
    // so a stalled client cannot hold the endpoint.
    timeval tv{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    Serve(fd);
    close(fd);
  }
}

void MetricsHttpServer::Serve(int fd) {
  SSL* ssl = nullptr;
  if (ssl_ctx_ != nullptr) {
    ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {  // not TLS, or a failed handshake
      SSL_free(ssl);
      return;
    }
  }
  auto read_some = [&](char* buf, size_t size) -> ssize_t {
    return ssl != nullptr ? SSL_read(ssl, buf, static_cast<int>(size)) : recv(fd, buf, size, 0);
  };
  auto send_all = [&](const std::string& data) {
    if (ssl == nullptr) return SendAll(fd, data);
    size_t off = 0;
    while (off < data.size()) {
      int n = SSL_write(ssl, data.data() + off, static_cast<int>(data.size() - off));
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  };
  struct Closer {
    SSL* ssl;
    ~Closer() {
      if (ssl != nullptr) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
      }
    }
  } closer{ssl};
  std::string req;
  char buf[4096];
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < 65536) {
    ssize_t n = read_some(buf, sizeof(buf));
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  std::string method = req.substr(0, req.find(' '));
  size_t path_start = req.find(' ') + 1;
  std::string path = req.substr(path_start, req.find(' ', path_start) - path_start);
  path = path.substr(0, path.find('?'));
  std::string status = "200 OK", type = "text/plain; version=0.0.4; charset=utf-8", body;
  if (method != "GET" && method != "HEAD") {
    status = "405 Method Not Allowed";
    body = "method not allowed\n";
  } else if (path == "/metrics") {
    body = render_();
  } else {
    status = "404 Not Found";
    body = "not found; metrics are at /metrics\n";
  }
  std::string out =
      absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", type,
                   "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n");
  if (method != "HEAD") out += body;
  send_all(out);
}

}  // namespace speakermem::server

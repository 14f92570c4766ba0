#include "tests/fake/fake_model_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

#include "common/net.h"
#include "nlohmann/json.hpp"

namespace speakermem::testing {
namespace {

using json = nlohmann::json;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

FakeReply DefaultReply(const FakeRequest& req) {
  FakeReply r;
  if (req.path.size() >= 11 && req.path.compare(req.path.size() - 11, 11, "/embeddings") == 0) {
    json in = json::parse(req.body, nullptr, false);
    std::vector<std::vector<float>> vs;
    if (in.is_object() && in.contains("input") && in["input"].is_array()) {
      for (const auto& s : in["input"]) {
        std::string t = s.is_string() ? s.get<std::string>() : "";
        std::vector<float> v(8, 0.0f);
        for (size_t i = 0; i < t.size(); ++i) v[i % 8] += static_cast<unsigned char>(t[i]) / 255.0f;
        v[0] += 1.0f;
        vs.push_back(v);
      }
    }
    r.body = FakeModelServer::EmbeddingsBody(vs);
  } else {
    r.body = FakeModelServer::ChatBody("{}");
  }
  return r;
}

}  // namespace

FakeModelServer::FakeModelServer() : default_(DefaultReply) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 128) != 0) {
    std::perror("fake model server: bind/listen");
    std::abort();
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeModelServer::~FakeModelServer() {
  stopping_.store(true);
  shutdown(listen_fd_, SHUT_RDWR);
  close(listen_fd_);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : conns_) shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

std::string FakeModelServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/v1";
}

void FakeModelServer::Enqueue(const std::string& stage, FakeReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  queued_[stage].push_back(std::move(reply));
}

void FakeModelServer::SetDefault(std::function<FakeReply(const FakeRequest&)> handler) {
  std::lock_guard<std::mutex> lock(mu_);
  default_ = std::move(handler);
}

std::vector<FakeRequest> FakeModelServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

int FakeModelServer::count(const std::string& stage) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(std::count_if(seen_.begin(), seen_.end(), [&](const FakeRequest& r) {
    return stage.empty() || r.stage == stage;
  }));
}

void FakeModelServer::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  seen_.clear();
  queued_.clear();
  default_ = DefaultReply;
  max_in_flight_.store(0);
}

void FakeModelServer::AcceptLoop() {
  while (!stopping_.load()) {
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      if (stopping_.load()) return;
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::lock_guard<std::mutex> lock(mu_);
    conns_.push_back(fd);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

FakeReply FakeModelServer::Dispatch(const FakeRequest& req) {
  std::function<FakeReply(const FakeRequest&)> handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(req);
    for (const std::string& key : {req.stage, std::string()}) {
      auto it = queued_.find(key);
      if (it != queued_.end() && !it->second.empty()) {
        FakeReply r = std::move(it->second.front());
        it->second.pop_front();
        return r;
      }
    }
    handler = default_;
  }
  return handler(req);
}

void FakeModelServer::Serve(int fd) {
  std::string buf;
  char chunk[16384];
  while (!stopping_.load()) {
    size_t header_end;
    while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) {
        close(fd);
        return;
      }
      buf.append(chunk, static_cast<size_t>(n));
    }
    FakeRequest req;
    std::istringstream head(buf.substr(0, header_end));
    std::string line, version;
    std::getline(head, line);
    std::istringstream(line) >> req.method >> req.path >> version;
    size_t content_length = 0;
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = Lower(line.substr(0, colon));
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      req.headers[name] = value;
      if (name == "content-length") content_length = std::stoul(value);
      if (name == "x-speakermem-stage") req.stage = value;
    }
    buf.erase(0, header_end + 4);
    while (buf.size() < content_length) {
      ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) {
        close(fd);
        return;
      }
      buf.append(chunk, static_cast<size_t>(n));
    }
    req.body = buf.substr(0, content_length);
    buf.erase(0, content_length);

    int now = ++in_flight_;
    int prev = max_in_flight_.load();
    while (now > prev && !max_in_flight_.compare_exchange_weak(prev, now)) {
    }
    FakeReply reply = Dispatch(req);
    if (reply.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(reply.delay_ms));
    --in_flight_;
    if (reply.drop) {
      shutdown(fd, SHUT_RDWR);
      close(fd);
      return;
    }
    json asked = json::parse(req.body, nullptr, false);
    if (reply.status == 200 && !reply.ignore_stream && asked.is_object() &&
        asked.value("stream", false)) {
      const bool usage = asked.contains("stream_options") && asked["stream_options"].is_object() &&
                         asked["stream_options"].value("include_usage", false);
      if (SendStream(fd, reply, usage)) {
        ++streams_done_;
      } else {
        ++streams_cut_;
      }
      close(fd);  // the stream ends with the connection
      return;
    }
    std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + Reason(reply.status) +
                      "\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(reply.body.size()) + "\r\n";
    for (const auto& [k, v] : reply.headers) out += k + ": " + v + "\r\n";
    out += "\r\n" + reply.body;
    if (!SendAll(fd, out)) {
      close(fd);
      return;
    }
  }
  close(fd);
}

bool FakeModelServer::SendStream(int fd, const FakeReply& reply, bool include_usage) {
  json body = json::parse(reply.body, nullptr, false);
  std::string content, finish = "stop";
  if (body.is_object() && body.contains("choices") && body["choices"].is_array() &&
      !body["choices"].empty()) {
    const json& c = body["choices"][0];
    if (c.contains("message") && c["message"].is_object()) {
      content = c["message"].value("content", "");
    }
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) {
      finish = c["finish_reason"].get<std::string>();
    }
  }
  auto chunk = [](const json& delta, const json& finish_reason) {
    return json{{"id", "chatcmpl-fake"},
                {"object", "chat.completion.chunk"},
                {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish_reason}}}}};
  };
  std::vector<std::string> events = {chunk({{"role", "assistant"}}, nullptr).dump()};
  const size_t piece = std::max<size_t>(1, reply.stream_piece);
  for (size_t at = 0; at < content.size();) {
    size_t end = std::min(content.size(), at + piece);
    while (end < content.size() && (static_cast<unsigned char>(content[end]) & 0xC0) == 0x80) ++end;
    events.push_back(chunk({{"content", content.substr(at, end - at)}}, nullptr).dump());
    at = end;
  }
  events.push_back(chunk(json::object(), finish).dump());
  if (include_usage && body.is_object() && body.contains("usage")) {
    events.push_back(json{
        {"id", "chatcmpl-fake"},
        {"object", "chat.completion.chunk"},
        {"choices", json::array()},
        {"usage",
         body["usage"]}}.dump());
  }
  events.push_back("[DONE]");
  if (!SendAll(fd,
               "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")) {
    return false;
  }
  int sent = 0;
  for (const auto& e : events) {
    if (reply.stream_cut_after > 0 && sent++ == reply.stream_cut_after) return true;
    if (reply.stream_delay_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(reply.stream_delay_ms));
    }
    if (!SendAll(fd, "data: " + e + "\n\n")) return false;
  }
  return true;
}

std::string FakeModelServer::ChatBody(const std::string& content, const std::string& finish_reason,
                                      bool with_usage) {
  json j = {{"id", "chatcmpl-fake"},
            {"object", "chat.completion"},
            {"choices",
             {{{"index", 0},
               {"message", {{"role", "assistant"}, {"content", content}}},
               {"finish_reason", finish_reason}}}}};
  if (with_usage)
    j["usage"] = {{"prompt_tokens", 11}, {"completion_tokens", 7}, {"total_tokens", 18}};
  return j.dump();
}

std::string FakeModelServer::EmbeddingsBody(const std::vector<std::vector<float>>& vectors) {
  json data = json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", vectors[i]}});
  }
  return json{
      {"object", "list"}, {"data", data}, {"usage", {{"prompt_tokens", 5}, {"total_tokens", 5}}}}
      .dump();
}

}  // namespace speakermem::testing

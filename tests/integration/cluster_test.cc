// Three real speakermemd shards behind a real nginx routing gRPC by a
// consistent hash of the channel (metadata x-speakermem-channel, set by the
// client library): placement, equality with direct queries, and failure of
// one shard affecting only its channels. Skips (with a message) where nginx
// is not installed, except under CI=true where it fails.
#include <netinet/in.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/net.h"
#include "tests/integration/daemon.h"

namespace speakermem {
namespace {

using testing::Daemon;
using testing::TempDir;

std::string FindNginx() {
  for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

int FreePort() { return FreeLoopbackPort(); }

// nginx as a child process, in the foreground, with deploy/nginx-grpc.conf's
// routing rules for the given shards.
class Nginx {
 public:
  Nginx(const std::string& binary, const std::string& dir, const std::vector<int>& shard_ports)
      : dir_(dir) {
    port_ = FreePort();
    std::filesystem::create_directories(dir + "/tmp");
    std::ofstream conf(dir + "/nginx.conf");
    conf << "worker_processes 1;\ndaemon off;\npid " << dir << "/nginx.pid;\n"
         << "error_log " << dir << "/error.log warn;\nevents { worker_connections 1024; }\n"
         << "http {\n  access_log off;\n  client_body_temp_path " << dir << "/tmp;\n"
         << "  proxy_temp_path " << dir << "/tmp;\n  fastcgi_temp_path " << dir << "/tmp;\n"
         << "  uwsgi_temp_path " << dir << "/tmp;\n  scgi_temp_path " << dir << "/tmp;\n"
         << "  upstream speakermem {\n    hash $http_x_speakermem_channel consistent;\n";
    for (int p : shard_ports) conf << "    server 127.0.0.1:" << p << " weight=10 max_fails=0;\n";
    conf << "  }\n  server {\n    listen 127.0.0.1:" << port_ << " http2;\n"
         << "    location / {\n      grpc_pass grpc://speakermem;\n"
         << "      grpc_next_upstream off;\n      grpc_read_timeout 120s;\n"
         << "      client_max_body_size 16m;\n    }\n  }\n}\n";
    conf.close();
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::freopen((dir + "/stderr.log").c_str(), "w", stderr);
      execl(binary.c_str(), binary.c_str(), "-c", (dir + "/nginx.conf").c_str(), "-p", dir.c_str(),
            "-e", (dir + "/error.log").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Until it accepts connections.
    for (int i = 0; i < 200; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(port_));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
      close(fd);
      if (ok) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        std::ifstream err(dir + "/stderr.log");
        std::stringstream ss;
        ss << err.rdbuf();
        FAIL("nginx exited: " << ss.str());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    FAIL("nginx did not listen");
  }
  ~Nginx() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string addr() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

v1::IngestRequest Lines(const std::string& channel) {
  v1::IngestRequest req;
  req.set_channel(channel);
  const char* text[] = {"I booked the venue in Lisbon for ", "The budget for ",
                        "Bring the projector to "};
  for (int i = 0; i < 3; ++i) {
    auto* m = req.add_messages();
    m->set_message_id(channel + "-" + std::to_string(i));
    m->set_speaker(i == 1 ? "Bob" : "Alice");
    m->set_text(text[i] + channel);
    m->set_timestamp_ms(1700000000000 + i * 1000);
    m->set_session("s1");
  }
  return req;
}

std::set<std::string> Channels(client::Client* c) {
  std::set<std::string> out;
  v1::ListChannelsRequest req;
  req.set_page_size(1000);
  do {
    auto r = c->ListChannels(req);
    REQUIRE_OK(r);
    for (const auto& ch : r->channels()) out.insert(ch.channel());
    req.set_page_token(r->next_page_token());
  } while (!req.page_token().empty());
  return out;
}

std::vector<std::string> EvidenceIds(client::Client* c, const std::string& channel) {
  v1::QueryRequest q;
  q.set_channel(channel);
  q.set_question("Where is the venue and what is the budget?");
  auto r = c->Retrieve(q);
  REQUIRE_OK(r);
  std::vector<std::string> ids;
  for (const auto& e : r->evidence()) ids.push_back(e.message().message_id());
  return ids;
}

TEST_CASE("three shards behind nginx: placement by channel, same answers, isolated failure",
          "[cluster]") {
  const std::string nginx = FindNginx();
  if (nginx.empty()) {
    if (testing::InCi())
      FAIL("nginx is not installed (deploy/install-deps.sh installs nginx-light)");
    WARN("nginx not installed; skipping the cluster test");
    return;
  }
  TempDir dir;
  std::vector<std::unique_ptr<Daemon>> shards;
  std::vector<int> ports;
  for (int i = 0; i < 3; ++i) {
    std::filesystem::create_directories(dir.Sub("s" + std::to_string(i)));
    shards.push_back(std::make_unique<Daemon>(dir.Sub("s" + std::to_string(i))));
    shards.back()->Start();
    ports.push_back(shards.back()->port());
  }
  std::filesystem::create_directories(dir.Sub("nginx"));
  Nginx proxy(nginx, dir.Sub("nginx"), ports);
  client::ClientOptions o;
  o.addr = proxy.addr();
  auto via = client::Client::Connect(o);
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) {
    names.push_back("team-" + std::to_string(i * 7919 % 100003));
    REQUIRE_OK(via->Ingest(Lines(names.back())));
  }
  // Each channel lives on exactly one shard; every shard holds >= 20%.
  std::map<std::string, int> owner;
  for (int s = 0; s < 3; ++s) {
    auto on = Channels(shards[s]->client());
    INFO("shard " << s << " holds " << on.size());
    CHECK(on.size() >= 40);
    for (const auto& ch : on) {
      CHECK(owner.count(ch) == 0);
      owner[ch] = s;
    }
  }
  REQUIRE(owner.size() == 200);
  // Through nginx the evidence equals a direct query to the owning shard.
  for (int i = 0; i < 200; i += 10) {
    const std::string& ch = names[i];
    CHECK(EvidenceIds(via.get(), ch) == EvidenceIds(shards[owner[ch]]->client(), ch));
  }
  // Stop one shard: only its channels fail, with UNAVAILABLE.
  shards[1]->Kill(SIGKILL);
  int failed = 0, served = 0;
  for (const auto& ch : names) {
    v1::GetMessagesRequest gm;
    gm.set_channel(ch);
    auto r = via->GetMessages(gm);
    if (owner[ch] == 1) {
      CHECK(r.status().code() == absl::StatusCode::kUnavailable);
      ++failed;
    } else {
      REQUIRE_OK(r);
      CHECK(r->messages_size() == 3);
      ++served;
    }
  }
  CHECK(failed >= 40);
  CHECK(served >= 80);
  WARN("200 channels: " << served << " still served, " << failed
                        << " on the stopped shard answer UNAVAILABLE");
}

}  // namespace
}  // namespace speakermem

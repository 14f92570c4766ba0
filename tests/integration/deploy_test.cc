// Deployment artefacts against the real server: every metric the Grafana
// dashboard queries exists on /metrics, and a real Prometheus scrapes the
// server, answers a query for the ingest counter and evaluates every panel's
// expression of the Grafana dashboard without error. The Prometheus test
// skips with a message only where prometheus is not installed (fails under
// CI=true).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/net.h"
#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Activity(client::Client* c) {
  v1::IngestRequest req;
  req.set_channel("dash");
  for (int i = 0; i < 30; ++i) {
    auto* m = req.add_messages();
    m->set_message_id("d" + std::to_string(i));
    m->set_speaker(i % 2 ? "Bob" : "Alice");
    m->set_text("We decided to book the Lisbon venue, note " + std::to_string(i));
    m->set_timestamp_ms(1700000000000 + i * 1000);
    m->set_session("s1");
  }
  REQUIRE_OK(c->Ingest(req));
  testing::FlushWait(c, "dash");
  v1::QueryRequest q;
  q.set_channel("dash");
  q.set_question("Which venue did the group book?");
  REQUIRE_OK(c->Query(q));
}

TEST_CASE("every metric the Grafana dashboard queries exists on /metrics", "[deploy]") {
  // The answer stage on a (fake) model, so the model metrics exist too.
  // The project stage first gets a 500 (a retry), then nonsense (a
  // fallback), so the retry and fallback series exist as well.
  testing::FakeModelServer fake;
  std::atomic<int> project_calls{0};
  fake.SetDefault([&](const testing::FakeRequest& r) {
    if (r.stage == "project") {
      if (project_calls++ == 0) return testing::FakeReply{500, R"({"error":{"message":"busy"}})"};
      return testing::FakeReply{200, testing::FakeModelServer::ChatBody("not json at all")};
    }
    return testing::FakeReply{200, testing::FakeModelServer::ChatBody(
                                       R"({"answer": "Lisbon", "abstain": false, "cited": []})")};
  });
  std::string url = fake.base_url();
  testing::TestServer ts(
      [url](server::ServerConfig* c) {
        for (const char* stage : {"answer", "project"}) {
          REQUIRE_OK(c->models.SetOverride(stage, "provider", "openai"));
          REQUIRE_OK(c->models.SetOverride(stage, "base_url", url));
          REQUIRE_OK(c->models.SetOverride(stage, "backoff_initial_ms", "1"));
        }
        c->memory.writer.idle_flush_ms = 0;
      },
      /*metrics=*/true);
  Activity(ts.client());
  std::string exposition = testing::HttpGetMetrics(ts.server()->metrics_port());
  std::set<std::string> exposed;
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    exposed.insert(line.substr(0, line.find_first_of("{ ")));
  }
  nlohmann::json dash = nlohmann::json::parse(
      Slurp(SPEAKERMEM_SOURCE_DIR "/deploy/grafana/dashboards/speakermem.json"));
  std::set<std::string> queried;
  const std::regex metric("speakermem_[a-z0-9_]+");
  for (const auto& panel : dash["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"].get<std::string>();
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
        queried.insert(it->str());
      }
    }
  }
  REQUIRE(queried.size() >= 15);
  for (const auto& name : queried) {
    INFO(name);
    CHECK(exposed.count(name) == 1);
  }
}

int FreePort() { return FreeLoopbackPort(); }

// RFC 3986 percent-encoding of everything but unreserved characters.
std::string PercentEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

TEST_CASE("a real Prometheus scrapes speakermemd and evaluates every dashboard expression",
          "[deploy][prometheus]") {
  const std::string binary = "/usr/bin/prometheus";
  if (!std::filesystem::exists(binary)) {
    if (testing::InCi()) FAIL("prometheus is not installed (deploy/install-deps.sh installs it)");
    WARN("prometheus not installed; skipping");
    return;
  }
  testing::TestServer ts(nullptr, /*metrics=*/true);
  testing::TempDir dir;
  // deploy/prometheus.yml with the target pointed at this server.
  std::string conf = Slurp(SPEAKERMEM_SOURCE_DIR "/deploy/prometheus.yml");
  const std::string target = "speakermemd:9464";
  REQUIRE(conf.find(target) != std::string::npos);
  conf.replace(conf.find(target), target.size(),
               "127.0.0.1:" + std::to_string(ts.server()->metrics_port()));
  conf.replace(conf.find("scrape_interval: 5s"), 19, "scrape_interval: 1s");
  std::ofstream(dir.Sub("prometheus.yml")) << conf;
  const int port = FreePort();
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::freopen(dir.Sub("prometheus.log").c_str(), "w", stderr);
    std::string c = "--config.file=" + dir.Sub("prometheus.yml");
    std::string s = "--storage.tsdb.path=" + dir.Sub("tsdb");
    std::string l = "--web.listen-address=127.0.0.1:" + std::to_string(port);
    execl(binary.c_str(), binary.c_str(), c.c_str(), s.c_str(), l.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  v1::IngestRequest req;
  req.set_channel("prom");
  for (int i = 0; i < 7; ++i) {
    auto* m = req.add_messages();
    m->set_speaker("Alice");
    m->set_text("counted message " + std::to_string(i));
    m->set_timestamp_ms(1700000000000 + i);
  }
  REQUIRE_OK(ts.client()->Ingest(req));
  // Ask Prometheus's HTTP API until a scrape has the counter at 7.
  const std::string out = dir.Sub("answer.json");
  const std::string curl = "curl -s --max-time 2 -o " + out +
                           " 'http://127.0.0.1:" + std::to_string(port) +
                           "/api/v1/query?query=speakermem_ingested_messages_total'";
  double value = -1;
  for (int i = 0; i < 120 && value < 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (std::system(curl.c_str()) != 0) continue;
    nlohmann::json j = nlohmann::json::parse(Slurp(out), nullptr, false);
    if (j.is_discarded() || j.value("status", "") != "success") continue;
    for (const auto& r : j["data"]["result"]) value = std::stod(r["value"][1].get<std::string>());
  }
  CHECK(value == 7);
  // Every expression of the Grafana dashboard, evaluated by this Prometheus
  // over the scraped series: each must parse and run without error.
  nlohmann::json dash = nlohmann::json::parse(
      Slurp(SPEAKERMEM_SOURCE_DIR "/deploy/grafana/dashboards/speakermem.json"));
  size_t evaluated = 0;
  for (const auto& panel : dash["panels"]) {
    for (const auto& target : panel["targets"]) {
      const std::string expr = target["expr"].get<std::string>();
      INFO(panel.value("title", "") << ": " << expr);
      const std::string query = "curl -s --max-time 5 -o " + out +
                                " 'http://127.0.0.1:" + std::to_string(port) +
                                "/api/v1/query?query=" + PercentEncode(expr) + "'";
      REQUIRE(std::system(query.c_str()) == 0);
      nlohmann::json j = nlohmann::json::parse(Slurp(out), nullptr, false);
      REQUIRE_FALSE(j.is_discarded());
      CHECK(j.value("status", "") == "success");
      CHECK(j.value("error", "") == "");
      ++evaluated;
    }
  }
  CHECK(evaluated >= 15);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  INFO(Slurp(dir.Sub("prometheus.log")).substr(0, 2000));
}

}  // namespace
}  // namespace speakermem

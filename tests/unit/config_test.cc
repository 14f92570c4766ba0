#include "server/config.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "tests/test_util.h"

namespace speakermem::server {
namespace {

using speakermem::testing::TempDir;

absl::Status Load(std::vector<std::string> argv_s, std::vector<std::string> env, ServerConfig* c) {
  std::vector<char*> argv;
  argv_s.insert(argv_s.begin(), "speakermemd");
  for (auto& a : argv_s) argv.push_back(a.data());
  std::string help;
  return LoadConfig(static_cast<int>(argv.size()), argv.data(), env, c, &help);
}

TEST_CASE("defaults are usable", "[config]") {
  ServerConfig c;
  REQUIRE_OK(Load({}, {}, &c));
  CHECK(c.listen == "127.0.0.1:50151");
  CHECK(c.memory.limits.max_text_bytes == 32 * 1024);
  CHECK(c.memory.budgets.default_top_k == 10);
  CHECK_FALSE(c.memory.store.sync);
}

TEST_CASE("file, then environment, then flags override", "[config]") {
  TempDir dir;
  std::string path = dir.Sub("speakermem.conf");
  {
    std::ofstream f(path);
    f << "# comment\n[server]\nlisten = \"0.0.0.0:7000\"\nmetrics_listen = 127.0.0.1:7001 # c\n"
         "[store]\ndata_dir = /var/lib/sm\nsync = true\n[limits]\nmax_text_bytes = 100\n";
  }
  ServerConfig c;
  REQUIRE_OK(Load({"--config", path}, {}, &c));
  CHECK(c.listen == "0.0.0.0:7000");
  CHECK(c.metrics_listen == "127.0.0.1:7001");
  CHECK(c.memory.store.path == "/var/lib/sm");
  CHECK(c.memory.store.sync);
  CHECK(c.memory.limits.max_text_bytes == 100);

  ServerConfig d;
  REQUIRE_OK(
      Load({"--config", path, "--listen", "127.0.0.1:9", "--set", "limits.max_text_bytes=300"},
           {"SPEAKERMEM_SERVER_LISTEN=1.2.3.4:5", "SPEAKERMEM_LIMITS_MAX_TEXT_BYTES=200",
            "SPEAKERMEM_STORE_SYNC=false", "UNRELATED=1"},
           &d));
  CHECK(d.listen == "127.0.0.1:9");              // flag beats env
  CHECK(d.memory.limits.max_text_bytes == 300);  // flag beats env
  CHECK_FALSE(d.memory.store.sync);              // env beats file
  CHECK(d.memory.store.path == "/var/lib/sm");   // file beats default
}

TEST_CASE("the offline Writer's constants are knobs", "[config]") {
  ServerConfig c;
  REQUIRE_OK(Load({"--set", "writer.offline_min_content=3"},
                  {"SPEAKERMEM_WRITER_OFFLINE_MERGE_SIMILARITY=0.4"}, &c));
  CHECK(c.memory.writer.offline.min_content == 3);
  CHECK(c.memory.writer.offline.merge_similarity == 0.4);
  ServerConfig d;
  REQUIRE_CODE(Load({"--set", "writer.offline_min_content=0"}, {}, &d),
               absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(Load({}, {"SPEAKERMEM_WRITER_OFFLINE_MERGE_SIMILARITY=1.5"}, &d),
               absl::StatusCode::kInvalidArgument);
}

TEST_CASE("bad config is INVALID_ARGUMENT naming the key", "[config]") {
  ServerConfig c;
  absl::Status s = Load({"--limits.max_text_bytes=lots"}, {}, &c);
  REQUIRE_CODE(s, absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("limits.max_text_bytes") != std::string::npos);
  REQUIRE_CODE(Load({"--no.such=1"}, {}, &c), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(Load({}, {"SPEAKERMEM_STORE_SYNC=maybe"}, &c), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(Load({"--log-level", "loud"}, {}, &c), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(Load({"--config", "/nonexistent/x.conf"}, {}, &c), absl::StatusCode::kNotFound);
  REQUIRE_CODE(Load({"--listen"}, {}, &c), absl::StatusCode::kInvalidArgument);
  TempDir dir;
  std::string path = dir.Sub("bad.conf");
  std::ofstream(path) << "[server]\nthis line has no equals\n";
  absl::Status f = Load({"--config", path}, {}, &c);
  REQUIRE_CODE(f, absl::StatusCode::kInvalidArgument);
  CHECK(std::string(f.message()).find(":2:") != std::string::npos);
}

TEST_CASE("docs/configuration.md lists exactly the knobs the binary has", "[config]") {
  std::ifstream in(SPEAKERMEM_SOURCE_DIR "/docs/configuration.md");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  // The table is the output of `speakermemd --help-config`, embedded verbatim.
  INFO("regenerate with: build/server/speakermemd --help-config");
  CHECK(doc.find(ConfigHelp()) != std::string::npos);
}

}  // namespace
}  // namespace speakermem::server

namespace speakermem::server {
namespace {

TEST_CASE("the shipped production config parses and turns auth and TLS on", "[config]") {
  ServerConfig c;
  REQUIRE_OK(ApplyConfigFile(&c, SPEAKERMEM_SOURCE_DIR "/deploy/speakermemd.prod.conf"));
  CHECK(c.auth_enabled);
  CHECK_FALSE(c.auth_keys_file.empty());
  CHECK_FALSE(c.tls_cert_file.empty());
  CHECK(c.memory.store.sync);
  CHECK(c.tenant_limits.messages_per_second > 0);
  CHECK(c.tenant_limits.max_stored_messages > 0);
}

}  // namespace
}  // namespace speakermem::server

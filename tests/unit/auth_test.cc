#include "server/auth.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "tests/test_util.h"

namespace speakermem::server {
namespace {

TEST_CASE("API keys hash with SHA-256", "[auth]") {
  CHECK(HashApiKey("abc") ==
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("the keys file parses tenants and admin flags and names bad lines", "[auth]") {
  const std::string a = HashApiKey("key-a"), b = HashApiKey("key-b");
  auto keys = ParseKeysFile("# tenants\n" + a + " acme\n\n" + b + "\tglobex admin  # ops\n");
  REQUIRE_OK(keys);
  REQUIRE(keys->size() == 2);
  CHECK(keys->at(a).tenant == "acme");
  CHECK_FALSE(keys->at(a).admin);
  CHECK(keys->at(b).admin);
  REQUIRE_CODE(ParseKeysFile("key-a acme\n"), absl::StatusCode::kInvalidArgument);  // not hashed
  REQUIRE_CODE(ParseKeysFile(a + "\n"), absl::StatusCode::kInvalidArgument);        // no tenant
  REQUIRE_CODE(ParseKeysFile(a + " acme root\n"), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(ParseKeysFile(a + " acme\n" + a + " other\n"), absl::StatusCode::kInvalidArgument);
  auto bad = ParseKeysFile("\n" + a + " x\n" + "sha256:12 y\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("line 3") != std::string::npos);
}

TEST_CASE("keys rotate live: a changed file is re-read, a broken one keeps the old keys",
          "[auth]") {
  testing::TempDir dir;
  const std::string path = dir.Sub("keys");
  std::ofstream(path) << HashApiKey("old-key") << " acme\n";
  auto ks = KeyStore::Open(path, std::chrono::milliseconds(0));
  REQUIRE_OK(ks);
  auto who = (*ks)->Authenticate("old-key");
  REQUIRE_OK(who);
  CHECK(who->tenant == "acme");
  REQUIRE_CODE((*ks)->Authenticate(""), absl::StatusCode::kUnauthenticated);
  REQUIRE_CODE((*ks)->Authenticate("nope"), absl::StatusCode::kUnauthenticated);
  // Rotate: the new key works, the old one stops, without a restart.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ofstream(path, std::ios::trunc) << HashApiKey("new-key") << " acme admin\n";
  auto rotated = (*ks)->Authenticate("new-key");
  REQUIRE_OK(rotated);
  CHECK(rotated->admin);
  REQUIRE_CODE((*ks)->Authenticate("old-key"), absl::StatusCode::kUnauthenticated);
  // A broken file: logged, the keys in force stay.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ofstream(path, std::ios::trunc) << "garbage\n";
  CHECK_FALSE((*ks)->Reload().ok());
  REQUIRE_OK((*ks)->Authenticate("new-key"));
  REQUIRE_CODE(KeyStore::Open(dir.Sub("missing")), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace speakermem::server

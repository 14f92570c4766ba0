// Helpers shared by the tests: temporary directories, status assertions, the
// location of the shared benchmark data.
#ifndef SPEAKERMEM_TESTS_TEST_UTIL_H_
#define SPEAKERMEM_TESTS_TEST_UTIL_H_

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace speakermem::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents when
// the object dies.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/speakermem-test-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string StatusText(const absl::Status& s) { return s.ToString(); }
template <typename T>
std::string StatusText(const absl::StatusOr<T>& s) {
  return s.status().ToString();
}
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}
inline absl::Status StatusOf(const absl::Status& s) { return s; }

// The shared development data (../shared/data next to the checkout), or
// empty when absent.
std::string SharedDataDir();
// True when running under CI (CI=true), where missing shared data is a
// failure, not a skip.
bool InCi();

}  // namespace speakermem::testing

#define REQUIRE_OK(expr)                                       \
  do {                                                         \
    auto&& sm_req_ok_ = (expr);                                \
    INFO(::speakermem::testing::StatusText(sm_req_ok_));       \
    REQUIRE(::speakermem::testing::StatusOf(sm_req_ok_).ok()); \
  } while (0)

#define REQUIRE_CODE(expr, expected_code)                                             \
  do {                                                                                \
    auto&& sm_req_code_ = (expr);                                                     \
    INFO(::speakermem::testing::StatusText(sm_req_code_));                            \
    REQUIRE(::speakermem::testing::StatusOf(sm_req_code_).code() == (expected_code)); \
  } while (0)

#endif  // SPEAKERMEM_TESTS_TEST_UTIL_H_

// API keys and tenants. Keys are stored hashed (SHA-256) in a keys file
// that is re-read when it changes, so keys rotate without a restart:
//
//   # comment
//   sha256:<64 hex digits> <tenant> [admin]
//
// `speakermemd --hash-key KEY` prints the line's first field. A key maps to
// one tenant; admin keys may also call the admin RPCs (Rederive,
// CorrectRecord, Backup). A file that fails to parse on reload is logged
// and the previous keys stay in force.
#ifndef SPEAKERMEM_SERVER_AUTH_H_
#define SPEAKERMEM_SERVER_AUTH_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace speakermem::server {

struct Principal {
  std::string tenant;
  bool admin = false;
};

// "sha256:" + lower-case hex of SHA-256(key).
std::string HashApiKey(absl::string_view key);

// Parses a keys file's text. INVALID_ARGUMENT "line N: ..." on error.
absl::StatusOr<std::map<std::string, Principal>> ParseKeysFile(absl::string_view text);

// Thread-safe.
class KeyStore {
 public:
  // Loads `path` (NOT_FOUND / INVALID_ARGUMENT on failure). The file is
  // checked for changes at most every `recheck`.
  static absl::StatusOr<std::unique_ptr<KeyStore>> Open(
      const std::string& path, std::chrono::milliseconds recheck = std::chrono::seconds(1));

  // UNAUTHENTICATED for a missing or unknown key.
  absl::StatusOr<Principal> Authenticate(absl::string_view api_key);
  // Re-reads the file now when it changed. Returns the parse error of a bad
  // file (the old keys stay).
  absl::Status Reload();
  size_t size() const;

 private:
  KeyStore(std::string path, std::chrono::milliseconds recheck)
      : path_(std::move(path)), recheck_(recheck) {}
  absl::Status LoadLocked();

  const std::string path_;
  const std::chrono::milliseconds recheck_;
  mutable std::mutex mu_;
  std::map<std::string, Principal> keys_;  // by hash
  std::string stamp_;                      // mtime + size of the loaded file
  std::chrono::steady_clock::time_point checked_;
};

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_AUTH_H_

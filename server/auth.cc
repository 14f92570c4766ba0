#include "server/auth.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "storage/validation.h"

namespace speakermem::server {
namespace {

constexpr char kHashPrefix[] = "sha256:";

std::string FileStamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "";
  return absl::StrCat(st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, "/", st.st_size, "/", st.st_ino);
}

}  // namespace

std::string HashApiKey(absl::string_view key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(key.data(), key.size(), digest, &len, EVP_sha256(), nullptr);
  return absl::StrCat(
      kHashPrefix, absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), len)));
}

absl::StatusOr<std::map<std::string, Principal>> ParseKeysFile(absl::string_view text) {
  std::map<std::string, Principal> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (f.empty()) continue;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("keys file line ", line_no, ": ", why));
    };
    if (f.size() < 2 || f.size() > 3) return bad("expected 'sha256:<hex> <tenant> [admin]'");
    std::string h = absl::AsciiStrToLower(f[0]);
    if (h.rfind(kHashPrefix, 0) != 0 || h.size() != sizeof(kHashPrefix) - 1 + 64 ||
        h.find_first_not_of("0123456789abcdef", sizeof(kHashPrefix) - 1) != std::string::npos) {
      return bad("the key must be given as sha256:<64 hex digits> (speakermemd --hash-key KEY)");
    }
    std::string tenant(f[1]);
    storage::IngestLimits limits;
    if (absl::Status s = storage::ValidateName("tenant", tenant, limits, false); !s.ok()) {
      return bad(s.message());
    }
    if (f.size() == 3 && f[2] != "admin") return bad("the third field may only be 'admin'");
    if (out.count(h)) return bad("the same key is listed twice");
    out[h] = Principal{tenant, f.size() == 3};
  }
  return out;
}

absl::StatusOr<std::unique_ptr<KeyStore>> KeyStore::Open(const std::string& path,
                                                         std::chrono::milliseconds recheck) {
  std::unique_ptr<KeyStore> ks(new KeyStore(path, recheck));
  std::lock_guard<std::mutex> lock(ks->mu_);
  absl::Status s = ks->LoadLocked();
  if (!s.ok()) return s;
  return ks;
}

absl::Status KeyStore::LoadLocked() {
  checked_ = std::chrono::steady_clock::now();
  std::string stamp = FileStamp(path_);
  if (stamp.empty()) return absl::NotFoundError(absl::StrCat("keys file ", path_, ": cannot read"));
  if (stamp == stamp_) return absl::OkStatus();
  std::ifstream in(path_);
  if (!in) return absl::NotFoundError(absl::StrCat("keys file ", path_, ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<std::map<std::string, Principal>> keys = ParseKeysFile(ss.str());
  if (!keys.ok()) {
    return absl::Status(keys.status().code(), absl::StrCat(path_, ": ", keys.status().message()));
  }
  const bool first = stamp_.empty();
  keys_ = std::move(*keys);
  stamp_ = stamp;
  LOG_INFO(first ? "api keys loaded" : "api keys reloaded")
      .Str("file", path_)
      .Int("keys", static_cast<int64_t>(keys_.size()));
  return absl::OkStatus();
}

absl::Status KeyStore::Reload() {
  std::lock_guard<std::mutex> lock(mu_);
  return LoadLocked();
}

size_t KeyStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_.size();
}

absl::StatusOr<Principal> KeyStore::Authenticate(absl::string_view api_key) {
  if (api_key.empty()) {
    return absl::UnauthenticatedError("an API key is required (metadata x-api-key)");
  }
  const std::string h = HashApiKey(api_key);
  std::lock_guard<std::mutex> lock(mu_);
  if (std::chrono::steady_clock::now() - checked_ >= recheck_) {
    absl::Status s = LoadLocked();
    if (!s.ok())
      LOG_ERROR("api keys not reloaded; the previous keys stay").Str("error", s.message());
  }
  auto it = keys_.find(h);
  if (it == keys_.end()) return absl::UnauthenticatedError("unknown API key");
  return it->second;
}

}  // namespace speakermem::server

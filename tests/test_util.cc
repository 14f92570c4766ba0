#include "tests/test_util.h"

namespace speakermem::testing {

std::string SharedDataDir() {
  if (const char* d = std::getenv("SPEAKERMEM_SHARED_DATA"); d != nullptr && *d) return d;
  for (const char* candidate :
       {SPEAKERMEM_SOURCE_DIR "/../shared/data", SPEAKERMEM_SOURCE_DIR "/shared/data"}) {
    if (std::filesystem::exists(std::string(candidate) + "/locomo")) return candidate;
  }
  return "";
}

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace speakermem::testing

#include "storage/record_id.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace speakermem::storage {

std::string RecordId(uint64_t number) { return absl::StrFormat("r%012d", number); }

uint64_t RecordNumber(const std::string& record_id) {
  uint64_t n = 0;
  if (record_id.size() < 2 || record_id[0] != 'r' ||
      !absl::SimpleAtoi(absl::string_view(record_id).substr(1), &n)) {
    return 0;
  }
  return n;
}

}  // namespace speakermem::storage

// Record ids: "r" and the record's number in 12 digits ("r000000000042").
// Fixed width, so ids sort as their numbers do. The one place that knows
// the format.
#ifndef SPEAKERMEM_STORAGE_RECORD_ID_H_
#define SPEAKERMEM_STORAGE_RECORD_ID_H_

#include <cstdint>
#include <string>

namespace speakermem::storage {

std::string RecordId(uint64_t number);

// "r000000000042" -> 42; 0 when the id is not of that form.
uint64_t RecordNumber(const std::string& record_id);

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_RECORD_ID_H_

// Reading the big array of a JSON export (a chat's messages) without
// holding the file or the array: a SAX pass that builds one element at a
// time. Exports of a million messages stay at the memory of one element.
#ifndef SPEAKERMEM_DATASETS_JSON_STREAM_H_
#define SPEAKERMEM_DATASETS_JSON_STREAM_H_

#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace speakermem::datasets::export_internal {

// Where the arrays are: the keys leading to each, "*" for every element of
// an array on the way ({"chats", "list", "*", "messages"}).
using JsonPath = std::vector<std::string>;

struct StreamedArrays {
  size_t arrays = 0;    // target arrays found
  size_t elements = 0;  // elements delivered
  size_t path = 0;      // which of the paths the current array is at
  // Bytes of the file read so far (during the pass).
  uint64_t read() const { return in != nullptr ? static_cast<uint64_t>(in->tellg()) : 0; }
  std::istream* in = nullptr;
};

// Calls `element(context, value, index)` for every element of every array
// at one of `paths`, in file order. `context` holds the members of the
// object enclosing the array that came before it (scalars and objects;
// arrays are not kept). `container_end(context)` (may be empty) is called
// when such an enclosing object ends. An error from a callback stops the
// pass and is returned; NOT_FOUND when the file cannot be opened;
// INVALID_ARGUMENT "<file>: not JSON at byte N" for a syntax error.
using ElementFn =
    std::function<absl::Status(const nlohmann::json& context, nlohmann::json value, size_t index)>;
using ContainerEndFn = std::function<absl::Status(const nlohmann::json& context)>;
absl::Status StreamArrays(const std::string& file, const std::vector<JsonPath>& paths,
                          const ElementFn& element, const ContainerEndFn& container_end,
                          StreamedArrays* found);

}  // namespace speakermem::datasets::export_internal

#endif  // SPEAKERMEM_DATASETS_JSON_STREAM_H_

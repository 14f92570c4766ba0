// Pieces every `speakermem` subcommand shares: argument parsing, error and
// usage exits, time and number flags, printing of JSON and records.
#ifndef SPEAKERMEM_CLIENT_CLI_COMMON_H_
#define SPEAKERMEM_CLIENT_CLI_COMMON_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "speakermem/v1/speakermem.pb.h"
#include "storage/types.h"

namespace google::protobuf {
class Message;
}

namespace speakermem::cli {

// Flags (--k v, --k=v, boolean --k) and positional arguments.
struct Args {
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;

  bool Has(const std::string& k) const { return flags.count(k) > 0; }
  std::string Get(const std::string& k, const std::string& def = "") const {
    auto it = flags.find(k);
    return it == flags.end() ? def : it->second;
  }
};

// Parses argv into `args`; false with `error` set on a malformed flag.
bool ParseArgs(int argc, char** argv, Args* args, std::string* error);

// Prints the status and returns the process exit code (2: invalid argument).
int Fail(const absl::Status& s);

// Prints `error` (if any) and the usage text; 0 without error, 2 with one.
// Defined beside the usage text in cli.cc.
int Usage(const std::string& error);

// "2026-03-02 09:00" (UTC).
std::string ShortTime(int64_t ms);

void PrintJson(const google::protobuf::Message& m);

// --NAME as an ISO-8601 time in ms (0 when absent).
absl::StatusOr<int64_t> TimeFlag(const Args& args, const std::string& name);
// --NAME as an unsigned number (`def` when absent).
absl::StatusOr<uint32_t> UintFlag(const Args& args, const std::string& name, uint32_t def);

v1::DialogueMessage ToWire(const storage::Message& m);

std::string LayerLabel(v1::Layer l);
void PrintRecord(const v1::DerivedRecord& r);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_CLIENT_CLI_COMMON_H_

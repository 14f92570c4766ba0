// The skeleton every `speakermem` command shares: a table entry with the
// command's name, the flags and arguments it needs (checked in one place,
// before it runs: one usage error naming what is missing) and its body; and
// the ending of a unary command (the RPC's error, or its reply printed as
// JSON with --json, else as text).
#ifndef SPEAKERMEM_CLIENT_CLI_COMMAND_H_
#define SPEAKERMEM_CLIENT_CLI_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/cli_common.h"

namespace speakermem::client {
class Client;
}

namespace speakermem::cli {

struct Command {
  std::string name;
  std::vector<std::string> flags;  // required flags, e.g. {"channel"}
  // Arguments after the command name: at least min_args, at most max_args.
  size_t min_args = 0;
  size_t max_args = SIZE_MAX;
  std::string args_usage;  // what they are, for the usage error: "RECORD_ID CONTENT"
  std::function<int(client::Client*, const Args&)> run;
};

// The entry of `table` named `name`, or null.
const Command* FindCommand(const std::vector<Command>& table, const std::string& name);

// Runs `cmd` after checking what it needs of `args` (args.positional[0] is
// the command's name).
int RunCommand(const Command& cmd, client::Client* c, const Args& args);

// A unary command's ending: the RPC's error, or the reply as JSON (--json)
// or printed by `text`.
template <typename Resp, typename Text>
int Reply(const Args& args, const absl::StatusOr<Resp>& resp, Text text) {
  if (!resp.ok()) return Fail(resp.status());
  if (args.Has("json")) {
    PrintJson(*resp);
  } else {
    text(*resp);
  }
  return 0;
}

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_CLIENT_CLI_COMMAND_H_

#include "client/cli_command.h"

#include "absl/strings/str_cat.h"

namespace speakermem::cli {

const Command* FindCommand(const std::vector<Command>& table, const std::string& name) {
  for (const auto& c : table) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int RunCommand(const Command& cmd, client::Client* c, const Args& args) {
  for (const auto& f : cmd.flags) {
    if (!args.Has(f)) return Usage(absl::StrCat(cmd.name, ": --", f, " is required"));
  }
  const size_t n = args.positional.empty() ? 0 : args.positional.size() - 1;
  if (n < cmd.min_args || n > cmd.max_args) {
    return Usage(absl::StrCat(cmd.name, ": give ", cmd.args_usage));
  }
  return cmd.run(c, args);
}

}  // namespace speakermem::cli

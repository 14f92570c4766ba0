// The CLI's command skeleton: what a command needs is checked before it
// runs, with one usage error naming what is missing.
#include "client/cli_command.h"

#include <catch2/catch.hpp>

namespace speakermem::cli {

// The usage exit, as the binaries define it beside their usage text.
std::string last_usage;
int Usage(const std::string& error) {
  last_usage = error;
  return error.empty() ? 0 : 2;
}

namespace {

Args Parsed(std::vector<std::string> words) {
  std::vector<char*> argv = {const_cast<char*>("speakermem")};
  for (auto& w : words) argv.push_back(w.data());
  Args args;
  std::string error;
  REQUIRE(ParseArgs(static_cast<int>(argv.size()), argv.data(), &args, &error));
  return args;
}

TEST_CASE("a command runs only with its flags and arguments", "[cli]") {
  int runs = 0;
  const std::vector<Command> table = {
      {"history", {"channel"}, 1, 1, "a RECORD_ID", [&](client::Client*, const Args& a) {
         ++runs;
         return a.positional[1] == "r1" ? 0 : 1;
       }}};
  REQUIRE(FindCommand(table, "history") != nullptr);
  CHECK(FindCommand(table, "histories") == nullptr);
  const Command& cmd = *FindCommand(table, "history");

  CHECK(RunCommand(cmd, nullptr, Parsed({"history", "r1"})) == 2);
  CHECK(last_usage == "history: --channel is required");
  CHECK(RunCommand(cmd, nullptr, Parsed({"history", "--channel", "c"})) == 2);
  CHECK(last_usage == "history: give a RECORD_ID");
  CHECK(RunCommand(cmd, nullptr, Parsed({"history", "--channel", "c", "r1", "r2"})) == 2);
  CHECK(runs == 0);
  CHECK(RunCommand(cmd, nullptr, Parsed({"history", "--channel=c", "r1"})) == 0);
  CHECK(runs == 1);
}

}  // namespace
}  // namespace speakermem::cli

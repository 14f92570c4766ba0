// speakermem-eval: the evaluation commands, apart from the `speakermem`
// client so that the client links neither RocksDB, FAISS nor curl.
// `speakermem eval ARGS` runs this binary with the same arguments;
// `speakermem-eval writer|retrieval|rows|report ARGS` works as well.
#include <cstdio>
#include <string>

#include "client/cli_common.h"
#include "eval/tool/cli_eval.h"

namespace speakermem::cli {

int Usage(const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "speakermem-eval: %s\n\n", error.c_str());
  std::fputs(
      "usage: speakermem-eval writer|retrieval|rows|report [ARGS] PATH...\n"
      "       (the same as `speakermem eval ...`; `speakermem help` lists every flag)\n",
      error.empty() ? stdout : stderr);
  return error.empty() ? 0 : 2;
}

}  // namespace speakermem::cli

int main(int argc, char** argv) {
  using speakermem::cli::Args;
  Args args;
  std::string error;
  if (!speakermem::cli::ParseArgs(argc, argv, &args, &error)) {
    return speakermem::cli::Usage(error);
  }
  if (args.positional.empty() || args.Has("help")) return speakermem::cli::Usage("");
  // Subcommands read their arguments after "eval <what>".
  if (args.positional[0] != "eval") args.positional.insert(args.positional.begin(), "eval");
  return speakermem::cli::CmdEval(args, argc, argv);
}

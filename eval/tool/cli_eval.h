// `speakermem eval writer|retrieval|rows|report`.
#ifndef SPEAKERMEM_EVAL_TOOL_CLI_EVAL_H_
#define SPEAKERMEM_EVAL_TOOL_CLI_EVAL_H_

#include "client/cli_common.h"

namespace speakermem::cli {

// Runs the eval subcommand named by args.positional[1]; the exit code.
int CmdEval(const Args& args, int argc, char** argv);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_EVAL_TOOL_CLI_EVAL_H_

// `speakermem` channel-administration and Writer-inspection commands.
#ifndef SPEAKERMEM_CLIENT_CLI_ADMIN_H_
#define SPEAKERMEM_CLIENT_CLI_ADMIN_H_

#include <vector>

#include "client/cli_command.h"

namespace speakermem::cli {

// delete, edit, forget, delete-channel, export, import, backup,
// score-actions, trajectories.
std::vector<Command> AdminCommands();

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_CLIENT_CLI_ADMIN_H_

// `speakermem` channel-administration and Writer-inspection commands.
#ifndef SPEAKERMEM_CLIENT_CLI_ADMIN_H_
#define SPEAKERMEM_CLIENT_CLI_ADMIN_H_

#include "client/cli_common.h"
#include "client/client.h"

namespace speakermem::cli {

// Each returns the process exit code.
int RunTrajectories(client::Client* c, const Args& args);
int RunDelete(client::Client* c, const Args& args);
int RunEdit(client::Client* c, const Args& args);
int RunForget(client::Client* c, const Args& args);
int RunDeleteChannel(client::Client* c, const Args& args);
int RunExport(client::Client* c, const Args& args);
int RunImport(client::Client* c, const Args& args);
int RunBackup(client::Client* c, const Args& args);
int RunScoreActions(client::Client* c, const Args& args);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_CLIENT_CLI_ADMIN_H_

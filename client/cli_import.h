// `speakermem ingest --format slack EXPORT_DIR`: history import from a chat
// platform's export, streamed one export file at a time.
#ifndef SPEAKERMEM_CLIENT_CLI_IMPORT_H_
#define SPEAKERMEM_CLIENT_CLI_IMPORT_H_

#include "client/cli_common.h"
#include "client/client.h"

namespace speakermem::cli {

// True for the formats CmdImport reads (export folders, not files).
bool IsExportFormat(const std::string& format);

// Imports each positional export folder (args.positional[1..]). Exit code:
// 0, 1 when a chunk was rejected, 2 on malformed input.
int CmdImport(client::Client* c, const Args& args);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_CLIENT_CLI_IMPORT_H_

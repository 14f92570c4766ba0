// `speakermem eval report`: a benchmark file end to end in an embedded
// instance configured like speakermemd.
#ifndef SPEAKERMEM_EVAL_TOOL_EVAL_REPORT_CMD_H_
#define SPEAKERMEM_EVAL_TOOL_EVAL_REPORT_CMD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/config.h"
#include "speakermem/v1/speakermem.pb.h"

namespace speakermem::cli {

struct EvalReportOptions {
  std::string format = "auto";  // locomo, socialmem, jsonl, auto
  std::string out_dir;
  // speakermemd's config file for the embedded instance (models, retrieval,
  // writer); the SPEAKERMEM_<SECTION>_<KEY> environment applies over it.
  std::string config_file;
  // A running server to evaluate instead (its own configuration applies).
  std::string addr;
  std::string api_key;
  std::string judge_url;  // empty: no judge
  std::string judge_model;
  std::string judge_key_env;
  bool include_texts = false;
  std::string command;  // the command line, recorded in the report
  std::vector<std::string> paths;
};

// Returns the process exit code; errors are printed on stderr.
int RunEvalReport(const EvalReportOptions& options);

// speakermemd's configuration for an embedded instance: embedded defaults,
// then `config_file` (when not empty), then the SPEAKERMEM_<SECTION>_<KEY>
// environment. INVALID_ARGUMENT / NOT_FOUND as the config loader returns.
absl::StatusOr<server::ServerConfig> LoadEmbeddedConfig(const std::string& config_file);

// A Query/Retrieve request for evaluating a running server: `config` is
// "bm25", "dense" or the full pipeline; top-k `k`.
v1::QueryRequest RemoteEvalRequest(const std::string& channel, const std::string& question,
                                   const std::string& config, size_t k);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_EVAL_TOOL_EVAL_REPORT_CMD_H_

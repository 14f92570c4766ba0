// `speakermem eval report`: a benchmark file end to end in an embedded
// instance configured like speakermemd.
#ifndef SPEAKERMEM_CLIENT_EVAL_REPORT_CMD_H_
#define SPEAKERMEM_CLIENT_EVAL_REPORT_CMD_H_

#include <string>
#include <vector>

namespace speakermem::cli {

struct EvalReportOptions {
  std::string format = "auto";  // locomo, socialmem, jsonl, auto
  std::string out_dir;
  // speakermemd's config file for the embedded instance (models, retrieval,
  // writer); the SPEAKERMEM_<SECTION>_<KEY> environment applies over it.
  std::string config_file;
  std::string judge_url;  // empty: no judge
  std::string judge_model;
  std::string judge_key_env;
  bool include_texts = false;
  std::string command;  // the command line, recorded in the report
  std::vector<std::string> paths;
};

// Returns the process exit code; errors are printed on stderr.
int RunEvalReport(const EvalReportOptions& options);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_CLIENT_EVAL_REPORT_CMD_H_

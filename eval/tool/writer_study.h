// `speakermem eval writer`: the offline Writer replayed on reference Writer
// trajectories, its constants chosen leave-one-network-out, scored with
// SpeakerLevenshtein, the chain score and the memory reward beside the
// one-record-per-message baseline, plus what the records look like (records
// per message, questions, acknowledgements, layers).
#ifndef SPEAKERMEM_EVAL_TOOL_WRITER_STUDY_H_
#define SPEAKERMEM_EVAL_TOOL_WRITER_STUDY_H_

#include <string>
#include <vector>

namespace speakermem::cli {

struct WriterStudyOptions {
  std::vector<std::string> paths;  // trajectory files, one network each
  std::string dump_dir;            // predicted and reference states as JSON lines
  std::string md_out;              // the report as markdown
  bool json = false;               // the report as JSON on stdout
};

// Returns the process exit code: 0; 1 on an error; 3 when the compiled
// defaults are not the constants chosen on all trajectories.
int RunWriterStudy(const WriterStudyOptions& options);

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_EVAL_TOOL_WRITER_STUDY_H_

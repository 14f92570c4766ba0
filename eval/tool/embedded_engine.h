// An engine in a temporary directory, for CLI evaluations that run without
// a server. Removed with everything in it when destroyed.
#ifndef SPEAKERMEM_EVAL_TOOL_EMBEDDED_ENGINE_H_
#define SPEAKERMEM_EVAL_TOOL_EMBEDDED_ENGINE_H_

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "engine/memory.h"

namespace speakermem::cli {

class EmbeddedEngine {
 public:
  // Starts the Writer and the embedder. INTERNAL when the directory cannot
  // be made; the engine's errors as they are.
  // `options` as speakermemd would have them (its store path is replaced).
  static absl::StatusOr<std::unique_ptr<EmbeddedEngine>> Open(engine::MemoryOptions o = {}) {
    char tmpl[] = "/tmp/speakermem-eval-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
    auto e = std::unique_ptr<EmbeddedEngine>(new EmbeddedEngine(tmpl));
    o.store.path = e->dir_ + "/data";
    o.shard_dir.clear();
    o.backup_dir.clear();
    o.writer.idle_flush_ms = 0;
    auto m = engine::Memory::Open(o, Clock::Real());
    if (!m.ok()) return m.status();
    e->memory_ = std::move(*m);
    if (absl::Status s = e->memory_->RebuildIndexes(nullptr); !s.ok()) return s;
    if (absl::Status s = e->memory_->StartWriter(); !s.ok()) return s;
    return e;
  }
  ~EmbeddedEngine() {
    memory_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  engine::Memory* memory() { return memory_.get(); }

 private:
  explicit EmbeddedEngine(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  std::unique_ptr<engine::Memory> memory_;
};

}  // namespace speakermem::cli

#endif  // SPEAKERMEM_EVAL_TOOL_EMBEDDED_ENGINE_H_

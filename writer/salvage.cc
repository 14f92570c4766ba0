// Deriving a segment whose reply was cut at max_tokens: the cut reply's
// complete actions are kept, and the segment is derived again in two halves
// (recursively) with those actions shown as records already written, so the
// model adds what the cut lost instead of repeating the same call. Only a
// one-message segment whose reply still yields nothing is an error (the
// service retries, then parks it).
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llm/metrics.h"
#include "llm/structured.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

constexpr char kPending[] = "pending-";

class SplittingWriter final : public WriterModel {
 public:
  SplittingWriter(std::unique_ptr<WriterModel> inner, llm::LlmMetrics* metrics)
      : inner_(std::move(inner)), metrics_(metrics) {}

  absl::StatusOr<WriterOutput> Write(const WriterInput& in, llm::StageCall* call) override {
    llm::StageCall local;
    llm::StageCall* c = call != nullptr ? call : &local;
    const size_t before = c->coercions.size();
    absl::StatusOr<WriterOutput> out = Derive(in, c);
    if (metrics_ != nullptr) {
      for (size_t i = before; i < c->coercions.size(); ++i) {
        metrics_->CountCoercion("writer", c->coercions[i]);
      }
    }
    if (out.ok() && c->coercions.size() > before) {
      std::vector<std::string> kinds(c->coercions.begin() + static_cast<long>(before),
                                     c->coercions.end());
      absl::StrAppend(&c->note, c->note.empty() ? "" : "; ",
                      "coerced: ", absl::StrJoin(kinds, ", "));
    }
    return out;
  }

 private:
  absl::StatusOr<WriterOutput> Derive(const WriterInput& in, llm::StageCall* call) {
    absl::StatusOr<WriterOutput> out = inner_->Write(in, call);
    if (!out.ok() || !out->truncated) return out;
    std::vector<WriterAction> kept = std::move(out->actions);
    if (in.messages.size() <= 1) {
      if (kept.empty()) {
        return absl::OutOfRangeError(
            "stage writer: reply cut at max_tokens (finish_reason=length) on a one-message "
            "segment, with no complete action");
      }
      return Finish(std::move(kept), "cut reply of one message: its complete actions kept");
    }
    llm::Coerced(call, "split_segment");
    const size_t mid = in.messages.size() / 2;
    for (int half = 0; half < 2; ++half) {
      WriterInput sub = in;
      sub.messages.assign(
          in.messages.begin() + (half == 0 ? 0 : static_cast<long>(mid)),
          half == 0 ? in.messages.begin() + static_cast<long>(mid) : in.messages.end());
      // What is kept so far is shown as written, under a pending id.
      for (size_t i = 0; i < kept.size(); ++i) {
        const WriterAction& a = kept[i];
        if (a.type != WriterAction::Type::kAdd) continue;
        sub.heads.push_back(WriterHead{absl::StrCat(kPending, i), NormalizeLayer(a.layer), a.owner,
                                       a.source, a.utype, a.content,
                                       in.messages.back().timestamp_ms});
      }
      absl::StatusOr<WriterOutput> part = Derive(sub, call);
      if (!part.ok()) return part.status();
      for (WriterAction& a : part->actions) {
        if (a.type == WriterAction::Type::kNoop) continue;
        // An UPDATE of a kept ADD revises it in place.
        size_t i = 0;
        if (a.type == WriterAction::Type::kUpdate && a.entry_id.rfind(kPending, 0) == 0 &&
            absl::SimpleAtoi(a.entry_id.substr(sizeof(kPending) - 1), &i) && i < kept.size()) {
          kept[i].content = a.content;
          continue;
        }
        kept.push_back(std::move(a));
      }
    }
    return Finish(std::move(kept), "cut reply: complete actions kept, segment split in two");
  }

  static WriterOutput Finish(std::vector<WriterAction> actions, const char* how) {
    WriterOutput out;
    if (actions.empty()) {
      WriterAction noop;
      noop.type = WriterAction::Type::kNoop;
      noop.type_name = "NOOP";
      actions.push_back(noop);
    }
    out.actions = std::move(actions);
    out.raw_text = absl::StrCat(SerializeWriterActions(out.actions), "\n// ", how);
    return out;
  }

  const std::unique_ptr<WriterModel> inner_;
  llm::LlmMetrics* const metrics_;
};

}  // namespace

std::unique_ptr<WriterModel> NewSplittingWriter(std::unique_ptr<WriterModel> inner,
                                                llm::LlmMetrics* metrics) {
  return std::make_unique<SplittingWriter>(std::move(inner), metrics);
}

}  // namespace speakermem::writer

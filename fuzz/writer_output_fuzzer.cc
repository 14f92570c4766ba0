// libFuzzer target: the Writer's output path as the live Writer runs it on a
// model reply: parse the text into actions (ParseWriterActions, the JSON
// extraction included), validate them against a channel state
// (ValidateActions), and build the records and chain links (BuildApply).
#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/types.h"
#include "writer/validate.h"
#include "writer/writer_model.h"

namespace {

using speakermem::storage::Message;
using speakermem::storage::Record;
using speakermem::storage::WriterState;
using speakermem::writer::ValidationContext;

const ValidationContext& Context() {
  static const ValidationContext* ctx = [] {
    auto* c = new ValidationContext;
    c->roster = {{"Alice", {"Alice", "Ally"}}, {"Bob", {"Bob"}}, {"Carol", {"Carol"}}};
    Record a;
    a.record_id = "r000000000001";
    a.owner = a.source = "Alice";
    a.layer = "core";
    a.utype = "stance";
    a.content = "Alice prefers the beach venue";
    Record g = a;
    g.record_id = "r000000000002";
    g.owner = "GROUP";
    g.layer = "interaction";
    g.content = "The group booked Lisbon";
    Record old = a;
    old.record_id = "r000000000003";
    old.superseded_by = "r000000000001";
    c->records = {{a.record_id, a}, {g.record_id, g}, {old.record_id, old}};
    c->max_actions = 8;
    return c;
  }();
  return *ctx;
}

const std::vector<Message>& Segment() {
  static const std::vector<Message>* seg = [] {
    auto* s = new std::vector<Message>;
    const char* who[] = {"Alice", "Bob", "Carol"};
    for (uint64_t i = 1; i <= 4; ++i) {
      Message m;
      m.seq = 10 + i;
      m.message_id = "m" + std::to_string(i);
      m.speaker = m.speaker_id = who[i % 3];
      m.text = "message " + std::to_string(i) + " about the venue and Bob";
      m.timestamp_ms = 1700000000000 + static_cast<int64_t>(i) * 1000;
      m.session = "s1";
      s->push_back(m);
    }
    return s;
  }();
  return *seg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto actions = speakermem::writer::ParseWriterActions(text);
  if (!actions.ok()) return 0;
  auto report = speakermem::writer::ValidateActions(*actions, Context());
  WriterState state;
  state.cursor_seq = 10;
  state.next_record = 4;
  auto apply = speakermem::writer::BuildApply(report, Context(), Segment(), state, 1700000100000);
  // Invariants the store relies on.
  if (apply.new_records.size() != report.accepted.size()) __builtin_trap();
  for (const auto& r : apply.new_records) {
    if (r.record_id.empty() || r.content.empty()) __builtin_trap();
  }
  return 0;
}

// The roster the Writer unit tests share, and the offline Writer called on
// a segment of messages written for a test.
#ifndef SPEAKERMEM_TESTS_UNIT_WRITER_ROSTER_H_
#define SPEAKERMEM_TESTS_UNIT_WRITER_ROSTER_H_

#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "writer/writer_model.h"

namespace speakermem::writer::testing {

inline std::vector<WriterRosterMember> Roster() {
  return {{"alice", {"Alice"}}, {"bob", {"Bob"}}, {"chen", {"Chen"}}, {"dana", {"Dana"}}};
}

// A message of the roster member `speaker_id` (display name capitalised).
inline WriterMessage Msg(const std::string& speaker_id, const std::string& text) {
  std::string display = speaker_id;
  display[0] = static_cast<char>(std::toupper(display[0]));
  return WriterMessage{"id-" + text.substr(0, 8), speaker_id, display, text, 1000, "s1", ""};
}

// A message of `speaker_id` replying to one of `to_speaker_id`.
inline WriterMessage Reply(const std::string& speaker_id, const std::string& text,
                           const std::string& to_speaker_id) {
  WriterMessage m = Msg(speaker_id, text);
  m.reply_to_speaker_id = to_speaker_id;
  return m;
}

// The offline Writer's actions for one segment; its raw text must parse back
// to the same number of actions.
inline std::vector<WriterAction> Write(std::vector<WriterMessage> msgs,
                                       std::vector<WriterHead> heads = {}, size_t max_actions = 8,
                                       const OfflineWriterParams& params = {},
                                       std::vector<WriterRosterMember> roster = Roster()) {
  auto writer = NewOfflineWriter(params);
  WriterInput in;
  in.roster = std::move(roster);
  in.heads = std::move(heads);
  in.messages = std::move(msgs);
  in.max_actions = max_actions;
  llm::StageCall call;
  auto out = writer->Write(in, &call);
  REQUIRE_OK(out);
  auto parsed = ParseWriterActions(out->raw_text);
  REQUIRE_OK(parsed);
  REQUIRE(parsed->size() == out->actions.size());
  return out->actions;
}

}  // namespace speakermem::writer::testing

#endif  // SPEAKERMEM_TESTS_UNIT_WRITER_ROSTER_H_

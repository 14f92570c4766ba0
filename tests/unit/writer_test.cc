#include <catch2/catch.hpp>

#include "tests/test_util.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

using Type = WriterAction::Type;

std::vector<WriterRosterMember> Roster() {
  return {{"alice", {"Alice"}}, {"bob", {"Bob"}}, {"chen", {"Chen"}}, {"dana", {"Dana"}}};
}

WriterMessage Msg(const std::string& speaker_id, const std::string& text) {
  std::string display = speaker_id;
  display[0] = static_cast<char>(std::toupper(display[0]));
  return WriterMessage{"id-" + text.substr(0, 8), speaker_id, display, text, 1000, "s1"};
}

std::vector<WriterAction> Write(std::vector<WriterMessage> msgs,
                                std::vector<WriterHead> heads = {}, size_t max_actions = 8) {
  auto writer = NewOfflineWriter();
  WriterInput in;
  in.roster = Roster();
  in.heads = std::move(heads);
  in.messages = std::move(msgs);
  in.max_actions = max_actions;
  llm::StageCall call;
  auto out = writer->Write(in, &call);
  REQUIRE_OK(out);
  // The raw text is the serialised actions and parses back to them.
  auto parsed = ParseWriterActions(out->raw_text);
  REQUIRE_OK(parsed);
  REQUIRE(parsed->size() == out->actions.size());
  return out->actions;
}

TEST_CASE("offline Writer: first-person stances go to the speaker's profile", "[writer]") {
  auto a = Write({Msg("bob", "I prefer concise checklists.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].source == "bob");
  CHECK(a[0].layer == "profile");
  CHECK(a[0].utype == "stance");
  CHECK(a[0].content == "Bob prefers concise checklists");
}

TEST_CASE("offline Writer: first-person facts go to the speaker's core", "[writer]") {
  auto a = Write({Msg("dana", "I'm vegetarian and my sister lives in Lisbon")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].layer == "core");
  CHECK(a[0].owner == "dana");
  CHECK(a[0].utype == "fact");
  CHECK(a[0].content == "Dana is vegetarian and Dana's sister lives in Lisbon");
}

TEST_CASE("offline Writer: 'A says B ...' is owner B, source A", "[writer]") {
  auto a = Write({Msg("alice", "Bob agreed to run the demo on Friday")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].source == "alice");
  CHECK(a[0].layer == "profile");
  auto b = Write({Msg("dana", "I think Chen always volunteers for the workshops")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "chen");
  CHECK(b[0].source == "dana");
  CHECK(b[0].utype == "stance");
  CHECK(b[0].content == "Dana thinks Chen always volunteers for the workshops");
}

TEST_CASE("offline Writer: decisions and norms go to GROUP layers", "[writer]") {
  auto a = Write({Msg("alice", "Decision: the offsite is in Lisbon, the week of May 18."),
                  Msg("chen", "We always start the retro with a joke round"),
                  Msg("alice", "Please remember to submit receipts within two weeks")});
  REQUIRE(a.size() == 3);
  CHECK(a[0].owner == "GROUP");
  CHECK(a[0].layer == "interaction");
  CHECK(a[0].utype == "decision");
  CHECK(a[0].source == "alice");
  CHECK(a[1].owner == "GROUP");
  CHECK(a[1].layer == "insight");
  CHECK(a[1].content == "The group always start the retro with a joke round");
  CHECK(a[2].layer == "insight");
  CHECK(a[2].source == "alice");
}

TEST_CASE("offline Writer: scope is always consistent", "[writer]") {
  auto a = Write({Msg("alice", "Decision: we go to Porto"), Msg("bob", "I love surfing a lot"),
                  Msg("chen", "Dana is the best planner we have"),
                  Msg("dana", "My flight lands at noon")});
  for (const auto& x : a) {
    INFO(x.content);
    if (IsGroupLayer(x.layer)) {
      CHECK(x.owner == "GROUP");
    } else {
      CHECK(x.owner != "GROUP");
    }
  }
}

TEST_CASE("offline Writer: a revision of a head is an UPDATE, a restatement nothing",
          "[writer]") {
  std::vector<WriterHead> heads = {{"h1", "interaction", "GROUP", "alice", "decision",
                                    "The offsite is in Lisbon, the week of May 18", 1}};
  auto a = Write({Msg("alice", "Updated decision: the offsite moves to Porto, same week of May 18")},
                 heads);
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kUpdate);
  CHECK(a[0].entry_id == "h1");
  CHECK(a[0].content.find("Porto") != std::string::npos);

  auto same = Write({Msg("alice", "Decision: the offsite is in Lisbon, the week of May 18")}, heads);
  REQUIRE(same.size() == 1);
  CHECK(same[0].type == Type::kNoop);
}

TEST_CASE("offline Writer: revisions within a segment merge into one record", "[writer]") {
  auto a = Write({Msg("bob", "I prefer the beach for the offsite"),
                  Msg("bob", "Actually I prefer the mountains for the offsite now")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  CHECK(a[0].content.find("mountains") != std::string::npos);
}

TEST_CASE("offline Writer: chit-chat and questions give NOOP and the cap holds", "[writer]") {
  auto a = Write({Msg("alice", "ok thanks!"), Msg("bob", "lol"),
                  Msg("chen", "Should we book the train now?")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kNoop);
  std::vector<WriterMessage> many;
  for (int i = 0; i < 20; ++i) {
    many.push_back(Msg("bob", "I like " + std::string(3, static_cast<char>('a' + i)) + " and " +
                                  std::string(4, static_cast<char>('b' + i))));
  }
  CHECK(Write(many, {}, 8).size() <= 8);
}

TEST_CASE("ParseWriterActions is tolerant of form, strict on meaning", "[writer]") {
  auto a = ParseWriterActions(
      "Here you go:\n```json\n{\"actions\": [{\"action\": \"ADD\", \"owner\": \"Bob\", "
      "\"source\": \"Bob\", \"layer\": \"per_speaker_profile\", \"utype\": \"stance\", "
      "\"content\": \"x\"}, {\"action\": \"update\", \"entry_id\": \"e1\", \"content\": \"y\"},"
      " {\"action\": \"DELETE\"}, {\"action\": \"NOOP\"},]}\n```");
  REQUIRE_OK(a);
  REQUIRE(a->size() == 4);
  CHECK((*a)[0].type == Type::kAdd);
  CHECK((*a)[0].layer == "profile");
  CHECK((*a)[1].type == Type::kUpdate);
  CHECK((*a)[1].entry_id == "e1");
  CHECK((*a)[2].type == Type::kUnknown);
  CHECK((*a)[2].type_name == "DELETE");
  CHECK((*a)[3].type == Type::kNoop);
  auto bare = ParseWriterActions("[{\"action\":\"NOOP\"}]");
  REQUIRE_OK(bare);
  CHECK(bare->size() == 1);
  REQUIRE_CODE(ParseWriterActions("{\"something\": 1}"), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(ParseWriterActions("not json"), absl::StatusCode::kInvalidArgument);
}

TEST_CASE("layer names map between code and paper forms", "[writer]") {
  CHECK(NormalizeLayer("group_insight") == "insight");
  CHECK(NormalizeLayer("Core") == "core");
  CHECK(NormalizeLayer("episodic").empty());
  CHECK(PaperLayerName("interaction") == "group_interaction");
}

}  // namespace
}  // namespace speakermem::writer

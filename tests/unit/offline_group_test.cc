// The offline Writer's reading of what the group arranges: sentences written
// for each rule (none taken from the benchmark data).
#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/unit/writer_roster.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

using testing::Msg;
using testing::Write;
using Type = WriterAction::Type;

TEST_CASE("offline Writer: 'let's' anywhere in a clause proposes a plan to the group",
          "[writer][group]") {
  auto a = Write({Msg("bob", "If the rain holds off let's walk to the harbour after lunch")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "GROUP");
  CHECK(a[0].layer == "interaction");
  CHECK(a[0].source == "bob");
  CHECK(a[0].content == "If the rain holds off the group will walk to the harbour after lunch");
}

TEST_CASE("offline Writer: two members' joint arrangement is the group's interaction",
          "[writer][group]") {
  auto a = Write({Msg("alice", "Chen and I will drive up together on Friday")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "GROUP");
  CHECK(a[0].layer == "interaction");
  CHECK(a[0].source == "alice");
  CHECK(a[0].content == "Chen and Alice will drive up together on Friday");
  // Someone who is not a member is the speaker's own matter.
  auto b = Write({Msg("alice", "My brother and I will drive up together on Friday")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "alice");
  CHECK(b[0].layer == "core");
}

TEST_CASE("offline Writer: 'X it is' ends a clause of its own, the rest stays the speaker's",
          "[writer][group]") {
  auto a = Write({Msg("dana", "Lisbon it is, I'll book the flights tonight")});
  REQUIRE(a.size() == 2);
  CHECK(a[0].owner == "GROUP");
  CHECK(a[0].layer == "interaction");
  CHECK(a[0].content == "The group decided: Lisbon it is");
  CHECK(a[1].owner == "dana");
  CHECK(a[1].layer == "core");
  CHECK(a[1].content == "Dana will book the flights tonight");
}

TEST_CASE("offline Writer: a group record has the group as its subject", "[writer][group]") {
  // A choice made, stated once for the record however many clauses it has.
  auto a = Write({Msg("chen", "Booked! Friday at 8, the corner table by the window.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "GROUP");
  CHECK(a[0].content == "The group decided: Friday at 8, the corner table by the window");
  // Two decisions on one matter in a segment make one record, stated once.
  auto d =
      Write({Msg("alice", "Decision: the picnic is at the lake on Sunday."), Msg("bob", "Great"),
             Msg("chen", "Confirmed: the picnic at the lake starts at noon.")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content ==
        "The group decided: the picnic is at the lake on Sunday; the picnic at the lake starts at "
        "noon");
  // "We" is one subject, and its verb agrees; "X and I" keeps the plural.
  auto b = Write({Msg("dana", "We need a bigger van for the move next Saturday")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "The group needs a bigger van for the move next Saturday");
  auto c = Write({Msg("alice", "Bob and I vote for the lake route on Sunday")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Bob and Alice vote for the lake route on Sunday");
}

TEST_CASE("offline Writer: thanks or congratulations naming a member are acknowledgements",
          "[writer][noop]") {
  auto a = Write({Msg("alice", "Congrats Bob!"), Msg("chen", "Thanks Dana and Bob")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kNoop);
}

TEST_CASE("offline Writer: a statement that adds no word to a record already made is dropped",
          "[writer][update]") {
  std::vector<WriterHead> heads = {{"h1", "interaction", "GROUP", "alice", "decision",
                                    "The group decided: the offsite moves to Porto", 1}};
  auto a = Write({Msg("bob", "Porto it is!")}, heads);
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kNoop);
  // Within a segment too, and for a person's own records.
  auto b = Write({Msg("chen", "I bake sourdough every Sunday for the neighbours."),
                  Msg("dana", "Nice!"), Msg("chen", "I bake sourdough.")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Chen bakes sourdough every Sunday for the neighbours");
}

TEST_CASE("offline Writer: something 'new' is not a revision of what is remembered",
          "[writer][update]") {
  std::vector<WriterHead> heads = {
      {"h1", "core", "dana", "dana", "fact", "Dana is looking for a flat near the river", 1}};
  auto a = Write({Msg("dana", "I found a new cafe near the river")}, heads);
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  // An explicit revision of the same matter still is one.
  auto b = Write({Msg("dana", "I changed my mind, no flat near the river, the old town instead")},
                 heads);
  REQUIRE(b.size() == 1);
  CHECK(b[0].type == Type::kUpdate);
  CHECK(b[0].entry_id == "h1");
}

TEST_CASE("offline Writer: a person's statements in one segment make at most two core records",
          "[writer][consolidate]") {
  std::vector<WriterMessage> msgs = {
      Msg("bob", "I moved to Leeds in spring for a job at the university hospital."),
      Msg("alice", "Nice"),
      Msg("bob", "I run along the canal most mornings."),
      Msg("alice", "Wow"),
      Msg("bob", "I adopted a grey cat called Pebble who hates the rain."),
      Msg("alice", "Same"),
      Msg("bob", "I still miss Bristol.")};
  OfflineWriterParams two;
  two.max_core_per_segment = 2;
  two.min_record_words = 0;
  auto a = Write(msgs, {}, 8, two);
  REQUIRE(a.size() == 2);
  // The two most informative statements are kept; the others share no word
  // with them and join the nearest one (equally near: the earlier).
  CHECK(a[0].content ==
        "Bob moved to Leeds in spring for a job at the university hospital; Bob runs along the "
        "canal most mornings");
  CHECK(a[1].content ==
        "Bob adopted a grey cat called Pebble who hates the rain; Bob still misses Bristol");
  // A statement sharing words with a kept record joins that one.
  auto b = Write(
      {Msg("bob", "I moved to Leeds in spring for a job at the university hospital."),
       Msg("alice", "Nice"), Msg("bob", "I adopted a grey cat called Pebble who hates the rain."),
       Msg("alice", "Same"), Msg("bob", "The hospital canteen is great.")},
      {}, 8, two);
  REQUIRE(b.size() == 2);
  CHECK(b[0].content ==
        "Bob moved to Leeds in spring for a job at the university hospital; The hospital "
        "canteen is great");
  OfflineWriterParams unlimited = two;
  unlimited.max_core_per_segment = 0;
  CHECK(Write(msgs, {}, 8, unlimited).size() == 4);
}

TEST_CASE("offline Writer: a statement of few content words joins the person's kept record",
          "[writer][consolidate]") {
  std::vector<WriterMessage> msgs = {
      Msg("bob", "I moved to Leeds in spring for a job at the university hospital."),
      Msg("alice", "Nice"), Msg("bob", "I adopted a grey cat called Pebble who hates the rain."),
      Msg("alice", "Same"), Msg("bob", "Still miss Bristol.")};
  OfflineWriterParams floor;
  floor.max_core_per_segment = 3;
  floor.min_record_words = 4;
  auto a = Write(msgs, {}, 8, floor);
  REQUIRE(a.size() == 2);
  CHECK(a[1].content ==
        "Bob adopted a grey cat called Pebble who hates the rain; Still miss Bristol");
  // Without the floor it stands alone; a person's only record always stands.
  floor.min_record_words = 0;
  CHECK(Write(msgs, {}, 8, floor).size() == 3);
  floor.min_record_words = 4;
  auto only = Write({Msg("bob", "Still miss Bristol.")}, {}, 8, floor);
  REQUIRE(only.size() == 1);
  CHECK(only[0].type == Type::kAdd);
}

}  // namespace
TEST_CASE("offline Writer: a GROUP record's source is the member who carried its matter",
          "[writer][group]") {
  auto a = Write({Msg("alice", "I'd love a picnic at the lake on Sunday."),
                  Msg("alice", "The boathouse by the lake has picnic tables and shade at noon."),
                  Msg("chen", "Booked: the boathouse picnic tables, Sunday noon.")});
  auto group = std::find_if(a.begin(), a.end(), [](const auto& x) { return x.owner == "GROUP"; });
  REQUIRE(group != a.end());
  CHECK(group->content == "The group decided: the boathouse picnic tables, Sunday noon");
  CHECK(group->source == "alice");
  // Nobody else said more of it: whoever stated it stays the source.
  auto b = Write(
      {Msg("alice", "haha yes"), Msg("chen", "Booked: the boathouse picnic tables, Sunday noon.")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].source == "chen");
}

TEST_CASE("offline Writer: a suggestion put as a question is the speaker's stance",
          "[writer][group]") {
  auto a = Write({Msg("dana", "ok what about the noodle bar on Fifth Street?")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].layer == "core");
  CHECK(a[0].utype == "stance");
  CHECK(a[0].content == "Dana suggests the noodle bar on Fifth Street");
  auto b = Write({Msg("bob", "We could drive up on Friday maybe?")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "bob");
  CHECK(b[0].content == "Bob suggests the group drive up on Friday");
  // Nothing proposed, or the group asked to decide: still a question.
  for (const char* text : {"what about you?", "how about that?", "Should we book the ferry?",
                           "maybe?", "what time works for everyone?"}) {
    INFO(text);
    auto q = Write({Msg("chen", text)});
    REQUIRE(q.size() == 1);
    CHECK(q[0].type == Type::kNoop);
  }
}

TEST_CASE("offline Writer: 'we' after the speaker's own circle is that circle", "[writer][group]") {
  // "my kids ... we": the speaker's family, not the group.
  auto a = Write(
      {Msg("dana", "My kids are counting the days. We'll take the ferry to the island in June")});
  REQUIRE(!a.empty());
  for (const auto& x : a) {
    CAPTURE(x.content);
    CHECK(x.owner == "dana");
    CHECK(x.layer == "core");
  }
  CHECK(a.back().content.find("We'll take the ferry to the island in June") != std::string::npos);
  auto b =
      Write({Msg("chen", "Our family cabin weekend is the best. We always grill by the lake")});
  REQUIRE(!b.empty());
  for (const auto& x : b) CHECK(x.owner == "chen");
  // Without a circle of the speaker's, the same plan is the group's.
  auto c = Write({Msg("dana", "We'll take the ferry to the island in June")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "GROUP");
  // "our group" in the chat is the chat itself; with a name it is the
  // speaker's.
  auto d = Write({Msg("dana", "Right, our group. We will meet at the pier on Saturday")});
  REQUIRE(!d.empty());
  CHECK(d.back().owner == "GROUP");
  auto e = Write(
      {Msg("dana", "Our group, Harbour Rowers, is growing. We meet at the pier on Saturdays")});
  REQUIRE(!e.empty());
  for (const auto& x : e) CHECK(x.owner == "dana");
}

TEST_CASE("offline Writer: what 'we' do or did is no plan, what 'we' will do is",
          "[writer][group]") {
  // Habit and history: the speaker's people, "we" as written.
  auto a = Write(
      {Msg("alice", "We do all kinds of board games at the club, from co-op to party games")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "alice");
  CHECK(a[0].layer == "core");
  CHECK(a[0].content == "We do all kinds of board games at the club, from co-op to party games");
  auto b = Write({Msg("bob", "We have a big garden behind the house with two apple trees")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "bob");
  // A future or a modal at the verb, a verb of arranging, a time: the group's.
  for (const char* text :
       {"We'll do the quiz at the club this time", "We need to get a new kettle for the club",
        "We're going to make pizza at the club",
        "The team needs to get the keys from the caretaker",
        "We have to keep the receipts for the club"}) {
    CAPTURE(text);
    auto c = Write({Msg("chen", text)});
    REQUIRE(c.size() == 1);
    CHECK(c[0].owner == "GROUP");
  }
}

TEST_CASE("offline Writer: 'I think we'd ...' guesses, 'I think we should ...' proposes",
          "[writer][group]") {
  auto a = Write({Msg("dana", "I think we'd have a great time at the lake cabin")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].layer == "core");
  auto b = Write({Msg("dana", "We'd have the best view from the top deck of the ferry")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "dana");
  for (const char* text : {"I think we should book the lake cabin for the long weekend",
                           "I think we'd better book the lake cabin soon",
                           "I think we usually have the best nights at the lake cabin"}) {
    CAPTURE(text);
    auto c = Write({Msg("dana", text)});
    REQUIRE(c.size() == 1);
    CHECK(c[0].owner == "GROUP");
  }
}

TEST_CASE("offline Writer: a wish for 'us' with nothing arranged is not remembered",
          "[writer][group]") {
  for (const char* text : {"Let's keep chasing our dreams!", "We'll make it through this",
                           "We can do great things together", "Let's keep it up",
                           "We'll get through this, hang in there"}) {
    CAPTURE(text);
    auto a = Write({Msg("alice", "The exam results come out on Monday"), Msg("bob", text)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].owner == "alice");
  }
  // A plan is remembered: an arrangement, or a wish with a time.
  auto b = Write({Msg("bob", "We'll keep it small, just the six of us at the pub")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  auto c = Write({Msg("bob", "Let's make some great memories at the lake on Saturday")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "GROUP");
}

}  // namespace speakermem::writer

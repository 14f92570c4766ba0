// The offline Writer's rules, one sentence written for each.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "tests/test_util.h"
#include "tests/unit/writer_roster.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

using Type = WriterAction::Type;

using testing::Msg;
using testing::Reply;
using testing::Roster;
using testing::Write;

TEST_CASE("offline Writer: first-person stances go to the speaker's core", "[writer]") {
  auto a = Write({Msg("bob", "I prefer concise checklists.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].source == "bob");
  CHECK(a[0].layer == "core");
  CHECK(a[0].utype == "stance");
  CHECK(a[0].content == "Bob prefers concise checklists");
}

TEST_CASE("offline Writer: a manner adverb after 'I' is not conjugated", "[writer]") {
  auto a = Write({Msg("bob", "I secretly enjoy long train rides.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Bob secretly enjoys long train rides");
}

TEST_CASE("offline Writer: the speaker's own team needing something is not a group plan",
          "[writer]") {
  auto a = Write({Msg("chen", "My team needs the projector for the whole week of the launch.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "chen");
  CHECK(a[0].layer == "core");
  auto b = Write({Msg("chen", "We need the projector for the whole week of the launch.")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].layer == "interaction");
}

TEST_CASE("offline Writer: first-person facts go to the speaker's core", "[writer]") {
  auto a = Write({Msg("dana", "I'm vegetarian and my sister lives in Lisbon")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].layer == "core");
  CHECK(a[0].owner == "dana");
  CHECK(a[0].utype == "fact");
  CHECK(a[0].content == "Dana is vegetarian and their sister lives in Lisbon");
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
  CHECK(b[0].content == "Dana says Chen always volunteers for the workshops");
}

TEST_CASE("offline Writer: decisions and norms go to GROUP layers", "[writer]") {
  auto a = Write({Msg("alice", "Decision: the offsite is in Lisbon, the week of May 18."),
                  Msg("chen", "We always start the retro with a joke round"),
                  Msg("alice", "Please submit receipts within two weeks"),
                  Msg("bob", "Let's book the Heron Cafe for Saturday")});
  REQUIRE(a.size() == 4);
  CHECK(a[0].owner == "GROUP");
  CHECK(a[0].layer == "interaction");
  CHECK(a[0].utype == "decision");
  CHECK(a[0].source == "alice");
  CHECK(a[0].content == "The group decided: the offsite is in Lisbon, the week of May 18");
  CHECK(a[1].owner == "GROUP");
  CHECK(a[1].layer == "insight");
  CHECK(a[1].content == "The group always starts the retro with a joke round");
  CHECK(a[2].layer == "insight");
  CHECK(a[2].source == "alice");
  // A plan the group adopts is an interaction, proposed by its speaker.
  CHECK(a[3].owner == "GROUP");
  CHECK(a[3].layer == "interaction");
  CHECK(a[3].source == "bob");
  CHECK(a[3].content == "The group will book the Heron Cafe for Saturday");

  // A request tied to an occasion is part of that plan, not a standing rule.
  auto b = Write({Msg("bob", "Please pick somewhere with a proper lunch stop on Saturday")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].layer == "interaction");
  CHECK(b[0].source == "bob");
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

TEST_CASE("offline Writer: a revision of a head is an UPDATE, a restatement nothing", "[writer]") {
  std::vector<WriterHead> heads = {{"h1", "interaction", "GROUP", "alice", "decision",
                                    "The offsite is in Lisbon, the week of May 18", 1}};
  auto a = Write(
      {Msg("alice", "Updated decision: the offsite moves to Porto, same week of May 18")}, heads);
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kUpdate);
  CHECK(a[0].entry_id == "h1");
  CHECK(a[0].content.find("Porto") != std::string::npos);

  auto same =
      Write({Msg("alice", "Decision: the offsite is in Lisbon, the week of May 18")}, heads);
  REQUIRE(same.size() == 1);
  CHECK(same[0].type == Type::kNoop);
}

TEST_CASE("offline Writer: one matter within a segment is one record", "[writer]") {
  // A revision replaces the earlier statement...
  auto a = Write({Msg("bob", "I prefer the beach for the offsite"),
                  Msg("bob", "I prefer the mountains instead for the offsite now")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  CHECK(a[0].content == "Bob prefers the mountains instead for the offsite now");
  // ...more on the same matter is added to it.
  auto b = Write({Msg("bob", "I prefer the beach for the offsite"),
                  Msg("bob", "I prefer the beach because of the surf at the offsite")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content ==
        "Bob prefers the beach for the offsite; Bob prefers the beach because of the surf at "
        "the offsite");
}

TEST_CASE("offline Writer: chit-chat gives NOOP and the cap holds", "[writer]") {
  auto a = Write({Msg("alice", "ok thanks!"), Msg("bob", "lol"),
                  Msg("dana", "Good morning everyone!"), Msg("chen", "Sounds great, thanks!")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kNoop);
  std::vector<WriterMessage> many;
  for (int i = 0; i < 20; ++i) {
    many.push_back(
        Msg(i % 2 == 0 ? "bob" : "chen", std::string(3, static_cast<char>('a' + i)) + " " +
                                             std::string(4, static_cast<char>('b' + i))));
  }
  OfflineWriterParams unlimited;
  unlimited.max_core_per_segment = 0;
  unlimited.min_record_words = 0;
  CHECK(Write(many, {}, 8, unlimited).size() == 8);
  // Capped at two core records each, the two make four.
  OfflineWriterParams two = unlimited;
  two.max_core_per_segment = 2;
  CHECK(Write(many, {}, 8, two).size() == 4);
  // By default no record of two content words stands beside another: one each.
  CHECK(Write(many, {}, 8).size() == 2);
}

TEST_CASE("offline Writer: questions, acknowledgements, reactions and filler are NOOP",
          "[writer]") {
  for (const char* text :
       {"Should we book the night train to Porto?", "anyone free tonight", "what time", "Agreed.",
        "Exactly, fair point", "That's hilarious", "\xF0\x9F\x99\x82\xF0\x9F\x8E\x89", "haha yes",
        "Good morning everyone!", "Are you coming to the thing"}) {
    INFO(text);
    auto a = Write({Msg("chen", text)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].type == Type::kNoop);
  }
  // Thanks are an acknowledgement, whatever they are for, even at the
  // lowest content threshold; the statement after them is kept.
  OfflineWriterParams lenient;
  lenient.min_content = 1;
  for (const char* text :
       {"Thanks for the spreadsheet.", "Thank you for sorting the ferry tickets"}) {
    INFO(text);
    auto t = Write({Msg("chen", text)}, {}, 8, lenient);
    REQUIRE(t.size() == 1);
    CHECK(t[0].type == Type::kNoop);
  }
  auto after = Write({Msg("chen", "Thanks for the spreadsheet. I paid the deposit for the cabin")});
  REQUIRE(after.size() == 1);
  CHECK(after[0].content == "Chen paid the deposit for the cabin");
  // The statement beside a question is kept, the question is not.
  auto b = Write({Msg("chen", "I booked the night train to Porto. Anyone want the top bunk?")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Chen booked the night train to Porto");
}

TEST_CASE("offline Writer: 'I' is the speaker, 'you' the person replied to or addressed",
          "[writer]") {
  auto a = Write({Msg("dana", "Honestly I have a hard stop at nine that week")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].content == "Dana has a hard stop at nine that week");
  // The speaker is named once in a clause; "my" after that is "their".
  auto t = Write({Msg("chen", "I'm trying to cut my carbon footprint this year")});
  REQUIRE(t.size() == 1);
  CHECK(t[0].content == "Chen is trying to cut their carbon footprint this year");
  auto m = Write({Msg("chen", "My sister is visiting in June")});
  REQUIRE(m.size() == 1);
  CHECK(m[0].content == "Chen's sister is visiting in June");

  // A reply's "you" is the person replied to, whoever spoke last.
  WriterMessage reply = Reply("alice", "You could have texted before ten, to be fair", "bob");
  auto b = Write({Msg("chen", "Sorry, the investor call ran over"), reply});
  REQUIRE(b.size() == 2);
  CHECK(b[1].owner == "bob");
  CHECK(b[1].source == "alice");
  CHECK(b[1].layer == "profile");
  CHECK(b[1].content == "Alice says Bob could have texted before ten, to be fair");

  // "you" opening a clause of its own takes the verb's third person too;
  // "I know you ..." is the speaker's view of the addressee: their profile.
  auto k = Write({Msg("chen", "Sorry, the investor call ran over"),
                  Msg("alice", "I know you want the window seat on the ferry")});
  REQUIRE(k.size() == 2);
  CHECK(k[1].owner == "chen");
  CHECK(k[1].layer == "profile");
  CHECK(k[1].content == "Alice says Chen wants the window seat on the ferry");
  auto g = Write({Msg("chen", "Sorry, the investor call ran over"),
                  Msg("alice", "I'm glad you want the window seat on the ferry")});
  REQUIRE(g.size() == 2);
  CHECK(g[1].owner == "alice");
  CHECK(g[1].content == "Alice is glad Chen wants the window seat on the ferry");

  // Without a reply target: the segment's previous speaker.
  auto c = Write({Msg("chen", "Sorry, the investor call ran over"),
                  Msg("alice", "You could have texted before ten")});
  REQUIRE(c.size() == 2);
  CHECK(c[1].owner == "chen");

  // A vocative names the addressee and is not part of the record.
  auto d = Write({Msg("chen", "The investor call ran over"),
                  Msg("alice", "Dana, you look really well after the holiday")});
  REQUIRE(d.size() == 2);
  CHECK(d[1].owner == "dana");
  CHECK(d[1].content == "Alice says Dana looks well after the holiday");

  // A name before the speaker's own "I" addresses that member; the clause
  // stays the speaker's.
  auto v = Write({Msg("alice", "Dana I've been saving for the ferry tickets since March")});
  REQUIRE(v.size() == 1);
  CHECK(v[0].owner == "alice");
  CHECK(v[0].layer == "core");
  CHECK(v[0].content == "Alice has been saving for the ferry tickets since March");

  // An announcement of what follows is not part of it.
  auto q = Write({Msg("bob", "Quick question for the team, the ferry leaves at nine from Pier 3")});
  REQUIRE(q.size() == 1);
  CHECK(q[0].content == "The ferry leaves at nine from Pier 3");
  auto h = Write({Msg("bob", "Heads up: the cabin has no wifi")});
  REQUIRE(h.size() == 1);
  CHECK(h[0].content == "The cabin has no wifi");

  // A member's name as a label: what holds for that member, said by the speaker.
  auto e = Write({Msg("bob", "Chen: no flights after nine this month")});
  REQUIRE(e.size() == 1);
  CHECK(e[0].owner == "chen");
  CHECK(e[0].source == "bob");
  CHECK(e[0].layer == "profile");
  CHECK(e[0].content == "Bob says no flights after nine this month");
}

TEST_CASE("offline Writer: a person's own need is their core, advice or a request nothing",
          "[writer]") {
  auto a = Write(
      {Msg("dana", "Any city works for me, but I'm vegetarian, so the venue needs real options.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].layer == "core");
  CHECK(a[0].content.find("Dana is vegetarian") != std::string::npos);

  // Advice or a request is what the speaker would have someone do: nothing
  // is so of the addressee (or of the speaker) because of it.
  for (const char* text : {"Take one trip at a time, the flights will calm down",
                           "Ask Sam about the tickets before Friday",
                           "Come to the drinks next time though, genuinely"}) {
    WriterMessage advice = Reply("alice", text, "chen");
    auto b = Write({advice});
    REQUIRE(b.size() == 1);
    CHECK(b[0].type == Type::kNoop);
  }
  // A statement about the person replied to is still their profile.
  WriterMessage about = Reply("alice", "You always pick the quiet places, Chen", "chen");
  auto c = Write({about});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "chen");
  CHECK(c[0].source == "alice");
  CHECK(c[0].layer == "profile");
}

TEST_CASE("offline Writer: a name with an endearment addresses that member", "[writer]") {
  // "Chen my love did you ...?": Chen is addressed, and so the "you" after.
  auto a = Write({Msg("dana", "Chen my love did you get the flat? I keep thinking about you.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].content == "Dana keeps thinking about Chen");
  // The endearment closing a clause goes too, the clause stays.
  auto b = Write({Msg("dana", "The soup can wait an hour my love")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "The soup can wait an hour");
}

TEST_CASE("offline Writer: a kinship word no member goes by addresses someone", "[writer]") {
  auto b = Write({Msg("chen", "Dad I passed the driving test this morning")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "chen");
  CHECK(b[0].content == "Chen passed the driving test this morning");
  // Endearments and "I mean" open a clause without being part of it.
  auto e = Write({Msg("dana", "My darlings, the cottage has a hot tub")});
  REQUIRE(e.size() == 1);
  CHECK(e[0].content == "The cottage has a hot tub");
  auto f = Write({Msg("dana", "I mean I can try to come after the exams")});
  REQUIRE(f.size() == 1);
  CHECK(f[0].content == "Dana can try to come after the exams");
  // A name followed by its verb stays the subject.
  auto c = Write({Msg("bob", "Alice drives a red van to the allotment")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "alice");
  CHECK(c[0].layer == "profile");
}

TEST_CASE("offline Writer: 'I need' is present tense", "[writer]") {
  auto d = Write({Msg("dana", "I need a quiet table near the window")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content == "Dana needs a quiet table near the window");
}

TEST_CASE("offline Writer: agreeing with a member is the speaker's stance, bare agreement nothing",
          "[writer]") {
  auto a = Write({Msg("dana", "Alice makes a fair point about the budget spreadsheet")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].source == "dana");
  CHECK(a[0].layer == "core");
  CHECK(a[0].utype == "stance");
  for (const char* text : {"Bob is right tbh", "Chen's right", "Alice has a point"}) {
    INFO(text);
    auto b = Write({Msg("dana", text)});
    REQUIRE(b.size() == 1);
    CHECK(b[0].type == Type::kNoop);
  }
}

TEST_CASE("offline Writer: agreeing with the member addressed, or endorsing a member's plan",
          "[writer]") {
  // "You're probably right" to Bob is Dana agreeing, not a fact of Bob's.
  for (const char* text : {"You're probably right", "you are totally right", "You're right"}) {
    INFO(text);
    WriterMessage m = Reply("dana", text, "bob");
    auto a = Write({m});
    REQUIRE(a.size() == 1);
    CHECK(a[0].type == Type::kNoop);
  }
  WriterMessage more =
      Reply("dana", "You're right, the ferry is cheaper than the bridge toll", "bob");
  auto b = Write({more});
  // With matter of its own the clause is kept (as what Dana says of Bob's
  // word, as before).
  REQUIRE(b.size() == 1);
  CHECK(b[0].type == Type::kAdd);
  CHECK(b[0].content == "Dana says Bob is right, the ferry is cheaper than the bridge toll");
  // Counter-cases: what the member addressed is stays theirs.
  WriterMessage right_handed =
      Reply("dana", "You're right-handed on the pitch but left on the bike", "bob");
  auto c = Write({right_handed});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "bob");
  CHECK(c[0].layer == "profile");
  WriterMessage only =
      Reply("dana", "You're only right about the ferry timetable on weekdays", "bob");
  auto d = Write({only});
  REQUIRE(d.size() == 1);
  CHECK(d[0].owner == "bob");
  // A member's plan named the right one is the speaker's stance on it.
  auto e = Write({Msg("chen", "Alice's picnic is the right plan")});
  REQUIRE(e.size() == 1);
  CHECK(e[0].owner == "chen");
  CHECK(e[0].layer == "core");
  CHECK(e[0].utype == "stance");
  CHECK(e[0].content == "Alice's picnic is the right plan");
  auto f = Write({Msg("chen", "Alice's van is the blue one by the gate")});
  REQUIRE(f.size() == 1);
  CHECK(f[0].owner == "alice");
  CHECK(f[0].layer == "profile");
}

TEST_CASE("offline Writer: cheering someone on and thanking them are not memory", "[writer]") {
  for (const char* text :
       {"Even when it's tough, you got this!", "You've got this",
        "Your belief in me means the world", "Your support means a lot, thanks",
        "Your help means a ton to me", "Hang in there and you will find a flat soon"}) {
    INFO(text);
    WriterMessage m = Reply("dana", text, "bob");
    auto a = Write({m});
    REQUIRE(a.size() == 1);
    CHECK(a[0].type == Type::kNoop);
  }
  // Counter-cases: the same words carrying matter.
  auto b = Write({Msg("dana", "I've got this week off so I'll paint the kitchen")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Dana has got this week off so Dana will paint the kitchen");
  WriterMessage lot = Reply("dana", "Your new job means a lot of early mornings for you", "bob");
  auto c = Write({lot});
  REQUIRE(c.size() == 1);
  CHECK(c[0].type == Type::kAdd);
  CHECK(c[0].owner == "bob");
}

TEST_CASE("offline Writer: a closing 'let's see' is a hedge, not a plan of the group", "[writer]") {
  auto a = Write({Msg("alice", "The ferry might be full in August but let's see")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "alice");
  CHECK(a[0].layer == "core");
  CHECK(a[0].content == "The ferry might be full in August");
  auto b = Write({Msg("dana", "Flights are pricey right now, we'll see")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "dana");
  CHECK(b[0].content == "Flights are pricey right now");
  // Counter-cases: seeing something is a plan.
  auto c = Write({Msg("bob", "Let's see the castle on Sunday")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "GROUP");
  CHECK(c[0].content == "The group will see the castle on Sunday");
  auto d = Write({Msg("chen", "We'll see the fireworks from the roof on Saturday")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].owner == "GROUP");
}

TEST_CASE("offline Writer: 'we'll see what ...' waits to know and arranges nothing", "[writer]") {
  auto a = Write({Msg("dana", "We'll see what the landlord says about the deposit next week")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].layer == "core");
  CHECK(a[0].content == "We'll see what the landlord says about the deposit next week");
  auto b = Write({Msg("bob", "Let's see if the ferry runs in March")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "bob");
  // Counter-case: what the group will see is its plan (above).
  auto c = Write({Msg("chen", "We'll see the castle and then the old harbour on Sunday")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "GROUP");
}

TEST_CASE("offline Writer: a decision on a member's proposal is GROUP interaction", "[writer]") {
  auto a = Write({Msg("chen", "Alice's Friday picnic is confirmed")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "GROUP");
  CHECK(a[0].layer == "interaction");
  CHECK(a[0].source == "chen");
  auto b = Write({Msg("chen", "Dana's rota for the kitchen from now on")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].layer == "interaction");
}

TEST_CASE("offline Writer: a question naming a member without a question mark is NOOP",
          "[writer]") {
  for (const char* text : {"is Alice coming to the allotment", "does Bob still have the van"}) {
    INFO(text);
    auto a = Write({Msg("chen", text)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].type == Type::kNoop);
  }
}

TEST_CASE("offline Writer: hedges and intensifiers do not reach the record", "[writer]") {
  auto a = Write({Msg("dana", "I'm genuinely exhausted from the allotment move")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Dana is exhausted from the allotment move");
  auto b = Write({Msg("dana", "The new bakery on Elm Road is really good though")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "The new bakery on Elm Road is good");
  // "not really" is a different statement from "not".
  auto c = Write({Msg("dana", "I don't really like olives on pizza")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Dana doesn't really like olives on pizza");
}

TEST_CASE("offline Writer: where someone is at this moment is NOOP", "[writer]") {
  for (const char* text : {"On my way, running ten minutes behind", "Heading out in 10 mins",
                           "Almost there with the cake", "Great, see everyone Saturday",
                           "Been here twenty minutes at the corner table", "Sorry Alice",
                           "Just getting in, it's late here", "Got home now, long day at work"}) {
    INFO(text);
    auto a = Write({Msg("chen", text)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].type == Type::kNoop);
  }
  // Having been somewhere before, getting in somewhere, coming home from a
  // trip are worth remembering.
  for (const char* text : {"I've been here before for the tasting menu",
                           "I got in to the design course at the college",
                           "I got home from Lisbon on Monday with a cold"}) {
    INFO(text);
    auto b = Write({Msg("chen", text)});
    REQUIRE(b.size() == 1);
    CHECK(b[0].type == Type::kAdd);
    CHECK(b[0].owner == "chen");
  }
}

TEST_CASE(
    "offline Writer: a name before a question, the group's clause or a reaction addresses someone",
    "[writer]") {
  auto a = Write({Msg("chen", "Bob what did the plumber say about the boiler")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kNoop);
  auto b = Write({Msg("chen", "Alice we went to the coast on a Saturday last time")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "chen");
  CHECK(b[0].layer == "core");
  // A name before a reaction or thanks: the reaction is still NOOP.
  auto r = Write({Msg("chen", "Bob that is such a lovely idea for the garden")});
  REQUIRE(r.size() == 1);
  CHECK(r[0].type == Type::kNoop);
  auto t = Write({Msg("chen", "Dana thank you so much for the lift home")});
  REQUIRE(t.size() == 1);
  CHECK(t[0].content.find("Dana thank") == std::string::npos);
  // A name before a clause of its own, or before a request.
  auto g = Write({Msg("chen", "Alice the south path is a gentle grassy slope")});
  REQUIRE(g.size() == 1);
  CHECK(g[0].owner == "chen");
  CHECK(g[0].content == "The south path is a gentle grassy slope");
  auto h = Write({Msg("chen", "Dana tell us about the allotment in the nineties")});
  REQUIRE(h.size() == 1);
  CHECK(h[0].type == Type::kNoop);
  // A member's possessive is not an address, nor is a name before its verb.
  auto d = Write({Msg("chen", "Bob looks well after the holiday in Crete")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].owner == "bob");
  auto c = Write({Msg("chen", "Alice's van broke down on the ring road")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "alice");
}

TEST_CASE("offline Writer: 'I'd been' is had, 'I'd love' would, 'you two' is no one member",
          "[writer]") {
  auto a = Write({Msg("dana", "I'd been looking for that pressing for years")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Dana had been looking for that pressing for years");
  auto b = Write({Msg("dana", "I'd love a copy of the recipe for the stew")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Dana would love a copy of the recipe for the stew");
  auto c = Write({Msg("alice", "Bob, you two are the same person with the spreadsheets")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].type == Type::kNoop);
}

TEST_CASE("offline Writer: with group_arrangements on, the group's arrangements are GROUP",
          "[writer]") {
  OfflineWriterParams on;
  on.group_arrangements = true;
  const char* text = "Thursday at 7pm works for everyone, back room of the Crown";
  auto b = Write({Msg("chen", text)}, {}, 8, on);
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].layer == "interaction");
  // Off (the default), the same clause is read by its subject.
  auto c = Write({Msg("chen", text)});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner != "GROUP");
  // The speaker's own plan stays theirs, even with everyone in it.
  auto d = Write({Msg("chen", "I will bake a cake for everyone on Saturday")}, {}, 8, on);
  REQUIRE(d.size() == 1);
  CHECK(d[0].owner == "chen");
}

TEST_CASE("offline Writer: several members' positions are where the group stands", "[writer]") {
  for (const char* text : {"So, Alice and Dana in favour of the coach, Bob against",
                           "That's Alice, Bob's brother, Dana and me confirmed for the quiz"}) {
    INFO(text);
    auto a = Write({Msg("chen", text)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].owner == "GROUP");
    CHECK(a[0].layer == "interaction");
    CHECK(a[0].source == "chen");
  }
  // Members named as possessors hold no position; the speaker's own act
  // that names two members stays the speaker's.
  auto b = Write({Msg("chen", "Alice's map makes more sense to me than Bob's compass")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner != "GROUP");
  auto c = Write({Msg("chen", "I told Alice and Dana about the coach times")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "chen");
}

TEST_CASE("offline Writer: a speaker's consecutive messages on one matter make one record",
          "[writer]") {
  auto a = Write({Msg("bob", "I found a cottage near Keswick with a wood stove"),
                  Msg("bob", "It sleeps six and has a drying room for boots")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].content.find("Keswick") != std::string::npos);
  CHECK(a[0].content.find("drying room") != std::string::npos);
  // Another speaker in between: two records.
  auto b = Write({Msg("bob", "I found a cottage near Keswick with a wood stove"),
                  Msg("chen", "I can drive up on the Friday evening"),
                  Msg("bob", "It sleeps six and has a drying room for boots")});
  CHECK(b.size() == 3);
}

TEST_CASE("BuildWriter gives the offline Writer the configured constants", "[writer]") {
  llm::ModelsConfig models;  // offline provider
  WriterInput in;
  in.roster = Roster();
  in.messages = {Msg("bob", "Consistency matters")};
  in.max_actions = 8;
  auto count = [&](const OfflineWriterParams& p) {
    auto w = BuildWriter(models, nullptr, p);
    REQUIRE_OK(w);
    llm::StageCall call;
    auto out = (*w)->Write(in, &call);
    REQUIRE_OK(out);
    return out->actions.front().type;
  };
  CHECK(count({}) == Type::kAdd);  // two content words: remembered by default
  OfflineWriterParams strict;
  strict.min_content = 3;
  CHECK(count(strict) == Type::kNoop);
}

TEST_CASE("offline Writer: emoji end a clause and do not reach the record", "[writer]") {
  auto a = Write(
      {Msg("bob", "just got covered by TechCrunch \xF0\x9F\x94\xA5 might make it after all")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].content == "Bob got covered by TechCrunch, might make it after all");
}

TEST_CASE("offline Writer: a revision of a plan without the plan's words is an UPDATE",
          "[writer]") {
  std::vector<WriterHead> heads = {{"h1", "interaction", "GROUP", "alice", "decision",
                                    "The offsite is in Lisbon, the week of May 18", 1}};
  auto a = Write({Msg("bob", "Change of plan: we are going with Porto instead.")}, heads);
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kUpdate);
  CHECK(a[0].entry_id == "h1");
  CHECK(a[0].content.find("Porto") != std::string::npos);
}

TEST_CASE("offline Writer: a record names the messages its statements come from",
          "[writer][offline]") {
  std::vector<WriterMessage> msgs = {
      Msg("bob", "I went to a pottery class on Monday evening"),
      Msg("alice", "Nice, which studio?"),
      Msg("bob", "The one by the canal, I made a small bowl there"),
      Msg("bob", "I glazed the bowl blue and will fire it next week"),
  };
  for (size_t i = 0; i < msgs.size(); ++i) msgs[i].message_id = "m" + std::to_string(i + 1);
  auto a = Write(msgs);
  std::set<std::string> cited;
  for (const auto& x : a) {
    CAPTURE(x.content);
    REQUIRE(!x.from_ids.empty());
    cited.insert(x.from_ids.begin(), x.from_ids.end());
    // A record cites only messages whose speaker said it.
    for (const auto& id : x.from_ids) CHECK(id != "m2");
  }
  CHECK(cited == std::set<std::string>{"m1", "m3", "m4"});
}

}  // namespace
}  // namespace speakermem::writer

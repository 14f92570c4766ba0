// The offline Writer's reading of single clauses whose words mislead a
// pattern: a kinship word as a subject, a courtesy "please", a decision word
// in news, a subordinate "you", "let me", talk about the conversation. Every
// sentence is written for its test (none taken from the benchmark data).
#include <catch2/catch.hpp>

#include "tests/unit/writer_roster.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

using testing::Msg;
using testing::Reply;
using testing::Write;
using Type = WriterAction::Type;

TEST_CASE("offline Writer: a kinship word before a verb is the subject, not an address",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "Dad always has the final word")});
  REQUIRE(a.size() == 1);
  // Family outside the roster is the speaker's own circle, not a rule of
  // the group ("always") nor a decision ("final").
  CHECK(a[0].owner == "bob");
  CHECK(a[0].layer == "core");
  CHECK(a[0].content == "Dad always has the final word");
  // Addressed, the kinship word goes and the clause is read without it.
  auto b = Write({Msg("bob", "Mum we'll book the cabin for August")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].content == "The group will book the cabin for August");
}

TEST_CASE("offline Writer: 'please' with a comma is a courtesy, not a request to the group",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "Yes please, that still helps a lot. I'll send the form tonight.")});
  for (const auto& x : a) CHECK(x.owner == "bob");
  REQUIRE(!a.empty());
  CHECK(a[0].content.find("Bob will send the form tonight") != std::string::npos);
  // A request proper is still the group's.
  auto b = Write({Msg("bob", "Please send receipts within two weeks")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].layer == "insight");
}

TEST_CASE("offline Writer: a word that names a decision is the group's only with a time",
          "[writer][reading]") {
  // News of the speaker's own: not a choice of the group.
  auto a = Write({Msg("bob", "Funding round closed. Series B confirmed, onwards")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].layer == "core");
  // Tied to a time, it is the group's decision.
  auto b = Write({Msg("bob", "Thursday 8pm at the pizza place confirmed")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].layer == "interaction");
  CHECK(b[0].content == "The group decided: Thursday 8pm at the pizza place confirmed");
  // So is a span from now.
  auto d = Write({Msg("bob", "Entry deadline in three weeks")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].owner == "GROUP");
  CHECK(d[0].content == "The group decided: Entry deadline in three weeks");
  // A verb of arranging needs no time.
  auto c = Write({Msg("bob", "Already booked the minibus for everyone")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "GROUP");
}

TEST_CASE("offline Writer: 'you' after a subordinator is a subject and takes its verb",
          "[writer][reading]") {
  auto a = Write({Msg("alice", "Chen hi"), Msg("bob", "I can drive whenever you are ready")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].content == "Bob can drive whenever Alice is ready");
}

TEST_CASE("offline Writer: 'let me' is the speaker's plan, 'let' addressed is advice",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "Let me look at flights for the second week")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].content == "Bob will look at flights for the second week");
  auto b = Write({Msg("bob", "Chen let him sort out the tickets himself")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].type == Type::kNoop);
}

TEST_CASE("offline Writer: talk about the conversation itself is not remembered",
          "[writer][reading]") {
  auto a = Write({Msg("alice", "Kicking off trip planning. I'd like us to pick dates by Monday")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "alice");
  CHECK(a[0].content == "Alice would like the group to pick dates by Monday");
}

TEST_CASE("offline Writer: a member addressed by name is 'you' for the rest of the message",
          "[writer][reading]") {
  // The segment's previous speaker is Alice; the message addresses Chen.
  auto a = Write({Msg("alice", "Morning all"), Msg("bob", "Chen. You are driving on Saturday.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "chen");
  CHECK(a[0].layer == "profile");
  CHECK(a[0].content == "Bob says Chen is driving on Saturday");
  auto b = Write({Msg("alice", "Morning all"),
                  Msg("bob", "Dana, I have been thinking. You are the best one to chair it.")});
  REQUIRE(b.size() >= 1);
  CHECK(b.back().owner == "dana");
  CHECK(b.back().content == "Bob says Dana is the best one to chair it");
  // The address carries past a clause that is not remembered.
  auto c = Write({Msg("alice", "Morning all"),
                  Msg("bob", "Chen, thank you so much! You were brilliant with the kids today")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "chen");
}

TEST_CASE("offline Writer: a tag question leaves its statement", "[writer][reading]") {
  auto a = Write({Msg("bob", "The boiler has been playing up since March hasn't it")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "The boiler has been playing up since March");
}

TEST_CASE("offline Writer: 'I know', 'I guess so', 'me probably' are nods, not memory",
          "[writer][reading]") {
  for (const char* nod : {"I know", "I guess so", "I see.", "Me probably", "I know. I know."}) {
    auto a = Write({Msg("bob", nod)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].type == Type::kNoop);
  }
  // Before a statement, the nod goes and the statement stays.
  auto b = Write({Msg("bob", "I know, I know, the garage still needs clearing out")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "The garage still needs clearing out");
}

TEST_CASE("offline Writer: 'you' after 'glad', 'sorry', 'sure' takes its verb",
          "[writer][reading]") {
  auto a = Write(
      {Msg("alice", "The scarf arrived"), Msg("bob", "So glad you like the scarf, I knitted it")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Glad Alice likes the scarf, Bob knitted it");
}

TEST_CASE("offline Writer: 'you all' is everyone, not the addressee", "[writer][reading]") {
  auto a = Write({Msg("alice", "Morning"), Msg("bob", "I'll book the cabin if you all say yes")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Bob will book the cabin if everyone says yes");
  auto b = Write({Msg("alice", "Morning"), Msg("bob", "I miss you guys so much")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Bob misses everyone so much");
}

TEST_CASE("offline Writer: a statement that something continues does not revise it",
          "[writer][reading]") {
  std::vector<WriterHead> heads = {
      {"h1", "core", "bob", "bob", "fact", "Bob works nights at the bakery on Main Street", 1}};
  // "Still" says the record holds: both stay current.
  auto a = Write({Msg("bob", "Still at the bakery on Main Street, nights as ever")}, heads);
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  // The same words without it revise the record, as before.
  auto b =
      Write({Msg("bob", "Nights at the bakery on Main Street are over, days from May")}, heads);
  REQUIRE(b.size() == 1);
  CHECK(b[0].type == Type::kUpdate);
}

TEST_CASE("offline Writer: 'says' is no word of a profile record's matter", "[writer][reading]") {
  std::vector<WriterHead> heads = {
      {"h1", "profile", "chen", "dana", "observation", "Dana says Chen looks well", 1}};
  // "now" is a revision cue, but the two share only "says": a new record.
  auto a = Write(
      {Msg("alice", "Morning"), Msg("dana", "Chen you're the one with the interesting job now")},
      heads);
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kAdd);
  CHECK(a[0].owner == "chen");
  CHECK(a[0].content == "Dana says Chen is the one with the interesting job now");
}

TEST_CASE("offline Writer: a member's name closing a clause addresses them", "[writer][reading]") {
  auto a =
      Write({Msg("alice", "Morning"), Msg("bob", "The ferry is faster if you're serious Chen")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "The ferry is faster if Chen is serious");
  // After a word that takes an object, the name is part of the clause.
  // A word that ends a clause before it, too.
  auto e = Write({Msg("bob", "I am not inventing it Chen")});
  REQUIRE(e.size() == 1);
  CHECK(e[0].content == "Bob is not inventing it");
  // So does a kinship word outside the roster.
  auto k = Write({Msg("bob", "The lasagne last night was perfect mum")});
  REQUIRE(k.size() == 1);
  CHECK(k[0].content == "The lasagne last night was perfect");
  auto b = Write({Msg("alice", "Morning"), Msg("bob", "I am driving up on Friday with Chen")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Bob is driving up on Friday with Chen");
}

TEST_CASE("offline Writer: 'and I' after a clause is 'I' alone, after a person a plural",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "The flat is tiny and I want a bigger one by autumn")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "The flat is tiny and Bob wants a bigger one by autumn");
  auto b = Write({Msg("bob", "My sister and I love the coast in winter")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Bob's sister and Bob love the coast in winter");
}

TEST_CASE("offline Writer: brackets and quotes do not reach a record half open",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "I booked the Larch Hut (two nights, 40 each) for \"the weekend\".")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Bob booked the Larch Hut, two nights, 40 each, for the weekend");
}

TEST_CASE("offline Writer: the speaker is named once in a clause that opens with 'I'",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "I'd rather not drive this time, I'm trying to sleep on the way")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Bob would rather not drive this time, and is trying to sleep on the way");
  // Another subject in between keeps the name.
  auto b = Write({Msg("bob", "March is hard for me, I was away all February")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "March is hard for Bob, Bob was away all February");
}

TEST_CASE("offline Writer: what the speaker thinks or saw of the addressee is their profile",
          "[writer][reading]") {
  auto a = Write({Msg("alice", "Morning"), Msg("bob", "Chen I know you want the window seat")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "chen");
  CHECK(a[0].layer == "profile");
  CHECK(a[0].content == "Bob says Chen wants the window seat");
  // Seen or heard, the record keeps its verb and names its speaker once.
  auto b = Write({Msg("alice", "Morning"), Msg("bob", "Dana I saw you limping after the match")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "dana");
  CHECK(b[0].content == "Bob saw Dana limping after the match");
}

TEST_CASE("offline Writer: a question that opens by addressing a member sets 'you' after it",
          "[writer][reading]") {
  // The previous speaker is Alice; the question addresses Dana, and so does
  // the statement after it.
  auto a = Write({Msg("alice", "Morning all"),
                  Msg("bob", "Dana are you feeling better? you looked exhausted at the match")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].layer == "profile");
  CHECK(a[0].content == "Bob says Dana looked exhausted at the match");
}

TEST_CASE("offline Writer: 'you' after a wh-word takes its verb", "[writer][reading]") {
  auto a = Write({Msg("alice", "Morning"),
                  Msg("bob", "I will cook whatever you like, I know what you want for the party")});
  REQUIRE(!a.empty());
  CHECK(a[0].content.find("what Alice wants for the party") != std::string::npos);
}

TEST_CASE("offline Writer: 'you' right after a noun is the subject of a clause about it",
          "[writer][reading]") {
  auto a = Write({Msg("alice", "I booked the cabin by the lake"),
                  Msg("bob", "The cabin you suggest is too far from the station for me")});
  REQUIRE(a.size() == 2);
  CHECK(a[1].content == "The cabin Alice suggests is too far from the station for Bob");
  // Past forms stay; after a verb or a preposition "you" is no subject.
  auto b = Write({Msg("alice", "I booked the cabin by the lake"),
                  Msg("bob", "I loved the scarf you knitted for my birthday")});
  REQUIRE(b.size() == 2);
  CHECK(b[1].content == "Bob loved the scarf Alice knitted for their birthday");
  auto c = Write({Msg("alice", "I booked the cabin by the lake"),
                  Msg("bob", "I will bring the maps for you tomorrow")});
  REQUIRE(c.size() == 2);
  CHECK(c[1].content == "Bob will bring the maps for Alice tomorrow");
}

TEST_CASE("offline Writer: 'us' asked to do something is the group", "[writer][reading]") {
  auto a = Write({Msg("alice", "I'd like us to choose a venue by Monday")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "alice");
  CHECK(a[0].content == "Alice would like the group to choose a venue by Monday");
  // Elsewhere "us" may be the speaker's own circle and stays.
  auto b = Write({Msg("bob", "The landlord gave us a week to move out")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "The landlord gave us a week to move out");
}

TEST_CASE("offline Writer: what a message carries is not a matter of its own",
          "[writer][reading]") {
  auto c = Write({Msg("dana", "I found a lakeside cabin with a sauna. Sending the link")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Dana found a lakeside cabin with a sauna");
  auto a = Write({Msg("dana", "Sending the link")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].type == Type::kNoop);
  // With a time it is a plan.
  auto b = Write({Msg("dana", "Sharing the draft budget tonight")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "dana");
}

TEST_CASE("offline Writer: 'please remember' before a statement is a courtesy",
          "[writer][reading]") {
  auto a = Write({Msg("dana", "Any date works for me, but please remember I'm allergic to nuts")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "dana");
  CHECK(a[0].content == "Any date works for Dana, but Dana is allergic to nuts");
  // Before the group's news it is the group's decision, not a request.
  auto b = Write({Msg("alice", "Please note we moved the dinner to Thursday")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "GROUP");
  CHECK(b[0].layer == "interaction");
}

TEST_CASE("offline Writer: 'classic X' is a reaction, 'I'd paid' is had", "[writer][reading]") {
  auto a = Write({Msg("alice", "I might be late again"), Msg("bob", "Classic Alice move")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "alice");  // Bob's reaction is no record of Alice's profile
  auto b = Write({Msg("chen", "Before I knew it I'd paid the deposit for the whole flat")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Before Chen knew it Chen had paid the deposit for the whole flat");
}

TEST_CASE("offline Writer: a statement with its 'I' left out is the speaker's",
          "[writer][reading]") {
  auto a = Write({Msg("sam", "just prefer the chicken one at the ramen place")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "sam");
  CHECK(a[0].content == "Sam prefers the chicken one at the ramen place");
  auto b = Write({Msg("maya", "Been wanting to try the new noodle bar for weeks")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Maya has been wanting to try the new noodle bar for weeks");
  auto c = Write({Msg("nneka", "Going alone to the record fair regardless")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Nneka is going alone to the record fair regardless");
  auto e = Write({Msg("vera", "Already emailed the council about the blocked drain")});
  REQUIRE(e.size() == 1);
  CHECK(e[0].content == "Vera already emailed the council about the blocked drain");
  // Arranged for the group, it is the group's, with the speaker who did it.
  auto f = Write({Msg("femi", "Already booked the village hall for next July")});
  REQUIRE(f.size() == 1);
  CHECK(f[0].owner == "GROUP");
  CHECK(f[0].content == "Femi already booked the village hall for next July");
  // A gerund that is the subject, and "will be" with nobody's "I" in it,
  // stay as written.
  auto d = Write({Msg("dani", "Going up the ridgeline is a proper trek")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content == "Going up the ridgeline is a proper trek");
  // "Been a long month": a span of time has been, not the speaker.
  auto h = Write({Msg("maya", "Been a long month at the clinic, glad it's over")});
  REQUIRE(h.size() == 1);
  CHECK(h[0].content.rfind("Been a long month at the clinic", 0) == 0);
  auto j = Write({Msg("maya", "Been hectic at the clinic lately, two nurses off sick")});
  REQUIRE(j.size() == 1);
  CHECK(j[0].content.rfind("Been hectic at the clinic lately", 0) == 0);
  auto i = Write({Msg("maya", "Been a volunteer at the food bank since spring")});
  REQUIRE(i.size() == 1);
  CHECK(i[0].content == "Maya has been a volunteer at the food bank since spring");
  auto g = Write({Msg("dani", "Will be a long day with the whole team on the ridge")});
  REQUIRE(g.size() == 1);
  CHECK(g[0].content == "Will be a long day with the whole team on the ridge");
}

TEST_CASE("offline Writer: 'look at that' is no part of the matter", "[writer][reading]") {
  auto a =
      Write({Msg("preet", "Look at that, one good haul and Theo suddenly loves record fairs")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "One good haul and Theo suddenly loves record fairs");
}

TEST_CASE("offline Writer: 'you' inside a clause takes the verb of its name", "[writer][reading]") {
  auto a = Write({Msg("alice", "Morning all"),
                  Msg("bob", "I love the way you are planning the garden this year")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Bob loves the way Alice is planning the garden this year");
  auto b = Write({Msg("alice", "Morning all"),
                  Msg("bob", "I read the article you were talking about on the train")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Bob read the article Alice was talking about on the train");
  auto e = Write({Msg("alice", "Morning all"),
                  Msg("bob", "I think you'd be a great treasurer for the allotment society")});
  REQUIRE(e.size() == 1);
  CHECK(e[0].content.find("Alice would be a great treasurer") != std::string::npos);
  auto f = Write({Msg("alice", "Morning all"),
                  Msg("bob", "I bet you'll love the new allotment plot by the river")});
  REQUIRE(f.size() == 1);
  CHECK(f[0].content.find("Alice will love the new allotment plot") != std::string::npos);
  // Several addressees are not the one replied to.
  auto c = Write({Msg("alice", "Morning all"),
                  Msg("bob", "Both of you are describing the same problem with the boiler")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Both of you are describing the same problem with the boiler");
  auto g = Write({Msg("alice", "Morning all"),
                  Msg("bob", "I'm dragging at least one of you to the boiler showroom")});
  REQUIRE(g.size() == 1);
  CHECK(g[0].content == "Bob is dragging at least one of you to the boiler showroom");
  auto d = Write({Msg("alice", "Morning all"),
                  Msg("bob", "I think you two should split the cost of the boiler repair")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content.find("you two should split") != std::string::npos);
}

TEST_CASE("offline Writer: praise of a thing is a reaction", "[writer][reading]") {
  auto a =
      Write({Msg("dani", "Great climb today everyone!! I'm planning the coastal path for June")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Dani is planning the coastal path for June");
  auto c = Write({Msg("gil", "Nice find. The 1971 pressing has the better mastering")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "The 1971 pressing has the better mastering");
  // With a comma the word only opens the clause.
  auto b = Write({Msg("dani", "Great, I'll book the minibus for the coastal path")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Dani will book the minibus for the coastal path");
}

TEST_CASE("offline Writer: a name after 'me' at the end addresses", "[writer][reading]") {
  auto a = Write({Msg("alice", "Morning all"),
                  Msg("bob", "That is the kindest review anyone has given me Alice")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "That is the kindest review anyone has given Bob");
}

TEST_CASE("offline Writer: 'gotta' and 'wanna' after a name", "[writer][reading]") {
  auto a = Write({Msg("jon", "I gotta finish the studio floor before the opening")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Jon has to finish the studio floor before the opening");
  auto b = Write({Msg("jon", "I wanna open a second studio across town next year")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Jon wants to open a second studio across town next year");
}

TEST_CASE("offline Writer: an endearment closing a clause is an address", "[writer][reading]") {
  auto a = Write({Msg("mum", "The roast can wait an hour for you my love")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "The roast can wait an hour for you");
  auto b = Write({Msg("mum", "Please send Auntie Grace my love when you visit her")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content.find("love when") != std::string::npos);
}

TEST_CASE("offline Writer: a member's short name addresses them", "[writer][reading]") {
  // "Ali" starts only Alice's name: a vocative, and "you" is Alice.
  auto a = Write({Msg("chen", "Finished the garden shed at last"),
                  Msg("bob", "Ali, you should send the photos of the shed")});
  REQUIRE(a.size() == 2);
  CHECK(a[1].owner == "alice");
  CHECK(a[1].layer == "profile");
  CHECK(a[1].content == "Bob says Alice should send the photos of the shed");
  // A question to a short name is a question ("Ali are you ..." was read
  // as a statement with "you" the previous speaker).
  auto b = Write({Msg("chen", "Finished the garden shed at last"),
                  Msg("bob", "Ali are you coming to the shed party on Friday")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "chen");
  // A capitalised word of its own is no short name: "May" is the month
  // even with Maya in the group, "Will" the verb with William.
  std::vector<WriterRosterMember> roster = {
      {"bob", {"Bob"}}, {"maya", {"Maya"}}, {"william", {"William"}}};
  auto c = Write({Msg("bob", "May is the best month for the coast walk")}, {}, 8, {}, roster);
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "bob");
  CHECK(c[0].layer == "core");
  CHECK(c[0].content == "May is the best month for the coast walk");
  auto d = Write({Msg("maya", "The coast walk is booked"),
                  Msg("bob", "Will you bring the flask for the coast walk?")},
                 {}, 8, {}, roster);
  for (const auto& x : d) CHECK(x.owner != "william");
  // A start shared by two members names neither.
  std::vector<WriterRosterMember> two = {
      {"bob", {"Bob"}}, {"samir", {"Samir"}}, {"samantha", {"Samantha"}}};
  auto e = Write({Msg("bob", "Sam, the kayak club has a new coach this spring")}, {}, 8, {}, two);
  REQUIRE(e.size() == 1);
  CAPTURE(e[0].content);
  CHECK(e[0].content.find("Sam") == 0);
}

TEST_CASE("offline Writer: a feeling about news is a reaction, an offer is not",
          "[writer][reading]") {
  for (const char* text :
       {"Sorry to hear about the flat though", "Glad to hear it went well", "So happy for you!",
        "Proud of you both", "Happy to see you again", "Glad it went well", "Glad that helped",
        "Alice, so glad your ankle is okay"}) {
    CAPTURE(text);
    auto a = Write({Msg("alice", "I got the job at the museum"), Msg("bob", text)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].owner == "alice");
  }
  // Said without "I", an offer or a wish is the speaker's.
  auto b = Write({Msg("dana", "Happy to help with the move on Saturday")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Dana is happy to help with the move on Saturday");
  auto c = Write({Msg("alice", "Excited for the ferry trip next week")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Alice is excited for the ferry trip next week");
  auto d = Write({Msg("alice", "Happy to see the new galleries at the museum")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content == "Alice is happy to see the new galleries at the museum");
}

TEST_CASE("offline Writer: a resolved subject's second verb takes its form", "[writer][reading]") {
  auto a = Write({Msg("bob", "Six years at the bakery this week"),
                  Msg("alice", "Bob you've been there six years and know everything")});
  REQUIRE(a.size() == 2);
  CHECK(a[1].content == "Alice says Bob has been there six years and knows everything");
  auto b = Write({Msg("chen", "I love the new flat and want to stay for years")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Chen loves the new flat and wants to stay for years");
  // After "to" or a modal the verbs stay as they are.
  auto c = Write({Msg("chen", "I have to go and see the landlord about the boiler")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Chen has to go and see the landlord about the boiler");
  auto d = Write({Msg("chen", "I will come and help with the boiler")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content == "Chen will come and help with the boiler");
}

TEST_CASE("offline Writer: a past verb of what one did puts its 'I' back", "[writer][reading]") {
  auto a = Write({Msg("jon", "Lost my wallet on the night bus yesterday")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Jon lost their wallet on the night bus yesterday");
  auto b = Write({Msg("jon", "Went to the lido with my cousins on Sunday")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Jon went to the lido with their cousins on Sunday");
  // What went or took, not who: the clause stays as written.
  auto c = Write({Msg("jon", "Went really well at the lido on Sunday")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Went well at the lido on Sunday");  // "really" is a hedge
  auto d = Write({Msg("jon", "Started raining the moment the ferry left the harbour")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content == "Started raining the moment the ferry left the harbour");
}

TEST_CASE("offline Writer: 'yourself' is the addressee, as 'myself' is the speaker",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "Ran the half marathon on Sunday"),
                  Msg("alice", "You're doing a great job looking after yourself")});
  REQUIRE(a.size() == 2);
  CHECK(a[1].owner == "bob");
  CHECK(a[1].content == "Alice says Bob is doing a great job looking after Bob");
}

TEST_CASE("offline Writer: thanks to everyone for something is not news", "[writer][reading]") {
  auto a =
      Write({Msg("bob", "Best turnout in years. Thanks all for making the street party work")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Best turnout in years");
  auto b = Write({Msg("bob", "Thanks all. The street party is on the last Saturday of July")});
  REQUIRE(!b.empty());
  CHECK(b.back().content.find("last Saturday of July") != std::string::npos);
}

TEST_CASE("offline Writer: between two people 'you' is the other one from the first message",
          "[writer][reading]") {
  std::vector<WriterRosterMember> two = {{"jon", {"Jon"}}, {"gina", {"Gina"}}};
  auto a = Write({Msg("jon", "I have to tell you about the new studio lease")}, {}, 8, {}, two);
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "Jon has to tell Gina about the new studio lease");
  // In a group, the first message's "you" has no one to resolve to.
  auto b = Write({Msg("bob", "I have to tell you about the new studio lease")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Bob has to tell you about the new studio lease");
}

TEST_CASE("offline Writer: a name before 'a' or 'an' opening a clause addresses",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "Thinking of a reunion party for forty people"),
                  Msg("alice", "Bob a big party is a lot of organising")});
  REQUIRE(a.size() == 2);
  CHECK(a[1].owner == "alice");
  CHECK(a[1].content == "A big party is a lot of organising");
  // The name as the subject: what the speaker says of that member.
  auto b = Write({Msg("bob", "Thinking of a reunion party for forty people"),
                  Msg("alice", "Bob asked for a quiet dinner last year")});
  REQUIRE(b.size() == 2);
  CHECK(b[1].owner == "bob");
  CHECK(b[1].layer == "profile");
}

TEST_CASE(
    "offline Writer: a marker that can be a word of the clause goes only when it stands apart",
    "[writer][reading]") {
  auto a = Write({Msg("bob", "All the kids loved the museum trip")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].content == "All the kids loved the museum trip");
  auto b = Write({Msg("alice", "Same layout next year for the street party")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "Same layout next year for the street party");
  auto c = Write({Msg("bob", "Everyone loved the food at the street party")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].content == "Everyone loved the food at the street party");
  // Apart, they mark: with punctuation or before a subject.
  auto d = Write({Msg("bob", "Same, I'll bring a camping stove too")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content == "Bob will bring a camping stove too");
  auto e = Write({Msg("alice", "Fair enough, I'll bring the big tent then")});
  REQUIRE(e.size() == 1);
  CHECK(e[0].content == "Alice will bring the big tent then");
  auto f = Write({Msg("bob", "Great news, I got the job at the museum")});
  REQUIRE(f.size() == 1);
  CHECK(f[0].content == "Bob got the job at the museum");
  auto g = Write({Msg("alice", "I'll take the early train"), Msg("bob", "Fair enough.")});
  REQUIRE(g.size() == 1);
  CHECK(g[0].owner == "alice");
  // A delighted word before the matter ("Perfect, ...", "Ooh ...") marks it;
  // opening a clause of its own, it is the clause's word.
  auto h = Write({Msg("alice", "Perfect, I'll bring the folding chairs")});
  REQUIRE(h.size() == 1);
  CHECK(h[0].content == "Alice will bring the folding chairs");
  auto i = Write({Msg("bob", "Ooh I have been wanting to try that place")});
  REQUIRE(i.size() == 1);
  CHECK(i[0].content == "Bob has been wanting to try that place");
  auto j = Write({Msg("chen", "Lovely weather in Lisbon all of this week")});
  REQUIRE(j.size() == 1);
  CHECK(j[0].content == "Lovely weather in Lisbon all of this week");
  // News announced to the one addressed is the speaker's.
  WriterMessage news = Reply("bob", "You won't believe it - I got the flat by the river", "alice");
  auto k = Write({news});
  REQUIRE(k.size() == 1);
  CHECK(k[0].owner == "bob");
  CHECK(k[0].content == "Bob got the flat by the river");
}

TEST_CASE("offline Writer: an image caption in brackets loses its brackets", "[writer][reading]") {
  auto a =
      Write({Msg("bob", "I painted this lake last summer [image: a photo of a painted lake]")});
  REQUIRE(a.size() == 1);
  CAPTURE(a[0].content);
  CHECK(a[0].content.find(']') == std::string::npos);
  CHECK(a[0].content.find('[') == std::string::npos);
  CHECK(a[0].content.find("Bob painted this lake last summer") == 0);
  CHECK(a[0].content.find("a photo of a painted lake") != std::string::npos);
}

TEST_CASE("offline Writer: thanks to a named member for something is not news, the rest is",
          "[writer][reading]") {
  auto a = Write({Msg("alice", "I booked the pottery class for Saturday"),
                  Msg("bob", "Thanks, Alice, for letting me join. I'm so proud of my first bowl")});
  REQUIRE(a.size() == 2);
  CHECK(a[1].content == "Bob is so proud of their first bowl");
  auto b = Write({Msg("alice", "I booked the pottery class for Saturday"),
                  Msg("bob", "Thank you so much for the invite to the pottery class")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].owner == "alice");
}

TEST_CASE("offline Writer: a name said just before 'you' is not said twice", "[writer][reading]") {
  auto a = Write({Msg("bob", "The studio lease fell through again"),
                  Msg("alice", "No doubt, Bob, you've got the skills for a bigger studio")});
  REQUIRE(a.size() == 2);
  CAPTURE(a[1].content);
  CHECK(a[1].content.find("Bob Bob") == std::string::npos);
  CHECK(a[1].content.find("Bob has got the skills") != std::string::npos);
}

TEST_CASE("offline Writer: what a thing or a person seems like to the speaker is a reaction",
          "[writer][reading]") {
  for (const char* text : {"Your new job sounds intense", "You look well", "It looks so real",
                           "The allotment looks amazing"}) {
    INFO(text);
    auto a = Write({Msg("alice", "I started at the bakery on Monday"), Msg("bob", text)});
    REQUIRE(a.size() == 1);  // Alice's record; Bob's reaction is nothing
    CHECK(a[0].owner == "alice");
  }
  // What a member seems to be, or a judgement with more to it, stays.
  auto b = Write({Msg("alice", "I started at the bakery on Monday"),
                  Msg("bob", "You seem tired since the move")});
  REQUIRE(b.size() == 2);
  CHECK(b[1].owner == "alice");
  CHECK(b[1].source == "bob");
  auto c = Write({Msg("bob", "The north ridge looks great for a winter climb in January")});
  REQUIRE(c.size() == 1);
  CHECK(c[0].type == Type::kAdd);
  // Next to a matter of its own, only the reaction goes.
  auto d = Write({Msg("bob", "That sounds perfect. I'll bring the folding chairs")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].content == "Bob will bring the folding chairs");
}

TEST_CASE("offline Writer: a condition and a thing that is there open like a reaction",
          "[writer][reading]") {
  // "That depends on ..." sets the speaker's condition.
  auto a = Write({Msg("theo",
                      "That depends on who is playing the late set. If it's a covers "
                      "band, I'll stay home.")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "theo");
  CHECK(a[0].content ==
        "That depends on who is playing the late set. If it's a covers band, Theo will stay home");
  // "There's" with an article names something that is there.
  auto b = Write({Msg("dani", "There's a bothy halfway up the glen for anyone who wants a break")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].content == "There's a bothy halfway up the glen for anyone who wants a break");
  // Without them they stay reactions: nothing of their own.
  for (const char* text :
       {"That's huge", "There's something there", "That depends", "It's so good"}) {
    INFO(text);
    auto c = Write({Msg("alice", "I started at the bakery on Monday"), Msg("bob", text)});
    REQUIRE(c.size() == 1);
    CHECK(c[0].owner == "alice");
  }
}

TEST_CASE("offline Writer: calling a member's idea the right one is the speaker's stance",
          "[writer][reading]") {
  auto a = Write({Msg("alice", "Dana's idea is the right one")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "alice");
  CHECK(a[0].content == "Dana's idea is the right one");
  for (const char* text : {"Good idea", "Dana's idea"}) {
    INFO(text);
    auto n = Write({Msg("alice", text)});
    REQUIRE(n.size() == 1);
    CHECK(n[0].type == Type::kNoop);
  }
}

TEST_CASE("offline Writer: a word that could open advice is a noun before a verb",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "Check is in the post for the hall deposit")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].content == "Check is in the post for the hall deposit");
  // Advice stays nothing.
  for (const char* text : {"Check the times before Friday", "Show me the plan for the hall"}) {
    INFO(text);
    auto n = Write({Msg("bob", text)});
    REQUIRE(n.size() == 1);
    CHECK(n[0].type == Type::kNoop);
  }
}

TEST_CASE("offline Writer: the speaker's own matter after advice and 'but' is kept",
          "[writer][reading]") {
  auto a = Write({Msg("bob", "Don't worry about the cost but I'd rather take the train")});
  REQUIRE(a.size() == 1);
  CHECK(a[0].owner == "bob");
  CHECK(a[0].content == "Bob would rather take the train");
  // Advice on both sides of "but" stays nothing.
  auto n = Write({Msg("bob", "Don't book the hall but call Chen first")});
  REQUIRE(n.size() == 1);
  CHECK(n[0].type == Type::kNoop);
}

}  // namespace
}  // namespace speakermem::writer

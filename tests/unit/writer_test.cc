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
  return WriterMessage{"id-" + text.substr(0, 8), speaker_id, display, text, 1000, "s1", ""};
}

std::vector<WriterAction> Write(std::vector<WriterMessage> msgs, std::vector<WriterHead> heads = {},
                                size_t max_actions = 8, const OfflineWriterParams& params = {}) {
  auto writer = NewOfflineWriter(params);
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
  CHECK(a[0].content == "The offsite is in Lisbon, the week of May 18");
  CHECK(a[1].owner == "GROUP");
  CHECK(a[1].layer == "insight");
  CHECK(a[1].content == "The group always start the retro with a joke round");
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
  CHECK(Write(many, {}, 8).size() == 8);
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

  // A reply's "you" is the person replied to, whoever spoke last.
  WriterMessage reply = Msg("alice", "You could have texted before ten, to be fair");
  reply.reply_to_speaker_id = "bob";
  auto b = Write({Msg("chen", "Sorry, the investor call ran over"), reply});
  REQUIRE(b.size() == 2);
  CHECK(b[1].owner == "bob");
  CHECK(b[1].source == "alice");
  CHECK(b[1].layer == "profile");
  CHECK(b[1].content == "Alice says Bob could have texted before ten, to be fair");

  // "you" opening a clause of its own takes the verb's third person too (after
  // the speaker's verb, itself rewritten: "I know" -> "Alice knows").
  auto k = Write({Msg("chen", "Sorry, the investor call ran over"),
                  Msg("alice", "I know you want the window seat on the ferry")});
  REQUIRE(k.size() == 2);
  CHECK(k[1].owner == "alice");
  CHECK(k[1].content == "Alice knows Chen wants the window seat on the ferry");

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
    WriterMessage advice = Msg("alice", text);
    advice.reply_to_speaker_id = "chen";
    auto b = Write({advice});
    REQUIRE(b.size() == 1);
    CHECK(b[0].type == Type::kNoop);
  }
  // A statement about the person replied to is still their profile.
  WriterMessage about = Msg("alice", "You always pick the quiet places, Chen");
  about.reply_to_speaker_id = "chen";
  auto c = Write({about});
  REQUIRE(c.size() == 1);
  CHECK(c[0].owner == "chen");
  CHECK(c[0].source == "alice");
  CHECK(c[0].layer == "profile");
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
                           "Been here twenty minutes at the corner table", "Sorry Alice"}) {
    INFO(text);
    auto a = Write({Msg("chen", text)});
    REQUIRE(a.size() == 1);
    CHECK(a[0].type == Type::kNoop);
  }
  // Having been somewhere before is worth remembering.
  auto b = Write({Msg("chen", "I've been here before for the tasting menu")});
  REQUIRE(b.size() == 1);
  CHECK(b[0].type == Type::kAdd);
  CHECK(b[0].owner == "chen");
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
  for (const char* text : {"Thursday at 7pm works for everyone, back room of the Crown",
                           "Alice and Dana in favour of the coach, Bob against"}) {
    INFO(text);
    auto b = Write({Msg("chen", text)}, {}, 8, on);
    REQUIRE(b.size() == 1);
    CHECK(b[0].owner == "GROUP");
    CHECK(b[0].layer == "interaction");
    // Off (the default), the same clause is read by its subject.
    auto c = Write({Msg("chen", text)});
    REQUIRE(c.size() == 1);
    CHECK(c[0].owner != "GROUP");
  }
  // The speaker's own plan stays theirs, even with everyone in it.
  auto d = Write({Msg("chen", "I will bake a cake for everyone on Saturday")}, {}, 8, on);
  REQUIRE(d.size() == 1);
  CHECK(d[0].owner == "chen");
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
  CHECK(a[0].content == "Got covered by TechCrunch, might make it after all");
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

// ------------------------------------------------------------ validation

#include "storage/store.h"
#include "writer/segmenter.h"
#include "writer/validate.h"

namespace speakermem::writer {
namespace {

WriterAction Add(const std::string& owner, const std::string& source, const std::string& layer,
                 const std::string& content) {
  WriterAction a;
  a.type = Type::kAdd;
  a.type_name = "ADD";
  a.owner = owner;
  a.source = source;
  a.layer = layer;
  a.utype = "fact";
  a.content = content;
  return a;
}

WriterAction Update(const std::string& id, const std::string& content) {
  WriterAction a;
  a.type = Type::kUpdate;
  a.type_name = "UPDATE";
  a.entry_id = id;
  a.content = content;
  return a;
}

TEST_CASE("validation drops each bad action with its reason", "[writer][validate]") {
  ValidationContext ctx;
  ctx.roster = Roster();
  storage::Record head;
  head.record_id = "r000000000001";
  head.owner = "bob";
  head.source = "bob";
  head.layer = "profile";
  head.utype = "stance";
  head.content = "Bob prefers the beach";
  ctx.records[head.record_id] = head;
  storage::Record old = head;
  old.record_id = "r000000000000";
  old.superseded_by = head.record_id;
  ctx.records[old.record_id] = old;
  storage::Record locked = head;
  locked.record_id = "r000000000002";
  locked.owner = "chen";
  locked.content = "Chen is allergic to nuts";
  locked.operator_locked = true;
  ctx.records[locked.record_id] = locked;
  ctx.max_actions = 4;

  WriterAction unknown;
  unknown.type_name = "DELETE";
  std::vector<WriterAction> actions = {
      Add("Alice", "alice", "profile", "Alice likes maps"),           // 0 ok (alias)
      Add("mallory", "alice", "core", "Mallory is new"),              // 1 unknown_owner
      Add("alice", "mallory", "core", "Alice is tall"),               // 2 unknown_source
      Add("alice", "alice", "mood", "Alice is sad"),                  // 3 bad_layer
      Add("GROUP", "alice", "core", "We like maps"),                  // 4 scope_mismatch
      Add("alice", "alice", "interaction", "Alice met Bob"),          // 5 scope_mismatch
      Update("r999", "x"),                                            // 6 missing_entry
      Update("r000000000000", "Bob prefers hills"),                   // 7 entry_not_active
      Update("r000000000002", "Chen eats nuts"),                      // 8 operator_locked
      Update("r000000000001", "bob prefers the BEACH!"),              // 9 unchanged_update
      Add("alice", "alice", "profile", "Alice likes maps."),          // 10 duplicate_in_batch
      Add("bob", "bob", "profile", "Bob prefers the beach"),          // 11 duplicate_of_state
      Add("alice", "alice", "core", "   "),                           // 12 empty_content
      unknown,                                                        // 13 unknown_action
      Update("r000000000001", "Bob prefers the mountains now"),       // 14 ok
      Add("GROUP", "dana", "insight", "The group meets on Mondays"),  // 15 ok
      Add("dana", "dana", "core", std::string(3000, 'x')),            // 16 content_too_long
      Add("dana", "dana", "core", "Dana is vegetarian"),              // 17 ok (4th)
      Add("dana", "dana", "core", "Dana lives in Porto"),             // 18 over_budget
  };
  ValidationReport rep = ValidateActions(actions, ctx);
  std::map<size_t, std::string> got;
  for (const auto& r : rep.rejected) got[r.index] = r.reason;
  std::map<size_t, std::string> want = {
      {1, "unknown_owner"},       {2, "unknown_source"},      {3, "bad_layer"},
      {4, "scope_mismatch"},      {5, "scope_mismatch"},      {6, "missing_entry"},
      {7, "entry_not_active"},    {8, "operator_locked"},     {9, "unchanged_update"},
      {10, "duplicate_in_batch"}, {11, "duplicate_of_state"}, {12, "empty_content"},
      {13, "unknown_action"},     {16, "content_too_long"},   {18, "over_budget"}};
  CHECK(got == want);
  REQUIRE(rep.accepted.size() == 4);
  CHECK(rep.accepted[0].owner == "alice");  // alias resolved to the id
  CHECK(rep.accepted[1].type == Type::kUpdate);
  CHECK(rep.accepted[1].owner == "bob");  // inherited
  CHECK(rep.accepted[1].layer == "profile");
  CHECK(rep.accepted[2].owner == "GROUP");
  for (const char* reason : kRejectReasons) CHECK(std::string(reason).size() > 0);
}

TEST_CASE("BuildApply fills ids, provenance, time and chain links", "[writer][validate]") {
  ValidationContext ctx;
  ctx.roster = Roster();
  storage::Record head;
  head.record_id = "r000000000007";
  head.owner = "GROUP";
  head.source = "alice";
  head.layer = "interaction";
  head.utype = "decision";
  head.content = "The offsite is in Lisbon";
  ctx.records[head.record_id] = head;
  ValidationReport rep;
  rep.accepted.push_back(Add("bob", "bob", "profile", "Bob prefers concise checklists"));
  WriterAction u = Update(head.record_id, "The offsite moves to Porto");
  u.owner = "GROUP";
  u.source = "alice";
  u.layer = "interaction";
  u.utype = "decision";
  rep.accepted.push_back(u);
  std::vector<storage::Message> seg(3);
  seg[0] = storage::Message{"m1", 11,   "Bob", "bob", "I prefer concise checklists",
                            1000, "s2", 0,     "",    {}};
  seg[1] = storage::Message{"m2", 12,   "Alice", "alice", "The offsite moves to Porto",
                            2000, "s2", 1,       "",      {}};
  seg[2] = storage::Message{"m3", 13, "Chen", "chen", "lol", 3000, "s2", 2, "", {}};
  storage::WriterState state;
  state.cursor_seq = 10;
  state.next_record = 8;
  storage::SegmentApply apply = BuildApply(rep, ctx, seg, state, 99);
  CHECK(apply.expected_cursor == 10);
  CHECK(apply.new_cursor == 13);
  CHECK(apply.next_record == 10);
  REQUIRE(apply.new_records.size() == 2);
  const auto& a = apply.new_records[0];
  CHECK(a.record_id == "r000000000008");
  CHECK(a.from_ids == std::vector<std::string>{"m1"});
  CHECK(a.valid_at_ms == 1000);
  CHECK(a.writer_pos == "11-13");
  CHECK(a.session == "s2");
  const auto& b = apply.new_records[1];
  CHECK(b.record_id == "r000000000009");
  CHECK(b.supersedes == std::vector<std::string>{"r000000000007"});
  CHECK(b.from_ids.front() == "m2");
  REQUIRE(apply.superseded.size() == 1);
  CHECK(apply.superseded[0] == std::make_pair(std::string("r000000000007"), b.record_id));
}

TEST_CASE("a record's provenance holds what its best support answers", "[writer][validate]") {
  ValidationContext ctx;
  ctx.roster = Roster();
  ValidationReport rep;
  rep.accepted.push_back(Add("bob", "bob", "core", "Bob is up for drinks at the harbour bar"));
  std::vector<storage::Message> seg(4);
  seg[0] = storage::Message{"m1", 1,    "Alice", "alice", "Drinks at the harbour bar after?",
                            1000, "s1", 0,       "",      {}};
  seg[1] = storage::Message{"m2", 2, "Chen", "chen", "the weather is nice", 2000, "s1", 1, "", {}};
  seg[2] = storage::Message{"m3", 3, "Bob", "bob", "I'm up for drinks", 3000, "s1", 2, "m1", {}};
  seg[3] = storage::Message{"m4", 4, "Dana", "dana", "lol", 4000, "s1", 3, "", {}};
  storage::WriterState state;
  // The reply target, though another message came between.
  auto a = BuildApply(rep, ctx, seg, state, 99);
  REQUIRE(a.new_records.size() == 1);
  CHECK(a.new_records[0].from_ids == std::vector<std::string>{"m3", "m1"});
  CHECK(a.new_records[0].valid_at_ms == 3000);  // the record's own statement, not the prompt
  // Without a reply target: the last earlier message by someone else.
  seg[2].reply_to.clear();
  auto b = BuildApply(rep, ctx, seg, state, 99);
  REQUIRE(b.new_records.size() == 1);
  CHECK(b.new_records[0].from_ids == std::vector<std::string>{"m3", "m2"});
}

TEST_CASE("the Writer sees each message's reply target, in the segment or the store",
          "[writer][segmenter]") {
  speakermem::testing::TempDir dir;
  storage::StoreOptions so;
  so.path = dir.path();
  auto store = storage::Store::Open(so);
  REQUIRE_OK(store);
  storage::ChannelRef ch{"default", "c"};
  std::vector<storage::Message> msgs;
  for (const auto& [id, speaker, reply] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"m1", "Alice", ""},
                                                                      {"m2", "Bob", "m1"},
                                                                      {"m3", "Chen", "m2"},
                                                                      {"m4", "Dana", "gone"}}) {
    storage::Message m;
    m.message_id = id;
    m.speaker = speaker;
    m.text = "text of " + id;
    m.timestamp_ms = 1000;
    m.session = "s1";
    m.reply_to = reply;
    msgs.push_back(m);
  }
  REQUIRE_OK((*store)->AppendMessages(ch, &msgs));
  // The segment starts at m3: m2 is found in the store, not the segment.
  std::vector<storage::Message> segment(msgs.begin() + 1, msgs.end());
  std::vector<WriterMessage> in = ToWriterMessages(store->get(), ch, segment);
  REQUIRE(in.size() == 3);
  CHECK(in[0].reply_to_speaker_id == "Alice");  // m2 -> m1, from the store
  CHECK(in[1].reply_to_speaker_id == "Bob");    // m3 -> m2, in the segment
  CHECK(in[2].reply_to_speaker_id.empty());     // a target the channel does not hold
  CHECK(in[1].text == "text of m3");
}

TEST_CASE("segments: window, session change and flush mark", "[writer][segmenter]") {
  speakermem::testing::TempDir dir;
  storage::StoreOptions so;
  so.path = dir.path();
  auto store = storage::Store::Open(so);
  REQUIRE_OK(store);
  storage::ChannelRef ch{"default", "c"};
  std::vector<storage::Message> msgs;
  for (int i = 0; i < 7; ++i) {
    storage::Message m;
    m.message_id = "m" + std::to_string(i);
    m.speaker = "Alice";
    m.text = "text " + std::to_string(i);
    m.timestamp_ms = 1000 + i;
    m.session = i < 5 ? "s1" : "s2";
    msgs.push_back(m);
  }
  REQUIRE_OK((*store)->AppendMessages(ch, &msgs));
  storage::WriterState st;
  // Window 3 in session s1: [1..3] is full.
  auto s = NextSegment(store->get(), ch, st, 3);
  REQUIRE_OK(s);
  REQUIRE(s->has_value());
  CHECK((*s)->first_seq() == 1);
  CHECK((*s)->last_seq() == 3);
  // After 3: [4,5] closed by the session change at 6.
  st.cursor_seq = 3;
  s = NextSegment(store->get(), ch, st, 3);
  REQUIRE(s->has_value());
  CHECK((*s)->first_seq() == 4);
  CHECK((*s)->last_seq() == 5);
  // After 5: [6,7] is a short tail of the open session: not ready...
  st.cursor_seq = 5;
  s = NextSegment(store->get(), ch, st, 3);
  REQUIRE_OK(s);
  CHECK_FALSE(s->has_value());
  // ...until flushed, and only up to the mark.
  st.flush_until = 6;
  s = NextSegment(store->get(), ch, st, 3);
  REQUIRE(s->has_value());
  CHECK((*s)->first_seq() == 6);
  CHECK((*s)->last_seq() == 6);
}

}  // namespace
}  // namespace speakermem::writer

#include "writer/bound_heads.h"

namespace speakermem::writer {
namespace {

storage::Record Head(const std::string& id, const std::string& owner, const std::string& text) {
  storage::Record r;
  r.record_id = id;
  r.owner = owner;
  r.source = owner == kGroupOwner ? "alice" : owner;
  r.layer = owner == kGroupOwner ? "interaction" : "core";
  r.utype = "fact";
  r.content = text;
  return r;
}

TEST_CASE("BoundHeads: the segment's speakers and GROUP first, by overlap, within the share",
          "[writer][heads]") {
  ValidationContext ctx;
  ctx.roster = {{"alice", {"Alice"}}, {"bob", {"Bob"}}, {"chen", {"Chen"}}};
  recordindex::RecordIndex index;
  for (const auto& r :
       {Head("r1", "chen", "Chen likes the harbour bar"), Head("r2", "bob", "Bob owns a kayak"),
        Head("r3", "bob", "Bob prefers the harbour bar for drinks"),
        Head("r4", kGroupOwner, "The group meets at the harbour bar on Fridays")}) {
    ctx.records[r.record_id] = r;
    index.Append({r});
  }
  Segment seg;
  seg.messages = {storage::Message{
      "m1", 1, "Bob", "bob", "harbour bar again on friday?", 1000, "s1", 0, "", {}}};
  WriterOptions options;
  options.window = 4;  // one message of four: a quarter of the heads
  options.max_heads = 12;
  std::vector<WriterHead> heads = BoundHeads(ctx, seg, &index, options);
  REQUIRE(heads.size() == 3);
  // Tier 0 (Bob's and GROUP's) by overlap with the segment; Chen's after.
  CHECK(heads[0].record_id == "r4");
  CHECK(heads[1].record_id == "r3");
  CHECK(heads[2].record_id == "r2");
  // Without the index every head of the context is a candidate.
  options.max_heads = 40;
  CHECK(BoundHeads(ctx, seg, nullptr, options).size() == 4);
}

}  // namespace
}  // namespace speakermem::writer

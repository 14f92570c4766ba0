#include <catch2/catch.hpp>

#include "tests/test_util.h"
#include "tests/unit/writer_roster.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

using testing::Roster;
using Type = WriterAction::Type;

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

TEST_CASE("a record cites every message the Writer drew it from", "[writer][validate]") {
  ValidationContext ctx;
  ctx.roster = Roster();
  ValidationReport rep;
  // Four statements of Bob's joined into one record: its best-supported
  // messages alone (three at most) would leave one of them uncited.
  WriterAction joined = Add("bob", "bob", "core",
                            "Bob went to the pottery class; Bob made a bowl; Bob glazed it blue; "
                            "Bob will fire it on Tuesday at the pottery class");
  joined.from_ids = {"m1", "m3", "m4", "m5", "elsewhere"};
  rep.accepted.push_back(joined);
  std::vector<storage::Message> seg(5);
  seg[0] =
      storage::Message{"m1", 1, "Bob", "bob", "I went to a pottery class", 1000, "s1", 0, "", {}};
  seg[1] =
      storage::Message{"m2", 2, "Alice", "alice", "Pottery class? nice", 2000, "s1", 1, "", {}};
  seg[2] = storage::Message{"m3", 3, "Bob", "bob", "made a bowl", 3000, "s1", 2, "", {}};
  seg[3] = storage::Message{"m4", 4, "Bob", "bob", "glazed it blue", 4000, "s1", 3, "", {}};
  seg[4] = storage::Message{"m5", 5,    "Bob", "bob", "I will fire it on Tuesday at the class",
                            5000, "s1", 4,     "",    {}};
  storage::WriterState state;
  auto a = BuildApply(rep, ctx, seg, state, 99);
  REQUIRE(a.new_records.size() == 1);
  // In the segment's order; an id not in the segment is not cited.
  CHECK(a.new_records[0].from_ids == std::vector<std::string>{"m1", "m3", "m4", "m5"});
  CHECK(a.new_records[0].valid_at_ms == 5000);
  // Without the Writer's word, the best-supported messages (three at most).
  rep.accepted[0].from_ids.clear();
  auto b = BuildApply(rep, ctx, seg, state, 99);
  REQUIRE(b.new_records.size() == 1);
  CHECK(b.new_records[0].from_ids.size() == 3);
  // The Writer's ids survive its raw text.
  auto parsed = ParseWriterActions(SerializeWriterActions({joined}));
  REQUIRE_OK(parsed);
  REQUIRE(parsed->size() == 1);
  CHECK((*parsed)[0].from_ids == joined.from_ids);
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

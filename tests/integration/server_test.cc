// Integration tests: the real server (gRPC on loopback, RocksDB in a temp
// dir) driven through the real client library.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "absl/strings/match.h"
#include "engine/memory.h"
#include "speakermem/v1/speakermem.grpc.pb.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using speakermem::testing::AllMessages;
using speakermem::testing::TestServer;

v1::DialogueMessage Msg(const std::string& id, const std::string& speaker, const std::string& text,
                        int64_t ts, const std::string& session = "s1", int turn = 0) {
  v1::DialogueMessage m;
  m.set_message_id(id);
  m.set_speaker(speaker);
  m.set_text(text);
  m.set_timestamp_ms(ts);
  m.set_session(session);
  m.set_turn(turn);
  return m;
}

v1::IngestRequest Batch(const std::string& channel, int n, int offset = 0) {
  v1::IngestRequest req;
  req.set_channel(channel);
  const char* speakers[] = {"Alice", "Bob", "Carol"};
  for (int i = offset; i < offset + n; ++i) {
    *req.add_messages() =
        Msg("m" + std::to_string(i), speakers[i % 3], "message number " + std::to_string(i),
            1700000000000 + i * 1000, "s1", i);
  }
  return req;
}

// Streams Batch(channel, n) in chunks of `chunk`; true when every chunk
// was stored.
bool StreamAll(client::Client* c, const std::string& channel, int n, size_t chunk,
               size_t window = 0) {
  const v1::IngestRequest batch = Batch(channel, n);
  std::vector<v1::DialogueMessage> msgs(batch.messages().begin(), batch.messages().end());
  client::StreamOptions so;
  so.chunk_size = chunk;
  if (window > 0) so.window = window;
  size_t rejected = 0;
  return c->IngestStream(channel, msgs, so, nullptr, &rejected).ok() && rejected == 0;
}

uint64_t CountMessages(client::Client* c, const std::string& channel) {
  v1::GetRosterRequest r;
  r.set_channel(channel);
  auto roster = c->GetRoster(r);
  if (!roster.ok()) return 0;
  uint64_t n = 0;
  for (const auto& e : roster->speakers()) n += e.message_count();
  return n;
}

TEST_CASE("ingest, read back, roster and channel list", "[server]") {
  TestServer ts;
  auto resp = ts.client()->Ingest(Batch("team", 6));
  REQUIRE_OK(resp);
  CHECK(resp->stored() == 6);
  CHECK(resp->first_seq() == 1);
  CHECK(resp->last_seq() == 6);
  REQUIRE(resp->messages_size() == 6);
  CHECK(resp->messages(2).message_id() == "m2");
  CHECK(resp->messages(2).seq() == 3);

  auto msgs = AllMessages(ts.client(), "team");
  REQUIRE(msgs.size() == 6);
  CHECK(msgs[0].speaker() == "Alice");
  CHECK(msgs[0].speaker_id() == "Alice");
  CHECK(msgs[0].channel() == "team");
  CHECK(msgs[5].text() == "message number 5");
  CHECK(msgs[5].seq() == 6);

  v1::GetRosterRequest rr;
  rr.set_channel("team");
  auto roster = ts.client()->GetRoster(rr);
  REQUIRE_OK(roster);
  REQUIRE(roster->speakers_size() == 3);
  CHECK(roster->speakers(0).speaker_id() == "Alice");
  CHECK(roster->speakers(0).message_count() == 2);

  auto channels = ts.client()->ListChannels(v1::ListChannelsRequest());
  REQUIRE_OK(channels);
  REQUIRE(channels->channels_size() == 1);
  CHECK(channels->channels(0).message_count() == 6);
}

TEST_CASE("re-sending a batch stores nothing twice", "[server]") {
  TestServer ts;
  auto first = ts.client()->Ingest(Batch("team", 5));
  REQUIRE_OK(first);
  auto again = ts.client()->Ingest(Batch("team", 7));  // 5 old + 2 new
  REQUIRE_OK(again);
  CHECK(again->stored() == 2);
  CHECK(again->duplicates() == 5);
  CHECK(again->messages(4).duplicate());
  CHECK(again->messages(4).seq() == first->messages(4).seq());
  CHECK(again->first_seq() == 6);
  CHECK(AllMessages(ts.client(), "team").size() == 7);
}

TEST_CASE("messages and indexes survive a restart", "[server]") {
  TestServer ts;
  REQUIRE_OK(ts.client()->Ingest(Batch("team", 30)));
  ts.Restart();
  auto msgs = AllMessages(ts.client(), "team");
  REQUIRE(msgs.size() == 30);
  v1::QueryRequest q;
  q.set_channel("team");
  q.set_question("message number 17");
  auto ans = ts.client()->Query(q);
  REQUIRE_OK(ans);
  REQUIRE(ans->evidence_size() > 0);
  CHECK(ans->evidence(0).message().message_id() == "m17");
  // Sequence numbers continue after the restart.
  auto more = ts.client()->Ingest(Batch("team", 2, 30));
  REQUIRE_OK(more);
  CHECK(more->first_seq() == 31);
}

struct BadCase {
  const char* name;
  const char* field;  // expected "messages[1].<field>" prefix
  std::function<void(v1::DialogueMessage*)> mutate;
};

std::vector<BadCase> BadCases() {
  return {
      {"empty speaker", "speaker", [](auto* m) { m->set_speaker(""); }},
      {"reserved GROUP", "speaker", [](auto* m) { m->set_speaker("GROUP"); }},
      {"reserved ALL", "speaker", [](auto* m) { m->set_speaker("ALL"); }},
      {"reserved id", "speaker_id", [](auto* m) { m->set_speaker_id("group"); }},
      {"text too long", "text", [](auto* m) { m->set_text(std::string(32 * 1024 + 1, 'x')); }},
      {"empty text", "text", [](auto* m) { m->set_text(""); }},
      {"invalid UTF-8 text", "text", [](auto* m) { m->set_text("bad \xC3\x28 bytes"); }},
      {"invalid UTF-8 speaker", "speaker", [](auto* m) { m->set_speaker("Bo\xFF"); }},
      {"missing timestamp", "timestamp_ms", [](auto* m) { m->set_timestamp_ms(0); }},
      {"negative timestamp", "timestamp_ms", [](auto* m) { m->set_timestamp_ms(-1); }},
      {"timestamp past 9999", "timestamp_ms",
       [](auto* m) { m->set_timestamp_ms(int64_t{1} << 62); }},
      {"negative turn", "turn", [](auto* m) { m->set_turn(-3); }},
      {"other channel", "channel", [](auto* m) { m->set_channel("elsewhere"); }},
      {"reserved id prefix", "message_id", [](auto* m) { m->set_message_id("~1"); }},
      {"control char", "speaker", [](auto* m) { m->set_speaker("Al\tice"); }},
      {"metadata value too long", "metadata[k]",
       [](auto* m) { (*m->mutable_metadata())["k"] = std::string(2000, 'v'); }},
  };
}

TEST_CASE("every bad input rejects the whole batch and writes nothing", "[server][bad-input]") {
  TestServer ts;
  REQUIRE_OK(ts.client()->Ingest(Batch("existing", 3)));
  for (const BadCase& bc : BadCases()) {
    for (const std::string channel : {"fresh", "existing"}) {
      INFO(bc.name << " into " << channel);
      v1::IngestRequest req = Batch(channel, 3, 100);
      bc.mutate(req.mutable_messages(1));
      auto r = ts.client()->Ingest(req);
      REQUIRE_CODE(r, absl::StatusCode::kInvalidArgument);
      std::string msg(r.status().message());
      CHECK(msg.rfind(std::string("messages[1].") + bc.field, 0) == 0);
      // Nothing of the batch was written: the fresh channel does not exist,
      // the existing one still has exactly its 3 messages.
      v1::GetRosterRequest rr;
      rr.set_channel(channel);
      if (channel == "fresh") {
        REQUIRE_CODE(ts.client()->GetRoster(rr), absl::StatusCode::kNotFound);
      } else {
        CHECK(CountMessages(ts.client(), channel) == 3);
        CHECK(AllMessages(ts.client(), channel).size() == 3);
      }
    }
  }
}

TEST_CASE("batch-level bad input is rejected", "[server][bad-input]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.limits.max_batch_messages = 10; });
  auto too_many = ts.client()->Ingest(Batch("c", 11));
  REQUIRE_CODE(too_many, absl::StatusCode::kInvalidArgument);
  CHECK(std::string(too_many.status().message()).rfind("messages:", 0) == 0);
  REQUIRE_CODE(ts.client()->Ingest(Batch("", 2)), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(ts.client()->Ingest(Batch("c", 0)), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(ts.client()->Ingest(Batch("bad\x01name", 1)), absl::StatusCode::kInvalidArgument);
  auto channels = ts.client()->ListChannels(v1::ListChannelsRequest());
  REQUIRE_OK(channels);
  CHECK(channels->channels_size() == 0);
}

TEST_CASE("a bad chunk is acknowledged with its error and the stream goes on",
          "[server][bad-input]") {
  TestServer ts;
  std::vector<v1::DialogueMessage> msgs;
  const v1::IngestRequest batch = Batch("s", 30);
  msgs.assign(batch.messages().begin(), batch.messages().end());
  msgs[15].set_speaker("ALL");  // chunk 1 (messages 10..19), index 5 in it
  std::vector<v1::IngestAck> acks;
  size_t rejected = 0;
  client::StreamOptions so;
  so.chunk_size = 10;
  REQUIRE_OK(ts.client()->IngestStream(
      "s", msgs, so, [&](const v1::IngestAck& a) { acks.push_back(a); }, &rejected));
  REQUIRE(acks.size() == 3);
  CHECK(rejected == 1);
  CHECK_FALSE(acks[0].has_error());
  CHECK(acks[0].stored() == 10);
  REQUIRE(acks[1].has_error());
  CHECK(acks[1].error().code() == static_cast<int>(absl::StatusCode::kInvalidArgument));
  CHECK(acks[1].error().message().find("chunk 1: messages[5].speaker") != std::string::npos);
  CHECK(acks[2].stored() == 10);
  CHECK(acks[2].first_seq() == 11);
  auto all = AllMessages(ts.client(), "s");
  CHECK(all.size() == 20);
  for (const auto& m : all) CHECK(m.message_id() != "m15");
}

TEST_CASE("a long stream keeps its order: acks in chunk order, seqs in stream order",
          "[server][concurrency]") {
  // The server stores a stream's chunks on two threads, those that queued
  // up together as one append; appends and acks must still follow the
  // stream.
  TestServer ts;
  const v1::IngestRequest batch = Batch("o", 900);
  std::vector<v1::DialogueMessage> msgs(batch.messages().begin(), batch.messages().end());
  for (size_t c = 7; c < 300; c += 50) msgs[c * 3 + 1].set_speaker("ALL");  // refused chunks
  std::vector<v1::IngestAck> acks;
  size_t rejected = 0;
  client::StreamOptions so;
  so.chunk_size = 3;
  so.window = 16;
  REQUIRE_OK(ts.client()->IngestStream(
      "o", msgs, so, [&](const v1::IngestAck& a) { acks.push_back(a); }, &rejected));
  REQUIRE(acks.size() == 300);
  CHECK(rejected == 6);
  uint64_t next_seq = 1;
  std::vector<std::string> expected;
  for (size_t c = 0; c < acks.size(); ++c) {
    INFO("chunk " << c);
    CHECK(acks[c].chunk_id() == c);
    if (c % 50 == 7) {
      CHECK(acks[c].has_error());
      continue;
    }
    REQUIRE_FALSE(acks[c].has_error());
    CHECK(acks[c].first_seq() == next_seq);
    CHECK(acks[c].last_seq() == next_seq + 2);
    next_seq += 3;
    for (size_t i = c * 3; i < c * 3 + 3; ++i) expected.push_back(msgs[i].message_id());
  }
  std::vector<std::string> stored;
  for (const auto& m : AllMessages(ts.client(), "o")) stored.push_back(m.message_id());
  CHECK(stored == expected);
}

// Group commit, driven directly: the stream's store threads group chunks
// only when they queue up, which a test cannot force.
storage::Message Plain(const std::string& id, const std::string& speaker, int64_t ts) {
  storage::Message m;
  m.message_id = id;
  m.speaker = speaker;
  m.text = "we meet at the harbour at " + std::to_string(ts);
  m.timestamp_ms = ts;
  return m;
}

TEST_CASE("a group of batches is stored as if each came alone, in order", "[server][ingest]") {
  TestServer ts;
  std::vector<engine::Memory::Batch> group(3);
  group[0].messages = {Plain("a", "Alice", 1000), Plain("b", "Bob", 2000)};
  group[1].messages = {Plain("c", "Alice", 3000), Plain("d", "ALL", 4000)};  // reserved speaker
  group[2].messages = {Plain("b", "Bob", 2000), Plain("e", "Carol", 5000)};  // "b" again
  for (auto& b : group) b.message_channels.assign(b.messages.size(), "");
  int appended = 0;
  const std::function<void()> on_append = [&] { ++appended; };
  auto results = ts.server()->memory()->IngestGroup(
      storage::ChannelRef{storage::kDefaultTenant, "g"}, std::move(group), on_append);
  REQUIRE(results.size() == 3);
  CHECK(appended == 1);  // one append for the two valid batches
  REQUIRE_OK(results[0]);
  CHECK(results[0]->stored == 2);
  CHECK(results[0]->first_seq == 1);
  CHECK(results[0]->last_seq == 2);
  REQUIRE(results[1].status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(results[1].status().message(), "messages[1].speaker"));
  REQUIRE_OK(results[2]);
  CHECK(results[2]->stored == 1);
  CHECK(results[2]->duplicates == 1);
  CHECK(results[2]->first_seq == 3);
  CHECK(results[2]->last_seq == 3);
  REQUIRE(results[2]->messages.size() == 2);
  CHECK(results[2]->messages[0].duplicate);
  CHECK(results[2]->messages[0].seq == 2);  // the earlier batch's "b"
  std::vector<std::string> stored;
  for (const auto& m : AllMessages(ts.client(), "g")) stored.push_back(m.message_id());
  CHECK(stored == std::vector<std::string>{"a", "b", "e"});

  // Nothing valid: no append, so the callback is not called.
  std::vector<engine::Memory::Batch> bad(1);
  bad[0].messages = {Plain("f", "ALL", 6000)};
  bad[0].message_channels = {""};
  auto refused = ts.server()->memory()->IngestGroup(
      storage::ChannelRef{storage::kDefaultTenant, "g"}, std::move(bad), on_append);
  CHECK(refused[0].status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(appended == 1);
}

TEST_CASE("a stream that switches channel ends with INVALID_ARGUMENT", "[server][bad-input]") {
  TestServer ts;
  auto channel = grpc::CreateChannel(ts.addr(), grpc::InsecureChannelCredentials());
  auto stub = v1::SpeakerMem::NewStub(channel);
  grpc::ClientContext ctx;
  auto stream = stub->IngestStream(&ctx);
  v1::IngestChunk c1;
  c1.set_channel("a");
  *c1.add_messages() = Msg("x", "Alice", "hello", 1000);
  REQUIRE(stream->Write(c1));
  v1::IngestAck ack;
  REQUIRE(stream->Read(&ack));
  CHECK(ack.stored() == 1);
  v1::IngestChunk c2 = c1;
  c2.set_channel("b");
  stream->Write(c2);
  stream->WritesDone();
  while (stream->Read(&ack)) {
  }
  grpc::Status s = stream->Finish();
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  v1::GetRosterRequest rr;
  rr.set_channel("b");
  REQUIRE_CODE(client::Client::Connect({ts.addr(), "", 5000})->GetRoster(rr),
               absl::StatusCode::kNotFound);
}

TEST_CASE("GetMessages pages, filters and rejects bad tokens", "[server]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.max_page_size = 100; });
  for (int b = 0; b < 5; ++b) REQUIRE_OK(ts.client()->Ingest(Batch("p", 50, b * 50)));
  v1::GetMessagesRequest req;
  req.set_channel("p");
  req.set_page_size(100);
  std::vector<uint64_t> seqs;
  int pages = 0;
  do {
    auto page = ts.client()->GetMessages(req);
    REQUIRE_OK(page);
    ++pages;
    CHECK(page->messages_size() <= 100);
    for (const auto& m : page->messages()) seqs.push_back(m.seq());
    req.set_page_token(page->next_page_token());
  } while (!req.page_token().empty());
  CHECK(pages == 3);
  REQUIRE(seqs.size() == 250);
  for (size_t i = 0; i < seqs.size(); ++i) CHECK(seqs[i] == i + 1);

  v1::GetMessagesRequest big;
  big.set_channel("p");
  big.set_page_size(100000);  // clamped to max_page_size
  CHECK(ts.client()->GetMessages(big)->messages_size() == 100);

  v1::GetMessagesRequest bob;
  bob.set_channel("p");
  bob.set_speaker("Bob");
  bob.set_page_size(1000);
  auto b = ts.client()->GetMessages(bob);
  REQUIRE_OK(b);
  CHECK(b->messages_size() == 83);
  for (const auto& m : b->messages()) CHECK(m.speaker() == "Bob");
  bob.set_speaker("Nobody");
  CHECK(ts.client()->GetMessages(bob)->messages_size() == 0);

  v1::GetMessagesRequest ranged;
  ranged.set_channel("p");
  ranged.set_start_ms(1700000000000 + 10 * 1000);
  ranged.set_end_ms(1700000000000 + 20 * 1000);
  auto r = ts.client()->GetMessages(ranged);
  REQUIRE_OK(r);
  REQUIRE(r->messages_size() == 10);
  CHECK(r->messages(0).message_id() == "m10");

  v1::GetMessagesRequest bad = ranged;
  bad.set_page_token("garbage");
  REQUIRE_CODE(ts.client()->GetMessages(bad), absl::StatusCode::kInvalidArgument);
  v1::GetMessagesRequest inverted = ranged;
  inverted.set_start_ms(ranged.end_ms());
  inverted.set_end_ms(ranged.start_ms());
  REQUIRE_CODE(ts.client()->GetMessages(inverted), absl::StatusCode::kInvalidArgument);
  v1::GetMessagesRequest unknown;
  unknown.set_channel("nope");
  REQUIRE_CODE(ts.client()->GetMessages(unknown), absl::StatusCode::kNotFound);
  unknown.set_channel("");
  REQUIRE_CODE(ts.client()->GetMessages(unknown), absl::StatusCode::kInvalidArgument);
}

TEST_CASE("ListChannels pages by name", "[server]") {
  TestServer ts;
  for (int i = 0; i < 7; ++i) REQUIRE_OK(ts.client()->Ingest(Batch("ch" + std::to_string(i), 1)));
  v1::ListChannelsRequest req;
  req.set_page_size(3);
  std::vector<std::string> names;
  do {
    auto page = ts.client()->ListChannels(req);
    REQUIRE_OK(page);
    for (const auto& c : page->channels()) names.push_back(c.channel());
    req.set_page_token(page->next_page_token());
  } while (!req.page_token().empty());
  CHECK(names == std::vector<std::string>{"ch0", "ch1", "ch2", "ch3", "ch4", "ch5", "ch6"});
}

TEST_CASE("concurrent streams into different channels", "[server][concurrency]") {
  TestServer ts;
  constexpr int kStreams = 8;
  constexpr int kPerStream = 2000;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kStreams; ++t) {
    threads.emplace_back([&, t] {
      if (!StreamAll(ts.client(), "chan" + std::to_string(t), kPerStream, 100)) ++failures;
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(failures == 0);
  for (int t = 0; t < kStreams; ++t) {
    auto msgs = AllMessages(ts.client(), "chan" + std::to_string(t));
    REQUIRE(msgs.size() == kPerStream);
    for (size_t i = 0; i < msgs.size(); ++i) {
      REQUIRE(msgs[i].seq() == i + 1);
      REQUIRE(msgs[i].message_id() == "m" + std::to_string(i));
    }
  }
}

TEST_CASE("many short streams, one after another on each of four threads, all finish",
          "[server][concurrency]") {
  // Each stream's last acknowledgement is written from a store thread while
  // the call may finish on a gRPC thread: the reactor must outlive the
  // store thread's last touch (under AddressSanitizer a use after free
  // fails this; without it, a lost stream hangs it).
  TestServer ts;
  constexpr int kThreads = 4;
  constexpr int kStreamsEach = 40;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kStreamsEach; ++k) {
        const std::string channel = "short" + std::to_string(t) + "-" + std::to_string(k);
        if (!StreamAll(ts.client(), channel, 12, 3, /*window=*/4)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(CountMessages(ts.client(), "short3-39") == 12);
}

TEST_CASE("concurrent ingest into one channel keeps seqs unique", "[server][concurrency]") {
  TestServer ts;
  std::vector<std::thread> threads;
  // Catch2 assertions are not thread-safe: the threads record, the test
  // thread checks.
  std::vector<absl::Status> results(4 * 25);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < 25; ++b) {
        results[t * 25 + b] = ts.client()->Ingest(Batch("shared", 10, (t * 25 + b) * 10)).status();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) REQUIRE_OK(r);
  auto msgs = AllMessages(ts.client(), "shared");
  REQUIRE(msgs.size() == 1000);
  std::set<std::string> ids;
  for (size_t i = 0; i < msgs.size(); ++i) {
    CHECK(msgs[i].seq() == i + 1);
    ids.insert(msgs[i].message_id());
  }
  CHECK(ids.size() == 1000);
}

TEST_CASE("Query answers from System 1 with evidence", "[server][query]") {
  TestServer ts;
  v1::IngestRequest req;
  req.set_channel("trip");
  *req.add_messages() = Msg("1", "Alice", "Let's go hiking in the Alps in June", 1000);
  *req.add_messages() = Msg("2", "Bob", "I prefer the beach, honestly", 2000);
  *req.add_messages() = Msg("3", "Carol", "Alps sounds great, I'm in for hiking", 3000);
  REQUIRE_OK(ts.client()->Ingest(req));
  v1::QueryRequest q;
  q.set_channel("trip");
  q.set_question("Who wants to go to the beach?");
  auto r = ts.client()->Query(q);
  REQUIRE_OK(r);
  REQUIRE(r->evidence_size() >= 1);
  CHECK(r->evidence(0).message().speaker() == "Bob");
  CHECK(r->answer().find("Bob") != std::string::npos);
  CHECK_FALSE(r->abstained());
  CHECK(r->evidence(0).why() == "hybrid + select, rank 1");
  CHECK(r->trace_size() >= 1);

  q.mutable_budgets()->set_s1_top_k(1);
  q.set_question("hiking Alps");
  r = ts.client()->Query(q);
  REQUIRE_OK(r);
  CHECK(r->evidence_size() == 1);

  q.set_question("quantum chromodynamics");
  r = ts.client()->Query(q);
  REQUIRE_OK(r);
  CHECK(r->abstained());  // dense recall always finds neighbours; nothing supports an answer
  q.set_mode(v1::BM25_ONLY);
  r = ts.client()->Query(q);
  REQUIRE_OK(r);
  CHECK(r->abstained());
  CHECK(r->evidence_size() == 0);
  q.set_mode(v1::PIPELINE);

  q.set_question("hiking");
  q.set_start_ms(2500);
  r = ts.client()->Query(q);
  REQUIRE_OK(r);
  REQUIRE(r->evidence_size() == 1);
  CHECK(r->evidence(0).message().speaker() == "Carol");

  v1::QueryRequest bad = q;
  bad.set_question("");
  REQUIRE_CODE(ts.client()->Query(bad), absl::StatusCode::kInvalidArgument);
  bad = q;
  bad.mutable_budgets()->set_s1_top_k(100000);
  REQUIRE_CODE(ts.client()->Query(bad), absl::StatusCode::kInvalidArgument);
  bad = q;
  bad.set_channel("unknown");
  REQUIRE_CODE(ts.client()->Query(bad), absl::StatusCode::kNotFound);
}

TEST_CASE("health reports SERVING and request ids are echoed", "[server]") {
  TestServer ts;
  REQUIRE_OK(ts.client()->WaitForServing(5000));
  auto stub =
      v1::SpeakerMem::NewStub(grpc::CreateChannel(ts.addr(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.AddMetadata("x-request-id", "test-req-42");
  v1::ListChannelsResponse resp;
  REQUIRE(stub->ListChannels(&ctx, v1::ListChannelsRequest(), &resp).ok());
  auto md = ctx.GetServerInitialMetadata();
  auto it = md.find("x-request-id");
  REQUIRE(it != md.end());
  CHECK(std::string(it->second.data(), it->second.size()) == "test-req-42");
}

TEST_CASE("metrics endpoint exposes ingest, latency and store size", "[server][metrics]") {
  TestServer ts(nullptr, /*metrics=*/true);
  REQUIRE(ts.server()->metrics_port() > 0);
  REQUIRE_OK(ts.client()->Ingest(Batch("m", 12)));
  REQUIRE_OK(ts.client()->Ingest(Batch("m", 12)));  // all duplicates
  REQUIRE_CODE(ts.client()->Ingest(Batch("", 1)), absl::StatusCode::kInvalidArgument);
  std::string body = testing::HttpGetMetrics(ts.server()->metrics_port());
  INFO(body);
  CHECK(body.find("speakermem_ingested_messages_total 12") != std::string::npos);
  CHECK(body.find("speakermem_ingest_duplicates_total 12") != std::string::npos);
  CHECK(body.find("speakermem_ingest_rejected_batches_total 1") != std::string::npos);
  CHECK(body.find("speakermem_rpc_duration_seconds_count{code=\"OK\",method=\"Ingest\"} 2") !=
        std::string::npos);
  CHECK(
      body.find(
          "speakermem_rpc_duration_seconds_count{code=\"INVALID_ARGUMENT\",method=\"Ingest\"} 1") !=
      std::string::npos);
  CHECK(body.find("speakermem_store_size_bytes ") != std::string::npos);
  CHECK(body.find("speakermem_ready 1") != std::string::npos);
  // No tenant or channel labels on any metric.
  CHECK(body.find("channel=") == std::string::npos);
  CHECK(body.find("tenant=") == std::string::npos);
}

}  // namespace
}  // namespace speakermem

namespace speakermem {
namespace {

TEST_CASE("ScoreWriterActions scores a rollout over gRPC", "[server][rewards]") {
  testing::TestServer ts;
  v1::ScoreWriterActionsRequest req;
  auto* pre = req.add_pre_state();
  pre->set_record_id("r000000000001");
  pre->set_owner("Alice");
  pre->set_source("Alice");
  pre->set_layer(v1::CORE);
  pre->set_content("Alice drinks tea");
  for (auto [speaker, text] : std::vector<std::pair<std::string, std::string>>{
           {"Alice", "I drink coffee now"}, {"Bob", "I moved to Lisbon"}}) {
    auto* m = req.add_segment();
    m->set_speaker(speaker);
    m->set_text(text);
    m->set_timestamp_ms(1700000000000);
  }
  req.set_output(
      R"({"actions":[{"action":"UPDATE","entry_id":"r000000000001","content":"Alice drinks coffee"},)"
      R"({"action":"ADD","owner":"Bob","source":"Bob","layer":"per_speaker_core","content":"Bob lives in Lisbon"}]})");
  auto r = ts.client()->ScoreWriterActions(req);
  REQUIRE_OK(r);
  CHECK(r->validity() == Approx(1.0));
  CHECK(r->penalty() == 0.0);
  CHECK(r->attempted() == 2);
  CHECK(r->post_state_size() == 3);
  CHECK_FALSE(r->has_memory());
  // Against its own post-state as the reference: memory reward 1.
  req.set_has_reference(true);
  *req.mutable_reference_post_state() = r->post_state();
  auto m = ts.client()->ScoreWriterActions(req);
  REQUIRE_OK(m);
  CHECK(m->has_memory());
  CHECK(m->memory_reward() == Approx(1.0));
  // Garbage output: json penalty, zero validity; an empty segment is refused.
  req.set_output("no actions here");
  auto bad = ts.client()->ScoreWriterActions(req);
  REQUIRE_OK(bad);
  CHECK(bad->validity() == 0.0);
  CHECK(bad->z_json());
  req.clear_segment();
  REQUIRE_CODE(ts.client()->ScoreWriterActions(req), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace speakermem

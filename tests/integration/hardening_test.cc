// What an outside client may send or expect beyond the field checks: enum
// numbers the contract does not define, blank and over-long questions,
// deadlines, read-your-writes, reflection v1.
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "tests/fake/fake_model_server.h"
#include "tests/fake/standard_reply.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::TestServer;

void Seed(TestServer* ts) {
  v1::IngestRequest req;
  req.set_channel("h");
  auto* m = req.add_messages();
  m->set_speaker("Alice");
  m->set_text("The offsite is in Porto");
  m->set_timestamp_ms(1700000000000);
  m->set_session("s1");
  REQUIRE_OK(ts->client()->Ingest(req));
}

TEST_CASE("unknown enum values are refused, naming the field", "[server][bad-input]") {
  TestServer ts;
  Seed(&ts);
  v1::QueryRequest q;
  q.set_channel("h");
  q.set_question("Where is the offsite?");
  q.set_mode(static_cast<v1::RetrievalMode>(99));
  auto r = ts.client()->Query(q);
  REQUIRE_CODE(r, absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(r.status().message(), "mode: 99 is not a RetrievalMode value"));

  q.set_mode(v1::RetrievalMode());
  q.set_tense(static_cast<v1::Tense>(77));
  auto t = ts.client()->Retrieve(q);
  REQUIRE_CODE(t, absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(t.status().message(), "tense: 77"));

  v1::ListRecordsRequest l;
  l.set_channel("h");
  l.set_layer(static_cast<v1::Layer>(42));
  auto lr = ts.client()->ListRecords(l);
  REQUIRE_CODE(lr, absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(lr.status().message(), "layer: 42"));

  // Defined values still work.
  q.set_tense(v1::FULL);
  REQUIRE_OK(ts.client()->Query(q));
}

TEST_CASE("a blank or over-long question is refused", "[server][bad-input]") {
  TestServer ts;
  Seed(&ts);
  v1::QueryRequest q;
  q.set_channel("h");
  q.set_question(" \t\n ");
  auto blank = ts.client()->Query(q);
  REQUIRE_CODE(blank, absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(blank.status().message(), "question"));

  q.set_question(std::string(8193, 'x'));
  auto lng = ts.client()->Query(q);
  REQUIRE_CODE(lng, absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(lng.status().message(), "at most 8192"));

  q.set_question("Where is the offsite?" + std::string(8000, ' '));
  REQUIRE_OK(ts.client()->Query(q));  // at the limit is fine
}

TEST_CASE("a query whose deadline passes mid-pipeline stops, even inside a model call",
          "[server][deadline]") {
  testing::FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest& req) {
    testing::FakeReply r = testing::StandardReply(req);
    if (req.stage == "project") r.delay_ms = 4000;  // a stalled first stage
    return r;
  });
  std::string url = fake.base_url();
  TestServer ts(
      [url](server::ServerConfig* c) {
        for (const char* stage : {"project", "select", "answer"}) {
          REQUIRE_OK(c->models.SetOverride(stage, "provider", "openai"));
          REQUIRE_OK(c->models.SetOverride(stage, "base_url", url));
          REQUIRE_OK(c->models.SetOverride(stage, "max_retries", "0"));
        }
      },
      /*metrics=*/true);
  Seed(&ts);
  client::ClientOptions opts;
  opts.addr = ts.addr();
  opts.timeout_ms = 400;
  auto impatient = client::Client::Connect(opts);
  v1::QueryRequest q;
  q.set_channel("h");
  q.set_question("Where is the offsite?");
  const auto start = std::chrono::steady_clock::now();
  REQUIRE_CODE(impatient->Query(q), absl::StatusCode::kDeadlineExceeded);
  // The server gives up the Project call at the deadline (it does not wait
  // the 4 s out) and stops before the next stage: no Select, no Answer.
  std::string m;
  while (!absl::StrContains(m, "code=\"DEADLINE_EXCEEDED\"") &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    m = testing::HttpGetMetrics(ts.server()->metrics_port());
  }
  CHECK(absl::StrContains(m, "method=\"Query\""));
  CHECK(absl::StrContains(m, "code=\"DEADLINE_EXCEEDED\""));
  // The Project call itself was cut by the deadline (a call that ran its
  // 4 s out would count as ok; the deadline is 400 ms).
  bool project_cut = false;
  std::istringstream lines(m);
  for (std::string line; std::getline(lines, line);) {
    project_cut = project_cut || (absl::StartsWith(line, "speakermem_model_calls_total{") &&
                                  absl::StrContains(line, "stage=\"project\"") &&
                                  absl::StrContains(line, "outcome=\"deadline_exceeded\""));
  }
  INFO(m);
  CHECK(project_cut);
  CHECK(fake.count("project") == 1);
  CHECK(fake.count("select") == 0);
  CHECK(fake.count("answer") == 0);
}

TEST_CASE("a query naming the seq of the ingest it follows sees that message",
          "[server][read-your-writes]") {
  // A slow embedding endpoint: a message is in the dense index about 1.5 s
  // after its ingest returned.
  testing::FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest& req) {
    testing::FakeReply r = testing::StandardReply(req);
    if (req.stage == "embed") r.delay_ms = 1500;
    return r;
  });
  std::string url = fake.base_url();
  TestServer ts([url](server::ServerConfig* c) {
    REQUIRE_OK(c->models.SetOverride("embed", "provider", "openai"));
    REQUIRE_OK(c->models.SetOverride("embed", "base_url", url));
  });
  v1::IngestRequest req;
  req.set_channel("ryw");
  auto* m = req.add_messages();
  m->set_message_id("ryw-1");
  m->set_speaker("Alice");
  m->set_text("The offsite moved to Porto");
  m->set_timestamp_ms(1700000000000);
  auto ack = ts.client()->Ingest(req);
  REQUIRE_OK(ack);

  v1::QueryRequest q;
  q.set_channel("ryw");
  q.set_question("Where is the offsite?");
  q.set_mode(v1::DENSE_ONLY);  // only the dense index: the one that lags
  // Not reached in time: DEADLINE_EXCEEDED, naming the wait.
  q.set_min_seq(ack->last_seq());
  q.set_fresh_timeout_ms(50);
  auto early = ts.client()->Retrieve(q);
  REQUIRE_CODE(early, absl::StatusCode::kDeadlineExceeded);
  CHECK(absl::StrContains(early.status().message(), "min_seq"));
  // Waited for: the message is found.
  q.set_fresh_timeout_ms(0);
  auto r = ts.client()->Retrieve(q);
  REQUIRE_OK(r);
  bool found = false;
  for (const auto& e : r->evidence()) found = found || e.message().message_id() == "ryw-1";
  CHECK(found);
  // A seq the channel does not have yet.
  q.set_min_seq(ack->last_seq() + 5);
  REQUIRE_CODE(ts.client()->Retrieve(q), absl::StatusCode::kOutOfRange);
}

TEST_CASE("server reflection answers protocol v1", "[server][reflection]") {
  TestServer ts;
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", ts.server()->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = grpc::reflection::v1::ServerReflection::NewStub(channel);
  grpc::ClientContext ctx;
  auto stream = stub->ServerReflectionInfo(&ctx);
  grpc::reflection::v1::ServerReflectionRequest req;
  grpc::reflection::v1::ServerReflectionResponse resp;

  req.set_list_services("");
  REQUIRE(stream->Write(req));
  REQUIRE(stream->Read(&resp));
  std::set<std::string> names;
  for (const auto& s : resp.list_services_response().service()) names.insert(s.name());
  CHECK(names.count("speakermem.v1.SpeakerMem") == 1);
  CHECK(names.count("grpc.reflection.v1.ServerReflection") == 1);

  req.set_file_containing_symbol("speakermem.v1.SpeakerMem.Query");
  REQUIRE(stream->Write(req));
  REQUIRE(stream->Read(&resp));
  REQUIRE(resp.file_descriptor_response().file_descriptor_proto_size() >= 1);
  google::protobuf::FileDescriptorProto file;
  REQUIRE(file.ParseFromString(resp.file_descriptor_response().file_descriptor_proto(0)));
  CHECK(file.name() == "speakermem/v1/speakermem.proto");
  CHECK(resp.original_request().file_containing_symbol() == "speakermem.v1.SpeakerMem.Query");

  req.set_file_containing_symbol("no.such.Thing");
  REQUIRE(stream->Write(req));
  REQUIRE(stream->Read(&resp));
  CHECK(resp.error_response().error_code() == static_cast<int>(grpc::StatusCode::NOT_FOUND));

  REQUIRE(stream->WritesDone());
  CHECK(stream->Finish().ok());
}

}  // namespace
}  // namespace speakermem

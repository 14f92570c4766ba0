// Whatever bytes reach whichever RPC: requests that do not decode are
// refused with INVALID_ARGUMENT naming the request or the field (never
// UNIMPLEMENTED), on unary and streaming methods alike, and the log stays
// one JSON object per line.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "nlohmann/json.hpp"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

namespace pb = google::protobuf;
using testing::TestServer;

// One call of `method` carrying `bytes` as its only request message, sent
// as a generic stream (the wire form of every call type); its status.
class OneMessageCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // `last`: the message is the last one (the call half-closes with it);
  // otherwise the call stays open until Cancel.
  OneMessageCall(grpc::GenericStub* stub, const std::string& method, const std::string& bytes,
                 bool last = true) {
    grpc::Slice slice(bytes);
    request_ = grpc::ByteBuffer(&slice, 1);
    ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    stub->PrepareBidiStreamingCall(&ctx_, method, grpc::StubOptions(), this);
    if (last) {
      StartWriteLast(&request_, grpc::WriteOptions());
    } else {
      StartWrite(&request_);
    }
    StartRead(&response_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    std::vector<grpc::Slice> slices;
    if (response_.Dump(&slices).ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      last_response_.clear();
      for (const auto& sl : slices)
        last_response_.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    }
    StartRead(&response_);
  }
  void OnDone(const grpc::Status& s) override {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
    done_ = true;
    cv_.notify_all();
  }
  grpc::Status Await() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    return status_;
  }
  void Cancel() { ctx_.TryCancel(); }
  // The last response message's bytes (e.g. a stream's last ack).
  std::string last_response() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_response_;
  }

 private:
  grpc::ClientContext ctx_;
  grpc::ByteBuffer request_, response_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
  std::string last_response_;
};

const pb::ServiceDescriptor& Service() {
  const pb::ServiceDescriptor* s =
      pb::DescriptorPool::generated_pool()->FindServiceByName("speakermem.v1.SpeakerMem");
  REQUIRE(s != nullptr);
  return *s;
}

std::unique_ptr<pb::Message> New(const pb::Descriptor* d) {
  return std::unique_ptr<pb::Message>(
      pb::MessageFactory::generated_factory()->GetPrototype(d)->New());
}

// Every line written to the log while alive.
class CapturedLog {
 public:
  CapturedLog() {
    SetLogSink([this](absl::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~CapturedLog() { SetLogSink(nullptr); }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

void CheckJsonLines(CapturedLog* log) {
  std::vector<std::string> lines = log->lines();
  CHECK(!lines.empty());
  for (const auto& line : lines) {
    std::string l = line;
    while (!l.empty() && l.back() == '\n') l.pop_back();
    INFO(l);
    CHECK(l.find('\n') == std::string::npos);
    nlohmann::json j = nlohmann::json::parse(l, nullptr, false);
    CHECK(j.is_object());
  }
}

std::string Path(const pb::MethodDescriptor& m) {
  return absl::StrCat("/", m.service()->full_name(), "/", m.name());
}

// What a refusal of `m`'s request must name: the request type, or the
// chunk or item of a stream.
void CheckRefused(const pb::MethodDescriptor& m, const grpc::Status& s,
                  const std::string& field = "") {
  INFO(m.name() << ": " << s.error_code() << " " << s.error_message());
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  const bool names_request =
      absl::StrContains(s.error_message(), absl::StrCat("not a valid ", m.input_type()->name()));
  const bool names_field = !field.empty() && absl::StrContains(s.error_message(), field);
  CHECK((names_request || names_field));
  // A string that is not UTF-8 is named, whichever way it was refused.
  if (!field.empty()) CHECK(names_field);
}

TEST_CASE("every RPC refuses bytes that do not decode with INVALID_ARGUMENT naming the request",
          "[decode][hardening]") {
  CapturedLog log;
  TestServer ts(nullptr, /*metrics=*/true);
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", ts.server()->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  std::mt19937_64 rng(7);
  const pb::ServiceDescriptor& svc = Service();
  REQUIRE(svc.method_count() >= 22);
  for (int i = 0; i < svc.method_count(); ++i) {
    const pb::MethodDescriptor& m = *svc.method(i);
    // 64 random bytes that do not parse as the request (the seed is fixed;
    // a draw that happens to parse is drawn again).
    std::string noise(64, '\0');
    do {
      for (char& c : noise) c = static_cast<char>(rng());
    } while (New(m.input_type())->ParseFromString(noise));
    const std::vector<std::string> inputs = {
        noise, std::string("\x0a\xff\xff\xff\xff\x07", 6) + "abc",  // a length of 2^31-1
        std::string("\x08\xff\xff", 3),                             // a cut varint
    };
    for (const auto& bytes : inputs) {
      OneMessageCall call(&stub, Path(m), bytes);
      CheckRefused(m, call.Await());
    }
  }
  // Ingest's and IngestStream's three undecodable requests each.
  const std::string metrics = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(absl::StrContains(metrics, "speakermem_ingest_rejected_batches_total 6\n"));
  CheckJsonLines(&log);
}

// A request of type `d` whose field at `path` (one or two names) holds
// `value`, serialised without the UTF-8 check a client would apply. The
// rest is valid where a request carries messages (Ingest, a stream's
// chunk): a channel and one whole message, so that the field is the fault.
std::string WithString(const pb::Descriptor* d, const std::vector<const pb::FieldDescriptor*>& path,
                       const std::string& value) {
  std::unique_ptr<pb::Message> msg = New(d);
  const pb::Reflection* r = msg->GetReflection();
  const pb::FieldDescriptor* channel = d->FindFieldByName("channel");
  const pb::FieldDescriptor* messages = d->FindFieldByName("messages");
  if (messages != nullptr && channel != nullptr) {
    r->SetString(msg.get(), channel, "c");
    pb::Message* m = r->AddMessage(msg.get(), messages);
    const pb::Reflection* mr = m->GetReflection();
    const pb::Descriptor* md = m->GetDescriptor();
    mr->SetString(m, md->FindFieldByName("message_id"), "m1");
    mr->SetString(m, md->FindFieldByName("speaker"), "Ann");
    mr->SetString(m, md->FindFieldByName("text"), "hello there");
    mr->SetInt64(m, md->FindFieldByName("timestamp_ms"), 1700000000000);
  }
  pb::Message* at = msg.get();
  for (size_t k = 0; k + 1 < path.size(); ++k) {
    const pb::FieldDescriptor* f = path[k];
    const pb::Reflection* ar = at->GetReflection();
    if (!f->is_repeated()) {
      at = ar->MutableMessage(at, f);
    } else {
      at = ar->FieldSize(*at, f) > 0 ? ar->MutableRepeatedMessage(at, f, 0) : ar->AddMessage(at, f);
    }
  }
  const pb::FieldDescriptor* leaf = path.back();
  if (leaf->is_repeated()) {
    at->GetReflection()->AddString(at, leaf, value);
  } else {
    at->GetReflection()->SetString(at, leaf, value);
  }
  std::string bytes;
  msg->SerializePartialToString(&bytes);
  return bytes;
}

TEST_CASE("every string field of every request refuses invalid UTF-8 with INVALID_ARGUMENT",
          "[decode][hardening]") {
  CapturedLog log;
  TestServer ts;
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", ts.server()->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  const std::string bad = "bad \xC3\x28 bytes";
  size_t cases = 0;
  const pb::ServiceDescriptor& svc = Service();
  for (int i = 0; i < svc.method_count(); ++i) {
    const pb::MethodDescriptor& m = *svc.method(i);
    const pb::Descriptor* d = m.input_type();
    for (int f = 0; f < d->field_count(); ++f) {
      const pb::FieldDescriptor* top = d->field(f);
      std::vector<std::vector<const pb::FieldDescriptor*>> paths;
      if (top->type() == pb::FieldDescriptor::TYPE_STRING) paths.push_back({top});
      if (top->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
        const pb::Descriptor* sub = top->message_type();
        for (int g = 0; g < sub->field_count(); ++g) {
          if (sub->field(g)->type() == pb::FieldDescriptor::TYPE_STRING) {
            paths.push_back({top, sub->field(g)});
          }
        }
      }
      for (const auto& path : paths) {
        OneMessageCall call(&stub, Path(m), WithString(d, path, bad));
        INFO("field " << path.back()->full_name());
        grpc::Status s = call.Await();
        if (m.server_streaming() && m.client_streaming() && s.ok()) {
          // IngestStream answers a chunk it refuses in the chunk's ack.
          v1::IngestAck ack;
          REQUIRE(ack.ParseFromString(call.last_response()));
          s = grpc::Status(static_cast<grpc::StatusCode>(ack.error().code()),
                           ack.error().message());
        }
        CheckRefused(m, s, path.back()->name());
        ++cases;
      }
    }
  }
  CHECK(cases >= 40);
  CheckJsonLines(&log);
}

TEST_CASE("a stream the client cancels is logged CANCELLED, not OK", "[decode][hardening]") {
  CapturedLog log;
  TestServer ts;
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", ts.server()->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  v1::IngestChunk chunk;
  chunk.set_channel("gone");
  auto* m = chunk.add_messages();
  m->set_message_id("m1");
  m->set_speaker("Ann");
  m->set_text("hello there");
  m->set_timestamp_ms(1700000000000);
  OneMessageCall call(&stub, "/speakermem.v1.SpeakerMem/IngestStream", chunk.SerializeAsString(),
                      /*last=*/false);
  // The chunk is acknowledged, then the client gives up.
  for (int i = 0; i < 500 && call.last_response().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(!call.last_response().empty());
  call.Cancel();
  CHECK(call.Await().error_code() == grpc::StatusCode::CANCELLED);
  std::string logged;
  for (int i = 0; i < 500 && logged.empty(); ++i) {
    for (const auto& line : log.lines()) {
      if (absl::StrContains(line, "\"method\":\"IngestStream\"")) logged = line;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  INFO(logged);
  CHECK(absl::StrContains(logged, "\"code\":\"CANCELLED\""));
}

TEST_CASE("every string field refuses an over-long value, and refusals stay short",
          "[decode][hardening]") {
  TestServer ts;
  {
    v1::IngestRequest req;
    req.set_channel("c");
    auto* m = req.add_messages();
    m->set_message_id("m1");
    m->set_speaker("Ann");
    m->set_text("hello there");
    m->set_timestamp_ms(1700000000000);
    REQUIRE_OK(ts.client()->Ingest(req));
  }
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", ts.server()->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  const std::string big(300000, 'a');
  const pb::ServiceDescriptor& svc = Service();
  size_t cases = 0;
  for (int i = 0; i < svc.method_count(); ++i) {
    const pb::MethodDescriptor& m = *svc.method(i);
    const pb::Descriptor* d = m.input_type();
    for (int f = 0; f < d->field_count(); ++f) {
      const pb::FieldDescriptor* field = d->field(f);
      if (field->type() != pb::FieldDescriptor::TYPE_STRING) continue;
      // The existing channel, and the field 300 kB long.
      std::unique_ptr<pb::Message> msg = New(d);
      const pb::Reflection* r = msg->GetReflection();
      const pb::FieldDescriptor* ch = d->FindFieldByName("channel");
      if (ch != nullptr && ch != field) r->SetString(msg.get(), ch, "c");
      if (field->is_repeated()) {
        r->AddString(msg.get(), field, big);
      } else {
        r->SetString(msg.get(), field, big);
      }
      OneMessageCall call(&stub, Path(m), msg->SerializeAsString());
      grpc::Status s = call.Await();
      if (m.server_streaming() && m.client_streaming() && s.ok()) {
        v1::IngestAck ack;
        REQUIRE(ack.ParseFromString(call.last_response()));
        s = grpc::Status(static_cast<grpc::StatusCode>(ack.error().code()), ack.error().message());
      }
      INFO(m.name() << "." << field->name() << ": " << s.error_code() << " "
                    << s.error_message().substr(0, 200));
      CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
      CHECK(s.error_message().size() <= 1100);
      ++cases;
    }
  }
  CHECK(cases >= 30);
}

TEST_CASE("every enum field of every request refuses a number its enum does not define",
          "[decode][hardening]") {
  TestServer ts;
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", ts.server()->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  const pb::ServiceDescriptor& svc = Service();
  size_t cases = 0;
  for (int i = 0; i < svc.method_count(); ++i) {
    const pb::MethodDescriptor& m = *svc.method(i);
    const pb::Descriptor* d = m.input_type();
    // Top-level enum fields, and those of message fields one level down.
    std::vector<std::vector<const pb::FieldDescriptor*>> paths;
    for (int f = 0; f < d->field_count(); ++f) {
      const pb::FieldDescriptor* top = d->field(f);
      if (top->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) paths.push_back({top});
      if (top->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        for (int g = 0; g < top->message_type()->field_count(); ++g) {
          const pb::FieldDescriptor* sub = top->message_type()->field(g);
          if (sub->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) paths.push_back({top, sub});
        }
      }
    }
    for (const auto& path : paths) {
      std::unique_ptr<pb::Message> msg = New(d);
      pb::Message* at = msg.get();
      if (path.size() == 2) {
        at = path[0]->is_repeated() ? at->GetReflection()->AddMessage(at, path[0])
                                    : at->GetReflection()->MutableMessage(at, path[0]);
      }
      const pb::FieldDescriptor* leaf = path.back();
      if (leaf->is_repeated()) {
        at->GetReflection()->AddEnumValue(at, leaf, 99);
      } else {
        at->GetReflection()->SetEnumValue(at, leaf, 99);
      }
      OneMessageCall call(&stub, Path(m), msg->SerializeAsString());
      grpc::Status s = call.Await();
      INFO(m.name() << " " << leaf->full_name() << ": " << s.error_code() << " "
                    << s.error_message());
      CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
      CHECK(absl::StrContains(s.error_message(), absl::StrCat(leaf->name(), ": 99 is not a ")));
      ++cases;
    }
  }
  CHECK(cases >= 3);
}

}  // namespace
}  // namespace speakermem

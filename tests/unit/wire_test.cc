// The server parses ingest requests with a bytes-typed mirror
// (server/ingest_wire.proto). These tests keep it in step with the contract.
#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "server/ingest_wire.pb.h"
#include "server/request_codec.h"
#include "speakermem/v1/speakermem.pb.h"

namespace speakermem {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

void ExpectMirror(const Descriptor* pub, const Descriptor* mirror) {
  INFO(pub->full_name() << " vs " << mirror->full_name());
  REQUIRE(pub->field_count() == mirror->field_count());
  for (int i = 0; i < pub->field_count(); ++i) {
    const FieldDescriptor* f = pub->field(i);
    const FieldDescriptor* m = mirror->FindFieldByNumber(f->number());
    INFO("field " << f->name());
    REQUIRE(m != nullptr);
    CHECK(m->name() == f->name());
    if (f->is_map()) {
      CHECK(m->is_repeated());
      CHECK(m->type() == FieldDescriptor::TYPE_MESSAGE);
    } else if (f->type() == FieldDescriptor::TYPE_STRING) {
      CHECK(m->type() == FieldDescriptor::TYPE_BYTES);
      CHECK(m->is_repeated() == f->is_repeated());
    } else if (f->type() == FieldDescriptor::TYPE_MESSAGE) {
      CHECK(m->type() == FieldDescriptor::TYPE_MESSAGE);
      CHECK(m->is_repeated() == f->is_repeated());
    } else {
      CHECK(m->type() == f->type());
      CHECK(m->is_repeated() == f->is_repeated());
    }
  }
}

TEST_CASE("ingest wire mirror matches the public contract field by field", "[wire]") {
  ExpectMirror(v1::DialogueMessage::descriptor(), server::wire::Message::descriptor());
  ExpectMirror(v1::IngestRequest::descriptor(), server::wire::IngestRequest::descriptor());
  ExpectMirror(v1::IngestChunk::descriptor(), server::wire::IngestChunk::descriptor());
}

TEST_CASE("a public IngestRequest parses as the mirror with equal values", "[wire]") {
  v1::IngestRequest req;
  req.set_channel("c");
  auto* m = req.add_messages();
  m->set_message_id("id1");
  m->set_speaker("Alice");
  m->set_text("héllo");
  m->set_timestamp_ms(123);
  m->set_turn(4);
  (*m->mutable_metadata())["k"] = "v";
  server::wire::IngestRequest w;
  REQUIRE(w.ParseFromString(req.SerializeAsString()));
  REQUIRE(w.messages_size() == 1);
  CHECK(w.channel() == "c");
  CHECK(w.messages(0).text() == "héllo");
  CHECK(w.messages(0).timestamp_ms() == 123);
  CHECK(w.messages(0).turn() == 4);
  REQUIRE(w.messages(0).metadata_size() == 1);
  CHECK(w.messages(0).metadata(0).key() == "k");
  CHECK(w.messages(0).metadata(0).value() == "v");
}

TEST_CASE("a request's enum values are checked at any depth, and only where enums can be",
          "[wire]") {
  v1::ScoreWriterActionsRequest req;
  req.add_pre_state()->set_layer(v1::PROFILE);
  req.add_pre_state()->set_layer(static_cast<v1::Layer>(99));
  req.add_segment()->set_text("no enum in a message");
  v1::ScoreWriterActionsRequest out;
  absl::Status s = server::DecodeRequest(req.SerializeAsString(), &out);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(s.message(), "pre_state[1].layer: 99 is not a Layer value"));

  req.mutable_pre_state(1)->set_layer(v1::CORE);
  CHECK(server::DecodeRequest(req.SerializeAsString(), &out).ok());
  CHECK(out.pre_state(1).layer() == v1::CORE);

  // A chunk's messages hold no enum: decoded without walking them.
  server::wire::IngestChunk chunk;
  for (int i = 0; i < 500; ++i) chunk.add_messages()->set_text("x");
  server::wire::IngestChunk parsed;
  CHECK(server::DecodeRequest(chunk.SerializeAsString(), &parsed).ok());
  CHECK(parsed.messages_size() == 500);
}

}  // namespace
}  // namespace speakermem

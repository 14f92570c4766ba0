#include "storage/validation.h"

#include <catch2/catch.hpp>
#include <functional>

#include "tests/test_util.h"

namespace speakermem::storage {
namespace {

Message Good(int i) {
  Message m;
  m.message_id = "m" + std::to_string(i);
  m.speaker = "Alice";
  m.text = "hello there";
  m.timestamp_ms = 1700000000000 + i;
  m.session = "s1";
  m.turn = i;
  return m;
}

// Batch of three where message 1 is altered by `mutate`.
absl::Status CheckSecondBad(const std::function<void(Message&)>& mutate, IngestLimits limits = {}) {
  std::vector<Message> batch = {Good(0), Good(1), Good(2)};
  mutate(batch[1]);
  return ValidateMessages("chan", {}, batch, limits);
}

void ExpectBad(const absl::Status& s, const std::string& where) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).rfind(where, 0) == 0);
}

TEST_CASE("a good batch validates", "[validation]") {
  REQUIRE_OK(ValidateMessages("chan", {}, {Good(0), Good(1)}, {}));
}

TEST_CASE("each bad field is named with its message index", "[validation]") {
  ExpectBad(CheckSecondBad([](Message& m) { m.speaker = ""; }), "messages[1].speaker:");
  ExpectBad(CheckSecondBad([](Message& m) { m.speaker = "   "; }), "messages[1].speaker:");
  ExpectBad(CheckSecondBad([](Message& m) { m.speaker = "GROUP"; }), "messages[1].speaker:");
  ExpectBad(CheckSecondBad([](Message& m) { m.speaker = "all"; }), "messages[1].speaker:");
  ExpectBad(CheckSecondBad([](Message& m) { m.speaker_id = "Group"; }), "messages[1].speaker_id:");
  ExpectBad(CheckSecondBad([](Message& m) { m.speaker = "Al\x01ice"; }), "messages[1].speaker:");
  ExpectBad(CheckSecondBad([](Message& m) { m.speaker = "Al\xFFice"; }), "messages[1].speaker:");
  ExpectBad(CheckSecondBad([](Message& m) { m.text = ""; }), "messages[1].text:");
  ExpectBad(CheckSecondBad([](Message& m) { m.text = "bad \xC0\x80 utf8"; }), "messages[1].text:");
  ExpectBad(CheckSecondBad([](Message& m) { m.text = std::string("nul\0x", 5); }),
            "messages[1].text:");
  ExpectBad(CheckSecondBad([](Message& m) { m.text = std::string(32 * 1024 + 1, 'a'); }),
            "messages[1].text:");
  ExpectBad(CheckSecondBad([](Message& m) { m.timestamp_ms = 0; }), "messages[1].timestamp_ms:");
  ExpectBad(CheckSecondBad([](Message& m) { m.timestamp_ms = -5; }),
            "messages[1].timestamp_ms: is -5, before the epoch");
  ExpectBad(CheckSecondBad([](Message& m) { m.timestamp_ms = kMaxTimestampMs + 1; }),
            "messages[1].timestamp_ms:");
  ExpectBad(CheckSecondBad([](Message& m) { m.turn = -1; }), "messages[1].turn:");
  ExpectBad(CheckSecondBad([](Message& m) { m.message_id = "~7"; }), "messages[1].message_id:");
  ExpectBad(CheckSecondBad([](Message& m) { m.message_id = std::string(257, 'x'); }),
            "messages[1].message_id:");
  ExpectBad(CheckSecondBad([](Message& m) { m.session = "s\n1"; }), "messages[1].session:");
  ExpectBad(CheckSecondBad([](Message& m) {
              for (int i = 0; i < 33; ++i) m.metadata["k" + std::to_string(i)] = "v";
            }),
            "messages[1].metadata:");
  ExpectBad(CheckSecondBad([](Message& m) { m.metadata["k"] = std::string(1025, 'v'); }),
            "messages[1].metadata[k]:");
}

TEST_CASE("text exactly at the limit is accepted", "[validation]") {
  REQUIRE_OK(CheckSecondBad([](Message& m) { m.text = std::string(32 * 1024, 'a'); }));
}

TEST_CASE("batch-level problems are named", "[validation]") {
  ExpectBad(ValidateMessages("", {}, {Good(0)}, {}), "channel:");
  ExpectBad(ValidateMessages("bad\x7F", {}, {Good(0)}, {}), "channel:");
  ExpectBad(ValidateMessages("chan", {}, {}, {}), "messages:");
  IngestLimits small;
  small.max_batch_messages = 2;
  ExpectBad(ValidateMessages("chan", {}, {Good(0), Good(1), Good(2)}, small), "messages:");
  ExpectBad(ValidateMessages("chan", {"chan", "other"}, {Good(0), Good(1)}, {}),
            "messages[1].channel:");
  REQUIRE_OK(ValidateMessages("chan", {"", "chan"}, {Good(0), Good(1)}, {}));
}

}  // namespace
}  // namespace speakermem::storage

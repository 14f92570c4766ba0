// Streamed model replies: server-sent events split anywhere, and one JSON
// string property decoded while the reply arrives.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llm/sse.h"
#include "llm/streamed_field.h"

namespace speakermem::llm {
namespace {

std::string Event(const std::string& data) { return "data: " + data + "\n\n"; }

std::string Chunk(const std::string& content) {
  return Event(R"({"choices":[{"index":0,"delta":{"content":")" + content +
               R"("},"finish_reason":null}]})");
}

// Feeds `body` in pieces of `step` bytes.
void FeedInSteps(ChatEventStream* s, const std::string& body, size_t step) {
  for (size_t at = 0; at < body.size(); at += step) s->Feed(body.substr(at, step));
}

TEST_CASE("ChatEventStream joins content deltas however the body is split", "[llm][stream]") {
  const std::string body =
      ": keep-alive\n\n" + Event(R"({"choices":[{"index":0,"delta":{"role":"assistant"}}]})") +
      Chunk("Por") + Chunk("to, in ") + Chunk("May") +
      Event(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})") +
      Event(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}})") +
      Event("[DONE]");
  for (size_t step : {1u, 2u, 7u, 1000u}) {
    std::vector<std::string> pieces;
    ChatEventStream s([&](absl::string_view p) {
      pieces.emplace_back(p);
      return true;
    });
    FeedInSteps(&s, body, step);
    CHECK(s.saw_events());
    CHECK(s.done());
    CHECK(s.text() == "Porto, in May");
    CHECK(pieces == std::vector<std::string>{"Por", "to, in ", "May"});
    CHECK(s.finish_reason() == "stop");
    CHECK(s.has_usage());
    CHECK(s.usage().tokens_in == 12);
    CHECK(s.usage().tokens_out == 3);
    CHECK(s.malformed() == 0);
  }
}

TEST_CASE("ChatEventStream reads CRLF lines, counts junk and stops when told", "[llm][stream]") {
  std::string body =
      "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\n"
      "data: not json\r\n\r\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\r\n\r\n";
  int seen = 0;
  ChatEventStream s([&](absl::string_view) { return ++seen < 1; });
  CHECK_FALSE(s.Feed(body));
  CHECK(seen == 1);
  CHECK(s.text() == "a");
  CHECK_FALSE(s.Feed(Chunk("c")));  // stopped stays stopped

  ChatEventStream all([](absl::string_view) { return true; });
  CHECK(all.Feed(body));
  CHECK(all.text() == "ab");
  CHECK(all.malformed() == 1);
}

TEST_CASE("ChatEventStream keeps a body that is not a stream", "[llm][stream]") {
  ChatEventStream s([](absl::string_view) { return true; });
  const std::string json = R"({"choices":[{"message":{"content":"hi"}}]})";
  s.Feed(json.substr(0, 10));
  s.Feed(json.substr(10));
  CHECK_FALSE(s.saw_events());
  CHECK(s.raw() == json);
}

std::string Decode(const std::string& reply, size_t step, bool* finished = nullptr) {
  std::string out;
  StreamedStringField f("answer", [&](absl::string_view p) {
    CHECK_FALSE(p.empty());
    out.append(p.data(), p.size());
    return true;
  });
  for (size_t at = 0; at < reply.size(); at += step) f.Feed(reply.substr(at, step));
  if (finished != nullptr) *finished = f.finished();
  return out;
}

TEST_CASE("StreamedStringField decodes the answer property as it arrives", "[llm][stream]") {
  const std::string reply =
      "Sure! ```json\n{\"cited\": [\"answer\"], \"answer\" : \"Porto \\\"riverside\\\"\\n"
      "caf\\u00e9 \\ud83c\\udf89 Gr\u00fc\u00dfe\", \"abstain\": false}\n```";
  for (size_t step : {1u, 2u, 3u, 5u, 1000u}) {
    bool finished = false;
    CHECK(Decode(reply, step, &finished) ==
          "Porto \"riverside\"\ncaf\u00e9 \U0001F389 Gr\u00fc\u00dfe");
    CHECK(finished);
  }
}

TEST_CASE("StreamedStringField never splits a UTF-8 sequence", "[llm][stream]") {
  std::vector<std::string> pieces;
  StreamedStringField f("answer", [&](absl::string_view p) {
    pieces.emplace_back(p);
    return true;
  });
  const std::string reply = "{\"answer\": \"\u00e9\u20ac\"}";  // 2- and 3-byte sequences
  for (char c : reply) f.Feed(std::string(1, c));
  std::string joined;
  for (const auto& p : pieces) {
    const auto last = static_cast<unsigned char>(p.back());
    CHECK((last < 0x80 || (last & 0xC0) == 0x80));  // ends on ASCII or a sequence's last byte
    joined += p;
  }
  CHECK(joined == "\u00e9\u20ac");
}

TEST_CASE("StreamedStringField passes nothing on without the property", "[llm][stream]") {
  bool finished = true;
  CHECK(Decode("The offsite is in Porto.", 4, &finished).empty());
  CHECK_FALSE(finished);
  CHECK(Decode("{\"answer\": null, \"x\": \"answer\"}", 3, &finished).empty());
  int calls = 0;
  StreamedStringField stop("answer", [&](absl::string_view) { return ++calls > 1; });
  CHECK_FALSE(stop.Feed("{\"answer\": \"abc"));
  CHECK_FALSE(stop.Feed("def\"}"));
  CHECK(calls == 1);
}

}  // namespace
}  // namespace speakermem::llm

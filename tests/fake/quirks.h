// The quirks small open models and their servers show, played by the fake
// model server per stage and per call: a clean reply's content is turned
// into the quirky form a real endpoint sends.
#ifndef SPEAKERMEM_TESTS_FAKE_QUIRKS_H_
#define SPEAKERMEM_TESTS_FAKE_QUIRKS_H_

#include <functional>
#include <map>
#include <string>

#include "tests/fake/fake_model_server.h"

namespace speakermem::testing {

enum class Quirk {
  kNone,
  // finish_reason "length": the content is cut inside the (keep+1)-th element
  // of the reply's array (actions, ranking, ...), or halfway when it has none.
  kCutAtMaxTokens,
  // UPDATE entry ids spelled "e1", "1", "[E1]", in turn.
  kEntryIdSpelling,
  // ADD actions without "source".
  kAddWithoutSource,
  // The reply's main list (actions, ranking, rows) sent as a bare top-level
  // array; a reply without one (Answer, Sufficiency) wrapped in a
  // one-element array.
  kTopLevelArray,
  // Prose citing "[0]" before the JSON.
  kProseBeforeJson,
  // Booleans and integers written as strings.
  kStringScalars,
  // HTTP 422 (FastAPI-style) when the request asks for a json_schema
  // response_format; the clean reply otherwise.
  kRefuseJsonSchema,
};

struct QuirkSpec {
  Quirk quirk = Quirk::kNone;
  // Play it on the first `calls` calls of the stage only (-1: every call).
  int calls = -1;
  // kCutAtMaxTokens: complete elements kept before the cut.
  int keep = 3;
};

// Content of the clean reply to a request (its "message.content").
using CleanReply = std::function<std::string(const FakeRequest&)>;

// A handler that answers each request with `clean`'s content, played through
// the quirk configured for its stage ("" for any stage). Thread-safe.
std::function<FakeReply(const FakeRequest&)> QuirkyHandler(
    CleanReply clean, std::map<std::string, QuirkSpec> by_stage);

// One content transformed by `quirk` (kRefuseJsonSchema and kCutAtMaxTokens
// act on the reply, not the content: unchanged here). `call` picks the
// spelling of kEntryIdSpelling.
std::string ApplyQuirk(const std::string& content, Quirk quirk, int call = 0);

// Parses a quirk name ("cut", "entry-ids", "no-source", "top-array", "prose",
// "string-scalars", "refuse-schema"); kNone for anything else.
Quirk ParseQuirk(const std::string& name);

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_FAKE_QUIRKS_H_

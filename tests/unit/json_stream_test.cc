// The streaming reader of export arrays (datasets/json_stream.cc).
#include "datasets/json_stream.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/test_util.h"

namespace speakermem::datasets::export_internal {
namespace {

using nlohmann::json;

struct Seen {
  std::vector<std::string> contexts;  // context dumps, one per element
  std::vector<json> elements;
  std::vector<size_t> indexes;
  std::vector<std::string> ends;
};

absl::Status Stream(const std::string& file, const std::vector<JsonPath>& paths, Seen* seen,
                    StreamedArrays* found) {
  return StreamArrays(
      file, paths,
      [seen](const json& ctx, json v, size_t i) {
        seen->contexts.push_back(ctx.dump());
        seen->elements.push_back(std::move(v));
        seen->indexes.push_back(i);
        return absl::OkStatus();
      },
      [seen](const json& ctx) {
        seen->ends.push_back(ctx.dump());
        return absl::OkStatus();
      },
      found);
}

TEST_CASE("StreamArrays delivers each element with its enclosing object's members", "[import]") {
  testing::TempDir dir;
  const std::string file = dir.Sub("e.json");
  std::ofstream(file) << R"({"about": "x", "left": {"list": [1, 2], "n": 2},
    "chats": {"about": "y", "list": [
      {"name": "a", "id": 1, "other": [{"big": true}], "messages": [
        {"id": 1, "text": ["t", {"type": "bold", "text": "u"}]}, 7, [1, 2]]},
      {"name": "b", "messages": []},
      "junk",
      {"name": "c", "messages": [{"id": 3}]}]},
    "messages": [{"id": 0}]})";
  Seen seen;
  StreamedArrays found;
  REQUIRE_OK(Stream(file, {{"messages"}, {"chats", "list", "*", "messages"}}, &seen, &found));
  CHECK(found.arrays == 4);
  CHECK(found.elements == 5);
  REQUIRE(seen.elements.size() == 5);
  CHECK(seen.elements[0] ==
        json::parse(R"({"id": 1, "text": ["t", {"type": "bold", "text": "u"}]})"));
  CHECK(seen.elements[1] == json(7));
  CHECK(seen.elements[2] == json::parse("[1, 2]"));
  CHECK(seen.indexes == std::vector<size_t>{0, 1, 2, 0, 0});
  // The chat's members before its messages, arrays left out.
  CHECK(seen.contexts[0] == R"({"id":1,"name":"a"})");
  CHECK(seen.contexts[3] == R"({"name":"c"})");
  CHECK(seen.elements[3] == json::parse(R"({"id": 3})"));
  // The top-level array's context: a context member's arrays are not kept.
  CHECK(seen.contexts[4] == R"({"about":"x","left":{"n":2}})");
  CHECK(seen.ends.size() == 4);  // a, b (empty), c, the root
  CHECK(seen.ends[1] == R"({"name":"b"})");
}

TEST_CASE("StreamArrays reports syntax errors, missing files and callback errors", "[import]") {
  testing::TempDir dir;
  const std::string bad = dir.Sub("bad.json");
  std::ofstream(bad) << R"({"messages": [{"id": 1}, {"id": 2,]})";
  Seen seen;
  StreamedArrays found;
  absl::Status s = Stream(bad, {{"messages"}}, &seen, &found);
  CHECK(absl::IsInvalidArgument(s));
  CHECK_THAT(std::string(s.message()), Catch::Contains("bad.json: not JSON at byte"));
  CHECK(seen.elements.size() == 1);  // what came before the error
  CHECK(absl::IsNotFound(Stream(dir.Sub("none.json"), {{"messages"}}, &seen, &found)));

  const std::string ok = dir.Sub("ok.json");
  std::ofstream(ok) << R"({"messages": [1, 2, 3]})";
  int calls = 0;
  s = StreamArrays(
      ok, {{"messages"}},
      [&calls](const json&, json, size_t i) {
        ++calls;
        return i == 1 ? absl::InvalidArgumentError("entry 1: no") : absl::OkStatus();
      },
      nullptr, &found);
  CHECK(s.message() == "entry 1: no");
  CHECK(calls == 2);
  // No array at the path: nothing found (the readers say which field).
  REQUIRE_OK(Stream(ok, {{"events"}}, &seen, &found));
  CHECK(found.arrays == 0);
}

}  // namespace
}  // namespace speakermem::datasets::export_internal

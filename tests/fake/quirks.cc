#include "tests/fake/quirks.h"

#include <memory>
#include <mutex>

#include "nlohmann/json.hpp"

namespace speakermem::testing {
namespace {

using json = nlohmann::json;

// The reply object's main list ("actions", "ranking", "rows"), or "".
std::string ArrayProperty(const json& v) {
  if (!v.is_object()) return "";
  for (const char* k : {"actions", "ranking", "rows"}) {
    if (v.contains(k) && v[k].is_array()) return k;
  }
  return "";
}

void Stringify(json* v) {
  if (v->is_boolean()) {
    *v = v->get<bool>() ? "true" : "false";
  } else if (v->is_number_integer()) {
    *v = std::to_string(v->get<int64_t>());
  } else if (v->is_array() || v->is_object()) {
    for (auto& x : *v) Stringify(&x);
  }
}

// The content cut inside the (keep+1)-th element of its array.
std::string Cut(const std::string& content, int keep) {
  json v = json::parse(content, nullptr, false);
  std::string prop = ArrayProperty(v);
  if (prop.empty() || static_cast<int>(v[prop].size()) <= keep) {
    return content.substr(0, content.size() / 2);
  }
  std::string head = "{\"" + prop + "\": [";
  for (int i = 0; i < keep; ++i) head += v[prop][i].dump() + ", ";
  std::string next = v[prop][keep].dump();
  return head + next.substr(0, next.size() / 2);
}

}  // namespace

std::string ApplyQuirk(const std::string& content, Quirk quirk, int call) {
  json v = json::parse(content, nullptr, false);
  if (v.is_discarded()) return content;
  switch (quirk) {
    case Quirk::kEntryIdSpelling: {
      static const char* kForms[] = {"e%s", "%s", "[E%s]"};
      if (!v.contains("actions")) return content;
      for (auto& a : v["actions"]) {
        if (!a.is_object() || !a.contains("entry_id") || !a["entry_id"].is_string()) continue;
        std::string id = a["entry_id"].get<std::string>();
        if (id.empty() || (id[0] != 'E' && id[0] != 'e')) continue;
        std::string n = id.substr(1);
        std::string form = kForms[call % 3];
        a["entry_id"] = form.replace(form.find("%s"), 2, n);
      }
      return v.dump();
    }
    case Quirk::kAddWithoutSource:
      if (!v.contains("actions")) return content;
      for (auto& a : v["actions"]) {
        if (a.is_object() && a.value("action", "") == "ADD") a.erase("source");
      }
      return v.dump();
    case Quirk::kTopLevelArray: {
      std::string prop = ArrayProperty(v);
      return prop.empty() ? json::array({v}).dump() : v[prop].dump();
    }
    case Quirk::kProseBeforeJson:
      return "Candidate [0] looks most relevant, so here is my reply:\n" + v.dump(2) +
             "\nHope this helps!";
    case Quirk::kStringScalars:
      Stringify(&v);
      return v.dump();
    default:
      return content;
  }
}

Quirk ParseQuirk(const std::string& name) {
  if (name == "cut") return Quirk::kCutAtMaxTokens;
  if (name == "entry-ids") return Quirk::kEntryIdSpelling;
  if (name == "no-source") return Quirk::kAddWithoutSource;
  if (name == "top-array") return Quirk::kTopLevelArray;
  if (name == "prose") return Quirk::kProseBeforeJson;
  if (name == "string-scalars") return Quirk::kStringScalars;
  if (name == "refuse-schema") return Quirk::kRefuseJsonSchema;
  return Quirk::kNone;
}

std::function<FakeReply(const FakeRequest&)> QuirkyHandler(
    CleanReply clean, std::map<std::string, QuirkSpec> by_stage) {
  struct State {
    std::mutex mu;
    std::map<std::string, int> calls;  // by stage
  };
  auto state = std::make_shared<State>();
  return [clean = std::move(clean), by_stage = std::move(by_stage), state](const FakeRequest& req) {
    int n = 0;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      n = state->calls[req.stage]++;
    }
    QuirkSpec spec;
    auto it = by_stage.find(req.stage);
    if (it == by_stage.end()) it = by_stage.find("");
    if (it != by_stage.end() && (it->second.calls < 0 || n < it->second.calls)) spec = it->second;
    if (spec.quirk == Quirk::kRefuseJsonSchema) {
      json body = json::parse(req.body, nullptr, false);
      if (body.is_object() && body.contains("response_format") &&
          body["response_format"].value("type", "") == "json_schema") {
        return FakeReply{422,
                         R"({"detail":[{"loc":["body","response_format"],)"
                         R"("msg":"Extra inputs are not permitted","type":"extra_forbidden"}]})"};
      }
    }
    std::string content = clean(req);
    if (spec.quirk == Quirk::kCutAtMaxTokens) {
      return FakeReply{200, FakeModelServer::ChatBody(Cut(content, spec.keep), "length")};
    }
    return FakeReply{200, FakeModelServer::ChatBody(ApplyQuirk(content, spec.quirk, n))};
  };
}

}  // namespace speakermem::testing

#include "client/cli_common.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "datasets/datasets.h"
#include "proto/layer_wire.h"

namespace speakermem::cli {
namespace {

const char* const kBoolFlags[] = {"json",         "all",     "trace",     "help",  "wait",
                                  "all-versions", "history", "no-answer", "texts", "fresh",
                                  "pack",         "no-s2",   "ask",       "stream"};

bool IsBoolFlag(const std::string& name) {
  for (const char* b : kBoolFlags) {
    if (name == b) return true;
  }
  return false;
}

}  // namespace

bool ParseArgs(int argc, char** argv, Args* args, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string name = a.substr(2), value;
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (IsBoolFlag(name)) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        *error = absl::StrCat("flag --", name, " needs a value");
        return false;
      }
      args->flags[name] = value;
    } else {
      args->positional.push_back(a);
    }
  }
  return true;
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "speakermem: %s: %s\n", absl::StatusCodeToString(s.code()).c_str(),
               std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

std::string ShortTime(int64_t ms) {
  std::string iso = FormatIsoUtc(ms);
  return absl::StrCat(iso.substr(0, 10), " ", iso.substr(11, 5));
}

void PrintJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  std::cout << out << "\n";
}

absl::StatusOr<int64_t> TimeFlag(const Args& args, const std::string& name) {
  if (!args.Has(name)) return 0;
  absl::StatusOr<int64_t> t = datasets::ParseIsoTime(args.Get(name));
  if (!t.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": ", t.status().message()));
  }
  return t;
}

absl::StatusOr<uint32_t> UintFlag(const Args& args, const std::string& name, uint32_t def) {
  if (!args.Has(name)) return def;
  uint32_t v = 0;
  if (!absl::SimpleAtoi(args.Get(name), &v)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": not a number"));
  }
  return v;
}

v1::DialogueMessage ToWire(const storage::Message& m) {
  v1::DialogueMessage out;
  out.set_message_id(m.message_id);
  out.set_speaker(m.speaker);
  out.set_speaker_id(m.speaker_id);
  out.set_text(m.text);
  out.set_timestamp_ms(m.timestamp_ms);
  out.set_session(m.session);
  out.set_turn(m.turn);
  out.set_reply_to(m.reply_to);
  for (const auto& [k, v] : m.metadata) (*out.mutable_metadata())[k] = v;
  return out;
}

std::string LayerLabel(v1::Layer l) {
  std::string code = api::LayerCode(l);
  return code.empty() ? "?" : code;
}

void PrintRecord(const v1::DerivedRecord& r) {
  std::printf("%-14s %-11s %-12s %-12s %-11s %s%s\n", r.record_id().c_str(),
              LayerLabel(r.layer()).c_str(), r.owner().c_str(), r.source().c_str(),
              r.utype().c_str(), r.content().c_str(),
              r.state() == v1::SUPERSEDED ? "  [superseded]" : "");
}

}  // namespace speakermem::cli

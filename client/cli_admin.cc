// `speakermem` commands that change or move a channel as a whole, or read
// the Writer's work: delete, edit, forget, delete-channel, export, import,
// backup, trajectories, score-actions.
#include "client/cli_admin.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli_command.h"
#include "client/client.h"
#include "nlohmann/json.hpp"
#include "proto/layer_wire.h"

namespace speakermem::cli {
namespace {

// The channel's captured Writer transitions as one file in the layout of the
// reference trajectories (../shared/data/socialmem/trajectories).
// The channel's captured transitions, numbered, with the count of each
// action type, and the writer, window and whether capture is on.
struct CapturedTransitions {
  nlohmann::json list = nlohmann::json::array();
  std::map<std::string, size_t> action_counts;
  uint32_t window = 0;
  std::string writer;
  bool enabled = false;
};

absl::StatusOr<CapturedTransitions> ReadTransitions(client::Client* c, const std::string& channel) {
  CapturedTransitions out;
  v1::ListTransitionsRequest req;
  req.set_channel(channel);
  req.set_page_size(200);
  do {
    auto resp = c->ListTransitions(req);
    if (!resp.ok()) return resp.status();
    out.window = resp->window_size();
    out.writer = resp->writer();
    out.enabled = resp->capture_enabled();
    for (const auto& t : resp->transitions()) {
      nlohmann::json j = nlohmann::json::parse(t, nullptr, false);
      if (j.is_discarded()) return absl::DataLossError("a stored transition is not JSON");
      j["turn"] = out.list.size();
      j["segment_index"] = out.list.size();
      for (const auto& a : j["actions"]) {
        if (a.contains("action") && a["action"].is_string())
          ++out.action_counts[a["action"].get<std::string>()];
      }
      out.list.push_back(std::move(j));
    }
    req.set_after_seq(resp->next_after_seq());
  } while (req.after_seq() != 0);
  return out;
}

// The final state: every record with its chain links.
absl::StatusOr<nlohmann::json> ReadFinalState(client::Client* c, const std::string& channel) {
  v1::ListRecordsRequest rr;
  rr.set_channel(channel);
  rr.set_include_superseded(true);
  rr.set_page_size(1000);
  nlohmann::json entries = nlohmann::json::array(), heads = nlohmann::json::array(),
                 edges = nlohmann::json::array();
  do {
    auto resp = c->ListRecords(rr);
    if (!resp.ok()) return resp.status();
    for (const auto& r : resp->records()) {
      std::vector<std::string> from(r.from_ids().begin(), r.from_ids().end());
      entries.push_back({{"entry_id", r.record_id()},
                         {"owner", r.owner()},
                         {"source", r.source()},
                         {"layer", api::LayerPaperName(r.layer())},
                         {"utype", r.utype()},
                         {"content", r.content()},
                         {"from_ids", from},
                         {"superseded_by", r.superseded_by()}});
      if (r.superseded_by().empty()) heads.push_back(r.record_id());
      for (const auto& old : r.supersedes())
        edges.push_back({{"old", old}, {"new", r.record_id()}});
    }
    rr.set_page_token(resp->next_page_token());
  } while (!rr.page_token().empty());
  return nlohmann::json{{"entries", entries}, {"heads", heads}, {"update_edges", edges}};
}

int CmdTrajectories(client::Client* c, const Args& args) {
  const std::string channel = args.Get("channel");
  absl::StatusOr<CapturedTransitions> t = ReadTransitions(c, channel);
  if (!t.ok()) return Fail(t.status());
  absl::StatusOr<nlohmann::json> final_state = ReadFinalState(c, channel);
  if (!final_state.ok()) return Fail(final_state.status());
  nlohmann::json doc = {{"schema", "speakermem-v4-trajectories/1"},
                        {"teacher", {{"writer", t->writer}}},
                        {"window_size", t->window},
                        {"network_id", channel},
                        {"source", {{"system", "speakermem"}, {"captured", true}}},
                        {"transitions", t->list},
                        {"final_state", *final_state},
                        {"qa_pairs", nlohmann::json::array()},
                        {"stats",
                         {{"transitions", t->list.size()},
                          {"actions", t->action_counts},
                          {"derived_entries", (*final_state)["heads"].size()},
                          {"update_edges", (*final_state)["update_edges"].size()}}}};
  if (t->list.empty()) {
    std::fprintf(stderr, "speakermem: no captured transitions in '%s'%s\n", channel.c_str(),
                 t->enabled ? "" : " (capture is off: writer.capture_trajectories)");
  }
  const std::string text = doc.dump(2) + "\n";
  if (!args.Has("out")) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(args.Get("out"), std::ios::trunc);
  out << text;
  if (!out.good())
    return Fail(absl::InternalError(absl::StrCat(args.Get("out"), ": cannot write")));
  std::fprintf(stderr, "%zu transitions written to %s\n", t->list.size(), args.Get("out").c_str());
  return 0;
}

void PrintCounts(const v1::DeletionCounts& n) {
  std::printf(
      "messages deleted %llu, edited %llu; records deleted %llu, updated %llu; "
      "transitions deleted %llu\n",
      static_cast<unsigned long long>(n.messages_deleted()),
      static_cast<unsigned long long>(n.messages_edited()),
      static_cast<unsigned long long>(n.records_deleted()),
      static_cast<unsigned long long>(n.records_updated()),
      static_cast<unsigned long long>(n.transitions_deleted()));
}

// The reply of a deletion RPC: JSON, or its counts in one line.
template <typename Resp>
int CountsReply(const Args& args, const absl::StatusOr<Resp>& r) {
  return Reply(args, r, [](const Resp& resp) { PrintCounts(resp.counts()); });
}

int CmdDelete(client::Client* c, const Args& args) {
  v1::DeleteMessagesRequest req;
  req.set_channel(args.Get("channel"));
  for (size_t i = 1; i < args.positional.size(); ++i) req.add_message_ids(args.positional[i]);
  auto r = c->DeleteMessages(req);
  return CountsReply(args, r);
}

int CmdEdit(client::Client* c, const Args& args) {
  v1::EditMessageRequest req;
  req.set_channel(args.Get("channel"));
  req.set_message_id(args.positional[1]);
  req.set_text(args.positional[2]);
  auto r = c->EditMessage(req);
  return CountsReply(args, r);
}

int CmdForget(client::Client* c, const Args& args) {
  v1::ForgetSpeakerRequest req;
  req.set_channel(args.Get("channel"));
  req.set_speaker(args.positional[1]);
  auto r = c->ForgetSpeaker(req);
  return CountsReply(args, r);
}

int CmdDeleteChannel(client::Client* c, const Args& args) {
  v1::DeleteChannelRequest req;
  req.set_channel(args.Get("channel"));
  return Reply(args, c->DeleteChannel(req), [](const v1::DeleteChannelResponse& r) {
    std::printf(r.existed() ? "channel deleted\n" : "no such channel (nothing to delete)\n");
  });
}

// Export as JSONL: one ChannelItem (protobuf JSON) per line.
int CmdExport(client::Client* c, const Args& args) {
  std::ofstream file;
  if (args.Has("out")) {
    file.open(args.Get("out"), std::ios::trunc);
    if (!file) return Fail(absl::InternalError(absl::StrCat(args.Get("out"), ": cannot write")));
  }
  std::ostream& out = args.Has("out") ? static_cast<std::ostream&>(file) : std::cout;
  size_t n = 0;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  absl::Status s = c->ExportChannel(args.Get("channel"), [&](const v1::ChannelItem& item) {
    std::string line;
    auto st = google::protobuf::util::MessageToJsonString(item, &line, opts);
    if (!st.ok()) return absl::InternalError(std::string(st.message()));
    out << line << "\n";
    ++n;
    return absl::OkStatus();
  });
  if (!s.ok()) return Fail(s);
  out.flush();
  if (!out) return Fail(absl::InternalError("write failed"));
  if (args.Has("out"))
    std::fprintf(stderr, "%zu items written to %s\n", n, args.Get("out").c_str());
  return 0;
}

int CmdImport(client::Client* c, const Args& args) {
  std::ifstream in(args.positional[1]);
  if (!in) return Fail(absl::NotFoundError(absl::StrCat(args.positional[1], ": cannot open")));
  std::vector<v1::ChannelItem> items;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    v1::ChannelItem item;
    auto st = google::protobuf::util::JsonStringToMessage(line, &item);
    if (!st.ok()) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat(args.positional[1], ":", line_no, ": ", std::string(st.message()))));
    }
    items.push_back(std::move(item));
  }
  if (items.empty() || !items.front().has_header()) {
    return Fail(absl::InvalidArgumentError("the export must start with its header"));
  }
  // --channel imports under another name.
  if (args.Has("channel")) items.front().mutable_header()->set_channel(args.Get("channel"));
  auto r = c->ImportChannel(items);
  if (!r.ok()) return Fail(r.status());
  if (args.Has("json"))
    PrintJson(*r);
  else
    std::printf("imported %llu messages and %llu records into '%s'\n",
                static_cast<unsigned long long>(r->messages()),
                static_cast<unsigned long long>(r->records()),
                items.front().header().channel().c_str());
  return 0;
}

int CmdBackup(client::Client* c, const Args& args) {
  v1::BackupRequest req;
  req.set_name(args.positional[1]);
  return Reply(args, c->Backup(req), [](const v1::BackupResponse& r) {
    std::printf("backup at %s (%llu bytes) on the server\n", r.path().c_str(),
                static_cast<unsigned long long>(r.bytes()));
  });
}

int CmdScoreActions(client::Client* c, const Args& args) {
  std::string text;
  if (args.positional[1] == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(args.positional[1]);
    if (!in) return Fail(absl::NotFoundError(absl::StrCat(args.positional[1], ": cannot open")));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  v1::ScoreWriterActionsRequest req;
  auto parsed = google::protobuf::util::JsonStringToMessage(text, &req);
  if (!parsed.ok()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        args.positional[1], ": not a ScoreWriterActionsRequest: ", std::string(parsed.message()))));
  }
  auto resp = c->ScoreWriterActions(req);
  if (!resp.ok()) return Fail(resp.status());
  if (args.Has("json")) {
    PrintJson(*resp);
    return 0;
  }
  std::printf(
      "validity %.4f  (json %.2f, schema %.2f, duplicate %.2f, stop %.2f; %u attempted, "
      "budget %u)\n",
      resp->validity(), resp->r_json(), resp->r_schema(), resp->r_dup(), resp->r_stop(),
      resp->attempted(), resp->action_budget());
  std::printf("penalty  %.4f  (json %d, action %d, count %d, length %d)\n", resp->penalty(),
              resp->z_json(), resp->z_act(), resp->z_count(), resp->z_len());
  for (const auto& r : resp->rejections()) {
    std::printf("  action %u rejected: %s\n", r.index(), r.reason().c_str());
  }
  if (resp->has_memory()) {
    std::printf("memory   %.4f  (SpeakerLevenshtein %.4f, chain %.4f)\n", resp->memory_reward(),
                resp->speaker_levenshtein(), resp->chain());
  }
  std::printf("post-state: %d records\n", resp->post_state_size());
  return 0;
}

}  // namespace

std::vector<Command> AdminCommands() {
  return {
      {"delete", {"channel"}, 1, SIZE_MAX, "MESSAGE_ID...", CmdDelete},
      {"edit", {"channel"}, 2, 2, "MESSAGE_ID TEXT", CmdEdit},
      {"forget", {"channel"}, 1, 1, "SPEAKER", CmdForget},
      {"delete-channel", {"channel"}, 0, SIZE_MAX, "", CmdDeleteChannel},
      {"export", {"channel"}, 0, SIZE_MAX, "", CmdExport},
      {"import", {}, 1, 1, "EXPORT.jsonl", CmdImport},
      {"backup", {}, 1, 1, "NAME", CmdBackup},
      {"score-actions", {}, 1, SIZE_MAX, "REQUEST.json (or - for stdin)", CmdScoreActions},
      {"trajectories", {"channel"}, 0, SIZE_MAX, "", CmdTrajectories},
  };
}

}  // namespace speakermem::cli

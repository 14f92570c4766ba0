// speakermem: command-line client of speakermemd.
//
//   speakermem [--addr HOST:PORT] [--api-key KEY] [--json] COMMAND [ARGS]
//
// Commands: ingest, query, messages, roster, channels. `speakermem help`
// prints the details. --addr defaults to $SPEAKERMEM_ADDR or
// 127.0.0.1:50151; --api-key to $SPEAKERMEM_API_KEY.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli_admin.h"
#include "client/cli_common.h"
#include "client/cli_import.h"
#include "client/client.h"
#include "common/clock.h"
#include "datasets/datasets.h"

namespace speakermem::cli {
namespace {

constexpr char kUsage[] =
    "usage: speakermem [--addr HOST:PORT] [--api-key KEY] [--json] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  ingest [--format auto|jsonl|locomo|socialmem] [--channel C] [--chunk N] FILE...\n"
    "      Stream messages from files into their channels (one channel per LoCoMo\n"
    "      sample or SocialMem network; JSONL lines name theirs or use --channel).\n"
    "  ingest --format slack|discord|telegram|matrix [--session-gap 4h]\n"
    "         [--channel-prefix P] [--chunk N] EXPORT...\n"
    "      Import a chat platform's export: a Slack workspace export folder,\n"
    "      DiscordChatExporter JSON files, Telegram Desktop's result.json, Element's\n"
    "      Matrix room JSON. Re-importing stores nothing twice; sessions end after an\n"
    "      idle gap (default 4h). docs/import.md has the mappings.\n"
    "  query --channel C [--top-k N] [--s2-k N] [--asker NAME] [--since T] [--until T]\n"
    "        [--history] [--mode pipeline|bm25|dense] [--no-answer] [--trace]\n"
    "        [--options \"A: text|B: text\"] [--fresh [--fresh-timeout-ms N]] [--no-s2]\n"
    "        [--ask] [--pack] [--stream] QUESTION\n"
    "      Ask a question; prints the answer, the System 1 evidence (* = newer than\n"
    "      memory), the System 2 rows, the Writer's lag and (--trace) per-stage\n"
    "      latency, model calls and tokens. --fresh waits until the Writer has\n"
    "      derived every message first; --no-s2 leaves System 2 out; --ask lets\n"
    "      Sufficiency search once more when the evidence falls short; --pack prints\n"
    "      the evidence pack exactly as the answerer saw it; --stream prints the\n"
    "      answer as it forms (QueryStream; with --json, one event per line).\n"
    "  messages --channel C [--speaker S] [--since T] [--until T] [--limit N] [--all]\n"
    "      List a channel's messages in order (T: ISO-8601, UTC when no zone).\n"
    "  roster --channel C\n"
    "      List a channel's speakers.\n"
    "  channels\n"
    "      List channels.\n"
    "  flush --channel C [--wait] [--timeout-ms N]\n"
    "      Let the Writer derive every message stored so far (--wait: until done).\n"
    "  records --channel C [--owner O] [--layer core|profile|interaction|insight]\n"
    "          [--all-versions] [--limit N]\n"
    "      List System 2 records (current heads unless --all-versions).\n"
    "  history --channel C RECORD_ID\n"
    "      A record's update chain, oldest first, with its supporting messages.\n"
    "  parked --channel C\n"
    "      Segments the Writer set aside after repeated failures.\n"
    "  correct --channel C RECORD_ID CONTENT\n"
    "      Append an operator correction to a record's chain (the Writer cannot undo it).\n"
    "  rederive --channel C [--timeout-ms N]\n"
    "      Rebuild the channel's System 2 from System 1 with the current Writer.\n"
    "  eval rows [--config FILE] [--md REPORT.md] [--dump SHOWN.jsonl] PATH...\n"
    "      System 2 rows: records per question, from_ids precision, coverage, empty\n"
    "      rows, with the relevance floors chosen leave-one-conversation-out; --dump\n"
    "      writes every question's shown records at the chosen floors, one JSON line each.\n"
    "  eval retrieval [--format auto|locomo|socialmem|jsonl] [--config FILE | --addr A]\n"
    "      [--out REPORT.json]\n"
    "      [--md REPORT.md] PATH...   (embedded: ablation and leave-one-\n"
    "      conversation-out choice of every recall constant; with --addr:\n"
    "      bm25/dense/full recall of a running server)\n"
    "      Ingest the conversations (one channel each) and report System 1 evidence\n"
    "      recall@k and hit@k (k = 5, 10, 20) for BM25 only, dense only and the full\n"
    "      pipeline, overall and per category. Runs an embedded instance on a\n"
    "      temporary directory unless --addr is given.\n"
    "  delete --channel C MESSAGE_ID...\n"
    "      Delete messages; derived records left without support go too.\n"
    "  edit --channel C MESSAGE_ID TEXT\n"
    "      Replace a message's text; records citing it are marked support_changed.\n"
    "  forget --channel C SPEAKER\n"
    "      Remove a speaker's messages and the records they own or sourced.\n"
    "  delete-channel --channel C\n"
    "      Remove a channel and everything derived from it.\n"
    "  export --channel C [--out FILE.jsonl]\n"
    "      Export a channel (header, messages, records) as JSONL.\n"
    "  import [--channel NEW_NAME] FILE.jsonl\n"
    "      Load an export into a channel that does not exist yet.\n"
    "  backup NAME\n"
    "      (admin) Consistent checkpoint of the server's store under store.backup_dir.\n"
    "  health\n"
    "      Exit 0 when the server reports SERVING on the gRPC health service.\n"
    "  trajectories --channel C [--out FILE]\n"
    "      Export the channel's captured Writer transitions (writer.capture_trajectories)\n"
    "      as SFT/RL data, in the layout of the reference trajectories.\n"
    "  score-actions REQUEST.json|-\n"
    "      Score a candidate Writer output (validity, penalties, memory reward) with\n"
    "      the ScoreWriterActions RPC; REQUEST is a ScoreWriterActionsRequest in JSON.\n"
    "  eval report --format locomo|socialmem|jsonl --out DIR [--config FILE | --addr A]\n"
    "              [--judge-url URL --judge-model M [--judge-key-env VAR]] [--texts] PATH...\n"
    "      Run a benchmark file end to end in an embedded instance configured like\n"
    "      speakermemd (--config FILE, then SPEAKERMEM_<SECTION>_<KEY> variables, e.g.\n"
    "      the SPEAKERMEM_MODEL_* stage endpoints), or a running server (--addr):\n"
    "      the stages' providers and models,\n"
    "      recall@k per configuration (bm25, dense, full, full+s2), answers with\n"
    "      token-F1 (LoCoMo adversarial questions: an abstention is correct), judge\n"
    "      accuracy when a judge is given (SocialMem open-ended items by their\n"
    "      category's rubric), MeanQ/MeanN with a bootstrap CI, model tokens per\n"
    "      question by stage, Retrieve latency; writes DIR/report.json,\n"
    "      DIR/report.md and PNG plots (--texts: question, gold and answer texts).\n"
    "  eval writer [--md FILE] [--dump DIR] TRAJECTORY.json...\n"
    "      Replay reference Writer trajectories through the offline Writer (embedded\n"
    "      store in a temporary directory; no server needed), choose its constants\n"
    "      leave-one-network-out and score each network with the constants chosen\n"
    "      on the others: SpeakerLevenshtein, chain score and memory reward beside\n"
    "      the one-record-per-message baseline, and the records' shape (--dump: both\n"
    "      states per trajectory as JSON lines in DIR). Exit 3: the compiled\n"
    "      defaults are not the constants chosen on all trajectories.\n"
    "\n"
    "global flags: --addr (env SPEAKERMEM_ADDR, default 127.0.0.1:50151),\n"
    "  --api-key (env SPEAKERMEM_API_KEY), --json (print JSON instead of text),\n"
    "  --timeout-ms N (per call, default 30000), --tls-ca FILE (env SPEAKERMEM_TLS_CA:\n"
    "  PEM roots to verify a TLS server; without it the connection is plaintext).\n";

}  // namespace

int Usage(const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "speakermem: %s\n\n", error.c_str());
  std::fputs(kUsage, error.empty() ? stdout : stderr);
  return error.empty() ? 0 : 2;
}

namespace {

// Progress of a long ingest on a terminal: bar, counts, rate.
class Progress {
 public:
  Progress(size_t total, bool enabled)
      : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void Update(size_t done) {
    if (!enabled_) return;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int width = 30;
    int filled = total_ == 0 ? width : static_cast<int>(width * done / total_);
    std::string bar(filled, '=');
    bar.resize(width, ' ');
    double rate = secs > 0 ? done / secs : 0;
    double eta = rate > 0 ? (total_ - done) / rate : 0;
    std::fprintf(stderr, "\r[%s] %zu/%zu messages  %.0f msg/s  ETA %.0fs ", bar.c_str(), done,
                 total_, rate, eta);
    std::fflush(stderr);
  }
  void Finish() {
    if (enabled_) std::fputs("\n", stderr);
  }

 private:
  const size_t total_;
  const bool enabled_;
  const std::chrono::steady_clock::time_point start_;
};

int CmdIngest(client::Client* c, const Args& args) {
  if (IsExportFormat(args.Get("format"))) return CmdImport(c, args);
  if (args.positional.size() < 2) return Usage("ingest: give at least one FILE");
  absl::StatusOr<datasets::Format> format = datasets::ParseFormat(args.Get("format", "auto"));
  if (!format.ok()) return Fail(format.status());
  client::StreamOptions so;
  absl::StatusOr<uint32_t> chunk = UintFlag(args, "chunk", 500);
  if (!chunk.ok()) return Fail(chunk.status());
  so.chunk_size = *chunk;
  std::vector<datasets::Conversation> all;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    auto convs = datasets::LoadFile(args.positional[i], *format, args.Get("channel"));
    if (!convs.ok()) return Fail(convs.status());
    for (auto& conv : *convs) all.push_back(std::move(conv));
  }
  size_t total = 0;
  for (const auto& conv : all) total += conv.messages.size();
  Progress progress(total, isatty(STDERR_FILENO) && !args.Has("json"));
  size_t done = 0, stored = 0, duplicates = 0, rejected_total = 0;
  int rc = 0;
  for (const auto& conv : all) {
    std::vector<v1::DialogueMessage> msgs;
    msgs.reserve(conv.messages.size());
    for (const auto& m : conv.messages) msgs.push_back(ToWire(m));
    size_t ch_stored = 0, ch_dup = 0, rejected = 0;
    std::vector<std::string> errors;
    absl::Status s = c->IngestStream(
        conv.channel, msgs, so,
        [&](const v1::IngestAck& ack) {
          if (ack.has_error()) {
            errors.push_back(ack.error().message());
          } else {
            ch_stored += ack.stored();
            ch_dup += ack.duplicates();
          }
          done += std::min<size_t>(so.chunk_size, total - done);
          progress.Update(done);
        },
        &rejected);
    stored += ch_stored;
    duplicates += ch_dup;
    rejected_total += rejected;
    if (!s.ok()) {
      progress.Finish();
      return Fail(s);
    }
    if (!args.Has("json")) {
      progress.Finish();
      std::printf("%s: %zu stored, %zu duplicates, %zu chunks rejected\n", conv.channel.c_str(),
                  ch_stored, ch_dup, rejected);
    }
    for (const auto& e : errors) std::fprintf(stderr, "  rejected: %s\n", e.c_str());
    if (rejected > 0) rc = 1;
  }
  if (args.Has("json")) {
    std::printf("{\"channels\":%zu,\"stored\":%zu,\"duplicates\":%zu,\"rejected_chunks\":%zu}\n",
                all.size(), stored, duplicates, rejected_total);
  }
  return rc;
}

// The response of `query` for a person: the projection, the Writer's lag,
// the System 1 evidence, the System 2 rows and (trace) each stage.
void PrintQuery(const v1::QueryResponse& resp, const Args& args) {
  if (args.Has("pack")) std::printf("\n%s\n", resp.evidence_pack().c_str());
  {
    const auto& p = resp.projection();
    std::string rows;
    for (const auto& r : p.rows()) rows += (rows.empty() ? "" : ", ") + r;
    std::printf("   rows: %s | issue: %s | %s%s\n", rows.c_str(), p.issue().c_str(),
                p.tense() == v1::FULL ? "full history" : "current state",
                p.source().empty() ? "" : (" | " + p.source() + "'s view of " + p.owner()).c_str());
    const auto& f = resp.freshness();
    std::printf("   memory: derived through #%llu of #%llu (%llu messages, %.0f s behind)%s\n",
                static_cast<unsigned long long>(f.derived_through_seq()),
                static_cast<unsigned long long>(f.newest_seq()),
                static_cast<unsigned long long>(f.lag_messages()), f.lag_ms() / 1000.0,
                f.waited() ? ", waited for the Writer" : "");
  }
  if (resp.evidence_size() > 0) {
    std::printf("\n  %-3s %-7s %-16s %-12s %-10s %s\n", "#", "score", "time", "speaker", "id",
                "text");
    int i = 0;
    for (const auto& e : resp.evidence()) {
      const auto& m = e.message();
      std::string text = m.text();
      if (text.size() > 90) text = text.substr(0, 87) + "...";
      std::printf("  %-3d %-7.3f %-16s %-12s %-10s %s%s\n", ++i, e.score(),
                  ShortTime(m.timestamp_ms()).c_str(), m.speaker().c_str(), m.message_id().c_str(),
                  e.newer_than_memory() ? "* " : "", text.c_str());
    }
  }
  bool any_row = false;
  for (const auto& row : resp.rows()) {
    if (!any_row) std::printf("\n  System 2 rows:\n");
    any_row = true;
    if (row.empty()) {
      std::printf("  %-10s (none)\n", row.row().c_str());
      continue;
    }
    for (const auto& r : row.records()) {
      std::printf("  %-10s %-11s from %-10s %s  %s%s\n", row.row().c_str(),
                  LayerLabel(r.layer()).c_str(), r.source().c_str(),
                  ShortTime(r.valid_at_ms()).c_str(), r.content().c_str(),
                  r.state() == v1::SUPERSEDED ? "  [superseded]" : "");
    }
    for (const auto& r : row.sourced()) {
      std::printf("  %-10s said about %s: %s\n", row.row().c_str(), r.owner().c_str(),
                  r.content().c_str());
    }
    if (row.records_size() == 0 && row.has_fallback()) {
      std::printf("  %-10s (no record; said) %s\n", row.row().c_str(),
                  row.fallback().text().c_str());
    }
  }
  if (args.Has("trace")) {
    std::printf("\n  trace:\n");
    for (const auto& t : resp.trace()) {
      std::printf("    %-14s %8.3f ms  calls=%u tokens=%llu/%llu %s\n", t.stage().c_str(),
                  t.latency_ms(), t.model_calls(), static_cast<unsigned long long>(t.tokens_in()),
                  static_cast<unsigned long long>(t.tokens_out()), t.note().c_str());
    }
  }
}

// QueryStream: the answer printed as it forms (after "Q: ...\nA: "), or
// with `json` every event as one line of JSON.
absl::StatusOr<v1::QueryResponse> StreamQuery(client::Client* c, const v1::QueryRequest& req,
                                              const std::string& question, bool json) {
  if (!json) std::printf("Q: %s\n", question.c_str());
  std::fflush(stdout);
  absl::StatusOr<v1::QueryResponse> resp = c->QueryStream(req, [json](const v1::QueryEvent& e) {
    if (json) {
      PrintJson(e);
      std::cout.flush();
    } else if (e.has_evidence()) {
      std::printf("A: ");
    } else if (e.has_delta()) {
      std::fwrite(e.delta().data(), 1, e.delta().size(), stdout);
    } else if (e.has_final()) {
      std::printf("\n");
    }
    std::fflush(stdout);
    return true;
  });
  return resp;
}

int CmdQuery(client::Client* c, const Args& args) {
  std::string question;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    question += (i > 1 ? " " : "") + args.positional[i];
  }
  v1::QueryRequest req;
  req.set_channel(args.Get("channel"));
  req.set_question(question);
  // --options "A: Lisbon|B: Porto": a multiple-choice question.
  if (args.Has("options")) {
    for (absl::string_view o : absl::StrSplit(args.Get("options"), '|', absl::SkipWhitespace())) {
      req.add_options(std::string(absl::StripAsciiWhitespace(o)));
    }
  }
  req.set_asker(args.Get("asker"));
  auto since = TimeFlag(args, "since");
  auto until = TimeFlag(args, "until");
  auto top_k = UintFlag(args, "top-k", 0);
  if (!since.ok()) return Fail(since.status());
  if (!until.ok()) return Fail(until.status());
  if (!top_k.ok()) return Fail(top_k.status());
  req.set_start_ms(*since);
  req.set_end_ms(*until);
  req.mutable_budgets()->set_s1_top_k(*top_k);
  auto s2k = UintFlag(args, "s2-k", 0);
  if (!s2k.ok()) return Fail(s2k.status());
  req.mutable_budgets()->set_s2_k(*s2k);
  if (args.Has("history")) req.set_tense(v1::FULL);
  std::string mode = args.Get("mode", "pipeline");
  req.set_no_s2(args.Has("no-s2"));
  if (args.Has("ask")) req.mutable_budgets()->set_ask(true);
  if (args.Has("fresh")) {
    req.set_fresh(true);
    auto ft = UintFlag(args, "fresh-timeout-ms", 0);
    if (!ft.ok()) return Fail(ft.status());
    req.set_fresh_timeout_ms(static_cast<uint32_t>(*ft));
  }
  if (mode == "bm25")
    req.set_mode(v1::BM25_ONLY);
  else if (mode == "dense")
    req.set_mode(v1::DENSE_ONLY);
  else if (mode != "pipeline")
    return Usage("query: --mode is pipeline, bm25 or dense");
  if (args.Has("stream") && args.Has("no-answer")) {
    return Usage("query: --stream streams the answer; drop --no-answer");
  }
  absl::StatusOr<v1::QueryResponse> resp = args.Has("stream")
                                               ? StreamQuery(c, req, question, args.Has("json"))
                                           : args.Has("no-answer") ? c->Retrieve(req)
                                                                   : c->Query(req);
  if (!resp.ok()) return Fail(resp.status());
  if (args.Has("json")) {
    if (!args.Has("stream")) PrintJson(*resp);
    return 0;
  }
  if (!args.Has("stream")) std::printf("Q: %s\nA: %s\n", question.c_str(), resp->answer().c_str());
  PrintQuery(*resp, args);
  return 0;
}

int CmdMessages(client::Client* c, const Args& args) {
  v1::GetMessagesRequest req;
  req.set_channel(args.Get("channel"));
  req.set_speaker(args.Get("speaker"));
  auto since = TimeFlag(args, "since");
  auto until = TimeFlag(args, "until");
  auto limit = UintFlag(args, "limit", 100);
  if (!since.ok()) return Fail(since.status());
  if (!until.ok()) return Fail(until.status());
  if (!limit.ok()) return Fail(limit.status());
  req.set_start_ms(*since);
  req.set_end_ms(*until);
  req.set_page_size(*limit);
  const bool all = args.Has("all");
  do {
    auto resp = c->GetMessages(req);
    if (!resp.ok()) return Fail(resp.status());
    for (const auto& m : resp->messages()) {
      if (args.Has("json")) {
        PrintJson(m);
      } else {
        std::printf("%6llu  %s  %-12s %s\n", static_cast<unsigned long long>(m.seq()),
                    ShortTime(m.timestamp_ms()).c_str(), m.speaker().c_str(), m.text().c_str());
      }
    }
    req.set_page_token(resp->next_page_token());
    if (!all && !resp->next_page_token().empty() && !args.Has("json")) {
      std::printf("(more: --all for every page)\n");
    }
  } while (all && !req.page_token().empty());
  return 0;
}

int CmdRoster(client::Client* c, const Args& args) {
  v1::GetRosterRequest req;
  req.set_channel(args.Get("channel"));
  return Reply(args, c->GetRoster(req), [](const v1::GetRosterResponse& resp) {
    std::printf("%-20s %-24s %8s  %-16s  %s\n", "speaker_id", "aliases", "messages", "first seen",
                "last seen");
    for (const auto& e : resp.speakers()) {
      std::string aliases;
      for (const auto& a : e.aliases()) aliases += (aliases.empty() ? "" : ", ") + a;
      std::printf("%-20s %-24s %8llu  %-16s  %s\n", e.speaker_id().c_str(), aliases.c_str(),
                  static_cast<unsigned long long>(e.message_count()),
                  ShortTime(e.first_seen_ms()).c_str(), ShortTime(e.last_seen_ms()).c_str());
    }
  });
}

int CmdChannels(client::Client* c, const Args& args) {
  v1::ListChannelsRequest req;
  req.set_page_size(500);
  if (!args.Has("json")) {
    std::printf("%-32s %9s %8s  %-16s  %s\n", "channel", "messages", "speakers", "first", "last");
  }
  do {
    auto resp = c->ListChannels(req);
    if (!resp.ok()) return Fail(resp.status());
    for (const auto& ch : resp->channels()) {
      if (args.Has("json")) {
        PrintJson(ch);
      } else {
        std::printf("%-32s %9llu %8u  %-16s  %s\n", ch.channel().c_str(),
                    static_cast<unsigned long long>(ch.message_count()), ch.speaker_count(),
                    ShortTime(ch.first_message_ms()).c_str(),
                    ShortTime(ch.last_message_ms()).c_str());
      }
    }
    req.set_page_token(resp->next_page_token());
  } while (!req.page_token().empty());
  return 0;
}

int CmdFlush(client::Client* c, const Args& args) {
  v1::FlushRequest req;
  req.set_channel(args.Get("channel"));
  req.set_wait(args.Has("wait"));
  auto t = UintFlag(args, "timeout-ms", 60000);
  if (!t.ok()) return Fail(t.status());
  req.set_timeout_ms(*t);
  return Reply(args, c->Flush(req), [](const v1::FlushResponse& resp) {
    std::printf("newest seq %llu, writer cursor %llu\n",
                static_cast<unsigned long long>(resp.newest_seq()),
                static_cast<unsigned long long>(resp.cursor_seq()));
  });
}

int CmdRecords(client::Client* c, const Args& args) {
  v1::ListRecordsRequest req;
  req.set_channel(args.Get("channel"));
  req.set_owner(args.Get("owner"));
  if (args.Has("layer")) {
    v1::Layer l;
    std::string name = args.Get("layer");
    for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (!v1::Layer_Parse(name, &l)) return Usage("records: unknown --layer");
    req.set_layer(l);
  }
  req.set_include_superseded(args.Has("all-versions"));
  auto limit = UintFlag(args, "limit", 500);
  if (!limit.ok()) return Fail(limit.status());
  req.set_page_size(*limit);
  if (!args.Has("json")) {
    std::printf("%-14s %-11s %-12s %-12s %-11s %s\n", "record", "layer", "owner", "source", "utype",
                "content");
  }
  do {
    auto resp = c->ListRecords(req);
    if (!resp.ok()) return Fail(resp.status());
    for (const auto& r : resp->records()) {
      if (args.Has("json"))
        PrintJson(r);
      else
        PrintRecord(r);
    }
    req.set_page_token(resp->next_page_token());
  } while (!req.page_token().empty());
  return 0;
}

int CmdHistory(client::Client* c, const Args& args) {
  v1::GetRecordRequest req;
  req.set_channel(args.Get("channel"));
  req.set_record_id(args.positional[1]);
  return Reply(args, c->GetRecord(req), [](const v1::GetRecordResponse& resp) {
    std::printf("update chain (oldest first):\n");
    for (const auto& r : resp.chain()) {
      std::printf("  %s  ", ShortTime(r.valid_at_ms()).c_str());
      PrintRecord(r);
    }
    std::printf("supporting messages of %s:\n", resp.record().record_id().c_str());
    for (const auto& m : resp.supporting_messages()) {
      std::printf("  %-10s %s  %-12s %s\n", m.message_id().c_str(),
                  ShortTime(m.timestamp_ms()).c_str(), m.speaker().c_str(), m.text().c_str());
    }
  });
}

int CmdParked(client::Client* c, const Args& args) {
  v1::ListParkedRequest req;
  req.set_channel(args.Get("channel"));
  return Reply(args, c->ListParked(req), [](const v1::ListParkedResponse& resp) {
    if (resp.segments_size() == 0) std::printf("no parked segments\n");
    for (const auto& p : resp.segments()) {
      std::printf("seq %llu-%llu  attempts %u  since %s  %s\n",
                  static_cast<unsigned long long>(p.first_seq()),
                  static_cast<unsigned long long>(p.last_seq()), p.attempts(),
                  ShortTime(p.parked_ms()).c_str(), p.reason().c_str());
    }
  });
}

int CmdCorrect(client::Client* c, const Args& args) {
  v1::CorrectRecordRequest req;
  req.set_channel(args.Get("channel"));
  req.set_record_id(args.positional[1]);
  std::string content;
  for (size_t i = 2; i < args.positional.size(); ++i) {
    content += (i > 2 ? " " : "") + args.positional[i];
  }
  req.set_content(content);
  return Reply(args, c->CorrectRecord(req),
               [](const v1::CorrectRecordResponse& resp) { PrintRecord(resp.record()); });
}

int CmdRederive(client::Client* c, const Args& args) {
  v1::RederiveRequest req;
  req.set_channel(args.Get("channel"));
  auto t = UintFlag(args, "timeout-ms", 600000);
  if (!t.ok()) return Fail(t.status());
  req.set_timeout_ms(*t);
  return Reply(args, c->Rederive(req), [](const v1::RederiveResponse& resp) {
    std::printf("re-derived: %llu segments, writer cursor %llu\n",
                static_cast<unsigned long long>(resp.segments()),
                static_cast<unsigned long long>(resp.cursor_seq()));
  });
}

// The eval commands live in speakermem-eval (they run an embedded engine:
// RocksDB, FAISS, curl), found through SPEAKERMEM_EVAL_BIN, beside this
// binary, or in the build tree's eval/; it gets these exact arguments.
int ExecEval(char** argv) {
  std::vector<std::string> candidates;
  const char* env = std::getenv("SPEAKERMEM_EVAL_BIN");
  if (env != nullptr && *env != '\0') candidates.push_back(env);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back((self.parent_path() / "speakermem-eval").string());
    candidates.push_back((self.parent_path().parent_path() / "eval" / "speakermem-eval").string());
  }
  for (const auto& path : candidates) {
    if (access(path.c_str(), X_OK) != 0) continue;
    execv(path.c_str(), argv);
    return Fail(absl::InternalError(absl::StrCat("cannot run ", path, ": ", std::strerror(errno))));
  }
  return Fail(absl::NotFoundError(absl::StrCat(
      "the eval commands are in the speakermem-eval binary (build/eval/speakermem-eval); "
      "none found beside ",
      self.string(), " (set SPEAKERMEM_EVAL_BIN)")));
}

int Main(int argc, char** argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argc, argv, &args, &error)) return Usage(error);
  if (args.positional.empty() || args.positional[0] == "help" || args.Has("help")) {
    return Usage("");
  }
  if (args.positional[0] == "eval") return ExecEval(argv);
  client::ClientOptions opts;
  const char* env_addr = std::getenv("SPEAKERMEM_ADDR");
  const char* env_key = std::getenv("SPEAKERMEM_API_KEY");
  if (env_addr != nullptr && *env_addr != '\0') opts.addr = env_addr;
  if (env_key != nullptr) opts.api_key = env_key;
  opts.addr = args.Get("addr", opts.addr);
  opts.api_key = args.Get("api-key", opts.api_key);
  const char* env_ca = std::getenv("SPEAKERMEM_TLS_CA");
  std::string ca = args.Get("tls-ca", env_ca != nullptr ? env_ca : "");
  if (!ca.empty()) {
    std::ifstream in(ca);
    if (!in) return Fail(absl::NotFoundError(absl::StrCat("--tls-ca ", ca, ": cannot read")));
    std::stringstream ss;
    ss << in.rdbuf();
    opts.tls_root_certs = ss.str();
  }
  auto timeout = UintFlag(args, "timeout-ms", 30000);
  if (!timeout.ok()) return Fail(timeout.status());
  opts.timeout_ms = static_cast<int>(*timeout);
  const int timeout_ms = opts.timeout_ms;
  std::vector<Command> table = {
      // ingest checks its own arguments: files, or folders of a platform export.
      {"ingest", {}, 0, SIZE_MAX, "", CmdIngest},
      {"query", {"channel"}, 1, SIZE_MAX, "a QUESTION", CmdQuery},
      {"messages", {"channel"}, 0, SIZE_MAX, "", CmdMessages},
      {"roster", {"channel"}, 0, SIZE_MAX, "", CmdRoster},
      {"channels", {}, 0, SIZE_MAX, "", CmdChannels},
      {"flush", {"channel"}, 0, SIZE_MAX, "", CmdFlush},
      {"records", {"channel"}, 0, SIZE_MAX, "", CmdRecords},
      {"history", {"channel"}, 1, 1, "a RECORD_ID", CmdHistory},
      {"parked", {"channel"}, 0, SIZE_MAX, "", CmdParked},
      {"correct", {"channel"}, 2, SIZE_MAX, "a RECORD_ID and the CONTENT", CmdCorrect},
      {"rederive", {"channel"}, 0, SIZE_MAX, "", CmdRederive},
      {"health",
       {},
       0,
       0,
       "nothing more",
       [timeout_ms](client::Client* c, const Args&) {
         absl::Status s = c->WaitForServing(timeout_ms);
         if (!s.ok()) return Fail(s);
         std::printf("SERVING\n");
         return 0;
       }},
  };
  for (Command& admin : AdminCommands()) table.push_back(std::move(admin));
  const Command* cmd = FindCommand(table, args.positional[0]);
  if (cmd == nullptr) return Usage(absl::StrCat("unknown command '", args.positional[0], "'"));
  std::unique_ptr<client::Client> c = client::Client::Connect(opts);
  return RunCommand(*cmd, c.get(), args);
}

}  // namespace
}  // namespace speakermem::cli

int main(int argc, char** argv) { return speakermem::cli::Main(argc, argv); }

// System 1 benchmark: ingest throughput over loopback gRPC (streaming chunks
// of 25 and 500 messages, WAL on), against the limit measured in the same run
// (raw RocksDB write batches of the same messages, no gRPC), and query
// latency on a channel of 100,000 messages: the BM25 index alone, the Query
// RPC in BM25-only mode, and the full pipeline (with the offline answer) in
// process on the server's engine beside the same call as a Query RPC.
//
// Then a bulk load over gRPC: many channels (default 1,000 x 1,000 messages)
// through several concurrent streams. After each load: how far the Writer
// and the embedder are behind, and how long they take to catch up.
//
//   build/bench/system1_bench [--messages N] [--queries Q] [--bulk-channels C]
//       [--bulk-per-channel M] [--bulk-streams S] [--ingest-runs R]
//       [--profile-loads L] [--profile-chunk C] [--profile-window W]
//       [--bm25-loads B] [--profile-bulk 1] [--json FILE]
//
// --profile-loads L runs only L stream loads of --messages in chunks of
// --profile-chunk (500), --profile-window (16) chunks ahead of their
// acknowledgements, each into a fresh channel, and prints their rates:
// the steady ingest workload to record with `perf record -g` (the
// baselines, the bulk load and the queries would mix their own frames into
// the profile). --bm25-loads B instead adds --messages to an empty BM25
// index B times, in process, in chunks of --profile-chunk (the index half of
// an acknowledged ingest alone), and prints their rates. --profile-bulk 1
// runs only the bulk load (no waiting for derivation), to profile it.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_util.h"
#include "client/client.h"
#include "common/allocator.h"
#include "common/log.h"
#include "engine/memory.h"
#include "retrieval/bm25_index.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "server/server.h"
#include "storage/store.h"

namespace speakermem::bench {
namespace {

struct Options {
  size_t messages = 100000;
  size_t queries = 2000;
  size_t bulk_channels = 1000;
  size_t bulk_per_channel = 1000;
  size_t bulk_streams = 4;
  size_t profile_loads = 0;
  size_t profile_chunk = 500;
  size_t profile_window = 16;  // chunks in flight of a profile load
  size_t bm25_loads = 0;
  size_t profile_bulk = 0;  // 1: only the bulk load, no waiting for derivation
  size_t ingest_runs = 3;
  std::string json;
};

std::vector<v1::DialogueMessage> MakeMessages(Corpus* corpus, size_t n, const std::string& tag) {
  static const char* kSpeakers[] = {"Alice", "Bob", "Chen", "Dana", "Eli", "Fatima"};
  std::vector<v1::DialogueMessage> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    v1::DialogueMessage m;
    m.set_message_id(absl::StrCat(tag, "-", i));
    m.set_speaker(kSpeakers[corpus->rng()() % 6]);
    m.set_text(corpus->Sentence(6, 30));
    m.set_timestamp_ms(1700000000000 + static_cast<int64_t>(i) * 1000);
    m.set_session(absl::StrCat("s", i / 500));
    m.set_turn(static_cast<int32_t>(i % 500));
    out.push_back(std::move(m));
  }
  return out;
}

std::string TempPath(const std::string& name) {
  std::string base =
      std::filesystem::temp_directory_path() / ("speakermem-bench-" + name + "-XXXXXX");
  char* made = mkdtemp(base.data());
  if (made == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return made;
}

// Raw RocksDB, WAL on, no fsync, write batches of `batch`. Minimal: one Put
// per message (key = channel prefix + seq, value = the serialized message).
// With `same_keys`, also the two secondary keys the store writes per
// message (by id, by speaker), put message by message: the
// store puts them grouped by kind and sorted, which the memtable inserts
// faster, so the store can beat this baseline.
double RawRocksRate(const std::vector<v1::DialogueMessage>& msgs, size_t batch, bool same_keys) {
  std::string dir = TempPath("raw");
  rocksdb::Options o;
  o.create_if_missing = true;
  o.IncreaseParallelism(2);
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::Open(o, dir, &raw).ok()) std::exit(1);
  std::unique_ptr<rocksdb::DB> db(raw);
  auto start = std::chrono::steady_clock::now();
  std::string value;
  for (size_t i = 0; i < msgs.size(); i += batch) {
    rocksdb::WriteBatch wb;
    for (size_t j = i; j < std::min(msgs.size(), i + batch); ++j) {
      std::string key = "default";
      key.push_back('\0');
      key += "raw";
      key.push_back('\0');
      for (int s = 56; s >= 0; s -= 8) key.push_back(static_cast<char>((j + 1) >> s));
      msgs[j].SerializeToString(&value);
      wb.Put(key, value);
      if (same_keys) {
        std::string prefix = key.substr(0, key.size() - 8);
        std::string seq = key.substr(key.size() - 8);
        wb.Put(prefix + "i" + msgs[j].message_id(), seq);
        wb.Put(prefix + "s" + msgs[j].speaker() + std::string(1, '\0') + seq, "");
      }
    }
    if (!db->Write(rocksdb::WriteOptions(), &wb).ok()) std::exit(1);
  }
  double rate = static_cast<double>(msgs.size()) / SecondsSince(start);
  db.reset();
  std::filesystem::remove_all(dir);
  return rate;
}

// The store without gRPC: validation skipped, secondary keys, roster and
// counters included.
// Messages [i, i + batch) as the store takes them (`seq_from` > 0: as the
// store returns them, numbered from it, speakers resolved).
std::vector<storage::Message> ToStorage(const std::vector<v1::DialogueMessage>& msgs, size_t i,
                                        size_t batch, uint64_t seq_from = 0) {
  std::vector<storage::Message> b;
  for (size_t j = i; j < std::min(msgs.size(), i + batch); ++j) {
    storage::Message m;
    m.message_id = msgs[j].message_id();
    m.speaker = msgs[j].speaker();
    m.text = msgs[j].text();
    m.timestamp_ms = msgs[j].timestamp_ms();
    m.session = msgs[j].session();
    m.turn = msgs[j].turn();
    if (seq_from > 0) {  // as the store would have numbered and resolved them
      m.seq = seq_from + j;
      m.speaker_id = m.speaker;
    }
    b.push_back(std::move(m));
  }
  return b;
}

double StoreRate(const std::vector<v1::DialogueMessage>& msgs, size_t batch) {
  std::string dir = TempPath("store");
  storage::StoreOptions so;
  so.path = dir;
  auto store = storage::Store::Open(so);
  if (!store.ok()) std::exit(1);
  auto start = std::chrono::steady_clock::now();
  storage::ChannelRef ch{"default", "store"};
  for (size_t i = 0; i < msgs.size(); i += batch) {
    std::vector<storage::Message> b = ToStorage(msgs, i, batch);
    if (!(*store)->AppendMessages(ch, &b).ok()) std::exit(1);
  }
  double rate = static_cast<double>(msgs.size()) / SecondsSince(start);
  store->reset();
  std::filesystem::remove_all(dir);
  return rate;
}

// The BM25 index alone, in process: the same batches added to an empty
// lexical index (the other half of what an acknowledged ingest does).
double Bm25Rate(const std::vector<v1::DialogueMessage>& msgs, size_t batch) {
  retrieval::LexicalIndex index;
  const storage::ChannelRef ch{"default", "bm25"};
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < msgs.size(); i += batch) index.AddBatch(ch, ToStorage(msgs, i, batch, 1));
  return static_cast<double>(msgs.size()) / SecondsSince(start);
}

// Derivation behind ingest, and how long it takes to catch up once ingest
// stops: every full Writer window derived (a channel's partial window waits
// for more messages or the idle flush) and every message embedded.
struct CatchUp {
  engine::Memory::Lag at_end;
  double seconds = 0;
  bool done = false;
};

CatchUp WaitForDerivation(engine::Memory* engine, size_t channels) {
  CatchUp c;
  c.at_end = engine->DerivationLag();
  const uint64_t partial = channels * engine->options().writer.window;
  auto start = std::chrono::steady_clock::now();
  while (SecondsSince(start) < 900) {
    engine::Memory::Lag l = engine->DerivationLag();
    if (l.writer_messages < partial && l.embed_pending == 0) {
      c.done = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  c.seconds = SecondsSince(start);
  return c;
}

std::string Describe(const CatchUp& c) {
  return absl::StrCat("derivation lag at the end: ", c.at_end.writer_messages,
                      " messages not derived, ", c.at_end.embed_pending, " not embedded; ",
                      c.done ? "caught up in " : "NOT caught up after ",
                      absl::StrFormat("%.1f s", c.seconds));
}

double GrpcStreamRate(client::Client* c, const std::string& channel,
                      const std::vector<v1::DialogueMessage>& msgs, size_t chunk,
                      size_t window = 16) {
  client::StreamOptions so;
  so.chunk_size = chunk;
  so.window = window;
  size_t rejected = 0;
  auto start = std::chrono::steady_clock::now();
  absl::Status s = c->IngestStream(channel, msgs, so, nullptr, &rejected);
  double secs = SecondsSince(start);
  if (!s.ok() || rejected != 0) {
    std::fprintf(stderr, "ingest failed: %s (%zu rejected)\n", s.ToString().c_str(), rejected);
    std::exit(1);
  }
  return static_cast<double>(msgs.size()) / secs;
}

// One streamed load of `opt.messages` into a fresh channel and its same-run
// baselines on the same messages (run once derivation has caught up, on a
// quiet machine).
struct IngestRun {
  double grpc = 0, store = 0, bm25 = 0, same = 0, raw = 0;
  CatchUp caught;
};

IngestRun OneIngestRun(const Options& opt, Corpus* corpus, client::Client* client,
                       server::Server* srv, size_t chunk, size_t run) {
  IngestRun r;
  auto msgs = MakeMessages(corpus, opt.messages, absl::StrCat("c", chunk, "r", run));
  r.grpc = GrpcStreamRate(client, absl::StrCat("ingest-", chunk, "-", run), msgs, chunk);
  r.caught = WaitForDerivation(srv->memory(), 1);
  r.store = StoreRate(msgs, chunk);
  r.bm25 = Bm25Rate(msgs, chunk);
  r.same = RawRocksRate(msgs, chunk, true);
  r.raw = RawRocksRate(msgs, chunk, false);
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Streamed ingest at chunks of 25 and 500, `opt.ingest_runs` loads each
// (alternating sizes), every figure the median over the runs (one load takes
// about a second, which a shared machine's noise moves by a third), and the
// derivation's lag after each load; appends the JSON's "ingest" list.
void IngestPhase(const Options& opt, Corpus* corpus, client::Client* client, server::Server* srv,
                 std::string* json) {
  const std::vector<size_t> chunks = {25, 500};
  std::vector<std::vector<IngestRun>> runs(chunks.size());
  for (size_t run = 0; run < std::max<size_t>(opt.ingest_runs, 1); ++run) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      runs[c].push_back(OneIngestRun(opt, corpus, client, srv, chunks[c], run));
    }
  }
  std::printf("%-6s %12s %12s %12s %14s %14s %10s %10s %10s\n", "chunk", "grpc msg/s",
              "store msg/s", "bm25 msg/s", "raw-same msg/s", "raw-min msg/s", "grpc/same",
              "store/same", "grpc/min");
  absl::StrAppend(json, "{\"ingest\":[");
  for (size_t c = 0; c < chunks.size(); ++c) {
    auto median = [&](double IngestRun::*field) {
      std::vector<double> v;
      for (const auto& r : runs[c]) v.push_back(r.*field);
      return Median(v);
    };
    const double grpc = median(&IngestRun::grpc), store = median(&IngestRun::store),
                 bm25 = median(&IngestRun::bm25), same = median(&IngestRun::same),
                 raw = median(&IngestRun::raw);
    std::printf("%-6zu %12.0f %12.0f %12.0f %14.0f %14.0f %10.2f %10.2f %10.2f\n", chunks[c], grpc,
                store, bm25, same, raw, grpc / same, store / same, grpc / raw);
    absl::StrAppend(json, c == 0 ? "" : ",", "{\"chunk\":", chunks[c], ",\"runs\":", runs[c].size(),
                    ",\"grpc_msgs_per_s\":", static_cast<int64_t>(grpc),
                    ",\"store_msgs_per_s\":", static_cast<int64_t>(store),
                    ",\"bm25_msgs_per_s\":", static_cast<int64_t>(bm25),
                    ",\"raw_same_keys_msgs_per_s\":", static_cast<int64_t>(same),
                    ",\"raw_minimal_msgs_per_s\":", static_cast<int64_t>(raw),
                    ",\"grpc_over_raw_same\":", grpc / same,
                    ",\"grpc_over_raw_minimal\":", grpc / raw, "}");
  }
  *json += "],";
  std::printf("(medians of %zu loads each; every load's figures below)\n", runs[0].size());
  for (size_t c = 0; c < chunks.size(); ++c) {
    for (size_t i = 0; i < runs[c].size(); ++i) {
      const IngestRun& r = runs[c][i];
      std::printf("chunks of %zu, load %zu: grpc %.0f msg/s (%.2f of raw-same); %s\n", chunks[c],
                  i + 1, r.grpc, r.grpc / r.same, Describe(r.caught).c_str());
    }
  }
}

// Bulk load: many channels over several concurrent streams; false when a
// stream failed.
bool BulkPhase(const Options& opt, Corpus* corpus, const client::ClientOptions& co,
               server::Server* srv, std::string* json, bool wait = true) {
  std::vector<std::vector<v1::DialogueMessage>> per_channel(opt.bulk_channels);
  for (size_t c = 0; c < opt.bulk_channels; ++c) {
    per_channel[c] = MakeMessages(corpus, opt.bulk_per_channel, absl::StrCat("b", c));
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> streams;
  for (size_t t = 0; t < opt.bulk_streams; ++t) {
    streams.emplace_back([&] {
      auto own = client::Client::Connect(co);
      for (size_t c = next++; c < opt.bulk_channels; c = next++) {
        client::StreamOptions so;
        so.chunk_size = 500;
        so.window = 16;
        size_t rejected = 0;
        absl::Status s =
            own->IngestStream(absl::StrCat("bulk-", c), per_channel[c], so, nullptr, &rejected);
        if (!s.ok() || rejected != 0) failed = true;
      }
    });
  }
  for (auto& t : streams) t.join();
  const double secs = SecondsSince(start);
  if (failed) {
    std::fprintf(stderr, "bulk load failed\n");
    return false;
  }
  const size_t total = opt.bulk_channels * opt.bulk_per_channel;
  if (!wait) {
    std::printf("bulk load: %.0f msg/s\n", static_cast<double>(total) / secs);
    return true;
  }
  CatchUp caught = WaitForDerivation(srv->memory(), opt.bulk_channels);
  std::printf(
      "\nbulk load over gRPC: %zu channels x %zu messages, %zu concurrent streams, "
      "chunks of 500: %.1f s, %.0f msg/s\n%s\n",
      opt.bulk_channels, opt.bulk_per_channel, opt.bulk_streams, secs,
      static_cast<double>(total) / secs, Describe(caught).c_str());
  absl::StrAppend(json, "\"bulk\":{\"channels\":", opt.bulk_channels,
                  ",\"msgs_per_s\":", static_cast<int64_t>(static_cast<double>(total) / secs),
                  ",\"catch_up_s\":", caught.seconds, "},");
  return true;
}

// Latencies of each question asked four ways (QueryPhase); empty when a
// query failed or found nothing.
struct QueryTimes {
  std::vector<double> rpc_bm25_ms, rpc_full_ms, inproc_full_ms, rpc_floor_ms, paired_ms;
};

std::optional<QueryTimes> TimeQueries(const std::vector<std::string>& questions,
                                      const std::string& qchan, client::Client* client,
                                      engine::Memory* engine) {
  QueryTimes r;
  auto& [rpc_bm25_ms, rpc_full_ms, inproc_full_ms, rpc_floor_ms, paired_ms] = r;
  // The same questions through the server: BM25-only and full-pipeline
  // Query RPCs, and the full pipeline called in process on the server's own
  // engine, interleaved so that the Writer and the embedder still working on
  // what was just ingested weigh on all three alike. The in-process call and
  // the full RPC take turns going first (whichever goes second finds the
  // question's postings warm), and each question's pair gives one
  // difference: the background's swings, which move both p50s by more than
  // the RPC costs, cancel in the pair.
  for (size_t qi = 0; qi < questions.size(); ++qi) {
    const std::string& q = questions[qi];
    engine::QueryParams p;
    p.channel = {storage::kDefaultTenant, qchan};
    p.question = q;
    v1::QueryRequest req;
    req.set_channel(qchan);
    req.set_question(q);
    double in_ms = 0, rpc_ms = 0;
    bool in_ok = false, rpc_ok = false;
    auto in_process = [&] {
      auto t = std::chrono::steady_clock::now();
      auto in = engine->Query(p, /*answer=*/true);
      in_ms = SecondsSince(t) * 1000;
      in_ok = in.ok() && !in->pipeline.s1.empty();
    };
    auto over_rpc = [&] {
      auto t = std::chrono::steady_clock::now();
      auto full = client->Query(req);
      rpc_ms = SecondsSince(t) * 1000;
      rpc_ok = full.ok() && full->evidence_size() > 0;
    };
    if (qi % 2 == 0) {
      in_process();
      over_rpc();
    } else {
      over_rpc();
      in_process();
    }
    if (!in_ok || !rpc_ok) return std::nullopt;
    inproc_full_ms.push_back(in_ms);
    rpc_full_ms.push_back(rpc_ms);
    paired_ms.push_back(rpc_ms - in_ms);

    req.set_mode(v1::BM25_ONLY);
    auto t = std::chrono::steady_clock::now();
    auto bm25 = client->Query(req);
    rpc_bm25_ms.push_back(SecondsSince(t) * 1000);
    if (!bm25.ok() || bm25->evidence_size() == 0) return std::nullopt;

    // The floor any RPC pays here: a small one (six roster entries read
    // from the store) under the same load.
    v1::GetRosterRequest roster;
    roster.set_channel(qchan);
    t = std::chrono::steady_clock::now();
    auto speakers = client->GetRoster(roster);
    rpc_floor_ms.push_back(SecondsSince(t) * 1000);
    if (!speakers.ok() || speakers->speakers_size() == 0) return std::nullopt;
  }
  return r;
}

// BM25 on a 100,000-message channel: the index alone and the Query RPC,
// beside the full pipeline in process; false when a query found nothing.
bool QueryPhase(const Options& opt, Corpus* corpus, client::Client* client, server::Server* srv,
                std::string* json) {
  // BM25 on a 100,000-message channel: the index alone and the Query RPC.
  const std::string qchan = "query-100k";
  auto msgs = MakeMessages(corpus, 100000, "q");
  GrpcStreamRate(client, qchan, msgs, 500);
  std::vector<std::string> questions;
  for (size_t i = 0; i < opt.queries; ++i) {
    // A question made of words from a random message plus common words.
    const std::string& text = msgs[corpus->rng()() % msgs.size()].text();
    std::string q = text.substr(0, std::min<size_t>(text.size(), 40));
    questions.push_back(q + " " + corpus->Word() + " " + corpus->Word());
  }
  retrieval::LexicalIndex index;
  storage::ChannelRef ch{"default", qchan};
  for (size_t i = 0; i < msgs.size(); ++i) {
    storage::Message m;
    m.seq = i + 1;
    m.timestamp_ms = msgs[i].timestamp_ms();
    m.text = msgs[i].text();
    index.Add(ch, m);
  }
  std::vector<double> index_ms;
  for (const auto& q : questions) {
    auto t = std::chrono::steady_clock::now();
    retrieval::LexicalQuery lq;
    lq.text = q;
    auto hits = index.Search(ch, lq);
    index_ms.push_back(SecondsSince(t) * 1000);
    if (hits.empty()) return false;
  }
  std::optional<QueryTimes> times = TimeQueries(questions, qchan, client, srv->memory());
  if (!times.has_value()) return false;
  const auto& [rpc_bm25_ms, rpc_full_ms, inproc_full_ms, rpc_floor_ms, paired_ms] = *times;
  Latency li = Summarize(index_ms), lb = Summarize(rpc_bm25_ms), lp = Summarize(inproc_full_ms),
          lr = Summarize(rpc_full_ms), lf = Summarize(rpc_floor_ms), ld = Summarize(paired_ms);
  std::printf("\nQueries on a 100,000-message channel, %zu questions, top-10\n", questions.size());
  std::printf("%-36s %10s %10s %10s\n", "", "p50 ms", "p99 ms", "max ms");
  auto row = [](const char* name, const Latency& l) {
    std::printf("%-36s %10.3f %10.3f %10.3f\n", name, l.p50_ms, l.p99_ms, l.max_ms);
  };
  row("BM25 index search, in process", li);
  row("Query RPC, BM25_ONLY", lb);
  row("full pipeline + answer, in process", lp);
  row("Query RPC, full pipeline", lr);
  row("GetRoster RPC (any RPC's floor)", lf);
  std::printf("%-36s %+10.3f %+10.3f\n", "RPC over in process (full)", lr.p50_ms - lp.p50_ms,
              lr.p99_ms - lp.p99_ms);
  std::printf("%-36s %+10.3f\n", "the same, less the floor (p50)",
              lr.p50_ms - lp.p50_ms - lf.p50_ms);
  std::printf("%-36s %+10.3f %+10.3f\n", "RPC over in process, paired", ld.p50_ms, ld.p99_ms);
  absl::StrAppend(json, "\"bm25_100k\":{\"queries\":", questions.size(),
                  ",\"index_p50_ms\":", li.p50_ms, ",\"index_p99_ms\":", li.p99_ms,
                  ",\"rpc_bm25_p50_ms\":", lb.p50_ms, ",\"rpc_bm25_p99_ms\":", lb.p99_ms,
                  ",\"inproc_full_p50_ms\":", lp.p50_ms, ",\"inproc_full_p99_ms\":", lp.p99_ms,
                  ",\"rpc_full_p50_ms\":", lr.p50_ms, ",\"rpc_full_p99_ms\":", lr.p99_ms,
                  ",\"rpc_floor_p50_ms\":", lf.p50_ms, ",\"rpc_floor_p99_ms\":", lf.p99_ms,
                  ",\"rpc_over_inproc_paired_p50_ms\":", ld.p50_ms,
                  ",\"rpc_over_inproc_paired_p99_ms\":", ld.p99_ms, "}}");
  return true;
}

int Run(const Options& opt) {
  SetLogLevel(LogLevel::kWarn);
  Corpus corpus(42);
  std::printf("SpeakerMem System 1 benchmark (%u hardware threads, %s allocator)\n",
              std::thread::hardware_concurrency(), AllocatorName());
  std::printf("corpus: %zu synthetic messages, 6-30 Zipf words, 6 speakers\n\n", opt.messages);
  if (opt.bm25_loads > 0) {
    for (size_t i = 0; i < opt.bm25_loads; ++i) {
      auto msgs = MakeMessages(&corpus, opt.messages, absl::StrCat("b", i));
      std::printf("bm25 load %zu: %.0f msg/s\n", i + 1, Bm25Rate(msgs, opt.profile_chunk));
    }
    return 0;
  }

  std::string dir = TempPath("server");
  server::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "";
  config.memory.store.path = dir + "/data";
  auto srv = server::Server::Start(config);
  if (!srv.ok() || !(*srv)->WaitUntilReady(std::chrono::seconds(30))) return 1;
  client::ClientOptions co;
  co.addr = absl::StrCat("127.0.0.1:", (*srv)->port());
  auto client = client::Client::Connect(co);

  std::string json;
  for (size_t i = 0; i < opt.profile_loads; ++i) {
    auto msgs = MakeMessages(&corpus, opt.messages, absl::StrCat("p", i));
    std::printf("profile load %zu: %.0f msg/s\n", i + 1,
                GrpcStreamRate(client.get(), absl::StrCat("profile-", i), msgs, opt.profile_chunk,
                               opt.profile_window));
  }
  if (opt.profile_bulk != 0) {
    if (!BulkPhase(opt, &corpus, co, srv->get(), &json, false)) return 1;
  } else if (opt.profile_loads == 0) {
    IngestPhase(opt, &corpus, client.get(), srv->get(), &json);
    if (!BulkPhase(opt, &corpus, co, srv->get(), &json)) return 1;
    if (!QueryPhase(opt, &corpus, client.get(), srv->get(), &json)) return 1;
  }
  if (!opt.json.empty()) std::ofstream(opt.json) << json << "\n";

  client.reset();
  (*srv)->Shutdown(std::chrono::milliseconds(1000));
  srv->reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace speakermem::bench

int main(int argc, char** argv) {
  speakermem::bench::Options opt;
  speakermem::bench::ParseFlags(argc, argv,
                                {{"--messages", &opt.messages},
                                 {"--queries", &opt.queries},
                                 {"--bulk-channels", &opt.bulk_channels},
                                 {"--bulk-per-channel", &opt.bulk_per_channel},
                                 {"--bulk-streams", &opt.bulk_streams},
                                 {"--profile-loads", &opt.profile_loads},
                                 {"--profile-chunk", &opt.profile_chunk},
                                 {"--profile-window", &opt.profile_window},
                                 {"--bm25-loads", &opt.bm25_loads},
                                 {"--profile-bulk", &opt.profile_bulk},
                                 {"--ingest-runs", &opt.ingest_runs},
                                 {"--json", &opt.json}});
  return speakermem::bench::Run(opt);
}

// Retrieve latency with the offline provider: the full pipeline (Project,
// hybrid recall, Select, Expand, System 2 rows; no Answer) against BM25-only
// retrieval in the same run, while ingest runs at the same time in another
// channel. Two shapes: one channel of --messages messages, and --channels
// channels of --per-channel messages.
//
//   build/bench/retrieval_bench [--messages N] [--channels C] [--per-channel M]
//                               [--queries Q]
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "common/allocator.h"
#include "common/log.h"
#include "engine/memory.h"

namespace speakermem::bench {
namespace {

struct Options {
  size_t messages = 100000;
  size_t channels = 1000;
  size_t per_channel = 1000;
  size_t queries = 500;
};

std::vector<storage::Message> Messages(Corpus* corpus, size_t n, size_t offset) {
  static const char* kSpeakers[] = {"Alice", "Bob", "Chen", "Dana", "Eli", "Fatima"};
  std::vector<storage::Message> out;
  for (size_t i = 0; i < n; ++i) {
    storage::Message m;
    m.message_id = absl::StrCat("m", offset + i);
    m.speaker = kSpeakers[corpus->rng()() % 6];
    m.text = corpus->Sentence(6, 30);
    m.timestamp_ms = 1700000000000 + static_cast<int64_t>(offset + i) * 1000;
    m.session = absl::StrCat("s", (offset + i) / 500);
    out.push_back(std::move(m));
  }
  return out;
}

void Ingest(engine::Memory* mem, const storage::ChannelRef& ch, std::vector<storage::Message> all) {
  for (size_t i = 0; i < all.size(); i += 500) {
    std::vector<storage::Message> batch(all.begin() + i,
                                        all.begin() + std::min(all.size(), i + 500));
    if (!mem->Ingest(ch, {}, std::move(batch)).ok()) std::exit(1);
  }
}

std::string Question(Corpus* corpus) {
  static const char* kNames[] = {"Alice", "Bob", "Chen", "Dana", "Eli", "Fatima"};
  static const char* kForms[] = {"What does %s think about %s?", "When did %s mention %s?",
                                 "What did everyone say about %s %s?"};
  int f = static_cast<int>(corpus->rng()() % 3);
  std::string a = kNames[corpus->rng()() % 6], b = corpus->Word() + " " + corpus->Word();
  char buf[256];
  if (f == 2) {
    std::snprintf(buf, sizeof(buf), kForms[f], corpus->Word().c_str(), b.c_str());
  } else {
    std::snprintf(buf, sizeof(buf), kForms[f], a.c_str(), b.c_str());
  }
  return buf;
}

struct Measured {
  Latency full, bm25;
  std::map<std::string, std::vector<double>> stages;  // full pipeline, per stage
};

Measured Measure(engine::Memory* mem, Corpus* corpus, const std::vector<storage::ChannelRef>& chans,
                 size_t queries) {
  std::vector<std::string> qs;
  std::vector<size_t> which;
  for (size_t i = 0; i < queries; ++i) {
    qs.push_back(Question(corpus));
    which.push_back(corpus->rng()() % chans.size());
  }
  Measured out;
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<double> ms;
    for (size_t i = 0; i < qs.size(); ++i) {
      engine::QueryParams p;
      p.channel = chans[which[i]];
      p.question = qs[i];
      p.mode = pass == 0 ? retrieval::RecallMode::kHybrid : retrieval::RecallMode::kBm25;
      p.stages = pass == 0;
      auto t = std::chrono::steady_clock::now();
      auto r = mem->Query(p, /*answer=*/false);
      ms.push_back(SecondsSince(t) * 1000);
      if (!r.ok()) {
        std::fprintf(stderr, "query failed: %s\n", r.status().ToString().c_str());
        std::exit(1);
      }
      if (pass == 0) {
        for (const auto& t : r->pipeline.trace) out.stages[t.stage].push_back(t.latency_ms);
      }
    }
    (pass == 0 ? out.full : out.bm25) = Summarize(ms);
  }
  return out;
}

void Report(const char* shape, const Measured& m, double ingest_rate) {
  std::printf("\n%s (ingest running meanwhile: %.0f msg/s)\n", shape, ingest_rate);
  std::printf("%-34s %10s %10s %10s\n", "", "p50 ms", "p99 ms", "max ms");
  std::printf("%-34s %10.3f %10.3f %10.3f\n", "Retrieve, full pipeline", m.full.p50_ms,
              m.full.p99_ms, m.full.max_ms);
  std::printf("%-34s %10.3f %10.3f %10.3f\n", "Retrieve, BM25 only", m.bm25.p50_ms, m.bm25.p99_ms,
              m.bm25.max_ms);
  std::printf("%-34s %10.2f %10.2f\n", "full / BM25", m.full.p50_ms / m.bm25.p50_ms,
              m.full.p99_ms / m.bm25.p99_ms);
  for (const auto& [stage, v] : m.stages) {
    Latency l = Summarize(v);
    std::printf("  stage %-26s %10.3f %10.3f %10.3f\n", stage.c_str(), l.p50_ms, l.p99_ms,
                l.max_ms);
  }
}

// Ingests into a side channel until stopped; returns the rate.
class BackgroundIngest {
 public:
  explicit BackgroundIngest(engine::Memory* mem) : mem_(mem) {
    thread_ = std::thread([this] {
      Corpus corpus(7);
      auto start = std::chrono::steady_clock::now();
      size_t n = 0;
      while (!stop_.load()) {
        auto batch = Messages(&corpus, 100, n);
        if (!mem_->Ingest({storage::kDefaultTenant, "side"}, {}, std::move(batch)).ok()) return;
        n += 100;
        // A steady, realistic stream rather than a flood: ~5,000 msg/s.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      rate_ = n / SecondsSince(start);
    });
  }
  double Stop() {
    stop_.store(true);
    thread_.join();
    return rate_;
  }

 private:
  engine::Memory* mem_;
  std::atomic<bool> stop_{false};
  double rate_ = 0;
  std::thread thread_;
};

int Run(const Options& opt) {
  SetLogLevel(LogLevel::kWarn);
  setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows while it runs
  // A directory of its own: two runs at once must not share a store.
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "speakermem-retrieval-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = tmpl;
  engine::MemoryOptions mo;
  mo.store.path = dir + "/data";
  mo.writer.idle_flush_ms = 0;
  auto mem = engine::Memory::Open(mo, Clock::Real());
  if (!mem.ok()) {
    std::fprintf(stderr, "open: %s\n", mem.status().ToString().c_str());
    return 1;
  }
  if (!(*mem)->RebuildIndexes(nullptr).ok() || !(*mem)->StartWriter().ok()) return 1;
  Corpus corpus(42);
  std::printf("Retrieve latency, offline provider, %u hardware threads, %s allocator\n",
              std::thread::hardware_concurrency(), AllocatorName());

  // Shape 1: one big channel.
  storage::ChannelRef big{storage::kDefaultTenant, "big"};
  auto t0 = std::chrono::steady_clock::now();
  Ingest(mem->get(), big, Messages(&corpus, opt.messages, 0));
  double t_ingest = SecondsSince(t0);
  (*mem)->WaitForEmbeddings(std::chrono::minutes(30));
  double t_embed = SecondsSince(t0);
  uint64_t newest = 0;
  (void)(*mem)->Flush(big, true, std::chrono::minutes(30), &newest);
  std::printf(
      "loaded %zu messages in one channel in %.1f s (stored after %.1f s, embedded "
      "after %.1f s, derived by the Writer after %.1f s)\n",
      opt.messages, SecondsSince(t0), t_ingest, t_embed, SecondsSince(t0));
  {
    BackgroundIngest bg(mem->get());
    Measured m = Measure(mem->get(), &corpus, {big}, opt.queries);
    Report(absl::StrCat("one channel of ", opt.messages, " messages, ", opt.queries, " queries")
               .c_str(),
           m, bg.Stop());
  }

  // Shape 2: many channels (none with --channels 0).
  if (opt.channels == 0 || opt.per_channel == 0) {
    mem->reset();
    std::filesystem::remove_all(dir);
    return 0;
  }
  t0 = std::chrono::steady_clock::now();
  std::vector<storage::ChannelRef> chans;
  for (size_t c = 0; c < opt.channels; ++c) {
    chans.push_back({storage::kDefaultTenant, absl::StrCat("c", c)});
    Ingest(mem->get(), chans.back(), Messages(&corpus, opt.per_channel, 0));
  }
  (*mem)->WaitForEmbeddings(std::chrono::minutes(60));
  for (const auto& ch : chans) (void)(*mem)->Flush(ch, true, std::chrono::minutes(30), &newest);
  std::printf("\nloaded %zu channels x %zu messages in %.1f s\n", opt.channels, opt.per_channel,
              SecondsSince(t0));
  {
    BackgroundIngest bg(mem->get());
    Measured m = Measure(mem->get(), &corpus, chans, opt.queries);
    Report(absl::StrCat(opt.channels, " channels of ", opt.per_channel, " messages, ", opt.queries,
                        " queries on random channels")
               .c_str(),
           m, bg.Stop());
  }
  mem->reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace speakermem::bench

int main(int argc, char** argv) {
  speakermem::bench::Options opt;
  speakermem::bench::ParseFlags(argc, argv,
                                {{"--messages", &opt.messages},
                                 {"--channels", &opt.channels},
                                 {"--per-channel", &opt.per_channel},
                                 {"--queries", &opt.queries}});
  return speakermem::bench::Run(opt);
}

// Derivation lag in a live deployment and what the unwritten tail is worth:
// --channels channels receive messages at a steady aggregate --rate for
// --seconds with the offline Writer at its defaults (window 25, idle flush
// 30 s), while a query thread asks, --qps times a second, about the latest
// message of a random channel (a chat platform's usual question: about what
// was just said). Each query's Freshness gives the channel's lag; the
// question's target message tells whether memory alone could have answered.
//
//   build/bench/freshness_bench [--channels N] [--rate MSG_PER_S] [--seconds S]
//                               [--qps Q]
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "common/allocator.h"
#include "common/log.h"
#include "engine/memory.h"

namespace speakermem::bench {
namespace {

struct Options {
  size_t channels = 1000;
  size_t rate = 2000;
  size_t seconds = 60;
  size_t qps = 50;
};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Last {
  uint64_t seq = 0;
  std::string id;
  std::string text;
  int64_t ts = 0;
};

struct Sample {
  double lag_messages = 0;
  double lag_s = 0;         // message-time span of the unwritten tail
  double oldest_age_s = 0;  // wall-clock age of the oldest unwritten message
  bool target_unwritten = false;
  bool target_in_evidence = false;
  bool cites_newer = false;
};

// What the ingest thread and the queries share.
struct Live {
  std::vector<storage::ChannelRef> chans;
  std::vector<Last> last;  // guarded by mu
  std::mutex mu;
  std::atomic<bool> stop{false};
  std::atomic<size_t> sent{0};
};

// Steady ingest: every 10 ms, rate/100 messages to random channels.
void SteadyIngest(const Options& opt, engine::Memory* m, Live* live) {
  Corpus corpus(11);
  static const char* kSpeakers[] = {"Alice", "Bob", "Chen", "Dana", "Eli"};
  auto next = std::chrono::steady_clock::now();
  size_t n = 0;
  double carry = 0;
  while (!live->stop.load()) {
    carry += static_cast<double>(opt.rate) / 100.0;
    for (; carry >= 1; carry -= 1) {
      size_t c = corpus.rng()() % live->chans.size();
      storage::Message msg;
      msg.message_id = absl::StrCat("m", n++);
      msg.speaker = kSpeakers[corpus.rng()() % 5];
      msg.text = corpus.Sentence(6, 20);
      msg.timestamp_ms = NowMs();
      msg.session = "live";
      auto r = m->Ingest(live->chans[c], {}, {msg});
      if (!r.ok()) {
        std::fprintf(stderr, "ingest: %s\n", r.status().ToString().c_str());
        std::exit(1);
      }
      std::lock_guard<std::mutex> lock(live->mu);
      live->last[c] = Last{r->first_seq, msg.message_id, msg.text, msg.timestamp_ms};
      live->sent.fetch_add(1);
    }
    next += std::chrono::milliseconds(10);
    std::this_thread::sleep_until(next);
  }
}

// The question: three words of the message, as a user would recall it.
std::string RecallQuestion(const std::string& text, Corpus* qc) {
  std::vector<std::string> words;
  for (size_t p = 0, q; p < text.size(); p = q + 1) {
    q = text.find(' ', p);
    if (q == std::string::npos) q = text.size();
    words.push_back(text.substr(p, q - p));
  }
  std::string question = "What was said about";
  for (size_t i = 0; i < 3 && i < words.size(); ++i)
    question += " " + words[qc->rng()() % words.size()];
  return question + "?";
}

// What one query shows of the channel's lag and of the target message.
Sample Measure(const engine::QueryResult& r, const Last& target) {
  const retrieval::Freshness& f = r.pipeline.freshness;
  Sample s;
  s.lag_messages = static_cast<double>(f.lag_messages);
  s.lag_s = f.lag_ms / 1000.0;
  // The channel's newest message may be newer than the target; its time
  // is at most now, so this is an upper bound of the oldest's age.
  if (f.lag_messages > 0) s.oldest_age_s = (NowMs() - (target.ts - f.lag_ms)) / 1000.0;
  s.target_unwritten = target.seq > f.derived_through_seq;
  for (const auto& e : r.pipeline.s1) {
    s.target_in_evidence = s.target_in_evidence || e.message.message_id == target.id;
    for (const auto& id : r.cited_ids) {
      s.cites_newer = s.cites_newer || (e.newer_than_memory && e.message.message_id == id);
    }
  }
  return s;
}

void Report(const engine::MemoryOptions& mo, const std::vector<Sample>& samples,
            const std::vector<double>& query_ms, size_t sent, double elapsed) {
  std::vector<double> lag_m, lag_s, age_s;
  size_t unwritten = 0, found = 0, cited = 0;
  for (const auto& s : samples) {
    lag_m.push_back(s.lag_messages);
    lag_s.push_back(s.lag_s);
    age_s.push_back(s.oldest_age_s);
    if (s.target_unwritten) {
      ++unwritten;
      found += s.target_in_evidence;
      cited += s.cites_newer;
    }
  }
  Latency lm = Summarize(lag_m), ls = Summarize(lag_s), la = Summarize(age_s),
          q = Summarize(query_ms);
  std::printf("\n%zu messages ingested (%.0f msg/s), %zu queries (p50 %.2f ms, p99 %.2f ms)\n",
              sent, static_cast<double>(sent) / elapsed, samples.size(), q.p50_ms, q.p99_ms);
  std::printf("%-44s %10s %10s %10s\n", "derivation lag of the queried channel", "p50", "p99",
              "max");
  std::printf("%-44s %10.0f %10.0f %10.0f\n", "  messages not yet derived", lm.p50_ms, lm.p99_ms,
              lm.max_ms);
  std::printf("%-44s %10.1f %10.1f %10.1f\n", "  seconds spanned by the unwritten tail", ls.p50_ms,
              ls.p99_ms, ls.max_ms);
  std::printf("%-44s %10.1f %10.1f %10.1f\n", "  age (s) of the oldest unwritten message",
              la.p50_ms, la.p99_ms, la.max_ms);
  std::printf(
      "bound: a segment starts at window = %zu messages or after idle flush (%.0f s) of "
      "quiet; lag beyond window means the Writer is behind\n",
      mo.writer.window, mo.writer.idle_flush_ms / 1000.0);
  std::printf(
      "queries whose target message was not yet derived: %zu of %zu (%.1f%%): memory "
      "alone would have answered them stale\n",
      unwritten, samples.size(), 100.0 * unwritten / std::max<size_t>(1, samples.size()));
  std::printf(
      "  of those, target in the evidence: %.1f%%; answer cites a newer-than-memory "
      "message: %.1f%%\n",
      100.0 * found / std::max<size_t>(1, unwritten),
      100.0 * cited / std::max<size_t>(1, unwritten));
}

int Run(const Options& opt) {
  SetLogLevel(LogLevel::kWarn);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "speakermem-freshness-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return 1;
  const std::string dir = tmpl;
  engine::MemoryOptions mo;
  mo.store.path = dir + "/data";
  auto mem = engine::Memory::Open(mo, Clock::Real());
  if (!mem.ok() || !(*mem)->RebuildIndexes(nullptr).ok() || !(*mem)->StartWriter().ok()) return 1;
  engine::Memory* m = mem->get();
  std::printf(
      "Derivation lag: %zu channels, %zu msg/s in all, %zu s, %zu queries/s, offline "
      "Writer (window %zu, idle flush %d ms), %u hardware threads, %s allocator\n",
      opt.channels, opt.rate, opt.seconds, opt.qps, mo.writer.window, mo.writer.idle_flush_ms,
      std::thread::hardware_concurrency(), AllocatorName());
  Live live;
  for (size_t c = 0; c < opt.channels; ++c) {
    live.chans.push_back({storage::kDefaultTenant, absl::StrCat("live", c)});
  }
  live.last.resize(opt.channels);
  std::thread ingest([&] { SteadyIngest(opt, m, &live); });

  // Queries about the latest message of a random channel.
  std::vector<Sample> samples;
  std::vector<double> query_ms;
  auto start = std::chrono::steady_clock::now();
  Corpus qc(13);
  auto next = std::chrono::steady_clock::now() + std::chrono::seconds(2);  // some traffic first
  while (SecondsSince(start) < static_cast<double>(opt.seconds)) {
    std::this_thread::sleep_until(next);
    next += std::chrono::microseconds(1000000 / std::max<size_t>(1, opt.qps));
    size_t c = qc.rng()() % live.chans.size();
    Last target;
    {
      std::lock_guard<std::mutex> lock(live.mu);
      target = live.last[c];
    }
    if (target.seq == 0) continue;
    engine::QueryParams p;
    p.channel = live.chans[c];
    p.question = RecallQuestion(target.text, &qc);
    auto t = std::chrono::steady_clock::now();
    auto r = m->Query(p, /*answer=*/true);
    query_ms.push_back(SecondsSince(t) * 1000);
    if (!r.ok()) {
      std::fprintf(stderr, "query: %s\n", r.status().ToString().c_str());
      live.stop.store(true);
      ingest.join();
      return 1;
    }
    samples.push_back(Measure(*r, target));
  }
  live.stop.store(true);
  ingest.join();
  Report(mo, samples, query_ms, live.sent.load(), SecondsSince(start));
  mem->reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace speakermem::bench

int main(int argc, char** argv) {
  speakermem::bench::Options opt;
  speakermem::bench::ParseFlags(argc, argv,
                                {{"--channels", &opt.channels},
                                 {"--rate", &opt.rate},
                                 {"--seconds", &opt.seconds},
                                 {"--qps", &opt.qps}});
  return speakermem::bench::Run(opt);
}

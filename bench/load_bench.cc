// Load test: 64 concurrent clients against a real speakermemd (in process,
// loopback gRPC, offline provider) mixing Ingest, Query and Retrieve for
// --seconds, with the Writer and the embedder working underneath. Reports
// throughput, latency per RPC kind and every non-OK status by code; the
// server must still answer its health check at the end. A second phase
// runs with tight limits (max_concurrent_queries, tenant rate) to show
// overload turns into RESOURCE_EXHAUSTED, not a crash or a queue.
//
//   build/bench/load_bench [--clients N] [--seconds S]
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "client/client.h"
#include "common/allocator.h"
#include "common/log.h"
#include "server/server.h"

namespace speakermem::bench {
namespace {

struct Options {
  size_t clients = 64;
  size_t seconds = 20;
};

struct Phase {
  std::map<std::string, std::vector<double>> latency_ms;  // by RPC kind
  std::map<std::string, uint64_t> codes;                  // "<kind> <code>"
  uint64_t messages = 0;
  double seconds = 0;
};

Phase Run(const std::string& addr, const Options& opt, int phase) {
  Phase out;
  std::mutex mu;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  auto start = std::chrono::steady_clock::now();
  for (size_t t = 0; t < opt.clients; ++t) {
    threads.emplace_back([&, t] {
      client::ClientOptions o;
      o.addr = addr;
      o.timeout_ms = 30000;
      auto c = client::Client::Connect(o);
      Corpus corpus(1000 + t + 97 * phase);
      std::map<std::string, std::vector<double>> lat;
      std::map<std::string, uint64_t> codes;
      uint64_t msgs = 0;
      const std::string channel = absl::StrCat("load", t % 16);
      for (uint64_t i = 0; !stop.load(); ++i) {
        const int roll = static_cast<int>(corpus.rng()() % 10);
        auto t0 = std::chrono::steady_clock::now();
        std::string kind;
        absl::Status s;
        if (roll < 6) {
          kind = "Ingest";
          v1::IngestRequest req;
          req.set_channel(channel);
          for (int k = 0; k < 10; ++k) {
            auto* m = req.add_messages();
            m->set_message_id(absl::StrCat("p", phase, "-c", t, "-", i, "-", k));
            m->set_speaker(k % 3 == 0 ? "Alice" : k % 3 == 1 ? "Bob" : "Carol");
            m->set_text(corpus.Sentence(6, 24));
            m->set_timestamp_ms(1700000000000 + static_cast<int64_t>(i) * 1000 + k);
            m->set_session("s1");
          }
          auto r = c->Ingest(req);
          s = r.status();
          if (r.ok()) msgs += r->stored();
        } else {
          kind = roll < 9 ? "Retrieve" : "Query";
          v1::QueryRequest q;
          q.set_channel(channel);
          q.set_question(absl::StrCat("What did Bob say about ", corpus.Word(), "?"));
          auto r = kind == "Query" ? c->Query(q) : c->Retrieve(q);
          s = r.status();
          if (absl::IsNotFound(s)) s = absl::OkStatus();  // channel not created yet
        }
        lat[kind].push_back(SecondsSince(t0) * 1000);
        if (!s.ok()) ++codes[absl::StrCat(kind, " ", absl::StatusCodeToString(s.code()))];
      }
      std::lock_guard<std::mutex> lock(mu);
      for (auto& [k, v] : lat)
        out.latency_ms[k].insert(out.latency_ms[k].end(), v.begin(), v.end());
      for (auto& [k, n] : codes) out.codes[k] += n;
      out.messages += msgs;
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(opt.seconds));
  stop = true;
  for (auto& th : threads) th.join();
  out.seconds = SecondsSince(start);
  return out;
}

void Report(const char* title, const Phase& p) {
  std::printf("\n%s (%.1f s)\n", title, p.seconds);
  uint64_t calls = 0;
  for (const auto& [k, v] : p.latency_ms) calls += v.size();
  std::printf("  %llu RPCs (%.0f/s), %llu messages stored (%.0f msg/s)\n",
              static_cast<unsigned long long>(calls), calls / p.seconds,
              static_cast<unsigned long long>(p.messages), p.messages / p.seconds);
  std::printf("  %-10s %10s %10s %10s %10s\n", "rpc", "calls", "p50 ms", "p99 ms", "max ms");
  for (const auto& [k, v] : p.latency_ms) {
    Latency l = Summarize(v);
    std::printf("  %-10s %10zu %10.2f %10.2f %10.2f\n", k.c_str(), v.size(), l.p50_ms, l.p99_ms,
                l.max_ms);
  }
  if (p.codes.empty()) std::printf("  every RPC OK\n");
  for (const auto& [k, n] : p.codes) {
    std::printf("  %-40s %llu\n", k.c_str(), static_cast<unsigned long long>(n));
  }
}

int Main(const Options& opt) {
  SetLogLevel(LogLevel::kError);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("load test: %zu clients, %zu s per phase, %u hardware threads, %s allocator\n",
              opt.clients, opt.seconds, std::thread::hardware_concurrency(), AllocatorName());
  for (int phase = 0; phase < 2; ++phase) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "speakermem-load-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return 1;
    server::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.metrics_listen = "";
    config.memory.store.path = tmpl + "/data";
    if (phase == 1) {
      config.tenant_limits.max_concurrent_queries = 4;
      config.tenant_limits.messages_per_second = 2000;
      config.tenant_limits.burst_messages = 2000;
    }
    auto s = server::Server::Start(config);
    if (!s.ok() || !(*s)->WaitUntilReady(std::chrono::seconds(30))) {
      std::fprintf(stderr, "server did not start\n");
      return 1;
    }
    const std::string addr = absl::StrCat("127.0.0.1:", (*s)->port());
    Phase p = Run(addr, opt, phase);
    Report(phase == 0 ? "phase 1: default limits"
                      : "phase 2: max_concurrent_queries 4, 2,000 msg/s per tenant",
           p);
    client::ClientOptions o;
    o.addr = addr;
    absl::Status health = client::Client::Connect(o)->WaitForServing(5000);
    std::printf("  health after the run: %s\n",
                health.ok() ? "SERVING" : health.ToString().c_str());
    (*s)->Shutdown(std::chrono::milliseconds(2000));
    s->reset();
    std::filesystem::remove_all(tmpl);
    if (!health.ok()) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace speakermem::bench

int main(int argc, char** argv) {
  speakermem::bench::Options opt;
  speakermem::bench::ParseFlags(argc, argv,
                                {{"--clients", &opt.clients}, {"--seconds", &opt.seconds}});
  return speakermem::bench::Main(opt);
}

// Scale-out: aggregate ingest throughput and query latency with 1 shard
// direct, 1 shard behind nginx (the proxy's own cost) and 3 shards behind
// nginx (channel-hash routing), on this machine, as ratios. Shards are real
// speakermemd processes; nginx is the Debian binary.
//
//   build/bench/scaleout_bench [--clients N] [--seconds S] [--channels C]
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "client/client.h"
#include "common/allocator.h"
#include "common/net.h"

namespace speakermem::bench {
namespace {

struct Options {
  size_t clients = 16;
  size_t seconds = 10;
  size_t channels = 96;
};

int FreePort() { return FreeLoopbackPort(); }

pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    std::freopen(log.c_str(), "w", stderr);
    std::freopen("/dev/null", "w", stdout);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

struct Cluster {
  std::vector<pid_t> pids;
  std::vector<int> shard_ports;
  int proxy_port = 0;
  std::string dir;

  Cluster(size_t shards, bool proxy) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "speakermem-scale-XXXXXX").string();
    dir = mkdtemp(tmpl.data());
    for (size_t i = 0; i < shards; ++i) {
      int port = FreePort();
      shard_ports.push_back(port);
      std::string d = absl::StrCat(dir, "/s", i);
      pids.push_back(
          Spawn({SPEAKERMEMD_PATH, "--data-dir", d, "--listen", absl::StrCat("127.0.0.1:", port),
                 "--metrics-listen", "", "--log-level", "error"},
                d + ".log"));
    }
    for (int p : shard_ports) {
      client::ClientOptions o;
      o.addr = absl::StrCat("127.0.0.1:", p);
      if (!client::Client::Connect(o)->WaitForServing(30000).ok()) std::exit(1);
    }
    if (proxy) {
      proxy_port = FreePort();
      std::filesystem::create_directories(dir + "/nginx");
      std::ofstream conf(dir + "/nginx/nginx.conf");
      conf << "worker_processes 1;\ndaemon off;\npid " << dir << "/nginx/pid;\nerror_log " << dir
           << "/nginx/error.log error;\nevents { worker_connections 4096; }\nhttp {\n access_log "
              "off;\n"
           << " client_body_temp_path " << dir << "/nginx;\n proxy_temp_path " << dir << "/nginx;\n"
           << " fastcgi_temp_path " << dir << "/nginx;\n uwsgi_temp_path " << dir << "/nginx;\n"
           << " scgi_temp_path " << dir << "/nginx;\n"
           << " upstream s {\n  hash $http_x_speakermem_channel consistent;\n  keepalive 64;\n";
      for (int p : shard_ports) conf << "  server 127.0.0.1:" << p << " weight=10 max_fails=0;\n";
      conf << " }\n server {\n  listen 127.0.0.1:" << proxy_port
           << " http2;\n  location / { grpc_pass grpc://s; grpc_next_upstream off; }\n }\n}\n";
      conf.close();
      pids.push_back(Spawn({"/usr/sbin/nginx", "-c", dir + "/nginx/nginx.conf", "-p",
                            dir + "/nginx", "-e", dir + "/nginx/error.log"},
                           dir + "/nginx/stderr.log"));
      client::ClientOptions o;
      o.addr = addr();
      for (int i = 0; i < 200; ++i) {
        v1::ListChannelsRequest r;
        if (client::Client::Connect(o)->ListChannels(r).ok()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
    }
  }
  std::string addr() const {
    return absl::StrCat("127.0.0.1:", proxy_port != 0 ? proxy_port : shard_ports.front());
  }
  ~Cluster() {
    for (pid_t p : pids) kill(p, SIGTERM);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
    std::filesystem::remove_all(dir);
  }
};

struct Result {
  double msgs_per_s = 0;
  Latency ingest, query;
};

Result Drive(const std::string& addr, const Options& opt) {
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<double> ingest_ms, query_ms;
  uint64_t msgs = 0;
  std::vector<std::thread> threads;
  auto start = std::chrono::steady_clock::now();
  for (size_t t = 0; t < opt.clients; ++t) {
    threads.emplace_back([&, t] {
      client::ClientOptions o;
      o.addr = addr;
      auto c = client::Client::Connect(o);
      Corpus corpus(t + 1);
      std::vector<double> im, qm;
      uint64_t n = 0;
      for (uint64_t i = 0; !stop.load(); ++i) {
        std::string ch = absl::StrCat("chan", (t + i * opt.clients) % opt.channels);
        auto t0 = std::chrono::steady_clock::now();
        if (i % 4 != 3) {
          v1::IngestRequest req;
          req.set_channel(ch);
          for (int k = 0; k < 20; ++k) {
            auto* m = req.add_messages();
            m->set_speaker(k % 2 ? "Alice" : "Bob");
            m->set_text(corpus.Sentence(6, 20));
            m->set_timestamp_ms(1700000000000 + static_cast<int64_t>(i) * 100 + k);
          }
          auto r = c->Ingest(req);
          if (r.ok()) n += r->stored();
          im.push_back(SecondsSince(t0) * 1000);
        } else {
          v1::QueryRequest q;
          q.set_channel(ch);
          q.set_question(absl::StrCat("what about ", corpus.Word()));
          (void)c->Retrieve(q);
          qm.push_back(SecondsSince(t0) * 1000);
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      ingest_ms.insert(ingest_ms.end(), im.begin(), im.end());
      query_ms.insert(query_ms.end(), qm.begin(), qm.end());
      msgs += n;
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(opt.seconds));
  stop = true;
  for (auto& th : threads) th.join();
  Result r;
  r.msgs_per_s = static_cast<double>(msgs) / SecondsSince(start);
  r.ingest = Summarize(ingest_ms);
  r.query = Summarize(query_ms);
  return r;
}

int Main(const Options& opt) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!std::filesystem::exists("/usr/sbin/nginx")) {
    std::fprintf(stderr,
                 "scaleout_bench needs nginx (deploy/install-deps.sh installs nginx-light)\n");
    return 2;
  }
  std::printf(
      "scale-out: %zu clients, %zu channels, %zu s per setup, %u hardware threads, %s allocator\n",
      opt.clients, opt.channels, opt.seconds, std::thread::hardware_concurrency(), AllocatorName());
  std::printf("%-24s %12s %14s %14s %14s\n", "setup", "msg/s", "ingest p99 ms", "query p50 ms",
              "query p99 ms");
  Result base, proxied, three;
  {
    Cluster c(1, false);
    base = Drive(c.addr(), opt);
  }
  {
    Cluster c(1, true);
    proxied = Drive(c.addr(), opt);
  }
  {
    Cluster c(3, true);
    three = Drive(c.addr(), opt);
  }
  auto row = [](const char* name, const Result& r) {
    std::printf("%-24s %12.0f %14.2f %14.2f %14.2f\n", name, r.msgs_per_s, r.ingest.p99_ms,
                r.query.p50_ms, r.query.p99_ms);
  };
  row("1 shard, direct", base);
  row("1 shard behind nginx", proxied);
  row("3 shards behind nginx", three);
  std::printf("\nproxy overhead: throughput x%.2f, query p50 +%.2f ms, p99 x%.2f\n",
              proxied.msgs_per_s / base.msgs_per_s, proxied.query.p50_ms - base.query.p50_ms,
              proxied.query.p99_ms / base.query.p99_ms);
  std::printf("3 shards vs 1 (both behind nginx): throughput x%.2f, query p99 x%.2f\n",
              three.msgs_per_s / proxied.msgs_per_s, three.query.p99_ms / proxied.query.p99_ms);
  return 0;
}

}  // namespace
}  // namespace speakermem::bench

int main(int argc, char** argv) {
  speakermem::bench::Options opt;
  speakermem::bench::ParseFlags(
      argc, argv,
      {{"--clients", &opt.clients}, {"--seconds", &opt.seconds}, {"--channels", &opt.channels}});
  return speakermem::bench::Main(opt);
}

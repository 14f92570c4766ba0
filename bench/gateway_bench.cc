// Model gateway overhead: chat calls per second and latency through
// llm::ModelClient against the fake OpenAI-compatible server with zero delay,
// with 1 and 16 concurrent callers. The peer measured in the same run is a
// bare libcurl loop posting the same request over a reused handle (no JSON
// building or parsing, no retry logic, no concurrency limit): the ratio is
// what the gateway's own work costs. (Only this benchmark and llm/ include
// curl; the baseline is a measurement, not product code.)
//
//   build/bench/gateway_bench [--calls N]
#include <curl/curl.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "bench/bench_util.h"
#include "llm/model_client.h"
#include "tests/fake/fake_model_server.h"

namespace speakermem::bench {
namespace {

struct Result {
  double calls_per_s = 0;
  Latency latency;
};

template <typename Fn>
Result Run(int threads, int calls_per_thread, Fn&& call) {
  std::vector<std::vector<double>> lat(threads);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      auto state = call.Setup();
      for (int i = 0; i < calls_per_thread; ++i) {
        auto s = std::chrono::steady_clock::now();
        if (!call.Once(state)) std::exit(1);
        lat[t].push_back(SecondsSince(s) * 1000);
      }
      call.Teardown(state);
    });
  }
  for (auto& th : ts) th.join();
  double secs = SecondsSince(start);
  std::vector<double> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  return Result{static_cast<double>(all.size()) / secs, Summarize(all)};
}

struct GatewayCall {
  llm::ModelClient* client;
  int Setup() { return 0; }
  bool Once(int&) {
    auto r = client->Chat(llm::ChatRequest{"answer", "You answer questions.",
                                           "Question: where is the offsite?", true});
    return r.ok();
  }
  void Teardown(int&) {}
};

size_t Sink(char*, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->clear();
  return size * n;
}

struct CurlCall {
  std::string url;
  std::string body;
  CURL* Setup() {
    CURL* h = curl_easy_init();
    return h;
  }
  bool Once(CURL*& h) {
    std::string out;
    struct curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    headers = curl_slist_append(headers, "X-SpeakerMem-Stage: answer");
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, Sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    return rc == CURLE_OK && status == 200;
  }
  void Teardown(CURL*& h) { curl_easy_cleanup(h); }
};

int Main(int calls) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  testing::FakeModelServer fake;
  const std::string content = "{\"answer\": \"Porto\", \"abstain\": false, \"cited\": [\"m1\"]}";
  fake.SetDefault([&](const testing::FakeRequest&) {
    return testing::FakeReply{200, testing::FakeModelServer::ChatBody(content)};
  });
  llm::EndpointConfig c;
  c.provider = "openai";
  c.base_url = fake.base_url();
  c.model = "fake";
  c.max_concurrency = 64;
  auto client = llm::NewOpenAiClient(c, nullptr);
  if (!client.ok()) return 1;

  std::printf(
      "Model gateway overhead against a local fake endpoint (zero delay), %d calls "
      "per caller\n\n",
      calls);
  std::printf("%-8s %-22s %12s %10s %10s\n", "callers", "path", "calls/s", "p50 ms", "p99 ms");
  for (int threads : {1, 16}) {
    int per = threads == 1 ? calls : std::max(1, calls / 4);
    GatewayCall g{client->get()};
    CurlCall raw{c.base_url + "/chat/completions",
                 "{\"model\":\"fake\",\"messages\":[{\"role\":\"system\",\"content\":\"You answer "
                 "questions.\"},{\"role\":\"user\",\"content\":\"Question: where is the "
                 "offsite?\"}]}"};
    Result rg = Run(threads, per, g);
    Result rr = Run(threads, per, raw);
    std::printf("%-8d %-22s %12.0f %10.3f %10.3f\n", threads, "llm::ModelClient", rg.calls_per_s,
                rg.latency.p50_ms, rg.latency.p99_ms);
    std::printf("%-8d %-22s %12.0f %10.3f %10.3f\n", threads, "bare libcurl", rr.calls_per_s,
                rr.latency.p50_ms, rr.latency.p99_ms);
    std::printf("%-8d %-22s %12.2f %10.3f %10.3f\n\n", threads, "gateway/bare (ratio, +ms)",
                rg.calls_per_s / rr.calls_per_s, rg.latency.p50_ms - rr.latency.p50_ms,
                rg.latency.p99_ms - rr.latency.p99_ms);
  }
  return 0;
}

}  // namespace
}  // namespace speakermem::bench

int main(int argc, char** argv) {
  int calls = 4000;
  speakermem::bench::ParseFlags(argc, argv, {{"--calls", &calls}});
  return speakermem::bench::Main(calls);
}

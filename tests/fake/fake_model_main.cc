// The fake OpenAI-compatible server as a program, for measuring the
// model-backed path without a model: the clean replies of
// tests/fake/standard_reply.h, with a `usage` sized from the request (about
// 4 characters a token), so token figures follow prompt size.
//
//   build/tests/fake/fake_model_server [--port-file FILE]
//
// Prints its base URL on stdout and serves until SIGTERM or SIGINT.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "tests/fake/fake_model_server.h"
#include "tests/fake/standard_reply.h"

namespace {

volatile std::sig_atomic_t stop = 0;

void OnSignal(int) { stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  std::string port_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--port-file") port_file = argv[i + 1];
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  speakermem::testing::FakeModelServer fake;
  fake.SetDefault(speakermem::testing::StandardReply);
  std::printf("%s\n", fake.base_url().c_str());
  std::fflush(stdout);
  if (!port_file.empty()) std::ofstream(port_file) << fake.port() << "\n";
  while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return 0;
}

// speakermemd: the SpeakerMem service.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/auth.h"
#include "server/config.h"
#include "server/server.h"

extern char** environ;

namespace {

bool WritePortFile(const std::string& path, int grpc_port, int metrics_port) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << grpc_port << " " << metrics_port << "\n";
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace speakermem;
  // Block the shutdown signals in every thread; the main thread takes them
  // with sigwait, so handlers never run on gRPC or RocksDB threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // --hash-key KEY (or - to read it from standard input): the keys file's
  // first field for KEY.
  if (argc >= 2 && std::strcmp(argv[1], "--hash-key") == 0) {
    std::string key = argc >= 3 ? argv[2] : "-";
    if (key == "-") {
      std::getline(std::cin, key);
    }
    if (key.empty()) {
      std::fprintf(stderr, "speakermemd: --hash-key needs a non-empty key\n");
      return 2;
    }
    std::printf("%s\n", server::HashApiKey(key).c_str());
    return 0;
  }
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  server::ServerConfig config;
  std::string help;
  absl::Status s = server::LoadConfig(argc, argv, env, &config, &help);
  if (!s.ok()) {
    std::fprintf(stderr, "speakermemd: %s\n%s", std::string(s.message()).c_str(),
                 server::UsageText().c_str());
    return 2;
  }
  if (help == "usage") {
    std::fputs(server::UsageText().c_str(), stdout);
    return 0;
  }
  if (help == "config") {
    std::fputs(server::ConfigHelp().c_str(), stdout);
    return 0;
  }
  LogLevel level = LogLevel::kInfo;
  ParseLogLevel(config.log_level, &level);
  SetLogLevel(level);

  absl::StatusOr<std::unique_ptr<server::Server>> srv = server::Server::Start(config);
  if (!srv.ok()) {
    LOG_ERROR("start failed").Str("error", srv.status().ToString());
    return 1;
  }
  if (!config.port_file.empty() &&
      !WritePortFile(config.port_file, (*srv)->port(), (*srv)->metrics_port())) {
    LOG_ERROR("cannot write port file").Str("path", config.port_file);
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  LOG_INFO("shutting down").Str("signal", strsignal(sig)).Int("grace_ms", config.shutdown_grace_ms);
  (*srv)->Shutdown(std::chrono::milliseconds(config.shutdown_grace_ms));
  return 0;
}

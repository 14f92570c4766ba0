// speakermemd configuration: embedded defaults, then a config file, then
// environment variables SPEAKERMEM_<SECTION>_<KEY>, then command-line flags,
// each overriding the one before. Every knob is listed, with its default and
// effect, by `speakermemd --help-config` (docs/configuration.md is that
// output).
#ifndef SPEAKERMEM_SERVER_CONFIG_H_
#define SPEAKERMEM_SERVER_CONFIG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/memory.h"
#include "llm/config.h"
#include "server/limits.h"

namespace speakermem::server {

struct ServerConfig {
  // gRPC listen address; port 0 picks a free port.
  std::string listen = "127.0.0.1:50151";
  // Prometheus /metrics listen address; empty disables the endpoint.
  std::string metrics_listen = "127.0.0.1:9464";
  // Written after start with "<grpc port> <metrics port>\n"; empty: none.
  std::string port_file;
  // Largest gRPC message accepted, bytes.
  int max_message_bytes = 16 << 20;
  // On SIGTERM/SIGINT, in-flight RPCs get this long to finish.
  int shutdown_grace_ms = 10000;
  std::string log_level = "info";
  // API keys (server/auth.h): every RPC needs one when on.
  bool auth_enabled = false;
  std::string auth_keys_file;
  // TLS for gRPC and the metrics port when both are set (PEM files); with
  // a client CA, clients must present a certificate it signed.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  engine::MemoryOptions memory;
  TenantLimits tenant_limits;
  // Model endpoints: the default entry (section [model]) and per-stage
  // overrides ([model.writer], [model.answer], ...).
  llm::ModelsConfig models;

  ServerConfig() { memory.store.path = "./speakermem-data"; }
};

// One configuration knob.
struct Knob {
  std::string section;
  std::string key;
  std::string help;
  std::function<std::string(const ServerConfig&)> get;
  // INVALID_ARGUMENT naming the knob when the value does not parse.
  std::function<absl::Status(ServerConfig*, const std::string&)> set;
};

// All knobs, in documentation order.
const std::vector<Knob>& Knobs();

// Applies "section.key" = value. INVALID_ARGUMENT for an unknown key or a bad
// value.
absl::Status SetKnob(ServerConfig* config, const std::string& dotted_key, const std::string& value);

// Parses a config file: `[section]` headers and `key = value` lines; values
// may be quoted ("..."); `#` starts a comment. INVALID_ARGUMENT with the line
// number on any error; NOT_FOUND when the file does not exist.
absl::Status ApplyConfigFile(ServerConfig* config, const std::string& path);

// Applies SPEAKERMEM_<SECTION>_<KEY> variables from `environ`-style entries
// ("NAME=value").
absl::Status ApplyEnvironment(ServerConfig* config, const std::vector<std::string>& env);

// Parses argv. Recognised: --config FILE, --set section.key=value,
// --section.key=value, shortcuts --listen, --metrics-listen, --data-dir,
// --port-file, --sync, --log-level. Sets *help to "usage" or "config" when
// --help / --help-config was given. The config file named by --config is
// applied before the environment, flags after it.
absl::Status LoadConfig(int argc, char** argv, const std::vector<std::string>& env,
                        ServerConfig* config, std::string* help);

// Markdown table of every knob with its default value.
std::string ConfigHelp();
// Usage text of speakermemd.
std::string UsageText();

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_CONFIG_H_

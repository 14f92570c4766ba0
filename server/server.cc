#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/codegen/service_type.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/allocator.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "engine/memory.h"
#include "llm/metrics.h"
#include "metrics/prometheus_registry.h"
#include "server/auth.h"
#include "server/limits.h"
#include "server/metrics.h"
#include "server/metrics_http.h"
#include "server/reflection_v1.h"
#include "server/service.h"

namespace speakermem::server {
namespace {

constexpr char kServiceName[] = "speakermem.v1.SpeakerMem";

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* knob) {
  std::ifstream in(path);
  if (path.empty() || !in) {
    return absl::InvalidArgumentError(absl::StrCat(knob, ": cannot read '", path, "'"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ServerImpl final : public Server {
 public:
  explicit ServerImpl(const ServerConfig& config) : config_(config) {}

  ~ServerImpl() override { Shutdown(std::chrono::milliseconds(0)); }

  absl::Status Init();
  // Init's steps: the metrics endpoint, the credentials the gRPC port
  // serves with, the tenants' limits wired to the Writer, the gRPC server.
  absl::Status StartMetrics();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials() const;
  absl::Status StartLimits();
  absl::Status StartGrpc(const std::shared_ptr<grpc::ServerCredentials>& creds);

  int port() const override { return port_; }
  int metrics_port() const override { return metrics_port_; }
  engine::Memory* memory() override { return memory_.get(); }
  bool ready() const override { return ready_.load(); }

  bool WaitUntilReady(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return ready_.load() || rebuild_failed_; });
    return ready_.load();
  }

  void Shutdown(std::chrono::milliseconds grace) override;

 private:
  void Rebuild();

  const ServerConfig config_;
  std::unique_ptr<metrics::Registry> registry_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<llm::LlmMetrics> llm_metrics_;
  std::unique_ptr<engine::Memory> memory_;  // uses the metrics above
  std::unique_ptr<MetricsHttpServer> metrics_http_;
  std::unique_ptr<KeyStore> keys_;
  std::unique_ptr<Limiter> limiter_;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Service> reflection_v1_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::thread rebuild_thread_;
  int port_ = 0;
  int metrics_port_ = 0;
  std::atomic<bool> ready_{false};

  std::mutex mu_;
  std::condition_variable cv_;
  bool rebuild_failed_ = false;  // guarded by mu_
  bool shut_down_ = false;       // guarded by mu_
};

absl::Status ServerImpl::Init() {
  registry_ = metrics::NewPrometheusRegistry();
  metrics_ = std::make_unique<ServerMetrics>(registry_.get());
  llm_metrics_ = std::make_unique<llm::LlmMetrics>(registry_.get());
  engine::MemoryOptions memory_options = config_.memory;
  memory_options.models = config_.models;
  SM_ASSIGN_OR_RETURN(memory_, engine::Memory::Open(memory_options, Clock::Real(),
                                                    llm_metrics_.get(), registry_.get()));
  metrics_->SetReady(false);
  SM_RETURN_IF_ERROR(StartMetrics());
  if (config_.auth_enabled) {
    if (config_.auth_keys_file.empty()) {
      return absl::InvalidArgumentError("auth.enabled needs auth.keys_file");
    }
    SM_ASSIGN_OR_RETURN(keys_, KeyStore::Open(config_.auth_keys_file));
  } else {
    LOG_WARN("authentication is off: every caller is tenant 'default' (auth.enabled)");
  }
  SM_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds, Credentials());
  SM_RETURN_IF_ERROR(StartLimits());
  SM_RETURN_IF_ERROR(StartGrpc(creds));
  LOG_INFO("listening")
      .Str("grpc", config_.listen)
      .Int("grpc_port", port_)
      .Int("metrics_port", metrics_port_)
      .Str("data_dir", config_.memory.store.path)
      .Str("allocator", AllocatorName());
  rebuild_thread_ = std::thread([this] { Rebuild(); });
  return absl::OkStatus();
}

absl::Status ServerImpl::StartMetrics() {
  if (config_.metrics_listen.empty()) return absl::OkStatus();
  registry_->GaugeAtScrape(
      "speakermem_store_size_bytes",
      "Approximate bytes of the store: SST files, memtables and WAL.",
      [m = memory_.get()] { return static_cast<double>(m->ApproximateSizeBytes()); });
  SM_ASSIGN_OR_RETURN(metrics_http_,
                      MetricsHttpServer::Start(
                          config_.metrics_listen, [this] { return registry_->Exposition(); },
                          config_.tls_cert_file, config_.tls_key_file));
  metrics_port_ = metrics_http_->port();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerImpl::Credentials() const {
  if (config_.tls_cert_file.empty() && config_.tls_key_file.empty()) {
    return grpc::InsecureServerCredentials();
  }
  SM_ASSIGN_OR_RETURN(std::string cert, ReadFile(config_.tls_cert_file, "tls.cert_file"));
  SM_ASSIGN_OR_RETURN(std::string key, ReadFile(config_.tls_key_file, "tls.key_file"));
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({key, cert});
  if (!config_.tls_client_ca_file.empty()) {
    SM_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                        ReadFile(config_.tls_client_ca_file, "tls.client_ca_file"));
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

absl::Status ServerImpl::StartLimits() {
  limiter_ = std::make_unique<Limiter>(config_.tenant_limits, Clock::Real());
  Limiter* limiter = limiter_.get();
  memory_->SetWriterUsageListener([limiter](const storage::ChannelRef& ch, uint64_t tokens) {
    limiter->AddTokens(ch.tenant, tokens);
  });
  // A tenant over its daily token budget gets no Writer model calls either;
  // its segments wait (pending, not lost) for the next UTC day.
  memory_->SetWriterAdmission(
      [limiter](const storage::ChannelRef& ch) { return limiter->CheckTokens(ch.tenant).ok(); });
  SM_ASSIGN_OR_RETURN(auto stored, memory_->StoredMessagesByTenant());
  for (const auto& [tenant, n] : stored) limiter_->SetStored(tenant, n);
  return absl::OkStatus();
}

absl::Status ServerImpl::StartGrpc(const std::shared_ptr<grpc::ServerCredentials>& creds) {
  service_ =
      NewSpeakerMemService(memory_.get(), metrics_.get(), &ready_, keys_.get(), limiter_.get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config_.listen, creds, &port_);
  builder.RegisterService(service_.get());
  // Reflection v1 beside the plugin's v1alpha (tools ask for v1 first).
  reflection_v1_ = NewReflectionV1Service({kServiceName, "grpc.health.v1.Health",
                                           "grpc.reflection.v1alpha.ServerReflection",
                                           "grpc.reflection.v1.ServerReflection"});
  builder.RegisterService(reflection_v1_.get());
  builder.SetMaxReceiveMessageSize(config_.max_message_bytes);
  builder.SetMaxSendMessageSize(config_.max_message_bytes);
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_ || port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config_.listen));
  }
  auto* health = grpc_server_->GetHealthCheckService();
  health->SetServingStatus(false);
  health->SetServingStatus(kServiceName, false);
  return absl::OkStatus();
}

void ServerImpl::Rebuild() {
  auto start = std::chrono::steady_clock::now();
  uint64_t loaded = 0;
  absl::Status s = memory_->RebuildIndexes([&](uint64_t n) {
    loaded = n;
    LOG_INFO("index rebuild progress").Int("messages", static_cast<int64_t>(n));
  });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard<std::mutex> lock(mu_);
  if (!s.ok()) {
    rebuild_failed_ = true;
    LOG_ERROR("index rebuild failed").Str("error", s.message());
  } else if (!shut_down_ && !(s = memory_->StartWriter()).ok()) {
    rebuild_failed_ = true;
    LOG_ERROR("writer start failed").Str("error", s.message());
  } else if (!shut_down_) {
    ready_.store(true);
    metrics_->SetReady(true);
    metrics_->SetIndexRebuild(secs, loaded);
    auto* health = grpc_server_->GetHealthCheckService();
    health->SetServingStatus(true);
    health->SetServingStatus(kServiceName, true);
    LOG_INFO("serving").Num("rebuild_seconds", secs);
  }
  cv_.notify_all();
}

void ServerImpl::Shutdown(std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  if (rebuild_thread_.joinable()) rebuild_thread_.join();
  ready_.store(false);
  if (grpc_server_) {
    auto* health = grpc_server_->GetHealthCheckService();
    health->SetServingStatus(false);
    grpc_server_->Shutdown(std::chrono::system_clock::now() + grace);
    grpc_server_->Wait();
  }
  if (memory_) {
    // Drain: in-flight segments finish; pending ones stay in the store.
    memory_->StopWriter();
    absl::Status s = memory_->FlushStore();
    if (!s.ok()) LOG_WARN("flush at shutdown failed").Str("error", s.message());
  }
  LOG_INFO("shut down");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerConfig& config) {
  auto server = std::make_unique<ServerImpl>(config);
  SM_RETURN_IF_ERROR(server->Init());
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace speakermem::server

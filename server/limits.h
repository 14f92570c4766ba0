// Per-tenant rate limits and quotas, and the server's overload guard. Every
// refusal is RESOURCE_EXHAUSTED with what was exceeded; nothing queues.
#ifndef SPEAKERMEM_SERVER_LIMITS_H_
#define SPEAKERMEM_SERVER_LIMITS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "common/clock.h"

namespace speakermem::server {

struct TenantLimits {
  // Ingested messages per second per tenant (token bucket); 0 = unlimited.
  uint32_t messages_per_second = 0;
  // Bucket size: the burst a tenant may send at once. 0 = one second's worth.
  uint32_t burst_messages = 0;
  // Messages a tenant may hold in all its channels; 0 = unlimited.
  uint64_t max_stored_messages = 0;
  // Model tokens (in + out, all stages) per tenant per UTC day; 0 = unlimited.
  uint64_t tokens_per_day = 0;
  // Query/Retrieve calls running at once, server-wide; more are refused.
  uint32_t max_concurrent_queries = 64;
};

// Thread-safe.
class Limiter {
 public:
  Limiter(TenantLimits limits, Clock* clock) : limits_(limits), clock_(clock) {}

  // Admits `n` new messages of `tenant` (rate and stored quota); on OK the
  // caller stores them and reports the outcome with Stored().
  absl::Status AdmitIngest(const std::string& tenant, uint64_t n);
  // Stored messages changed by `delta` (ingest, deletion, import).
  void Stored(const std::string& tenant, int64_t delta);
  void SetStored(const std::string& tenant, uint64_t count);
  uint64_t stored(const std::string& tenant) const;

  // Model tokens spent for `tenant`; and whether today's budget is left.
  void AddTokens(const std::string& tenant, uint64_t tokens);
  absl::Status CheckTokens(const std::string& tenant) const;

  // A running query; RESOURCE_EXHAUSTED beyond max_concurrent_queries.
  class QuerySlot {
   public:
    explicit QuerySlot(Limiter* l) : l_(l) {}
    QuerySlot(QuerySlot&& o) noexcept : l_(o.l_) { o.l_ = nullptr; }
    QuerySlot(const QuerySlot&) = delete;
    ~QuerySlot();

   private:
    Limiter* l_;
  };
  absl::Status AcquireQuery(std::unique_ptr<QuerySlot>* slot);

  const TenantLimits& limits() const { return limits_; }

 private:
  struct Tenant {
    double tokens = -1;  // bucket level; -1 = full (unused yet)
    int64_t refilled_ms = 0;
    uint64_t stored = 0;
    int64_t day = -1;
    uint64_t model_tokens = 0;
  };
  int64_t Today() const { return clock_->NowMs() / 86400000; }

  const TenantLimits limits_;
  Clock* const clock_;
  mutable std::mutex mu_;
  std::map<std::string, Tenant> tenants_;  // guarded by mu_
  uint32_t queries_ = 0;                   // guarded by mu_
};

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_LIMITS_H_

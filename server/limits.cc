#include "server/limits.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace speakermem::server {

absl::Status Limiter::AdmitIngest(const std::string& tenant, uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  Tenant& t = tenants_[tenant];
  if (limits_.max_stored_messages != 0 && t.stored + n > limits_.max_stored_messages) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "quota: tenant '", tenant, "' may store ", limits_.max_stored_messages,
        " messages and holds ", t.stored, "; delete some or raise limits.tenant_max_messages"));
  }
  if (limits_.messages_per_second > 0) {
    const double rate = limits_.messages_per_second;
    const double burst = limits_.burst_messages > 0 ? limits_.burst_messages : rate;
    const int64_t now = clock_->NowMs();
    if (t.tokens < 0) {
      t.tokens = burst;
    } else {
      t.tokens =
          std::min(burst, t.tokens + rate * static_cast<double>(now - t.refilled_ms) / 1000.0);
    }
    t.refilled_ms = now;
    if (static_cast<double>(n) > t.tokens) {
      const double wait_s = (static_cast<double>(n) - t.tokens) / rate;
      return absl::ResourceExhaustedError(absl::StrFormat(
          "rate limit: tenant '%s' may ingest %.0f messages/s (burst %.0f); retry in %.2f s",
          tenant, rate, burst, wait_s));
    }
    t.tokens -= static_cast<double>(n);
  }
  return absl::OkStatus();
}

void Limiter::Stored(const std::string& tenant, int64_t delta) {
  std::lock_guard<std::mutex> lock(mu_);
  Tenant& t = tenants_[tenant];
  if (delta < 0 && static_cast<uint64_t>(-delta) > t.stored) {
    t.stored = 0;
  } else {
    t.stored = static_cast<uint64_t>(static_cast<int64_t>(t.stored) + delta);
  }
}

void Limiter::SetStored(const std::string& tenant, uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  tenants_[tenant].stored = count;
}

uint64_t Limiter::stored(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.stored;
}

void Limiter::AddTokens(const std::string& tenant, uint64_t tokens) {
  if (tokens == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  Tenant& t = tenants_[tenant];
  const int64_t today = Today();
  if (t.day != today) {
    t.day = today;
    t.model_tokens = 0;
  }
  t.model_tokens += tokens;
}

absl::Status Limiter::CheckTokens(const std::string& tenant) const {
  if (limits_.tokens_per_day == 0) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tenants_.find(tenant);
  if (it == tenants_.end() || it->second.day != Today()) return absl::OkStatus();
  if (it->second.model_tokens >= limits_.tokens_per_day) {
    return absl::ResourceExhaustedError(
        absl::StrCat("quota: tenant '", tenant, "' used its ", limits_.tokens_per_day,
                     " model tokens for today (UTC); retrieval without model stages still works"));
  }
  return absl::OkStatus();
}

Limiter::QuerySlot::~QuerySlot() {
  if (l_ == nullptr) return;
  std::lock_guard<std::mutex> lock(l_->mu_);
  --l_->queries_;
}

absl::Status Limiter::AcquireQuery(std::unique_ptr<QuerySlot>* slot) {
  std::lock_guard<std::mutex> lock(mu_);
  if (limits_.max_concurrent_queries != 0 && queries_ >= limits_.max_concurrent_queries) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "overloaded: ", queries_, " queries are running (limits.max_concurrent_queries); retry"));
  }
  ++queries_;
  *slot = std::make_unique<QuerySlot>(this);
  return absl::OkStatus();
}

}  // namespace speakermem::server

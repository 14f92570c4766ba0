#include "server/limits.h"

#include <catch2/catch.hpp>

#include "common/clock.h"
#include "tests/test_util.h"

namespace speakermem::server {
namespace {

TEST_CASE("the ingest rate is a token bucket per tenant", "[limits]") {
  FakeClock clock;
  TenantLimits l;
  l.messages_per_second = 100;
  l.burst_messages = 200;
  Limiter lim(l, &clock);
  REQUIRE_OK(lim.AdmitIngest("a", 200));  // the burst
  auto refused = lim.AdmitIngest("a", 1);
  REQUIRE_CODE(refused, absl::StatusCode::kResourceExhausted);
  CHECK(std::string(refused.message()).find("retry in") != std::string::npos);
  REQUIRE_OK(lim.AdmitIngest("b", 200));  // another tenant has its own bucket
  clock.AdvanceMs(500);                   // refills 50
  REQUIRE_OK(lim.AdmitIngest("a", 50));
  REQUIRE_CODE(lim.AdmitIngest("a", 1), absl::StatusCode::kResourceExhausted);
  clock.AdvanceMs(60000);  // never above the burst
  REQUIRE_OK(lim.AdmitIngest("a", 200));
  REQUIRE_CODE(lim.AdmitIngest("a", 1), absl::StatusCode::kResourceExhausted);
}

TEST_CASE("the stored-messages quota counts what is kept", "[limits]") {
  FakeClock clock;
  TenantLimits l;
  l.max_stored_messages = 100;
  Limiter lim(l, &clock);
  lim.SetStored("a", 90);
  REQUIRE_OK(lim.AdmitIngest("a", 10));
  lim.Stored("a", 10);
  REQUIRE_CODE(lim.AdmitIngest("a", 1), absl::StatusCode::kResourceExhausted);
  lim.Stored("a", -30);  // deleted
  REQUIRE_OK(lim.AdmitIngest("a", 30));
  CHECK(lim.stored("a") == 70);
  REQUIRE_OK(lim.AdmitIngest("b", 100));
}

TEST_CASE("model tokens per UTC day, and the concurrent-query cap", "[limits]") {
  FakeClock clock(86400000LL * 20000 + 1000);
  TenantLimits l;
  l.tokens_per_day = 1000;
  l.max_concurrent_queries = 2;
  Limiter lim(l, &clock);
  REQUIRE_OK(lim.CheckTokens("a"));
  lim.AddTokens("a", 999);
  REQUIRE_OK(lim.CheckTokens("a"));
  lim.AddTokens("a", 1);
  REQUIRE_CODE(lim.CheckTokens("a"), absl::StatusCode::kResourceExhausted);
  REQUIRE_OK(lim.CheckTokens("b"));
  clock.AdvanceMs(86400000);  // a new day
  REQUIRE_OK(lim.CheckTokens("a"));
  std::unique_ptr<Limiter::QuerySlot> s1, s2, s3;
  REQUIRE_OK(lim.AcquireQuery(&s1));
  REQUIRE_OK(lim.AcquireQuery(&s2));
  REQUIRE_CODE(lim.AcquireQuery(&s3), absl::StatusCode::kResourceExhausted);
  s1.reset();
  REQUIRE_OK(lim.AcquireQuery(&s3));
}

}  // namespace
}  // namespace speakermem::server

// The OpenAI-compatible client over libcurl. The only place curl codes and
// HTTP statuses become absl::Status (Classify).
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/log.h"
#include "llm/metrics.h"
#include "llm/model_client.h"
#include "llm/sse.h"
#include "nlohmann/json.hpp"

namespace speakermem::llm {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct HttpResult {
  CURLcode curl = CURLE_OK;
  long status = 0;
  std::string body;
  int retry_after_ms = -1;  // from Retry-After, when present
};

size_t WriteBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// A streamed reply: a 2xx body goes to the event reader as it arrives (a
// zero return aborts the transfer when the reader's sink says stop); any
// other body is kept whole for the error message.
struct StreamTarget {
  CURL* handle;
  ChatEventStream* events;
  std::string* body;
};

size_t WriteStream(char* data, size_t size, size_t n, void* out) {
  auto* t = static_cast<StreamTarget*>(out);
  long status = 0;
  curl_easy_getinfo(t->handle, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    t->body->append(data, size * n);
    return size * n;
  }
  return t->events->Feed(absl::string_view(data, size * n)) ? size * n : 0;
}

size_t ReadHeader(char* data, size_t size, size_t n, void* out) {
  absl::string_view line(data, size * n);
  constexpr absl::string_view kRetryAfter = "retry-after:";
  if (line.size() > kRetryAfter.size() &&
      absl::AsciiStrToLower(line.substr(0, kRetryAfter.size())) == kRetryAfter) {
    double secs = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(line.substr(kRetryAfter.size())), &secs) &&
        secs >= 0) {
      static_cast<HttpResult*>(out)->retry_after_ms = static_cast<int>(secs * 1000);
    }
  }
  return size * n;
}

// Counting semaphore with a deadline: the per-endpoint concurrency limit.
class Semaphore {
 public:
  explicit Semaphore(int n) : free_(n) {}
  bool Acquire(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_until(lock, deadline, [&] { return free_ > 0; })) return false;
    --free_;
    return true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    ++free_;
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// A refusal of the response_format: a 422 (FastAPI-style servers validate
// the request body), or a 400 whose body names the field.
bool RefusesFormat(const absl::Status& s) {
  if (!absl::IsInvalidArgument(s)) return false;
  const std::string m = absl::AsciiStrToLower(s.message());
  return absl::StrContains(m, "http 422") || absl::StrContains(m, "response_format") ||
         absl::StrContains(m, "json_schema") || absl::StrContains(m, "json_object") ||
         absl::StrContains(m, "schema");
}

// A refusal of `stream` or `stream_options` (400 or 422 naming it).
bool RefusesStream(const absl::Status& s) {
  return absl::IsInvalidArgument(s) &&
         absl::StrContains(absl::AsciiStrToLower(s.message()), "stream");
}

std::string Lower(absl::StatusCode code) {
  return absl::AsciiStrToLower(absl::StatusCodeToString(code));
}

class OpenAiClient final : public ModelClient {
 public:
  OpenAiClient(const EndpointConfig& config, LlmMetrics* metrics, std::string api_key)
      : config_(config),
        metrics_(metrics),
        api_key_(std::move(api_key)),
        slots_(config.max_concurrency),
        format_floor_(config.json_mode ? 0 : 2) {
    GlobalInit();
  }

  ~OpenAiClient() override {
    for (CURL* h : pool_) curl_easy_cleanup(h);
  }

  absl::StatusOr<ChatResponse> Chat(const ChatRequest& req) override;
  absl::StatusOr<EmbedResponse> Embed(const std::string& stage,
                                      const std::vector<std::string>& inputs) override;

 private:
  // POSTs `body` to base_url + path with retries until the deadline.
  // `stream` (may be null) reads a streamed reply; a call that has passed
  // content on is not retried.
  absl::StatusOr<HttpResult> Post(const std::string& stage, const std::string& path,
                                  const std::string& body, Clock::time_point deadline,
                                  int* attempts, ChatEventStream* stream = nullptr);
  HttpResult Perform(const std::string& stage, const std::string& url, const std::string& body,
                     Clock::time_point deadline, ChatEventStream* stream);
  struct Failure Classify(const HttpResult& r, const std::string& where, int attempts,
                          bool whole_deadline) const;
  // The reply of a Chat call: a streamed one from `stream`, else the JSON
  // completion in `body`.
  absl::Status ReadChatReply(const ChatRequest& req, const std::string& body,
                             ChatEventStream* stream, ChatResponse* out);
  absl::StatusOr<EmbedResponse> EmbedBatch(const std::string& stage,
                                           const std::vector<std::string>& inputs,
                                           Clock::time_point deadline);
  CURL* TakeHandle();
  void ReturnHandle(CURL* h);
  std::string Redact(std::string text) const;
  int Backoff(int retry) const;
  void Finish(const std::string& stage, Clock::time_point start, const absl::Status& s,
              const Usage* usage, bool truncated = false);

  // Constant after construction.
  const EndpointConfig config_;
  LlmMetrics* const metrics_;
  const std::string api_key_;

  Semaphore slots_;
  // The first response_format the endpoint has not refused: 0 json_schema,
  // 1 json_object, 2 none (json_mode off starts at 2).
  std::atomic<int> format_floor_;
  // The same for streaming: 0 stream with usage, 1 stream, 2 none.
  std::atomic<int> stream_floor_{0};
  std::mutex pool_mu_;
  std::vector<CURL*> pool_;  // guarded by pool_mu_; idle handles keep connections
};

CURL* OpenAiClient::TakeHandle() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      CURL* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void OpenAiClient::ReturnHandle(CURL* h) {
  curl_easy_reset(h);  // keeps the handle's connection cache
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(h);
}

std::string OpenAiClient::Redact(std::string text) const {
  if (!api_key_.empty()) absl::StrReplaceAll({{api_key_, "[redacted]"}}, &text);
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

int OpenAiClient::Backoff(int retry) const {
  thread_local std::mt19937 rng(std::random_device{}());
  double cap =
      std::min<double>(config_.backoff_max_ms, config_.backoff_initial_ms * std::pow(2.0, retry));
  return static_cast<int>(std::uniform_real_distribution<double>(0, cap)(rng));
}

HttpResult OpenAiClient::Perform(const std::string& stage, const std::string& url,
                                 const std::string& body, Clock::time_point deadline,
                                 ChatEventStream* stream) {
  HttpResult r;
  CURL* h = TakeHandle();
  if (h == nullptr) {
    r.curl = CURLE_FAILED_INIT;
    return r;
  }
  // Rounded up: an attempt is never cut before its deadline (a caller that
  // checks the deadline after the call then sees it passed).
  long remaining = static_cast<long>(
      std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count());
  struct curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, absl::StrCat("X-SpeakerMem-Stage: ", stage).c_str());
  if (!api_key_.empty()) {
    headers = curl_slist_append(headers, absl::StrCat("Authorization: Bearer ", api_key_).c_str());
  }
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  StreamTarget target{h, stream, &r.body};
  if (stream != nullptr) {
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, WriteStream);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &target);
  } else {
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, WriteBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  }
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, ReadHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, std::max(1L, remaining));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, std::min(remaining, 10000L)));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  r.curl = curl_easy_perform(h);
  if (r.curl == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(headers);
  ReturnHandle(h);
  return r;
}

// A failed attempt: the error to return now (not retryable), or a reason to
// retry and the error to return when the retries run out.
struct Failure {
  bool retryable = false;
  std::string reason;  // "timeout", "connect", "429", "5xx"
  absl::Status error;
};

Failure OpenAiClient::Classify(const HttpResult& r, const std::string& where, int attempts,
                               bool whole_deadline) const {
  const std::string after = absl::StrCat(" after ", attempts, " attempts");
  if (r.curl == CURLE_OPERATION_TIMEDOUT) {
    // An attempt that had all the time left used up the call's deadline.
    if (whole_deadline) {
      return {false, "",
              absl::DeadlineExceededError(absl::StrCat(where, ": deadline exceeded", after))};
    }
    return {true, "timeout", absl::OkStatus()};
  }
  if (r.curl == CURLE_COULDNT_CONNECT || r.curl == CURLE_RECV_ERROR || r.curl == CURLE_SEND_ERROR ||
      r.curl == CURLE_GOT_NOTHING || r.curl == CURLE_PARTIAL_FILE ||
      r.curl == CURLE_COULDNT_RESOLVE_HOST) {
    return {true, "connect",
            absl::UnavailableError(absl::StrCat(where, ": ", curl_easy_strerror(r.curl), after))};
  }
  if (r.curl != CURLE_OK) {
    return {false, "",
            absl::UnavailableError(absl::StrCat(where, ": ", curl_easy_strerror(r.curl)))};
  }
  if (r.status == 429) {
    return {true, "429",
            absl::ResourceExhaustedError(
                absl::StrCat(where, ": rate limited (429)", after, ": ", Redact(r.body)))};
  }
  if (r.status >= 500) {
    return {true, "5xx",
            absl::UnavailableError(
                absl::StrCat(where, ": HTTP ", r.status, after, ": ", Redact(r.body)))};
  }
  std::string msg = absl::StrCat(where, ": HTTP ", r.status, ": ", Redact(r.body));
  switch (r.status) {
    case 400:
    case 422:
      return {false, "", absl::InvalidArgumentError(msg)};
    case 401:
      return {false, "", absl::UnauthenticatedError(msg)};
    case 403:
      return {false, "", absl::PermissionDeniedError(msg)};
    case 404:
      return {false, "", absl::NotFoundError(msg)};
    default:
      return {false, "", absl::FailedPreconditionError(msg)};
  }
}

absl::StatusOr<HttpResult> OpenAiClient::Post(const std::string& stage, const std::string& path,
                                              const std::string& body, Clock::time_point deadline,
                                              int* attempts, ChatEventStream* stream) {
  const std::string url = config_.base_url + path;
  const std::string where = absl::StrCat("stage ", stage, ": ", url);
  for (int retry = 0;; ++retry) {
    if (!slots_.Acquire(deadline)) {
      return absl::DeadlineExceededError(
          absl::StrCat(where, ": deadline passed waiting for a concurrency slot"));
    }
    if (Clock::now() >= deadline) {
      slots_.Release();
      return absl::DeadlineExceededError(absl::StrCat(where, ": deadline exceeded"));
    }
    ++*attempts;
    Clock::time_point attempt_deadline = deadline;
    if (config_.attempt_timeout_ms > 0) {
      attempt_deadline =
          std::min(deadline, Clock::now() + std::chrono::milliseconds(config_.attempt_timeout_ms));
    }
    HttpResult r = Perform(stage, url, body, attempt_deadline, stream);
    slots_.Release();
    if (stream != nullptr && r.curl == CURLE_WRITE_ERROR) {
      return absl::CancelledError(absl::StrCat(where, ": the caller stopped the stream"));
    }

    // Classify: success, final error, or retry with a reason.
    if (r.curl == CURLE_OK && r.status >= 200 && r.status < 300) return r;
    const bool whole_deadline = attempt_deadline == deadline || Clock::now() >= deadline;
    Failure f = Classify(r, where, *attempts, whole_deadline);
    if (!f.retryable) return f.error;
    const std::string& reason = f.reason;
    absl::Status& final_error = f.error;
    if (stream != nullptr && !stream->text().empty()) {
      // Part of the reply was passed on: a retry would send it again.
      return final_error.ok()
                 ? absl::UnavailableError(absl::StrCat(where, ": stream cut (", reason, ")"))
                 : final_error;
    }
    if (retry >= config_.max_retries) {
      if (final_error.ok()) {
        final_error = absl::DeadlineExceededError(absl::StrCat(where, ": timed out"));
      }
      return final_error;
    }
    int wait_ms = r.retry_after_ms >= 0 ? r.retry_after_ms : Backoff(retry);
    if (Clock::now() + std::chrono::milliseconds(wait_ms) >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(where, ": deadline would pass before the next retry (", reason, ")"));
    }
    if (metrics_ != nullptr) metrics_->CountRetry(stage, reason);
    LOG_DEBUG("model retry").Str("stage", stage).Str("reason", reason).Int("wait_ms", wait_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
}

void OpenAiClient::Finish(const std::string& stage, Clock::time_point start, const absl::Status& s,
                          const Usage* usage, bool truncated) {
  if (metrics_ == nullptr) return;
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  metrics_->ObserveCall(stage, !s.ok() ? Lower(s.code()) : truncated ? "truncated" : "ok", secs);
  if (usage != nullptr) {
    metrics_->AddTokens(stage, usage->tokens_in, usage->tokens_out, usage->estimated);
  }
}

// The request's response_format (0 json_schema, 1 json_object, 2 none) and
// streaming (0 with usage, 1 without, 2 not streamed).
void SetForm(int level, int streaming, const std::string& stage, const json& schema, json* body) {
  json& b = *body;
  if (level == 0) {
    b["response_format"] = {
        {"type", "json_schema"},
        {"json_schema", {{"name", stage}, {"strict", true}, {"schema", schema}}}};
  } else if (level == 1) {
    b["response_format"] = {{"type", "json_object"}};
  } else {
    b.erase("response_format");
  }
  b.erase("stream");
  b.erase("stream_options");
  if (streaming < 2) b["stream"] = true;
  if (streaming == 0) b["stream_options"] = {{"include_usage", true}};
}

absl::StatusOr<ChatResponse> OpenAiClient::Chat(const ChatRequest& req) {
  const auto start = Clock::now();
  auto deadline = start + std::chrono::milliseconds(config_.timeout_ms);
  if (req.deadline != std::chrono::system_clock::time_point::max()) {
    // The caller's (wall-clock) deadline on this client's steady clock.
    deadline = std::min(deadline, start + std::chrono::duration_cast<Clock::duration>(
                                              req.deadline - std::chrono::system_clock::now()));
  }
  json body = {
      {"model", config_.model},
      {"messages",
       {{{"role", "system"}, {"content", req.system}}, {{"role", "user"}, {"content", req.user}}}},
      {"temperature", config_.temperature},
      {"max_tokens", config_.max_tokens > 0  ? config_.max_tokens
                     : req.stage == "writer" ? kWriterMaxTokens
                                             : kStageMaxTokens}};
  // The strictest response_format the endpoint has not refused. A refusal
  // (RefusesFormat) is asked again one form down; the step is
  // remembered for the endpoint once a lower form succeeds (a request the
  // endpoint refuses for another reason fails the same way on every form).
  // Streaming steps down the same way (RefusesStream) before the format.
  static constexpr const char* kFormats[] = {"json_schema", "json_object", "none"};
  json schema = req.schema.empty() ? json() : json::parse(req.schema, nullptr, false);
  const bool has_schema = schema.is_object();
  const int first = !req.json ? 2 : std::max(format_floor_.load(), has_schema ? 0 : 1);
  const int first_stream = req.on_text ? stream_floor_.load() : 2;
  int level = first, streaming = first_stream;
  ChatResponse out;
  absl::StatusOr<HttpResult> r;
  std::unique_ptr<ChatEventStream> events;
  for (;;) {
    SetForm(level, streaming, req.stage, schema, &body);
    events = streaming < 2 ? std::make_unique<ChatEventStream>(req.on_text) : nullptr;
    r = Post(req.stage, "/chat/completions", body.dump(), deadline, &out.attempts, events.get());
    if (r.ok() || absl::IsCancelled(r.status()) || (events && !events->text().empty())) break;
    const absl::Status& st = r.status();
    const bool stream_refused = streaming < 2 && RefusesStream(st);
    const bool format_refused = !stream_refused && level < 2 && RefusesFormat(st);
    // Refused at every format while streaming: a last try without it.
    const bool last_try = !stream_refused && !format_refused && level == 2 && streaming < 2 &&
                          absl::IsInvalidArgument(st);
    if (!stream_refused && !format_refused && !last_try) break;
    LOG_WARN("endpoint refused the request; asking with the next form")
        .Str("stage", req.stage)
        .Str("base_url", config_.base_url)
        .Str("refused", format_refused ? kFormats[level] : "stream")
        .Str("error", st.message());
    if (format_refused) {
      ++level;
    } else {
      streaming = stream_refused && streaming == 0 ? 1 : 2;
    }
  }
  if (r.ok() && level > first) {
    int floor = format_floor_.load();
    while (floor < level && !format_floor_.compare_exchange_weak(floor, level)) {
    }
    if (metrics_ != nullptr) metrics_->CountFormatStepDown(req.stage, kFormats[level]);
  }
  if (r.ok() && req.on_text && streaming > first_stream) {
    int floor = stream_floor_.load();
    while (floor < streaming && !stream_floor_.compare_exchange_weak(floor, streaming)) {
    }
  }
  out.format = kFormats[level];
  absl::Status s = r.ok() ? ReadChatReply(req, r->body, events.get(), &out) : r.status();
  Finish(req.stage, start, s, s.ok() ? &out.usage : nullptr, out.truncated);
  if (!s.ok()) return s;
  return out;
}

absl::Status OpenAiClient::ReadChatReply(const ChatRequest& req, const std::string& body,
                                         ChatEventStream* stream, ChatResponse* out) {
  bool has_usage = false;
  if (stream != nullptr && stream->saw_events()) {
    if (!stream->done() && stream->finish_reason().empty()) {
      // The connection closed before the reply's end (no finish_reason,
      // no [DONE]): what came is not the whole answer.
      return absl::UnavailableError(absl::StrCat("stage ", req.stage,
                                                 ": the stream ended early, after ",
                                                 stream->text().size(), " bytes of content"));
    }
    out->text = stream->text();
    out->finish_reason = stream->finish_reason();
    has_usage = stream->has_usage();
    out->usage = stream->usage();
  } else {
    // Not streamed (or the endpoint ignored `stream`): one JSON completion.
    const std::string& text = stream != nullptr ? stream->raw() : body;
    json reply = json::parse(text, nullptr, false);
    absl::Status bad = absl::InternalError(
        absl::StrCat("stage ", req.stage, ": reply is not a chat completion: ", Redact(text)));
    if (reply.is_discarded() || !reply.is_object() || !reply.contains("choices") ||
        !reply["choices"].is_array() || reply["choices"].empty()) {
      return bad;
    }
    const json& choice = reply["choices"][0];
    if (!choice.contains("message") || !choice["message"].is_object() ||
        !choice["message"].contains("content") || !choice["message"]["content"].is_string()) {
      return bad;
    }
    out->text = choice["message"]["content"].get<std::string>();
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      out->finish_reason = choice["finish_reason"].get<std::string>();
    }
    if (reply.contains("usage") && reply["usage"].is_object() &&
        reply["usage"].value("prompt_tokens", -1) >= 0) {
      out->usage.tokens_in = reply["usage"].value("prompt_tokens", 0);
      out->usage.tokens_out = reply["usage"].value("completion_tokens", 0);
      has_usage = true;
    }
    // A caller that asked for a stream gets the whole content as one piece.
    if (req.on_text && !out->text.empty() && !req.on_text(out->text)) {
      return absl::CancelledError(absl::StrCat("stage ", req.stage, ": the caller stopped"));
    }
  }
  out->truncated = out->finish_reason == "length";
  if (!has_usage) {
    out->usage.tokens_in = EstimateTokens(req.system) + EstimateTokens(req.user);
    out->usage.tokens_out = EstimateTokens(out->text);
    out->usage.estimated = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<EmbedResponse> OpenAiClient::EmbedBatch(const std::string& stage,
                                                       const std::vector<std::string>& inputs,
                                                       Clock::time_point deadline) {
  json body = {{"model", config_.model}, {"input", inputs}};
  EmbedResponse out;
  absl::StatusOr<HttpResult> r = Post(stage, "/embeddings", body.dump(), deadline, &out.attempts);
  if (!r.ok()) return r.status();
  json reply = json::parse(r->body, nullptr, false);
  absl::Status bad = absl::InternalError(
      absl::StrCat("stage ", stage, ": reply is not an embeddings list: ", Redact(r->body)));
  if (reply.is_discarded() || !reply.is_object() || !reply.contains("data") ||
      !reply["data"].is_array() || reply["data"].size() != inputs.size()) {
    return bad;
  }
  out.vectors.resize(inputs.size());
  size_t dim = 0;
  for (size_t i = 0; i < reply["data"].size(); ++i) {
    const json& item = reply["data"][i];
    size_t index = item.value("index", i);
    if (index >= inputs.size() || !item.contains("embedding") || !item["embedding"].is_array()) {
      return bad;
    }
    std::vector<float> v;
    v.reserve(item["embedding"].size());
    for (const json& x : item["embedding"]) {
      if (!x.is_number()) return bad;
      v.push_back(x.get<float>());
    }
    if (dim == 0) dim = v.size();
    if (v.empty() || v.size() != dim) return bad;
    out.vectors[index] = std::move(v);
  }
  for (const auto& v : out.vectors) {
    if (v.empty()) return bad;
  }
  if (reply.contains("usage") && reply["usage"].is_object()) {
    out.usage.tokens_in = reply["usage"].value("prompt_tokens", 0);
  } else {
    for (const auto& s : inputs) out.usage.tokens_in += EstimateTokens(s);
    out.usage.estimated = true;
  }
  return out;
}

absl::StatusOr<EmbedResponse> OpenAiClient::Embed(const std::string& stage,
                                                  const std::vector<std::string>& inputs) {
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::milliseconds(config_.timeout_ms);
  EmbedResponse out;
  const size_t batch = static_cast<size_t>(std::max(1, config_.embed_batch));
  for (size_t i = 0; i < inputs.size(); i += batch) {
    std::vector<std::string> part(inputs.begin() + i,
                                  inputs.begin() + std::min(inputs.size(), i + batch));
    absl::StatusOr<EmbedResponse> r = EmbedBatch(stage, part, deadline);
    if (!r.ok()) {
      Finish(stage, start, r.status(), nullptr);
      return r.status();
    }
    out.attempts += r->attempts;
    out.usage.Add(r->usage);
    for (auto& v : r->vectors) out.vectors.push_back(std::move(v));
  }
  Finish(stage, start, absl::OkStatus(), &out.usage);
  return out;
}

}  // namespace

std::string GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v == nullptr ? "" : v;
}

uint64_t EstimateTokens(const std::string& text) {
  return text.empty() ? 0 : (text.size() + 3) / 4;
}

absl::StatusOr<std::unique_ptr<ModelClient>> NewOpenAiClient(const EndpointConfig& config,
                                                             LlmMetrics* metrics,
                                                             const EnvLookup& env) {
  std::string key;
  if (!config.api_key_env.empty()) {
    key = env(config.api_key_env);
    if (key.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("model endpoint ", config.base_url, ": environment variable ",
                       config.api_key_env, " (api_key_env) is not set"));
    }
  }
  return std::unique_ptr<ModelClient>(new OpenAiClient(config, metrics, std::move(key)));
}

}  // namespace speakermem::llm

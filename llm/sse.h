// Reading a chat completion streamed as server-sent events (`stream: true`
// on an OpenAI-compatible endpoint): `data: {...}` lines carrying content
// deltas, a finish_reason, optionally usage (stream_options.include_usage),
// and `data: [DONE]`. Fed the HTTP body in whatever pieces the socket gives.
#ifndef SPEAKERMEM_LLM_SSE_H_
#define SPEAKERMEM_LLM_SSE_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"
#include "llm/model_client.h"

namespace speakermem::llm {

class ChatEventStream {
 public:
  // `on_text` receives each content delta; returning false stops the
  // stream (Feed returns false from then on).
  explicit ChatEventStream(std::function<bool(absl::string_view)> on_text)
      : on_text_(std::move(on_text)) {}

  // Consumes the next bytes of the body. False once the sink said stop.
  bool Feed(absl::string_view bytes);

  // True once any event was read (a body without one is not a stream: an
  // endpoint that ignored `stream` and sent one JSON completion).
  bool saw_events() const { return events_ > 0; }
  bool done() const { return done_; }  // `data: [DONE]` seen
  // Content passed on so far, joined.
  const std::string& text() const { return text_; }
  const std::string& finish_reason() const { return finish_reason_; }
  bool has_usage() const { return has_usage_; }
  const Usage& usage() const { return usage_; }
  // Events whose data was not a chat completion chunk (skipped, counted).
  int malformed() const { return malformed_; }
  // The body as received when it was not a stream (saw_events() false).
  const std::string& raw() const { return raw_; }

 private:
  bool Event(absl::string_view data);

  std::function<bool(absl::string_view)> on_text_;
  std::string pending_;  // an incomplete line
  std::string data_;     // data lines of the event being read
  std::string text_;
  std::string finish_reason_;
  std::string raw_;
  Usage usage_;
  bool has_usage_ = false;
  bool done_ = false;
  bool stopped_ = false;
  int events_ = 0;
  int malformed_ = 0;
};

}  // namespace speakermem::llm

#endif  // SPEAKERMEM_LLM_SSE_H_

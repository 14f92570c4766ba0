// What a clean, compliant instruct model answers each SpeakerMem stage, for
// the fake model server as a program and for benchmarks: well-formed
// replies, and a `usage` sized from the request (about 4 characters a
// token) so token figures follow prompt size.
#ifndef SPEAKERMEM_TESTS_FAKE_STANDARD_REPLY_H_
#define SPEAKERMEM_TESTS_FAKE_STANDARD_REPLY_H_

#include <string>
#include <vector>

#include "tests/fake/fake_model_server.h"

namespace speakermem::testing {

// One message line of a Writer prompt ("YYYY-MM-DD HH:MM Name: text").
struct PromptMessage {
  std::string speaker;
  std::string text;
};

// The new messages a Writer request shows, in order.
std::vector<PromptMessage> WriterPromptMessages(const FakeRequest& req);

// The content a clean model sends for `req`'s stage: Project (all rows),
// Select (the first five candidates), Sufficiency (sufficient), Answer (an
// abstention), Writer (one ADD per message of eight words or more, to the
// speaker's core, else nothing).
std::string StandardContent(const FakeRequest& req);

// StandardContent as a chat completion, or embeddings for /embeddings; with
// usage from the request's size.
FakeReply StandardReply(const FakeRequest& req);

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_FAKE_STANDARD_REPLY_H_

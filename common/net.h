// Small networking helpers for the metrics endpoint, tests and benchmarks.
#ifndef SPEAKERMEM_COMMON_NET_H_
#define SPEAKERMEM_COMMON_NET_H_

#include <string>

namespace speakermem {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read
// it back, close), for tools that need a fixed port number (nginx,
// prometheus). Another process may take it meanwhile; callers retry.
int FreeLoopbackPort();

// Writes all of `data` to socket `fd` (no SIGPIPE); false when the peer is
// gone or the socket fails.
bool SendAll(int fd, const std::string& data);

}  // namespace speakermem

#endif  // SPEAKERMEM_COMMON_NET_H_

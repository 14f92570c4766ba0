// Small networking helpers for tests and benchmarks.
#ifndef SPEAKERMEM_COMMON_NET_H_
#define SPEAKERMEM_COMMON_NET_H_

namespace speakermem {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read
// it back, close), for tools that need a fixed port number (nginx,
// prometheus). Another process may take it meanwhile; callers retry.
int FreeLoopbackPort();

}  // namespace speakermem

#endif  // SPEAKERMEM_COMMON_NET_H_

// The threads that store IngestStream chunks. gRPC's callback threads only
// read, decode and write acknowledgements: a callback thread held by a
// store (the append waits for the stream's order, the indexing takes
// milliseconds for a large chunk) stalls the reads of every stream, so the
// chunks a client has in flight stop arriving and cannot be stored
// together.
#ifndef SPEAKERMEM_SERVER_STORE_WORKERS_H_
#define SPEAKERMEM_SERVER_STORE_WORKERS_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace speakermem::server {

class StoreWorkers {
 public:
  // `threads` at least 1.
  explicit StoreWorkers(size_t threads);
  // Runs the jobs already queued, then joins the threads.
  ~StoreWorkers();
  StoreWorkers(const StoreWorkers&) = delete;
  StoreWorkers& operator=(const StoreWorkers&) = delete;

  // Queues `job` for the next free thread; jobs start in the order queued.
  void Run(std::function<void()> job);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_STORE_WORKERS_H_

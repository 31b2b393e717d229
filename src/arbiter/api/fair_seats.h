// Seats for the API's expensive work (lists, the start of watches, the chunks of a long list's
// answer), shared fairly between clients as kube-apiserver's API Priority and Fairness shares a
// priority level's seats: each client has a queue of its own, and a seat that comes free goes to
// the next client in turn (round robin), so that one client's burst of lists waits behind its
// own requests, never behind another client's, and cheap requests (a GET, a create, a binding),
// which never take a seat, never wait behind either.
//
// A task is refused only when its client's queue, or all queues together, are full: the HTTP
// edge then answers 429 with Retry-After, as APF does when its queues overflow.
//
// Thread-safety: every method may be called from any thread; tasks run on the seats' own threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace arbiter::api {

class FairSeats {
 public:
  struct Options {
    size_t seats = 2;               // tasks that run at once (threads)
    size_t queue_per_client = 256;  // tasks one client may have waiting
    size_t queued_total = 4096;     // tasks all clients may have waiting
  };

  explicit FairSeats(Options options);
  // Runs nothing more: running tasks finish, waiting ones are dropped unrun.
  ~FairSeats();
  FairSeats(const FairSeats&) = delete;
  FairSeats& operator=(const FairSeats&) = delete;

  // Queues `task` for `client` (a user name, or an address when requests are not authenticated).
  // False, and `task` is not run, when the client's queue or all queues are full.
  bool Submit(const std::string& client, std::function<void()> task);

  size_t running() const;
  size_t queued() const;
  // How many tasks were refused since the start (metrics).
  size_t refused() const;

 private:
  void Work();

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  bool stopping_ = false;
  std::map<std::string, std::deque<std::function<void()>>> queues_;  // only clients with work waiting
  std::deque<std::string> turn_;  // clients with work waiting, in the order their turn comes
  size_t queued_ = 0;
  size_t running_ = 0;
  size_t refused_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace arbiter::api

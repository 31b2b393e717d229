// Releases shared objects on a thread of its own.
//
// Dropping the last reference to a large object (a JSON tree of a few hundred small
// allocations, say) costs as much as building it. A hot thread that only lets go of objects, such
// as the watch history retiring its oldest events on every write, hands them to a Reaper instead:
// the reaper's thread drops them, in batches, so the hot thread neither frees them nor wakes
// another thread on every object.
//
// Objects handed over are released in batches of `batch`, or after `linger` when fewer arrive,
// and every one of them by the destructor. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace arbiter {

class Reaper {
 public:
  explicit Reaper(size_t batch = 256, std::chrono::milliseconds linger = std::chrono::milliseconds(100));
  ~Reaper();  // releases what is still held, on the reaper's thread, then joins it
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  // Takes the references (and leaves `items` empty).
  void Release(std::vector<std::shared_ptr<const void>>& items);
  // Waits until everything handed over so far has been released (tests, orderly shutdown).
  void Flush();

 private:
  void Run();

  const size_t batch_;
  const std::chrono::milliseconds linger_;
  std::mutex mu_;
  std::condition_variable wake_;      // the reaper: a batch is due, a flush or a stop
  std::condition_variable released_;  // flushers: the reaper finished a round
  std::vector<std::shared_ptr<const void>> pending_;  // guarded by mu_
  uint64_t handed_ = 0;                                // guarded by mu_: objects handed over
  uint64_t done_ = 0;                                  // guarded by mu_: objects released
  bool flush_ = false;                                 // guarded by mu_
  bool stopping_ = false;                              // guarded by mu_
  std::thread thread_;
};

}  // namespace arbiter

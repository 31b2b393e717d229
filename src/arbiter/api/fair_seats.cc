// Fair seats: per-client queues served round robin by a fixed number of threads.
#include "arbiter/api/fair_seats.h"

#include <algorithm>

namespace arbiter::api {

FairSeats::FairSeats(Options options) : options_(options) {
  const size_t seats = std::max<size_t>(1, options_.seats);
  for (size_t i = 0; i < seats; ++i) threads_.emplace_back([this] { Work(); });
}

FairSeats::~FairSeats() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool FairSeats::Submit(const std::string& client, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = queues_.find(client);
    const size_t mine = it == queues_.end() ? 0 : it->second.size();
    if (stopping_ || mine >= options_.queue_per_client || queued_ >= options_.queued_total) {
      ++refused_;
      return false;
    }
    if (it == queues_.end()) {
      it = queues_.emplace(client, std::deque<std::function<void()>>{}).first;
      turn_.push_back(client);
    }
    it->second.push_back(std::move(task));
    ++queued_;
  }
  ready_.notify_one();
  return true;
}

void FairSeats::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ready_.wait(lock, [this] { return stopping_ || !turn_.empty(); });
    if (stopping_) return;
    // The client whose turn it is gives its oldest task, and goes to the back of the line if it
    // has more.
    const std::string client = std::move(turn_.front());
    turn_.pop_front();
    auto it = queues_.find(client);
    std::function<void()> task = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) {
      queues_.erase(it);
    } else {
      turn_.push_back(client);
    }
    --queued_;
    ++running_;
    lock.unlock();
    try {
      task();
    } catch (...) {
      // A task answers its own errors; one that escapes must not take the seat's thread with it.
    }
    task = nullptr;  // what it holds goes now, outside the lock
    lock.lock();
    --running_;
  }
}

size_t FairSeats::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

size_t FairSeats::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_;
}

size_t FairSeats::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

}  // namespace arbiter::api

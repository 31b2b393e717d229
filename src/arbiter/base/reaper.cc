#include "arbiter/base/reaper.h"

#include <utility>

namespace arbiter {

Reaper::Reaper(size_t batch, std::chrono::milliseconds linger)
    : batch_(batch == 0 ? 1 : batch), linger_(linger), thread_([this] { Run(); }) {}

Reaper::~Reaper() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Reaper::Release(std::vector<std::shared_ptr<const void>>& items) {
  if (items.empty()) return;
  bool due = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    handed_ += items.size();
    if (pending_.empty()) {
      pending_.swap(items);
    } else {
      for (auto& item : items) pending_.push_back(std::move(item));
      items.clear();
    }
    due = pending_.size() >= batch_;
  }
  // Wake the reaper only when a batch is due: one wakeup per batch, not per object.
  if (due) wake_.notify_one();
}

void Reaper::Flush() {
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t target = handed_;
  flush_ = true;
  wake_.notify_one();
  released_.wait(lk, [&] { return done_ >= target; });
}

void Reaper::Run() {
  std::vector<std::shared_ptr<const void>> taken;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    wake_.wait_for(lk, linger_, [this] { return stopping_ || flush_ || pending_.size() >= batch_; });
    flush_ = false;
    taken.swap(pending_);
    const size_t n = taken.size();
    lk.unlock();
    taken.clear();  // the objects are released here, outside the lock
    lk.lock();
    done_ += n;
    released_.notify_all();
    if (stopping_ && pending_.empty()) return;
  }
}

}  // namespace arbiter

#include "arbiter/controlplane/scheduler_activity.h"

#include <utility>

namespace arbiter::controlplane {

void SchedulerActivity::SetWake(std::function<void()> wake) {
  std::lock_guard<std::mutex> lk(mu_);
  wake_ = std::move(wake);
}

SchedulerActivity::View SchedulerActivity::Read(std::chrono::milliseconds wait) {
  std::function<void()> wake;
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    ticket = ++requested_;
    wake = wake_;
  }
  if (wake) wake();
  std::unique_lock<std::mutex> lk(mu_);
  published_cv_.wait_for(lk, wait, [&] { return !running_ || published_ >= ticket; });
  View v;
  v.running = running_;
  v.queue_fresh = running_ && published_ >= ticket;
  v.queue = queue_;
  v.preemptions.assign(preemptions_.begin(), preemptions_.end());
  return v;
}

void SchedulerActivity::SetRunning(bool running) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    running_ = running;
    if (!running) queue_.clear();
  }
  published_cv_.notify_all();
}

bool SchedulerActivity::QueueWanted() const {
  std::lock_guard<std::mutex> lk(mu_);
  return published_ < requested_;
}

void SchedulerActivity::PublishQueue(std::vector<QueuedPodView> queue) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_ = std::move(queue);
    published_ = requested_;
  }
  published_cv_.notify_all();
}

void SchedulerActivity::AddPreemption(PreemptionView p) {
  std::lock_guard<std::mutex> lk(mu_);
  preemptions_.push_back(std::move(p));
  while (preemptions_.size() > max_preemptions_) preemptions_.pop_front();
}

}  // namespace arbiter::controlplane

#include "arbiter/controlplane/node_agents.h"

namespace arbiter::controlplane {

namespace {
constexpr const char* kResources[] = {"nodes", "pods", "leases", "podmetrics.metrics.k8s.io"};
}  // namespace

NodeAgents::NodeAgents(store::Store& store, const Clock& clock, EventRecorder& events, NodeSimOptions nodes,
                       model::KubeletConfig kubelet, PressureEviction::Log log, Shared shared)
    : store_(store),
      batch_(store),
      nodes_(batch_, clock, std::move(nodes),
             [&events](const std::string& ns, const std::string& pod, const std::string& uid, const std::string& type,
                       const std::string& reason, const std::string& message, const std::string& component,
                       const std::string& host) {
               events.Record({ns, pod, uid, type, reason, message, component, host});
               return Status::Ok();
             }),
      pressure_(batch_, events, clock, std::move(kubelet),
                [this](const store::Object& o) -> const manifest::LoadResult& { return decoded_->Get(o); },
                std::move(log)) {
  borrows_ = shared.decoded != nullptr || !shared.informers.empty();
  if (shared.decoded != nullptr) decoded_ = shared.decoded;
  for (const char* r : kResources) {
    if (auto it = shared.informers.find(r); it != shared.informers.end() && it->second != nullptr) {
      informers_[r] = it->second;
      consumer_[r] = it->second->AddConsumer();
    } else {
      informers_[r] = (owned_[r] = std::make_unique<store::Informer>(store_, r)).get();
      consumer_[r] = 0;
    }
  }
}

NodeAgents::~NodeAgents() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (auto& [r, informer] : owned_) informer->SetNotifier(nullptr);
}

Status NodeAgents::RunOnce() {
  for (auto& [r, informer] : informers_) ARBITER_RETURN_IF_ERROR(informer->Sync());
  Status st = nodes_.Run(*informers_["nodes"], *informers_["pods"], *informers_["leases"]);
  if (st.ok()) pressure_.Run(*informers_["nodes"], *informers_["pods"], *informers_["podmetrics.metrics.k8s.io"]);
  Status flushed = batch_.Flush();
  // Forget the decoded form of objects that are gone (the Leases' changes are only drained: they
  // are never decoded).
  for (const char* r : {"nodes", "pods", "podmetrics.metrics.k8s.io", "leases"}) {
    store::Informer& informer = *informers_[r];
    for (const auto& key : informer.TakeChanged(consumer_[r])) {
      if (informer.Find(key) == nullptr) decoded_->Forget(r, key.first, key.second);
    }
  }
  ARBITER_RETURN_IF_ERROR(st);
  return flushed;
}

void NodeAgents::Wake() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    woken_ = true;
  }
  cv_.notify_one();
}

Status NodeAgents::Start(std::chrono::milliseconds tick) {
  if (borrows_) return FailedPrecondition("node agents that borrow their owner's informers run on its thread only");
  if (thread_.joinable()) return Status::Ok();
  // Leases and metrics change on their own clock; the tick covers them.
  for (const char* r : {"nodes", "pods"}) informers_[r]->SetNotifier([this] { Wake(); });
  thread_ = std::thread([this, tick] { Loop(tick); });
  return Status::Ok();
}

void NodeAgents::SetActive(bool active) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    active_ = active;
    woken_ = true;
  }
  cv_.notify_one();
}

Status NodeAgents::LastError() {
  std::lock_guard<std::mutex> lk(mu_);
  return std::exchange(error_, Status::Ok());
}

void NodeAgents::Loop(std::chrono::milliseconds tick) {
  // Passes start at least this far apart, so that a burst of changes is taken in one pass.
  constexpr auto kMinPassInterval = std::chrono::milliseconds(20);
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait_for(lk, tick, [this] { return stopping_ || (woken_ && active_); });
    if (stopping_) return;
    woken_ = false;
    if (!active_) continue;
    lk.unlock();
    const auto start = std::chrono::steady_clock::now();
    Status st;
    try {
      st = RunOnce();
    } catch (const std::exception& e) {
      st = Internal(std::string("node agents: ") + e.what());
    }
    std::this_thread::sleep_until(start + kMinPassInterval);
    lk.lock();
    if (!st.ok() && error_.ok()) error_ = st;
  }
}

}  // namespace arbiter::controlplane

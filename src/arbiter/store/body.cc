#include "arbiter/store/body.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <limits>
#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "arbiter/base/reaper.h"

namespace arbiter::store {

using Json = nlohmann::json;

struct Body::Rep {
  std::mutex mu;
  std::shared_ptr<Json> tree;               // guarded by mu; null once the cache dropped it (never changed while shared)
  std::shared_ptr<const std::string> text;  // guarded by mu; once set, never changes
  bool in_cache = false;                    // guarded by mu: the cache's ring holds it
  std::atomic<bool> referenced{false};      // read since the clock hand last passed
};

namespace {

// A tree's memory, estimated from its text without walking it: nlohmann's nodes take about five
// times the text (docs/benchmarks.md, "Where the 50,000-pod heap is").
constexpr size_t kTreePerTextByte = 5;

const Body::Tree& NullTree() {
  static const Body::Tree null = std::make_shared<const Json>();
  return null;
}

// Trees that have a text, in clock order. Lock order: a Rep's mutex is never held while taking
// the cache's (Admit is called after the Rep's is released); the sweep takes Reps' mutexes under
// the cache's.
class TreeCache {
 public:
  static TreeCache& Get() {
    static TreeCache* cache = new TreeCache();  // never destroyed: bodies may outlive statics
    return *cache;
  }

  void Admit(const std::shared_ptr<Body::Rep>& rep, size_t bytes, bool parsed) {
    std::vector<std::shared_ptr<const void>> retired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (parsed) ++parsed_;
      // Only a version just written is protected for a while: a tree parsed for a reader (a
      // controller's scan, say) may go as soon as the reader lets go of it.
      ring_.push_back({rep, bytes, parsed ? 0 : NowMillis()});
      bytes_ += bytes;
      // Entries of bodies gone count until the hand reaches them, so the ring stays bounded by
      // the budget too.
      if (bytes_ > budget_) Sweep(retired, kStepsPerAdmission);
    }
    if (!retired.empty()) reaper_.Release(retired);
  }

  void Trim() {
    std::vector<std::shared_ptr<const void>> retired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      Sweep(retired, 2 * ring_.size());
    }
    if (!retired.empty()) reaper_.Release(retired);
  }

  BodyCacheStats Stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {ring_.size(), bytes_, budget_, parsed_, dropped_};
  }

  void SetMinAge(int64_t millis) {
    std::lock_guard<std::mutex> lock(mu_);
    min_age_millis_ = millis;
  }

  void KeepWrittenSince(int64_t millis) {
    std::lock_guard<std::mutex> lock(mu_);
    keep_written_since_millis_ = millis;
  }

  void SetBudget(size_t bytes) {
    std::vector<std::shared_ptr<const void>> retired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      budget_ = bytes;
      Sweep(retired, 2 * ring_.size());
    }
    if (!retired.empty()) reaper_.Release(retired);
  }

 private:
  struct Entry {
    std::weak_ptr<Body::Rep> rep;
    size_t bytes = 0;
    int64_t admitted_millis = 0;  // steady time
  };

  static int64_t NowMillis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // An admission moves the hand at most this far: when most trees are pinned (a pass holding
  // what changed in it), the cache stays over its budget for a while rather than walking the
  // whole ring on every admission.
  static constexpr size_t kStepsPerAdmission = 32;
  // The longest a reader's mark keeps trees (KeepBodyTreesWrittenSince).
  static constexpr int64_t kMaxKeepMillis = 10000;

  // The clock: from the front, an entry whose body is gone leaves; one read since the hand last
  // passed is spared once (its mark cleared, to the back); one nobody pins loses its tree; one
  // pinned now goes to the back. Stops within the budget, or after `max_steps`. Needs mu_.
  void Sweep(std::vector<std::shared_ptr<const void>>& retired, size_t max_steps) {
    size_t steps = std::min(max_steps, 2 * ring_.size());
    const int64_t now = NowMillis();
    // Young: made within the minimum age, or since the reader's mark (not longer ago than
    // kMaxKeepMillis, so that a reader that stopped reading holds nothing for good).
    auto young = [&](int64_t admitted) {
      return admitted > now - min_age_millis_ || (admitted >= keep_written_since_millis_ && admitted > now - kMaxKeepMillis);
    };
    while (steps-- > 0 && !ring_.empty() && bytes_ > budget_) {
      // A tree made moments ago is still on its way through the pipeline (the informers and
      // list caches read each new version once): the hand waits for it.
      if (young(ring_.front().admitted_millis) && !ring_.front().rep.expired()) break;
      Entry e = std::move(ring_.front());
      ring_.pop_front();
      std::shared_ptr<Body::Rep> rep = e.rep.lock();
      if (rep == nullptr) {
        bytes_ -= e.bytes;
        continue;
      }
      std::unique_lock<std::mutex> rep_lock(rep->mu);
      if (rep->referenced.exchange(false, std::memory_order_relaxed) || rep->tree.use_count() > 1) {
        rep_lock.unlock();
        ring_.push_back(std::move(e));
        continue;
      }
      retired.push_back(std::move(rep->tree));
      rep->tree = nullptr;
      rep->in_cache = false;
      bytes_ -= e.bytes;
      ++dropped_;
    }
  }

  std::mutex mu_;
  std::deque<Entry> ring_;  // guarded by mu_
  size_t bytes_ = 0;        // guarded by mu_: the entries' estimates, gone bodies' included
  size_t budget_ = size_t{32} << 20;
  int64_t min_age_millis_ = 250;  // guarded by mu_
  int64_t keep_written_since_millis_ = std::numeric_limits<int64_t>::max();  // guarded by mu_
  uint64_t parsed_ = 0;
  uint64_t dropped_ = 0;
  Reaper reaper_;  // trees dropped are freed off the reader's thread
};

}  // namespace

Body::Body(Json tree) : rep_(std::make_shared<Rep>()) {
  rep_->tree = std::make_shared<Json>(std::move(tree));
}

Body Body::FromText(std::string text) { return FromText(std::make_shared<const std::string>(std::move(text))); }

Body Body::FromText(std::shared_ptr<const std::string> text) {
  Body b;
  b.rep_ = std::make_shared<Rep>();
  b.rep_->text = std::move(text);
  return b;
}

Body Body::FromTreeAndText(Json tree, std::string text) {
  Body b = FromText(std::move(text));
  const size_t admit = b.rep_->text->size() * kTreePerTextByte;
  b.rep_->tree = std::make_shared<Json>(std::move(tree));
  b.rep_->in_cache = true;
  b.rep_->referenced.store(true, std::memory_order_relaxed);
  TreeCache::Get().Admit(b.rep_, admit, /*parsed=*/true);
  return b;
}

Body::Tree Body::tree() const {
  if (rep_ == nullptr) return NullTree();
  std::shared_ptr<Json> t;
  size_t admit = 0;
  {
    std::lock_guard<std::mutex> lock(rep_->mu);
    rep_->referenced.store(true, std::memory_order_relaxed);
    if (rep_->tree != nullptr) return rep_->tree;
    Json parsed = Json::parse(*rep_->text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) parsed = Json();
    t = std::make_shared<Json>(std::move(parsed));
    rep_->tree = t;
    if (!rep_->in_cache) {
      rep_->in_cache = true;
      admit = rep_->text->size() * kTreePerTextByte;
    }
  }
  if (admit > 0) TreeCache::Get().Admit(rep_, admit, /*parsed=*/true);
  return t;
}

Json Body::Release() && {
  std::shared_ptr<Rep> rep = std::move(rep_);
  if (rep == nullptr) return Json();
  {
    std::lock_guard<std::mutex> lock(rep->mu);
    if (rep.use_count() == 1 && rep->tree != nullptr && rep->tree.use_count() == 1) {
      // Nobody else can reach the tree: the only Body is this one, and the cache's ring holds
      // the Rep weakly (its sweep takes the Rep's mutex, held here).
      Json out = std::move(*rep->tree);
      rep->tree = nullptr;
      return out;
    }
  }
  Body shared;
  shared.rep_ = std::move(rep);
  return shared.Copy();
}

const std::string& Body::text() const { return *shared_text(); }

std::shared_ptr<const std::string> Body::shared_text() const {
  if (rep_ == nullptr) {
    static const std::shared_ptr<const std::string> null = std::make_shared<const std::string>("null");
    return null;
  }
  std::shared_ptr<const std::string> text;
  size_t admit = 0;
  {
    std::lock_guard<std::mutex> lock(rep_->mu);
    if (rep_->text != nullptr) return rep_->text;
    rep_->text = std::make_shared<const std::string>(rep_->tree->dump());
    text = rep_->text;
    if (!rep_->in_cache) {
      rep_->in_cache = true;
      rep_->referenced.store(true, std::memory_order_relaxed);
      admit = text->size() * kTreePerTextByte;
    }
  }
  if (admit > 0) TreeCache::Get().Admit(rep_, admit, /*parsed=*/false);
  return text;
}

bool Body::has_text() const {
  if (rep_ == nullptr) return true;
  std::lock_guard<std::mutex> lock(rep_->mu);
  return rep_->text != nullptr;
}

size_t Body::text_size() const {
  if (rep_ == nullptr) return 4;
  std::lock_guard<std::mutex> lock(rep_->mu);
  return rep_->text != nullptr ? rep_->text->size() : 0;
}

bool Body::is_null() const { return rep_ == nullptr || tree()->is_null(); }

bool operator==(const Body& a, const Body& b) {
  if (a.rep_ == b.rep_) return true;
  return *a.tree() == *b.tree();
}

bool operator==(const Body& a, const Json& b) { return *a.tree() == b; }

BodyCacheStats GetBodyCacheStats() { return TreeCache::Get().Stats(); }

void SetBodyTreeBudget(size_t bytes) { TreeCache::Get().SetBudget(bytes); }

void SetBodyTreeMinAge(std::chrono::milliseconds age) { TreeCache::Get().SetMinAge(age.count()); }

void KeepBodyTreesWrittenSince(std::chrono::steady_clock::time_point since) {
  TreeCache::Get().KeepWrittenSince(
      std::chrono::duration_cast<std::chrono::milliseconds>(since.time_since_epoch()).count());
}

void TrimBodyTrees() { TreeCache::Get().Trim(); }

}  // namespace arbiter::store

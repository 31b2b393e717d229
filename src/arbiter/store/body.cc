#include "arbiter/store/body.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "arbiter/base/reaper.h"

#include <zstd.h>

namespace arbiter::store {

using Json = nlohmann::json;

struct Body::Rep {
  std::mutex mu;
  std::shared_ptr<Json> tree;               // guarded by mu; null once the cache dropped it (never changed while shared)
  std::shared_ptr<const std::string> text;  // guarded by mu; null while cold (then `packed` holds it); its value never changes
  std::string packed;                       // guarded by mu: the text compressed (zstd) when it first went cold; never changes once made
  size_t text_bytes = 0;                    // guarded by mu: the text's length, once made
  bool in_cache = false;                    // guarded by mu: the tree cache's ring holds it
  std::atomic<bool> referenced{false};      // the tree read since the clock hand last passed
  std::atomic<bool> text_referenced{false};  // the text read since the text cache's hand last passed
};

namespace {

// A tree's memory, estimated from its text without walking it: nlohmann's nodes take about five
// times the text (docs/benchmarks.md, "Where the 50,000-pod heap is").
constexpr size_t kTreePerTextByte = 5;

// zstd, one context per thread. Level 1: a pod's text (3-4 KB) in about 10 us, to about a third.
std::string Compress(const std::string& text) {
  struct Ctx {
    ZSTD_CCtx* ctx = ZSTD_createCCtx();
    std::string buffer;
    ~Ctx() { ZSTD_freeCCtx(ctx); }
  };
  thread_local Ctx c;
  if (c.ctx == nullptr) return {};
  c.buffer.resize(ZSTD_compressBound(text.size()));
  const size_t n = ZSTD_compressCCtx(c.ctx, c.buffer.data(), c.buffer.size(), text.data(), text.size(), 1);
  if (ZSTD_isError(n)) return {};
  return std::string(c.buffer.data(), n);  // exactly its size: the buffer is reused
}

// The text again. Only this file's own frames are read, so an error means memory was corrupted:
// the body reads as JSON null rather than the process going on with a torn text.
std::string Decompress(const std::string& packed, size_t size) {
  struct Ctx {
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    ~Ctx() { ZSTD_freeDCtx(ctx); }
  };
  thread_local Ctx d;
  std::string out(size, '\0');
  const size_t n = d.ctx == nullptr ? size_t{0} : ZSTD_decompressDCtx(d.ctx, out.data(), out.size(), packed.data(), packed.size());
  if (d.ctx == nullptr || ZSTD_isError(n) || n != size) return "null";
  return out;
}

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Texts not compressed, in the order they were made: once a text is older than the minimum age
// and the plain texts exceed their budget, the hand compresses it, unless it was read since the
// hand last passed (spared once) or somebody holds it now (then it goes back on the ring). Lock
// order: the cache's mutex is never held while a Rep's is taken (the compression runs outside it).
class TextCache {
 public:
  static TextCache& Get() {
    static TextCache* cache = new TextCache();  // never destroyed: bodies may outlive statics
    return *cache;
  }

  // `rep` has a plain text of `bytes` now.
  void Admit(const std::shared_ptr<Body::Rep>& rep, size_t bytes) {
    std::vector<std::shared_ptr<Body::Rep>> cold;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ring_.push_back({rep, bytes, SteadyMillis()});
      bytes_ += bytes;
      if (bytes_ > budget_) Collect(cold, kStepsPerAdmission);
    }
    Pack(cold);
  }

  void Trim() {
    std::vector<std::shared_ptr<Body::Rep>> cold;
    {
      std::lock_guard<std::mutex> lock(mu_);
      Collect(cold, 2 * ring_.size());
    }
    Pack(cold);
  }

  void SetBudget(size_t bytes, int64_t min_age_millis) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      budget_ = bytes;
      min_age_millis_ = min_age_millis;
    }
    Trim();
  }

  void AddStats(BodyCacheStats& s) {
    std::lock_guard<std::mutex> lock(mu_);
    s.hot_text_bytes = bytes_;
    s.hot_text_budget = budget_;
    s.packed = packed_;
    s.packed_bytes_in = packed_in_;
    s.packed_bytes_out = packed_out_;
  }

 private:
  struct Entry {
    std::weak_ptr<Body::Rep> rep;
    size_t bytes = 0;
    int64_t made_millis = 0;  // steady time
  };
  static constexpr size_t kStepsPerAdmission = 32;

  // Takes the texts whose time has come off the ring. Needs mu_.
  void Collect(std::vector<std::shared_ptr<Body::Rep>>& cold, size_t max_steps) {
    size_t steps = std::min(max_steps, 2 * ring_.size());
    const int64_t young = SteadyMillis() - min_age_millis_;
    while (steps-- > 0 && !ring_.empty() && bytes_ > budget_) {
      if (ring_.front().made_millis > young && !ring_.front().rep.expired()) break;
      Entry e = std::move(ring_.front());
      ring_.pop_front();
      std::shared_ptr<Body::Rep> rep = e.rep.lock();
      if (rep != nullptr && rep->text_referenced.exchange(false, std::memory_order_relaxed)) {
        ring_.push_back(std::move(e));  // read lately: spared once
        continue;
      }
      bytes_ -= e.bytes;
      if (rep != nullptr) cold.push_back(std::move(rep));
    }
  }

  // Compresses what Collect took (outside mu_); a text somebody holds now goes back on the ring.
  void Pack(std::vector<std::shared_ptr<Body::Rep>>& cold) {
    if (cold.empty()) return;
    std::vector<std::shared_ptr<const std::string>> freed;  // released after the Reps' locks
    std::vector<std::pair<std::weak_ptr<Body::Rep>, size_t>> again;
    uint64_t packed = 0, in = 0, out = 0;
    for (const std::shared_ptr<Body::Rep>& rep : cold) {
      std::lock_guard<std::mutex> lock(rep->mu);
      if (rep->text == nullptr) continue;
      if (rep->text.use_count() > 1) {
        again.emplace_back(rep, rep->text->size());
        continue;
      }
      std::string p = Compress(*rep->text);
      if (p.empty() || p.size() >= rep->text->size()) continue;  // no smaller: it stays plain, off the ring
      ++packed;
      in += rep->text->size();
      out += p.size();
      rep->packed = std::move(p);
      freed.push_back(std::move(rep->text));
      rep->text = nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    packed_ += packed;
    packed_in_ += in;
    packed_out_ += out;
    for (auto& [rep, bytes] : again) {
      ring_.push_back({std::move(rep), bytes, SteadyMillis()});
      bytes_ += bytes;
    }
  }

  std::mutex mu_;
  std::deque<Entry> ring_;  // guarded by mu_
  size_t bytes_ = 0;        // guarded by mu_: the entries' texts, gone bodies' included
  size_t budget_ = size_t{32} << 20;
  int64_t min_age_millis_ = kDefaultBodyTextMinAge.count();
  uint64_t packed_ = 0, packed_in_ = 0, packed_out_ = 0;
};

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
      // (Its time is the earliest there is, not 0: on a machine up for less than the minimum
      // age, 0 would count as young.)
      ring_.push_back({rep, bytes, parsed ? std::numeric_limits<int64_t>::min() : SteadyMillis()});
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
    BodyCacheStats s;
    s.trees = ring_.size();
    s.bytes = bytes_;
    s.budget = budget_;
    s.parsed = parsed_;
    s.dropped = dropped_;
    return s;
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

  // An admission moves the hand at most this far: when most trees are pinned (a pass holding
  // what changed in it), the cache stays over its budget for a while rather than walking the
  // whole ring on every admission.
  static constexpr size_t kStepsPerAdmission = 32;
  // The longest a reader's mark keeps trees (KeepBodyTreesWrittenSince).
  static constexpr int64_t kMaxKeepMillis = 10000;
  // The most a reader's mark keeps (estimated tree bytes, those within the budget included).
  static constexpr size_t kMaxKeepBytes = size_t{192} << 20;

  // The clock: from the front, an entry whose body is gone leaves; one read since the hand last
  // passed is spared once (its mark cleared, to the back); one nobody pins loses its tree; one
  // pinned now goes to the back. Stops within the budget, or after `max_steps`. Needs mu_.
  void Sweep(std::vector<std::shared_ptr<const void>>& retired, size_t max_steps) {
    size_t steps = std::min(max_steps, 2 * ring_.size());
    const int64_t now = SteadyMillis();
    // Young: made within the minimum age, or since the reader's mark (not longer ago than
    // kMaxKeepMillis, so that a reader that stopped reading holds nothing for good, and while the
    // cache holds less than kMaxKeepBytes, so that a pass under a storm of writes does not hold
    // them all).
    auto young = [&](int64_t admitted) {
      return admitted > now - min_age_millis_ || (admitted >= keep_written_since_millis_ &&
                                                  admitted > now - kMaxKeepMillis && bytes_ <= kMaxKeepBytes);
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
  const size_t bytes = text->size();
  b.rep_->text = std::move(text);
  b.rep_->text_bytes = bytes;
  TextCache::Get().Admit(b.rep_, bytes);
  return b;
}

Body Body::FromTreeAndText(Json tree, std::string text) {
  Body b = FromText(std::move(text));
  size_t admit = 0;
  {
    std::lock_guard<std::mutex> lock(b.rep_->mu);
    admit = b.rep_->text_bytes * kTreePerTextByte;
    b.rep_->tree = std::make_shared<Json>(std::move(tree));
    b.rep_->in_cache = true;
    b.rep_->referenced.store(true, std::memory_order_relaxed);
  }
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
    // From the text, or from the compressed text without making it hot again (the reader wants
    // the tree, which the tree cache keeps).
    Json parsed = rep_->text != nullptr
                      ? Json::parse(*rep_->text, nullptr, /*allow_exceptions=*/false)
                      : Json::parse(Decompress(rep_->packed, rep_->text_bytes), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) parsed = Json();
    t = std::make_shared<Json>(std::move(parsed));
    rep_->tree = t;
    if (!rep_->in_cache) {
      rep_->in_cache = true;
      admit = rep_->text_bytes * kTreePerTextByte;
    }
  }
  if (admit > 0) TreeCache::Get().Admit(rep_, admit, /*parsed=*/true);
  return t;
}

Json Body::Copy() const {
  if (rep_ == nullptr) return Json();
  std::shared_ptr<Json> tree;
  std::shared_ptr<const std::string> text;
  std::string unpacked;
  {
    std::lock_guard<std::mutex> lock(rep_->mu);
    if (rep_->tree != nullptr) {
      rep_->referenced.store(true, std::memory_order_relaxed);
      tree = rep_->tree;  // pinned: copied outside the lock
    } else if (rep_->text != nullptr) {
      text = rep_->text;
    } else if (!rep_->packed.empty()) {
      unpacked = Decompress(rep_->packed, rep_->text_bytes);
    } else {
      return Json();
    }
  }
  if (tree != nullptr) return *tree;
  Json parsed = Json::parse(text != nullptr ? *text : unpacked, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Json();
  return parsed;
}

Json Body::Release() && {
  std::shared_ptr<Rep> rep = std::move(rep_);
  if (rep == nullptr) return Json();
  {
    std::lock_guard<std::mutex> lock(rep->mu);
    if (rep.use_count() == 1 && rep->tree != nullptr && rep->tree.use_count() == 1) {
      // Nobody else can reach the tree: the only Body is this one, and the caches' rings hold
      // the Rep weakly (their sweeps take the Rep's mutex, held here).
      Json out = std::move(*rep->tree);
      rep->tree = nullptr;
      return out;
    }
  }
  Body shared;
  shared.rep_ = std::move(rep);
  return shared.Copy();
}

std::shared_ptr<const std::string> Body::shared_text() const {
  if (rep_ == nullptr) {
    static const std::shared_ptr<const std::string> null = std::make_shared<const std::string>("null");
    return null;
  }
  std::shared_ptr<const std::string> text;
  size_t admit_tree = 0;
  size_t cold = 0;
  {
    std::lock_guard<std::mutex> lock(rep_->mu);
    rep_->text_referenced.store(true, std::memory_order_relaxed);
    if (rep_->text != nullptr) return rep_->text;
    if (!rep_->packed.empty()) {
      cold = rep_->text_bytes;
    } else {
      // The first time: printed from the tree, which the tree cache may drop from now on.
      rep_->text = std::make_shared<const std::string>(rep_->tree->dump());
      rep_->text_bytes = rep_->text->size();
      text = rep_->text;
      if (!rep_->in_cache) {
        rep_->in_cache = true;
        rep_->referenced.store(true, std::memory_order_relaxed);
        admit_tree = text->size() * kTreePerTextByte;
      }
    }
  }
  // Cold: decompressed for this reader alone (`packed` never changes once made), and kept
  // compressed: a list that reads every object once would otherwise make them all plain again.
  if (cold > 0) return std::make_shared<const std::string>(Decompress(rep_->packed, cold));
  if (admit_tree > 0) TreeCache::Get().Admit(rep_, admit_tree, /*parsed=*/false);
  TextCache::Get().Admit(rep_, text->size());
  return text;
}

bool Body::has_text() const {
  if (rep_ == nullptr) return true;
  std::lock_guard<std::mutex> lock(rep_->mu);
  return rep_->text != nullptr || !rep_->packed.empty();
}

size_t Body::text_size() const {
  if (rep_ == nullptr) return 4;
  std::lock_guard<std::mutex> lock(rep_->mu);
  return rep_->text != nullptr || !rep_->packed.empty() ? rep_->text_bytes : 0;
}

bool Body::is_null() const { return rep_ == nullptr || tree()->is_null(); }

bool operator==(const Body& a, const Body& b) {
  if (a.rep_ == b.rep_) return true;
  return *a.tree() == *b.tree();
}

bool operator==(const Body& a, const Json& b) { return *a.tree() == b; }

BodyCacheStats GetBodyCacheStats() {
  BodyCacheStats s = TreeCache::Get().Stats();
  TextCache::Get().AddStats(s);
  return s;
}

void SetBodyTextBudget(size_t bytes, std::chrono::milliseconds min_age) {
  TextCache::Get().SetBudget(bytes, min_age.count());
}

void SetBodyTreeBudget(size_t bytes) { TreeCache::Get().SetBudget(bytes); }

void SetBodyTreeMinAge(std::chrono::milliseconds age) { TreeCache::Get().SetMinAge(age.count()); }

void KeepBodyTreesWrittenSince(std::chrono::steady_clock::time_point since) {
  TreeCache::Get().KeepWrittenSince(
      std::chrono::duration_cast<std::chrono::milliseconds>(since.time_since_epoch()).count());
}

void TrimBodyTrees() {
  TreeCache::Get().Trim();
  TextCache::Get().Trim();
}

}  // namespace arbiter::store

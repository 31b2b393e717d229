// The body of a stored object, held once per version: its JSON text, made once, and a JSON tree
// that is a cache over the text.
//
// A pod's tree is about five times its text (docs/benchmarks.md: 16.7 KB of nlohmann nodes for
// 3.3 KB of JSON), and every version the store hands out is shared by the watch history, the
// informers and the API's watch caches. So a version keeps its text for good once it has one,
// and its tree only while the process-wide tree cache has room for it: the cache keeps the trees
// read most recently within a budget of bytes (a clock sweep, as a buffer pool keeps pages) and
// drops the others, which the next reader parses again from the text. A body made from a tree
// (an object being written) keeps that tree until it has its text; the store makes the text when
// it stores the version (SQLite and etcd store the text anyway).
//
// Readers pin the tree they read: `tree()` returns a shared pointer, and the cache never drops a
// tree somebody holds. `body->member(...)` pins it for the full expression; a reference into the
// tree that outlives the expression needs a named pin:
//
//   const store::Body::Tree pod = object.body.tree();
//   const Json& spec = (*pod)["spec"];
//
// The text itself is kept compressed once it is cold: when the texts not compressed exceed their
// budget (32 MiB unless set), the oldest of them that are older than a minimum age (2 s), not
// read since the hand last passed and held by nobody are compressed with zstd (level 1: a pod's
// 3-4 KB of JSON in about 10 us, to about a third) and their plain copy dropped; each later
// reader of the text decompresses it for itself (a few microseconds) and it stays compressed.
// Most versions are read when they are written (by the informers and watchers) and seldom after,
// by a list or a GET: at 50,000 pods the texts were most of the heap (docs/benchmarks.md).
//
// A Body is a value: copying one shares the version (its text and tree), and nothing changes a
// version once made; `Copy()` gives a tree of one's own to change and write back.
//
// Thread-safety: any number of threads may read one Body (or copies of it) at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "arbiter/base/json.h"

namespace arbiter::store {

class Body {
 public:
  using Tree = std::shared_ptr<const nlohmann::json>;

  // JSON null.
  Body() = default;
  // A version made from a tree (an object being written).
  Body(nlohmann::json tree);  // NOLINT(google-explicit-constructor): every write starts from a tree
  // A version read back from storage: `text` is one JSON value, as the store wrote it (a
  // reader that parses it and finds otherwise gets JSON null and the cache counts a failure).
  static Body FromText(std::string text);
  static Body FromText(std::shared_ptr<const std::string> text);
  // A version read back and parsed (to check it): both forms, the tree a cache over the text.
  static Body FromTreeAndText(nlohmann::json tree, std::string text);

  // The tree, pinned for as long as the pointer is held (parsed from the text when the cache
  // has dropped it).
  Tree tree() const;
  // `body->value("kind", "")`: the tree pinned for the expression.
  class Pin {
   public:
    explicit Pin(Tree t) : tree_(std::move(t)) {}
    const nlohmann::json* operator->() const { return tree_.get(); }
   private:
    Tree tree_;
  };
  Pin operator->() const { return Pin(tree()); }
  // A tree of one's own, to change and write back: a deep copy of the tree when the cache holds
  // it, else parsed from the text for the caller alone (the cache is not filled with a tree that
  // only the copy needed).
  nlohmann::json Copy() const;
  // The tree, moved out when this Body is the version's only holder and nobody pins the tree (a
  // queued write handing its body to the store); a copy otherwise. Leaves this Body null.
  nlohmann::json Release() &&;

  // The JSON text (nlohmann's dump(), compact), made once and kept with the version (compressed
  // while cold: see above). The pointer holds it: in an expression, `*body.shared_text()` is the
  // text until the expression ends.
  std::shared_ptr<const std::string> shared_text() const;
  // Whether the text is made already, plain or compressed (writing it costs a dump otherwise).
  bool has_text() const;
  // The text's length when made, else 0 (for byte bounds that must not dump).
  size_t text_size() const;
  // Whether the version is JSON null (a default Body, or a deletion's waived body).
  bool is_null() const;

  // Same JSON value.
  friend bool operator==(const Body& a, const Body& b);
  friend bool operator==(const Body& a, const nlohmann::json& b);

  struct Rep;  // body.cc

 private:
  std::shared_ptr<Rep> rep_;
};

// The process-wide cache of trees made from text (or given text after they were made).
struct BodyCacheStats {
  size_t trees = 0;        // trees held that the cache may drop
  size_t bytes = 0;        // their estimated memory
  size_t budget = 0;       // the bound on `bytes`
  uint64_t parsed = 0;     // trees made from text, ever
  uint64_t dropped = 0;    // trees dropped to stay within the budget, ever
  // The texts' cache (plain texts, which it compresses once cold).
  size_t hot_text_bytes = 0;      // the plain texts it may compress
  size_t hot_text_budget = 0;     // the bound on them
  uint64_t packed = 0;            // texts compressed, ever
  uint64_t packed_bytes_in = 0;   // their plain bytes
  uint64_t packed_bytes_out = 0;  // their compressed bytes
};
BodyCacheStats GetBodyCacheStats();
// The bound on the trees' estimated memory (a tree is estimated at five times its text).
// 32 MiB unless set (`serve --tree-cache-mib`); 0 keeps no tree that has a text once it is read.
void SetBodyTreeBudget(size_t bytes);
// The bound on the plain texts and the age before which a text is not compressed (32 MiB and
// kDefaultBodyTextMinAge unless set; `serve --hot-text-mib`).
inline constexpr std::chrono::milliseconds kDefaultBodyTextMinAge{2000};
void SetBodyTextBudget(size_t bytes, std::chrono::milliseconds min_age = kDefaultBodyTextMinAge);
// A tree is not dropped before it is this old (250 ms unless set; `serve --tree-cache-min-age`):
// each new version is read by the informers and list caches once on its way, within a pass or two
// of the control loop, and parsing it again for each of them would cost more than the memory
// saved. Within that window the cache may exceed its budget. (3 s was measured to hold 200 MiB
// more at the peak of a burst for no gain in lag: docs/benchmarks.md.)
void SetBodyTreeMinAge(std::chrono::milliseconds age);
// A reader that reads every new version once, a pass at a time (the control loop: its informers
// pin the trees of what changed when they sync), marks when it last took them: a tree written
// since the mark is kept, however old, until the next mark (at most 10 s, and while the cache
// holds less than 192 MiB of estimated trees), so that a long pass
// does not see the trees of the writes made meanwhile dropped and parse them all again. Steady
// clock; unset, only the minimum age keeps trees.
void KeepBodyTreesWrittenSince(std::chrono::steady_clock::time_point since);
// Drops trees until the cache is within its budget (as far as age and pins allow), and compresses
// the cold texts beyond theirs. The cache
// sweeps as trees are admitted; a process calls this now and then so that the trees of its
// last burst of writes go once they are old, even if nothing is written after them.
void TrimBodyTrees();

}  // namespace arbiter::store

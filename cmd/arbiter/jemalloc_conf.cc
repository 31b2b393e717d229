// jemalloc's options for the arbiter executable when it is built with jemalloc
// (-DARBITER_ALLOCATOR=jemalloc), read by jemalloc as it starts (the malloc_conf variable of
// jemalloc(3)); the MALLOC_CONF environment variable still overrides them.
//   * background_thread: a thread of jemalloc's own returns unused pages to the system, rather
//     than the threads that allocate;
//   * dirty_decay_ms 1000, muzzy_decay_ms 0: pages freed are returned within about a second
//     (10 s by default), so that the trees a burst of writes made and the tree cache dropped
//     (store/body.h) do not stay resident.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
}

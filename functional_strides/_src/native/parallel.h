// The parallel split of one call over XLA's intra-op thread pool (`ffi::ThreadPool`, from the
// handler's execution context, as jaxlib's CPU kernels use it). The library starts no thread
// of its own and leaves nothing running between calls: a call's blocks are cut into chunks
// (kChunkBytes of memory traffic, down to kSmallChunkBytes so that a part of a small call has
// kChunksPerPart of them; no more than kChunksPerThread per part), dealt in equal ranges of
// consecutive chunks to the calling thread and to tasks scheduled on the pool, as many parts
// in all as the pool has threads and the work has kTaskMinBytes per part. Each
// part runs its own range front to back (one stretch of the output, whose pages it alone
// faults in), then takes chunks from the back of the others' ranges, so a task that starts
// late (a pool worker busy with other work, or asleep) or runs slow (a busy virtual CPU)
// leaves no stretch of work for the end: the calling thread never waits for a task that has
// not started, only for the chunks a started one holds. A task that starts after the call has
// returned finds no chunk left and only drops its reference to the work.
//
// The thread count is XLA's, as jaxlib's own CPU kernels take it: the pool's num_threads() (XLA
// sizes the pool by the CPUs the process may run on, or by the devices it simulates), capped
// by g_max_parts (fs.config's kernel_threads; no cap by default). A call from a worker of the
// pool (XLA running thunks of one program side by side, as under vmap of grad) runs alone: the
// pool is busy with the program's other work already (benchmarks/bench_derivatives.py, vmap
// grad rows, measured it slower split). A worker is known by having run a task of ours. So does
// a call in the child of a fork(): the pool's workers are not there (only the forking thread
// is), and a lock of the pool's queues may have been held at the fork. A pool of one thread (or
// none: an error of Schedule runs the task on the caller) means one part.

#ifndef FUNCTIONAL_STRIDES_NATIVE_PARALLEL_H_
#define FUNCTIONAL_STRIDES_NATIVE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "movers.h"
#include "plan.h"
#include "xla/ffi/api/ffi.h"

namespace functional_strides::native {

namespace ffi = xla::ffi;

constexpr int64_t kChunksPerThread = 64;  // chunks per part, at most
constexpr int64_t kChunksPerPart = 8;     // chunks per part, at least where they can be ...
constexpr int64_t kSmallChunkBytes = int64_t{1} << 15;  // ... this small (bytes of traffic)
constexpr int kMaxThreads = 64;           // parts of one call, at most
// The memory traffic (bytes, as ElementCost counts it) a part of a call has at least, a chunk's:
// below twice this a call runs on the calling thread alone, sparing the pool's wake-up of a
// worker, and a larger minimum measured no faster where the split begins (see
// benchmarks/lowering_choices.py, table "split"; docs/performance.md).
constexpr int64_t kTaskMinBytes = kChunkBytes;
// How long the calling thread spins for the last chunks held by tasks before it sleeps: one
// chunk's time at most, less than a sleep and a wake-up.
constexpr int64_t kSpinMicros = 50;

// The minimum work per part in force (kTaskMinBytes unless a benchmark changed it through the
// module's _set_task_min_bytes(), to measure the split against one thread side by side).
inline std::atomic<int64_t> g_task_min_bytes{kTaskMinBytes};

// What the calls have done, for tests and benchmarks (the module's stats()).
inline std::atomic<int64_t> g_tasks_scheduled{0};  // tasks handed to the pool
inline std::atomic<int64_t> g_tasks_joined{0};     // of those, tasks that found chunks left
inline std::atomic<int64_t> g_calls_alone{0};      // calls on a pool worker (or forked), run alone
inline std::atomic<int64_t> g_pool_threads{-1};    // the pool's size at the latest call
// The most parts of one call (the module's _set_max_parts(): fs.config's kernel_threads, or
// kMaxThreads where that is 0).
inline std::atomic<int> g_max_parts{kMaxThreads};
// Set in the child of a fork() (pthread_atfork, registered when the module is loaded).
inline std::atomic<bool> g_forked{false};

inline void Pause() {
#if defined(__SSE2__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Set on a thread that ran one of this module's tasks: a worker of XLA's pool.
inline bool& RanPoolTask() {
  thread_local bool ran = false;
  return ran;
}

// The work of one call, shared with the tasks scheduled on the pool.
struct Work {
  Kind kind = kRead;
  Plan plan;
  char* view = nullptr;   // where the view starts in its storage (the offset applied)
  char* dense = nullptr;  // the dense array
  int64_t per_chunk = 1;  // blocks per chunk
  int64_t chunks = 0;
  int parts = 1;          // the threads that drain it, one range of chunks each
  std::thread::id caller;  // the calling thread
  std::fenv_t fenv;        // the calling thread's floating-point environment (flush-to-zero
                           // included), which the tasks take on for their chunks
  std::atomic<int> joined{0};
  std::atomic<int64_t> done{0};
  // Range k of the chunks, [front, back) packed as front | back << 32 (chunks < 2^32), on a
  // cache line of its own.
  struct alignas(64) Range {
    std::atomic<uint64_t> bounds{0};
  };
  Range ranges[kMaxThreads];
  std::mutex mu;
  std::condition_variable cv;

  // Deals the chunks in `threads` ranges of consecutive chunks, as equal as they divide.
  void Split(int threads) {
    parts = threads;
    for (int k = 0; k < parts; ++k) {
      const auto lo = static_cast<uint64_t>(chunks * k / parts);
      const auto hi = static_cast<uint64_t>(chunks * (k + 1) / parts);
      ranges[k].bounds.store(lo | hi << 32, std::memory_order_relaxed);
    }
  }

  // The front chunk of range k (its owner's next) or its back one (for a thread whose own
  // range is done); -1 where the range is empty.
  int64_t Claim(int k, bool back) {
    uint64_t v = ranges[k].bounds.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t f = v & 0xffffffffu, b = v >> 32;
      if (f >= b) return -1;
      const uint64_t w = back ? (f | (b - 1) << 32) : ((f + 1) | b << 32);
      if (ranges[k].bounds.compare_exchange_weak(v, w, std::memory_order_relaxed)) {
        return static_cast<int64_t>(back ? b - 1 : f);
      }
    }
  }

  void Run(int64_t c) {
    const int64_t lo = c * per_chunk;
    RunBytes(kind, plan, view, dense, lo, std::min(plan.blocks, lo + per_chunk));
    if (plan.stream) StreamFence();
    if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    }
  }

  // Run by each of the `parts` threads at most once: its own range in order, then the others'
  // from their backs. Whether it ran a chunk.
  bool Drain() {
    const int me = joined.fetch_add(1) % parts;
    bool ran = false;
    for (int64_t c; (c = Claim(me, false)) >= 0; ran = true) Run(c);
    for (int k = 1; k < parts; ++k) {
      for (int64_t c; (c = Claim((me + k) % parts, true)) >= 0; ran = true) Run(c);
    }
    return ran;
  }

  // A task on the pool: the chunks left, in the calling thread's floating-point environment.
  void Help() {
    if (std::this_thread::get_id() != caller) RanPoolTask() = true;  // not run inline by Schedule
    std::fenv_t own;
    std::fegetenv(&own);
    std::fesetenv(&fenv);
    if (Drain()) g_tasks_joined.fetch_add(1, std::memory_order_relaxed);
    std::fesetenv(&own);
  }

  // Waits until every chunk is done: the calling thread has claimed every chunk no task took,
  // so what is left runs on a started task and takes one chunk's time at most.
  void Wait() {
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
    while (done.load(std::memory_order_acquire) != chunks) {
      if (std::chrono::steady_clock::now() > spin_until) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return done.load(std::memory_order_acquire) == chunks; });
        return;
      }
      Pause();
    }
  }
};

// Cuts `work`'s blocks into chunks and runs them on the calling thread and the pool, returning
// when every block is moved. `alone`: on the calling thread only (a write in row-major order).
inline void RunSplit(ffi::ThreadPool& pool, const std::shared_ptr<Work>& work, bool alone) {
  const Plan& plan = work->plan;
  const int64_t pool_threads = pool.num_threads();
  g_pool_threads.store(pool_threads, std::memory_order_relaxed);
  const bool on_pool = !alone && (RanPoolTask() || g_forked.load(std::memory_order_relaxed));
  if (on_pool) g_calls_alone.fetch_add(1, std::memory_order_relaxed);
  const int64_t threads = alone || on_pool ? 1 : std::clamp<int64_t>(pool_threads, 1, g_max_parts.load());
  const int64_t block_cost = std::max<int64_t>(1, plan.block_cost);
  // parts of kTaskMinBytes' traffic at least (the product saturates far above any output)
  const double traffic = static_cast<double>(plan.blocks) * static_cast<double>(block_cost);
  const auto by_work = static_cast<int64_t>(
      std::min(traffic / static_cast<double>(std::max<int64_t>(1, g_task_min_bytes.load())), 1e9));
  int64_t parts = std::clamp<int64_t>(std::min(threads, by_work), 1, kMaxThreads);
  // Chunks of kChunkBytes, or smaller where a part would hold fewer than kChunksPerPart of them
  // (down to kSmallChunkBytes): the calling thread then takes over most of a task's range while
  // the task's worker wakes up, rather than waiting for the one chunk it holds.
  const auto small = static_cast<int64_t>(traffic / static_cast<double>(parts * kChunksPerPart));
  const int64_t chunk_bytes = std::clamp(small, kSmallChunkBytes, kChunkBytes);
  const int64_t fewest = (plan.blocks + kChunksPerThread * parts - 1) / (kChunksPerThread * parts);
  work->per_chunk = alone || parts == 1 ? plan.blocks
                                        : std::max<int64_t>({1, chunk_bytes / block_cost, fewest});
  work->chunks = (plan.blocks + work->per_chunk - 1) / work->per_chunk;
  if (work->chunks == 0) return;
  parts = std::min(parts, work->chunks);
  work->Split(static_cast<int>(parts));
  if (parts > 1) {
    work->caller = std::this_thread::get_id();
    std::fegetenv(&work->fenv);
    for (int64_t k = 1; k < parts; ++k) {
      g_tasks_scheduled.fetch_add(1, std::memory_order_relaxed);
      pool.Schedule([work] { work->Help(); });
    }
  }
  work->Drain();
  work->Wait();
}

}  // namespace functional_strides::native

#endif  // FUNCTIONAL_STRIDES_NATIVE_PARALLEL_H_

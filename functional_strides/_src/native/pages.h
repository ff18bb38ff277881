// The pages of a fresh output. XLA:CPU takes each output from malloc, which maps a large block
// as new pages of 4 KiB, each faulted in (and zeroed) by the first store to it: a 64 MiB output
// costs 16,384 faults a call. NumPy asks the kernel to back its large arrays with 2 MiB pages
// (madvise(MADV_HUGEPAGE), where transparent huge pages are in "madvise" mode, the default of
// many distributions); so does this library, for the buffers it writes first: the 2 MiB-aligned
// interior of an output of at least kAdviseMinBytes, before any thread touches it. Where the OS
// refuses (no transparent huge pages, a kernel without them, memory that is not anonymous) the
// advice is ignored and the output is faulted in as before.

#ifndef FUNCTIONAL_STRIDES_NATIVE_PAGES_H_
#define FUNCTIONAL_STRIDES_NATIVE_PAGES_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace functional_strides::native {

constexpr uintptr_t kHugePageBytes = uintptr_t{1} << 21;
// As NumPy's threshold: an output of 4 MiB holds one aligned 2 MiB page at least.
constexpr size_t kAdviseMinBytes = size_t{1} << 22;

// Whether outputs are advised (the module's _set_advise_huge_pages(), for benchmarks that
// measure the advice against none side by side).
inline std::atomic<bool> g_advise_huge_pages{true};
inline std::atomic<int64_t> g_advised_bytes{0};  // bytes advised since the module was loaded

inline void AdviseHugePages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kAdviseMinBytes || !g_advise_huge_pages.load(std::memory_order_relaxed)) return;
  const auto start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t lo = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t hi = (start + bytes) & ~(kHugePageBytes - 1);
  if (hi <= lo) return;
  if (madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE) == 0) {
    g_advised_bytes.fetch_add(static_cast<int64_t>(hi - lo), std::memory_order_relaxed);
  }
#else
  (void)data, (void)bytes;
#endif
}

}  // namespace functional_strides::native

#endif  // FUNCTIONAL_STRIDES_NATIVE_PAGES_H_

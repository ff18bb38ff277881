// A strided copy and a strided write for XLA:CPU, called from jitted programs through XLA's
// FFI: the dense row-major array of a view, out[i] = storage[base + sum_k i_k * stride_k], in
// one pass over the output, and its reverse, storage[...] = values[i] (or += values[i]), in
// place, split across as many threads as XLA's intra-op pool has. It is the loop PyTorch and
// NumPy copy with, plus cache tiles for transposes, which XLA's own transpose emitter lacks.
//
// Operands: the 1-D storage (any dtype of 1, 2, 4, 8 or 16 bytes) and the offset (an int32
// or int64 scalar); a write also takes the values, dense in the view's shape, and returns the
// storage (aliased to it) updated through the view. Attributes: `sizes` and `strides`
// (int64, elements), the view with its dims coalesced and size-1 dims dropped; `below`,
// sum((n-1)*s for s < 0); `reach`, the elements the view spans. The start of the view's
// span, offset + below, is clamped into [0, n - reach], as lax.dynamic_slice clamps.
//
// The dense array is visited once, in row-major order within blocks:
//   * a plain block is the last dim: one copied run when its stride is 1, a fill when 0, every
//     other element picked out of whole AVX2 loads when 2 (ReadEveryOther), else a strided
//     loop (whole rows along the dim inside taken a stretch at a time);
//   * a tile block, when the last dim's stride jumps a cache line per element and another
//     dim runs through memory, is a tile of those two dims: a read's 64 x 64 elements of at
//     most 4 bytes (16 KiB), else 32 x 32, or up to 128 rows by 32 where the last dim spans
//     at most two tiles; a write's 32 x 32. It is moved through a buffer in L1 along the
//     running dim on the view's side and along the last on the dense side, so each cache
//     line on either side is moved whole.
// A read of a permute whose output is large stores it past the caches (streaming stores: no
// line of the output is read before it is written).
// A write through a view whose elements share slots runs in the view's row-major order
// (the last write of a slot wins, additions arrive in that order): overlapping windows
// (dims (rows, len):(step, 1), step < len: overlap-add of frames) by blocks of storage
// slots, each window clipped to the block and the windows added row by row, as PyTorch's
// loop adds them; any other such view on one thread, in plain blocks.
// Blocks are numbered in the order of the dense array, or of the storage for a write whose
// elements share no slot (its stores sweep the storage, as PyTorch orders a loop by its output)
// and for a read of whole contiguous rows that the storage's order spreads over few runs of
// the output (attention heads). Chunks of consecutive blocks (of kChunkBytes' cost at least)
// are dealt in equal ranges to the calling thread and to helper threads of this module's own
// (Crew: as many in all as XLA's intra-op pool has threads, spinning a while between calls
// before they sleep, as OpenMP's workers do): each thread runs its own range front to back
// (one stretch of the output, whose pages it alone faults in), then takes chunks from the
// back of the others' ranges, so a thread that starts late or runs slow (a busy virtual CPU)
// leaves no stretch of work for the end.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <cfenv>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>  // AVX2 and AVX-512, in functions compiled for them, called where the CPU has them
#endif

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int64_t kRows = 32;  // a tile's extent along the running dim (output rows)
constexpr int64_t kCols = 32;  // a tile's extent along the last dim (output columns)
constexpr int64_t kTallRows = 128;     // a read's tile where the last dim is short, at most
constexpr int64_t kTileBytes = 16384;  // ... and at most this many bytes (half of L1)
constexpr int64_t kWide = 64;          // a read's wide tile: kWide x kWide, if it fits kTileBytes
constexpr int64_t kLineBytes = 64;               // a cache line
constexpr int64_t kChunkBytes = int64_t{1} << 18;  // bytes of memory a claimed chunk touches, at least
constexpr int64_t kChunksPerThread = 64;          // chunks per thread, at most
constexpr int kMaxThreads = 64;                    // threads that share one call, at most
constexpr int64_t kPageBytes = 4096;              // a page: what a far jump costs at most (a TLB miss)
constexpr int64_t kWriteStreams = 32;             // output runs a read in the storage's order writes at once
constexpr int64_t kStreamMinBytes = int64_t{1} << 23;  // a read's output streamed from 8 MiB (Streams)
constexpr int kMaxRank = 64;

struct U128 {
  uint64_t lo, hi;
};

inline int64_t Abs(int64_t v) { return v < 0 ? -v : v; }

// The order blocks are numbered in: the dense array's, the storage's (the view's strides,
// largest outermost), or, for a read, the storage's where it reads whole contiguous rows and
// writes at most kWriteStreams runs of the output at once ("order" attribute of the read).
enum Order : int64_t { kAutoOrder = 0, kDenseOrder = 1, kStorageOrder = 2 };

// The shape of a read's tiles ("tiles" attribute): kRows x kCols (short), TallRows x kCols
// (tall) or kWide x kWide (wide, for elements of at most 4 bytes; short for wider ones), or
// the rule of MakePlan (kAutoTiles).
enum Tiles : int64_t { kAutoTiles = 0, kShortTiles = 1, kTallTiles = 2, kWideTiles = 3 };

// How a read stores its output ("stores" attribute): through the caches, or with stores that
// bypass them (kStreamingStores), or streaming where the output is large (kAutoStores).
enum Stores : int64_t { kAutoStores = 0, kCachedStores = 1, kStreamingStores = 2 };

// The blocks of a view, numbered in the dense array's order or the storage's (Order).
struct Plan {
  int64_t es = 0;              // bytes per element
  bool tiled = false;
  int64_t n_last = 0;          // the last dim's extent
  int64_t piece = 0;           // plain: elements of the last dim per block (long rows split)
  int64_t s_last = 0;          // the last dim's input stride
  int64_t t_size = 0, t_in = 0, t_out = 0;  // tiled: the running dim (extent, strides)
  int64_t t_rows = 0;          // tiled: a tile's extent along the running dim
  int64_t t_cols = 0;          // tiled: a tile's extent along the last dim
  int t_row_counter = 0, t_col_counter = 0;  // tiled: the counters of the running and last dims' tiles
  int rank = 0;                // dims of the block counter (outer dims, then tile counters)
  int64_t count[kMaxRank];     // extent of each counter
  int64_t in_step[kMaxRank];   // input elements per step of each counter
  int64_t out_step[kMaxRank];  // output elements per step of each counter
  bool windows = false;        // overlapping rows (sizes[1] elements, strides[0] < sizes[1]
  int64_t w_rows = 0, w_len = 0, w_step = 0;  // apart) written by runs of storage slots
  int64_t blocks = 1;          // product of count
  int64_t block_cost = 0;      // bytes of memory a whole block touches (see ElementCost)
  bool stream = false;         // a read's runs of the output stored past the caches
  bool gaps = false;           // a write of every other slot (the last dim's stride 2, every
                               // stride even): the slots between are in no block, so a
                               // block may rewrite them with the values they hold
};

// The bytes of memory one element of a plain block costs to move: its own bytes where the
// block runs through memory (or repeats one slot), the jump where elements lie apart (every
// element of a stride-2 block touches two), and at most a page, whose TLB miss dominates the
// element's cost. Chunks hold kChunkBytes of that cost, so a column of far-apart elements is
// split across threads as finely as a block of the same traffic would be.
int64_t ElementCost(int64_t stride, int64_t es) {
  return std::clamp(Abs(stride) * es, es, kPageBytes);
}

// The tile height of a read whose last dim spans at most two tiles (NCHW->NHWC: 64 channels):
// a tile then writes rows of the output that lie together, so a taller tile costs the output
// nothing and reads longer runs of each of the input's (far apart) rows.
constexpr int64_t TallRows(int64_t es) {
  return std::clamp(kTileBytes / (kCols * es), kRows, kTallRows);
}

// The elements of a tile's buffer: the largest tile of T (at most kTileBytes, at least kRows x kCols).
constexpr int64_t TileElements(int64_t es) {
  return std::max(kTileBytes / es, kRows * kCols);
}

// serial: the blocks in the view's row-major order (no tiles), for writes whose elements share
// slots (the order is then the dense array's). order: kStorageOrder for a write whose elements
// share no slot (its stores sweep the storage, as PyTorch orders a loop by its output).
Plan MakePlan(const int64_t* sizes, const int64_t* strides, int64_t rank, int64_t es, bool read,
              bool serial, Order order, Tiles tiles) {
  Plan p;
  p.es = es;
  if (rank == 0) {  // one element: one block of one piece
    p.n_last = p.piece = 1;
    p.count[0] = 1;
    p.in_step[0] = p.out_step[0] = 0;
    p.rank = 1;
    p.block_cost = es;
    return p;
  }
  if (serial && rank == 2 && strides[1] == 1 && strides[0] > 0 && strides[0] < sizes[1]) {
    // Windows (overlap-add of frames): block b is the storage slots [b * piece, (b + 1) *
    // piece) from the view's start, every window clipped to it and written in row-major
    // order. A slot lies in one block, and its windows reach it in row-major order in that
    // block, so the blocks run in parallel with the serial loop's results, bit for bit.
    p.windows = true;
    p.w_rows = sizes[0];
    p.w_len = sizes[1];
    p.w_step = strides[0];
    const int64_t span = (sizes[0] - 1) * strides[0] + sizes[1];
    const int64_t cost = es * ((sizes[1] + strides[0] - 1) / strides[0]);  // windows per slot
    p.piece = std::min(span, std::max<int64_t>(1, kChunkBytes / cost));
    p.blocks = (span + p.piece - 1) / p.piece;
    p.block_cost = p.piece * cost;
    return p;
  }
  std::vector<int64_t> out_stride(rank);
  int64_t acc = 1;
  for (int64_t k = rank - 1; k >= 0; --k) {
    out_stride[k] = acc;
    acc *= sizes[k];
  }
  const int64_t d = rank - 1;
  const int64_t jump = Abs(strides[d]);
  int64_t t = -1;
  if (!serial && jump * es >= kLineBytes && sizes[d] >= 4) {
    for (int64_t k = 0; k < d; ++k) {
      const int64_t s = Abs(strides[k]);
      if (sizes[k] >= 4 && s * es * 4 <= kLineBytes && s < jump && (t < 0 || s < Abs(strides[t]))) {
        t = k;
      }
    }
  }
  p.s_last = strides[d];
  std::vector<int64_t> outer;  // the dims counted by the block counter, outermost first
  for (int64_t k = 0; k < d; ++k) {
    if (k != t) outer.push_back(k);
  }
  std::vector<int64_t> stored = outer;  // the view's memory order: largest stride outermost
  std::stable_sort(stored.begin(), stored.end(),
                   [&](int64_t x, int64_t y) { return Abs(strides[x]) > Abs(strides[y]); });
  // A read of whole contiguous rows (attention heads: rows of 64 elements a storage row
  // apart) in the dense order jumps through the storage at every row, too far for the
  // prefetcher; in the storage's order it reads the storage straight through and writes at
  // most kWriteStreams runs of the output at once, which the prefetcher follows.
  // (`python benchmarks/lowering_choices.py --only rows`: heads [B,T,H*64] -> [B,H,T,64],
  // storage / dense order 0.64-0.82x for 4 to 32 heads at 2^24 float32 elements, 0.48-0.78x
  // at 2^22 (`--quick`); for 64 and 256 heads 0.83-0.92x at 2^24 but 1.29-1.48x at 2^22:
  // past 32 runs of the output the dense order, as PyTorch's, stays.)
  const bool rows_in_storage_order = t < 0 && Abs(strides[d]) == 1 &&
                                     sizes[d] * es <= kChunkBytes && !stored.empty() &&
                                     sizes[stored.back()] <= kWriteStreams;
  if (!serial && (order == kStorageOrder || (order == kAutoOrder && rows_in_storage_order))) outer = stored;
  for (int64_t k : outer) {
    p.count[p.rank] = sizes[k];
    p.in_step[p.rank] = strides[k];
    p.out_step[p.rank] = out_stride[k];
    ++p.rank;
  }
  if (t >= 0) {
    p.tiled = true;
    p.t_size = sizes[t];
    p.t_in = strides[t];
    p.t_out = out_stride[t];
    // Longer runs of the view's far-apart rows, and of the output's, per tile: fewer rows of
    // memory opened per byte moved. (`python benchmarks/lowering_choices.py --only tiles`,
    // float32, ratios to 32x32: 64x64 0.48-0.75x on NCHW->NHWC, NCDHW->NDHWC, a transpose to
    // a last dim of 32, the 4096x4096 transpose, flipped and transposed, 1.05x on
    // NDHWC->NCDHW (all alike there); 0.29-0.65x in the `--quick` run, 16x smaller; 128x32
    // 0.52-1.02x and 0.35-0.81x. Elements of 8 bytes and more keep 32 columns, the tile
    // within 16 KiB.)
    const bool wide_fits = kWide * kWide * es <= kTileBytes;
    const Tiles shape = !read ? kShortTiles
                        : tiles != kAutoTiles ? tiles
                        : wide_fits ? kWideTiles
                        : sizes[d] <= 2 * kCols ? kTallTiles
                                                : kShortTiles;
    const bool wide = shape == kWideTiles && wide_fits;  // else 32 columns
    p.t_rows = shape == kTallTiles ? TallRows(es) : wide ? kWide : kRows;
    p.t_cols = wide ? kWide : kCols;
    // The tiles of one row of tiles run along the last dim (the output written a row of tiles
    // at a time), or in the storage's order down the running dim (each of a tile's input
    // columns then read straight through).
    const bool down = read && order == kStorageOrder;
    p.t_row_counter = down ? p.rank + 1 : p.rank;
    p.t_col_counter = down ? p.rank : p.rank + 1;
    p.count[p.t_row_counter] = (sizes[t] + p.t_rows - 1) / p.t_rows;
    p.in_step[p.t_row_counter] = p.t_rows * strides[t];
    p.out_step[p.t_row_counter] = p.t_rows * out_stride[t];
    p.count[p.t_col_counter] = (sizes[d] + p.t_cols - 1) / p.t_cols;
    p.in_step[p.t_col_counter] = p.t_cols * strides[d];
    p.out_step[p.t_col_counter] = p.t_cols;
    p.rank += 2;
    p.n_last = sizes[d];
    p.block_cost = p.t_rows * p.t_cols * es;
  } else {
    p.n_last = sizes[d];
    // Every stride even: each element's slot has the parity of the view's first, so the slots
    // between a stride-2 dim's elements belong to no block (the view shares no slot here).
    bool even = true;
    for (int64_t k = 0; k < rank; ++k) even &= strides[k] % 2 == 0;
    p.gaps = !read && !serial && strides[d] == 2 && even;
    const int64_t cost = ElementCost(strides[d], es);
    p.piece = std::min(sizes[d], std::max<int64_t>(1, kChunkBytes / cost));
    p.count[p.rank] = (sizes[d] + p.piece - 1) / p.piece;
    p.in_step[p.rank] = p.piece * strides[d];
    p.out_step[p.rank] = p.piece;
    ++p.rank;
    p.block_cost = p.piece * cost;
  }
  for (int i = 0; i < p.rank; ++i) p.blocks *= p.count[i];
  return p;
}

// n contiguous elements copied with stores that bypass the caches (SSE2 movntdq: the output's
// lines are written whole, without the read a cached store first makes of each) where they
// fill aligned 16-byte groups of the output, plain stores at the ends.
template <typename T>
void StreamRun(T* out, const T* in, int64_t n) {
  char* d = reinterpret_cast<char*>(out);
  const char* s = reinterpret_cast<const char*>(in);
  size_t bytes = static_cast<size_t>(n) * sizeof(T);
#if defined(__SSE2__)
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  for (; bytes >= 16; bytes -= 16, d += 16, s += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  }
#endif
  std::memcpy(d, s, bytes);
}

// Streaming stores are ordered with the calling thread's later stores and made visible to
// other threads (before the chunk is counted done).
inline void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
bool HasAvx2();

// n contiguous bytes copied with 32-byte loads and stores, four to an iteration, the rest by
// memcpy. Into a fresh output (every page faulted in by the copy) it takes less time than
// glibc's memcpy: frames 1024/256 of a 4 Mi-sample float32 signal, one thread, 9.0 against
// 9.7-9.9 ms (PyTorch's own vector loop 8.3); two threads 5.8 against 6.2 ms.
__attribute__((target("avx2"))) void CopyRunAvx2(char* __restrict d, const char* __restrict s, size_t bytes) {
  for (; bytes >= 128; bytes -= 128, d += 128, s += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 96));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), a);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32), b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 64), c);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 96), e);
  }
  std::memcpy(d, s, bytes);
}
#endif

// n contiguous elements copied through the caches (the vector loop where the CPU has AVX2).
template <typename T>
void CopyRun(T* out, const T* in, int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (HasAvx2()) {
    CopyRunAvx2(reinterpret_cast<char*>(out), reinterpret_cast<const char*>(in), bytes);
    return;
  }
#endif
  std::memcpy(out, in, bytes);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The elements at the even slots of two 32-byte loads of the input, a then b (elements of
// T), as one 32-byte group: 1- and 2-byte elements masked to the low half of each 2- or
// 4-byte group and packed (without saturating: the masked values fit), 4- and 8-byte ones
// shuffled; each leaves a's half and b's half interleaved by 128-bit lane, which the
// permute of 8-byte quarters puts in order.
template <typename T>
__attribute__((target("avx2"))) inline __m256i EvenSlots(__m256i a, __m256i b) {
  __m256i e;
  if constexpr (sizeof(T) == 1) {
    const __m256i low = _mm256_set1_epi16(0x00ff);
    e = _mm256_packus_epi16(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
  } else if constexpr (sizeof(T) == 2) {
    const __m256i low = _mm256_set1_epi32(0x0000ffff);
    e = _mm256_packus_epi32(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
  } else if constexpr (sizeof(T) == 4) {  // a0 a2 b0 b2 | a4 a6 b4 b6
    e = _mm256_castps_si256(
        _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
  } else {  // a0 b0 | a2 b2
    e = _mm256_castpd_si256(_mm256_unpacklo_pd(_mm256_castsi256_pd(a), _mm256_castsi256_pd(b)));
  }
  return _mm256_permute4x64_epi64(e, _MM_SHUFFLE(3, 1, 2, 0));
}

template <typename T>
__attribute__((target("avx2"))) void ReadEveryOtherAvx2(const T* in, T* out, int64_t n, bool stream) {
  constexpr int64_t kGroup = 32 / sizeof(T);  // elements of one 32-byte group of the output
  int64_t i = 0;
  if (stream) {
    for (; i < n && reinterpret_cast<uintptr_t>(out + i) % 32 != 0; ++i) out[i] = in[2 * i];
  }
  for (; i + kGroup < n; i += kGroup) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i + kGroup));
    const __m256i v = EvenSlots<T>(a, b);
    if (stream) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i), v);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), v);
    }
  }
  for (; i < n; ++i) out[i] = in[2 * i];
}
#endif

// n elements read from every other slot, out[i] = in[2 * i]: with AVX2, two 32-byte loads
// of the input give 32 elements of 1 byte (16 of 2, 8 of 4, 4 of 8), picked out in registers
// and stored as one 32-byte group of the output (streamed where `stream`, from the first
// aligned group), so the input is read by whole vectors rather than an element at a time. A
// group is taken only where its last slot lies before the view's last element (no load
// reaches past the view); the rest is read element by element. False where it does not apply
// (no AVX2, 16-byte elements): the caller then reads element by element.
template <typename T>
bool ReadEveryOther(const T* in, T* out, int64_t n, bool stream) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if constexpr (sizeof(T) <= 8) {
    if (!HasAvx2()) return false;
    ReadEveryOtherAvx2(in, out, n, stream);
    return true;
  }
#endif
  (void)in, (void)out, (void)n, (void)stream;
  return false;
}

template <typename T>
void PlainBlock(const T* in, T* out, int64_t n, int64_t s, bool stream) {
  if (s == 1 && stream) {
    StreamRun(out, in, n);
  } else if (s == 1) {
    CopyRun(out, in, n);
  } else if (s == 2 && ReadEveryOther(in, out, n, stream)) {
    return;
  } else if (s == 0) {
    const T v = *in;
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i * s];
  }
}

// The buffer (rows of `pitch` elements) of a tile whose columns are contiguous runs of the
// input, forwards or backwards (row_in == 1 or -1), transposed in registers: 4x4 blocks of
// 4-byte elements (rows and columns multiples of 4), 2x2 of 8-byte ones (both even) (SSE2,
// part of every x86-64). False where it does not apply; the caller then copies element by
// element.
template <typename T>
bool TransposeIn(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t) {
  return false;
}

#if defined(__SSE2__)
template <>
bool TransposeIn(const uint32_t* in, uint32_t* buf, int64_t rows, int64_t cols, int64_t row_in,
                 int64_t col_in, int64_t pitch) {
  if ((row_in != 1 && row_in != -1) || rows % 4 != 0 || cols % 4 != 0) return false;
  const bool back = row_in < 0;
  for (int64_t b = 0; b < cols; b += 4) {
    const float* c0 = reinterpret_cast<const float*>(in + b * col_in);
    const float* c1 = c0 + col_in;
    const float* c2 = c1 + col_in;
    const float* c3 = c2 + col_in;
    for (int64_t a = 0; a < rows; a += 4) {
      const int64_t at = back ? -a - 3 : a;  // the lowest address of elements a..a+3
      __m128 r0 = _mm_loadu_ps(c0 + at), r1 = _mm_loadu_ps(c1 + at);
      __m128 r2 = _mm_loadu_ps(c2 + at), r3 = _mm_loadu_ps(c3 + at);
      if (back) {  // element a is the highest of the four
        r0 = _mm_shuffle_ps(r0, r0, 0x1B);
        r1 = _mm_shuffle_ps(r1, r1, 0x1B);
        r2 = _mm_shuffle_ps(r2, r2, 0x1B);
        r3 = _mm_shuffle_ps(r3, r3, 0x1B);
      }
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      float* dst = reinterpret_cast<float*>(buf + a * pitch + b);
      _mm_store_ps(dst, r0);
      _mm_store_ps(dst + pitch, r1);
      _mm_store_ps(dst + 2 * pitch, r2);
      _mm_store_ps(dst + 3 * pitch, r3);
    }
  }
  return true;
}

template <>
bool TransposeIn(const uint64_t* in, uint64_t* buf, int64_t rows, int64_t cols, int64_t row_in,
                 int64_t col_in, int64_t pitch) {
  if ((row_in != 1 && row_in != -1) || rows % 2 != 0 || cols % 2 != 0) return false;
  const bool back = row_in < 0;
  for (int64_t b = 0; b < cols; b += 2) {
    const double* c0 = reinterpret_cast<const double*>(in + b * col_in);
    const double* c1 = c0 + col_in;
    for (int64_t a = 0; a < rows; a += 2) {
      const int64_t at = back ? -a - 1 : a;
      __m128d r0 = _mm_loadu_pd(c0 + at), r1 = _mm_loadu_pd(c1 + at);
      if (back) {
        r0 = _mm_shuffle_pd(r0, r0, 1);
        r1 = _mm_shuffle_pd(r1, r1, 1);
      }
      double* dst = reinterpret_cast<double*>(buf + a * pitch + b);
      _mm_store_pd(dst, _mm_unpacklo_pd(r0, r1));
      _mm_store_pd(dst + pitch, _mm_unpackhi_pd(r0, r1));
    }
  }
  return true;
}
#endif

// Data movement only: float and double tiles move as the integers of their width.
template <>
bool TransposeIn(const float* in, float* buf, int64_t rows, int64_t cols, int64_t row_in, int64_t col_in,
                 int64_t pitch) {
  return TransposeIn(reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(buf), rows, cols,
                     row_in, col_in, pitch);
}

template <>
bool TransposeIn(const double* in, double* buf, int64_t rows, int64_t cols, int64_t row_in, int64_t col_in,
                 int64_t pitch) {
  return TransposeIn(reinterpret_cast<const uint64_t*>(in), reinterpret_cast<uint64_t*>(buf), rows, cols,
                     row_in, col_in, pitch);
}

// A tile: output rows a (the running dim) by columns b (the last dim), its buffer's rows
// `pitch` elements apart. Each column b is a short run of the input (row_in apart, a few
// bytes) and each row a a run of the output: both are moved whole through a buffer in L1, so
// no line is fetched twice however the input's columns alias in the caches (rows 4 KiB apart
// map to the same cache sets).
template <typename T>
void TileBlock(const T* in, T* out, int64_t rows, int64_t cols, int64_t row_in, int64_t row_out,
               int64_t col_in, int64_t pitch, bool stream) {
  alignas(64) T buf[TileElements(sizeof(T))];  // buf[a * pitch + b]: the tile in output order
  if (!TransposeIn(in, buf, rows, cols, row_in, col_in, pitch)) {
    for (int64_t b = 0; b < cols; ++b) {
      const T* src = in + b * col_in;
      for (int64_t a = 0; a < rows; ++a) buf[a * pitch + b] = src[a * row_in];
    }
  }
  for (int64_t a = 0; a < rows; ++a) {
    if (stream) {
      StreamRun(out + a * row_out, buf + a * pitch, cols);
    } else {
      std::memcpy(out + a * row_out, buf + a * pitch, static_cast<size_t>(cols) * sizeof(T));
    }
  }
}

// A read: the dense output from the view.
template <typename T>
struct Read {
  static void Plain(const T* view, T* dense, int64_t n, int64_t s, const Plan& p) {
    PlainBlock(view, dense, n, s, p.stream);
  }
  static void Tile(const T* view, T* dense, int64_t rows, int64_t cols, int64_t t_in, int64_t t_out,
                   int64_t s_last, int64_t pitch, const Plan& p) {
    TileBlock(view, dense, rows, cols, t_in, t_out, s_last, pitch, p.stream);
  }
  static void Rows(const T* view, T* dense, int64_t n, int64_t s, int64_t rows, int64_t view_step,
                   int64_t dense_step, const Plan& p) {
    for (int64_t r = 0; r < rows; ++r) Plain(view + r * view_step, dense + r * dense_step, n, s, p);
  }
};

// A write: view = Op(view, dense), for Op = Set (any element, moved as bytes) or Add (T the
// arithmetic type: float, double, or the unsigned integer of the width, which wraps as
// two's complement does).
struct Set {
  template <typename T>
  static T Apply(T, T value) {
    return value;
  }
};

struct Add {
  template <typename T>
  static T Apply(T old, T value) {
    return old + value;
  }
};

// n contiguous elements of the view updated from n of a distinct buffer (the values never
// share memory with the storage written: XLA copies an operand the output would clobber).
// The restrict pointers let the compiler vectorize the loop, which it does not do where the
// two may alias.
template <typename T, typename Op>
inline __attribute__((always_inline)) void UpdateRunBody(T* __restrict view, const T* __restrict values,
                                                         int64_t n) {
  for (int64_t i = 0; i < n; ++i) view[i] = Op::Apply(view[i], values[i]);
}

// `rows` runs of n elements, run r at view + r * view_step and values + r * values_step.
template <typename T, typename Op>
inline __attribute__((always_inline)) void UpdateRunsBody(T* view, const T* values, int64_t n, int64_t rows,
                                                          int64_t view_step, int64_t values_step) {
  for (int64_t r = 0; r < rows; ++r) UpdateRunBody<T, Op>(view + r * view_step, values + r * values_step, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The runs in one call, the run's loop inlined (the attention heads: runs of 64 elements, one
// per head; overlapping windows: one run per window), compiled for AVX2 (32-byte loads and
// adds; the baseline build has SSE2's 16) and for AVX-512, taken where the CPU has them
// (UpdateRuns).
// `+=` through the heads [B,H,T,D] view on two threads: 0.93-0.96x PyTorch's time with the
// AVX2 loop a stretch of runs at a time, 1.04-1.07x with a call a run, 0.97-1.04x with
// AVX-512 (one build each, `benchmarks/bench_writes.py`'s heads case, two runs; on an earlier
// host, one core: AVX2 6.8 ms against 7.5 ms with SSE2, AVX-512 1.06x AVX2's time). Runs
// updated once wait on memory; a window's slots are updated once per window that holds them,
// from lines the window before left in L1, so that loop is bound by the core's loads and
// stores and takes AVX-512: overlap-add of frames 1024/256 (float32, a 16 MiB storage), the
// builds switched in one process, 30 rounds in shuffled order, four runs: 0.91-1.02x
// PyTorch's time (its `add_` built for AVX-512), AVX2 0.92-1.16x, and 0.98-1.20x for
// adding the 4 windows of each run of 256 slots in one pass (one load and store of a slot,
// its values read from 4 places a page apart; on an earlier host 0.89-0.92x the window loop).
template <typename T, typename Op>
__attribute__((target("avx2"))) void UpdateRunsAvx2(T* view, const T* values, int64_t n, int64_t rows,
                                                    int64_t view_step, int64_t values_step) {
  UpdateRunsBody<T, Op>(view, values, n, rows, view_step, values_step);
}

template <typename T, typename Op>
__attribute__((target("avx512f"))) void UpdateRunsAvx512(T* view, const T* values, int64_t n, int64_t rows,
                                                        int64_t view_step, int64_t values_step) {
  UpdateRunsBody<T, Op>(view, values, n, rows, view_step, values_step);
}

bool HasAvx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}

bool HasAvx512() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return has;
}
#endif

// The runs of UpdateRunsBody added by the widest loop that fits them: AVX-512 for overlapping
// windows (`windows`, Plan::windows), AVX2 for other additions, else the baseline build's.
template <typename T, typename Op>
void UpdateRuns(T* view, const T* values, int64_t n, int64_t rows, int64_t view_step, int64_t values_step,
                bool windows) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (std::is_same_v<Op, Add> && windows && HasAvx512()) {
    UpdateRunsAvx512<T, Op>(view, values, n, rows, view_step, values_step);
    return;
  }
  if (std::is_same_v<Op, Add> && HasAvx2()) {
    UpdateRunsAvx2<T, Op>(view, values, n, rows, view_step, values_step);
    return;
  }
#endif
  UpdateRunsBody<T, Op>(view, values, n, rows, view_step, values_step);
}

template <typename T, typename Op>
void UpdateRun(T* view, const T* values, int64_t n, bool windows) {
  UpdateRuns<T, Op>(view, values, n, 1, 0, 0, windows);
}

// n elements set at every other slot, view[2 * i] = values[i], where the slots between may be
// rewritten with what they hold (Plan::gaps): with AVX2, 8 elements of 4 bytes (4 of 8) are
// spread over 16 slots in registers and blended into two 32-byte loads of the view, so the
// view's lines are written by a quarter of the stores. A group is taken only where its last
// slot lies before the view's last element (the slots it rewrites are between the view's
// own); the rest is set element by element. False where it does not apply (no AVX2, other
// element sizes): the caller then sets element by element.
// (On `x[::2, ::2] = v` of a 4096x4096 float32 storage, two threads: 0.89-0.92x the time of
// the element loop in a standalone harness.)
template <typename T>
bool SetEveryOther(T*, const T*, int64_t) {
  return false;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) void SetEveryOther4(uint32_t* view, const uint32_t* values, int64_t n) {
  float* out = reinterpret_cast<float*>(view);  // bit patterns only: blends and shuffles move bits
  const float* in = reinterpret_cast<const float*>(values);
  int64_t i = 0;
  for (; i + 8 < n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);                     // v0 .. v7
    const __m256 lo = _mm256_unpacklo_ps(v, v), hi = _mm256_unpackhi_ps(v, v);  // v0 v0 v1 v1 | v4 ..
    const __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20);       // v0 v0 v1 v1 v2 v2 v3 v3
    const __m256 b = _mm256_permute2f128_ps(lo, hi, 0x31);       // v4 v4 .. v7 v7
    _mm256_storeu_ps(out + 2 * i, _mm256_blend_ps(_mm256_loadu_ps(out + 2 * i), a, 0x55));
    _mm256_storeu_ps(out + 2 * i + 8, _mm256_blend_ps(_mm256_loadu_ps(out + 2 * i + 8), b, 0x55));
  }
  for (; i < n; ++i) view[2 * i] = values[i];
}

__attribute__((target("avx2"))) void SetEveryOther8(uint64_t* view, const uint64_t* values, int64_t n) {
  double* out = reinterpret_cast<double*>(view);
  const double* in = reinterpret_cast<const double*>(values);
  int64_t i = 0;
  for (; i + 4 < n; i += 4) {
    const __m256d v = _mm256_loadu_pd(in + i);                    // v0 .. v3
    const __m256d lo = _mm256_unpacklo_pd(v, v), hi = _mm256_unpackhi_pd(v, v);  // v0 v0 | v2 v2
    const __m256d a = _mm256_permute2f128_pd(lo, hi, 0x20);      // v0 v0 v1 v1
    const __m256d b = _mm256_permute2f128_pd(lo, hi, 0x31);      // v2 v2 v3 v3
    _mm256_storeu_pd(out + 2 * i, _mm256_blend_pd(_mm256_loadu_pd(out + 2 * i), a, 0x5));
    _mm256_storeu_pd(out + 2 * i + 4, _mm256_blend_pd(_mm256_loadu_pd(out + 2 * i + 4), b, 0x5));
  }
  for (; i < n; ++i) view[2 * i] = values[i];
}

template <>
bool SetEveryOther(uint32_t* view, const uint32_t* values, int64_t n) {
  if (!HasAvx2()) return false;
  SetEveryOther4(view, values, n);
  return true;
}

template <>
bool SetEveryOther(uint64_t* view, const uint64_t* values, int64_t n) {
  if (!HasAvx2()) return false;
  SetEveryOther8(view, values, n);
  return true;
}
#endif

template <typename T, typename Op>
struct Write {
  static void Plain(T* view, const T* dense, int64_t n, int64_t s, const Plan& p) {
    if (s == 1 && std::is_same_v<Op, Set>) {
      std::memcpy(view, dense, static_cast<size_t>(n) * sizeof(T));
      return;
    }
    if (s == 1) {
      UpdateRun<T, Op>(view, dense, n, p.windows);
      return;
    }
    if (s == 2 && p.gaps && std::is_same_v<Op, Set> && SetEveryOther(view, dense, n)) return;
    for (int64_t i = 0; i < n; ++i) view[i * s] = Op::Apply(view[i * s], dense[i]);
  }
  // `rows` plain blocks of n elements at view + r * view_step and dense + r * dense_step (the
  // blocks along one counter, or whole windows): additions to contiguous runs in one call.
  static void Rows(T* view, const T* dense, int64_t n, int64_t s, int64_t rows, int64_t view_step,
                   int64_t dense_step, const Plan& p) {
    if (std::is_same_v<Op, Add> && s == 1) {
      UpdateRuns<T, Op>(view, dense, n, rows, view_step, dense_step, p.windows);
      return;
    }
    for (int64_t r = 0; r < rows; ++r) Plain(view + r * view_step, dense + r * dense_step, n, s, p);
  }
  // Output rows a of the dense tile are read whole into a buffer, transposed so that each
  // column b of the view (a run along the running dim) is written whole.
  static void Tile(T* view, const T* dense, int64_t rows, int64_t cols, int64_t t_in, int64_t t_out,
                   int64_t s_last, int64_t, const Plan&) {
    alignas(64) T buf[kRows * kCols];  // buf[b * kRows + a]: the tile in the view's order
    static_assert(kRows == kCols, "the tile is transposed both ways with one buffer pitch");
    if (!TransposeIn(dense, buf, cols, rows, 1, t_out, kRows)) {
      for (int64_t a = 0; a < rows; ++a) {
        for (int64_t b = 0; b < cols; ++b) buf[b * kRows + a] = dense[a * t_out + b];
      }
    }
    for (int64_t b = 0; b < cols; ++b) {
      T* dst = view + b * s_last;
      const T* src = buf + b * kRows;
      if (t_in == 1) {
        UpdateRun<T, Op>(dst, src, rows, false);
      } else {
        for (int64_t a = 0; a < rows; ++a) dst[a * t_in] = Op::Apply(dst[a * t_in], src[a]);
      }
    }
  }
};

// The slots [a, b) of a windows plan: each window's part within them, in row-major order
// (the windows wholly inside in one Mover::Rows call).
template <typename Mover, typename V, typename D>
void WindowsPart(const Plan& p, V* view, D* dense, int64_t a, int64_t b) {
  // the windows k with k * step < b and k * step + len > a; those from `whole` to `past` lie in [a, b)
  const int64_t first = a >= p.w_len ? (a - p.w_len) / p.w_step + 1 : 0;
  const int64_t end = std::min(p.w_rows, (b + p.w_step - 1) / p.w_step);
  const int64_t whole = std::clamp((a + p.w_step - 1) / p.w_step, first, std::max(first, end));
  const int64_t past = std::max(whole, std::min(end, b >= p.w_len ? (b - p.w_len) / p.w_step + 1 : 0));
  auto clipped = [&](int64_t k) {
    const int64_t at = k * p.w_step;
    const int64_t from = std::max(a, at), to = std::min(b, at + p.w_len);
    if (from < to) Mover::Plain(view + from, dense + k * p.w_len + (from - at), to - from, 1, p);
  };
  for (int64_t k = first; k < whole; ++k) clipped(k);
  if (whole < past) {
    Mover::Rows(view + whole * p.w_step, dense + whole * p.w_len, p.w_len, 1, past - whole, p.w_step, p.w_len, p);
  }
  for (int64_t k = past; k < end; ++k) clipped(k);
}

// Blocks [lo, hi) of a windows plan: the windows clipped to their slots, row by row.
template <typename Mover, typename V, typename D>
void RunWindows(const Plan& p, V* view, D* dense, int64_t lo, int64_t hi) {
  const int64_t span = (p.w_rows - 1) * p.w_step + p.w_len;
  WindowsPart<Mover>(p, view, dense, lo * p.piece, std::min(span, hi * p.piece));
}

// Blocks [lo, hi) of plan p, for the item whose view starts at view (element base applied)
// and whose dense array starts at dense; Mover reads or writes each block.
template <typename Mover, typename V, typename D>
void RunBlocks(const Plan& p, V* view, D* dense, int64_t lo, int64_t hi) {
  if (p.windows) {
    RunWindows<Mover>(p, view, dense, lo, hi);
    return;
  }
  int64_t idx[kMaxRank];
  int64_t in_off = 0, out_off = 0;
  int64_t rest = lo;
  for (int i = p.rank - 1; i >= 0; --i) {
    idx[i] = rest % p.count[i];
    rest /= p.count[i];
    in_off += idx[i] * p.in_step[i];
    out_off += idx[i] * p.out_step[i];
  }
  const int pr = p.rank - 1;  // plain: the piece counter of the last dim
  if (!p.tiled && pr >= 1 && p.count[pr] == 1) {
    // Whole rows (one piece each): the blocks along the counter inside, pr - 1, moved by one
    // Mover::Rows call each stretch, the odometer stepped once per stretch.
    const int r = pr - 1;
    for (int64_t blk = lo; blk < hi;) {
      const int64_t rows = std::min(hi - blk, p.count[r] - idx[r]);
      Mover::Rows(view + in_off, dense + out_off, p.n_last, p.s_last, rows, p.in_step[r], p.out_step[r], p);
      blk += rows;
      idx[r] += rows;
      in_off += rows * p.in_step[r];
      out_off += rows * p.out_step[r];
      for (int i = r; i > 0 && idx[i] == p.count[i]; --i) {  // carry into the counters outside
        idx[i] = 0;
        in_off += p.in_step[i - 1] - p.count[i] * p.in_step[i];
        out_off += p.out_step[i - 1] - p.count[i] * p.out_step[i];
        ++idx[i - 1];
      }
    }
    return;
  }
  for (int64_t blk = lo; blk < hi; ++blk) {
    if (p.tiled) {
      const int64_t rows = std::min(p.t_rows, p.t_size - idx[p.t_row_counter] * p.t_rows);
      const int64_t cols = std::min(p.t_cols, p.n_last - idx[p.t_col_counter] * p.t_cols);
      Mover::Tile(view + in_off, dense + out_off, rows, cols, p.t_in, p.t_out, p.s_last, p.t_cols, p);
    } else {
      Mover::Plain(view + in_off, dense + out_off, std::min(p.piece, p.n_last - idx[pr] * p.piece), p.s_last,
                   p);
    }
    for (int i = p.rank - 1; i >= 0; --i) {  // next block: an odometer over the counters
      in_off += p.in_step[i];
      out_off += p.out_step[i];
      if (++idx[i] < p.count[i]) break;
      in_off -= p.count[i] * p.in_step[i];
      out_off -= p.count[i] * p.out_step[i];
      idx[i] = 0;
    }
  }
}

// How a call moves elements: a read, a write that sets, or a write that adds elements of an
// arithmetic type (the "mode" attribute of the write handler).
enum Kind : int64_t { kRead = -1, kSet = 0, kAddF32 = 1, kAddF64 = 2, kAddI32 = 3, kAddI64 = 4 };

template <typename T>
void Cast(Kind kind, const Plan& p, char* view, char* dense, int64_t lo, int64_t hi) {
  if (kind == kRead) {
    RunBlocks<Read<T>>(p, reinterpret_cast<const T*>(view), reinterpret_cast<T*>(dense), lo, hi);
  } else {
    RunBlocks<Write<T, Set>>(p, reinterpret_cast<T*>(view), reinterpret_cast<const T*>(dense), lo, hi);
  }
}

void RunBytes(Kind kind, const Plan& p, char* view, char* dense, int64_t lo, int64_t hi) {
  switch (kind) {
    case kAddF32:
      return RunBlocks<Write<float, Add>>(p, reinterpret_cast<float*>(view), reinterpret_cast<const float*>(dense),
                                          lo, hi);
    case kAddF64:
      return RunBlocks<Write<double, Add>>(p, reinterpret_cast<double*>(view),
                                           reinterpret_cast<const double*>(dense), lo, hi);
    case kAddI32:
      return RunBlocks<Write<uint32_t, Add>>(p, reinterpret_cast<uint32_t*>(view),
                                             reinterpret_cast<const uint32_t*>(dense), lo, hi);
    case kAddI64:
      return RunBlocks<Write<uint64_t, Add>>(p, reinterpret_cast<uint64_t*>(view),
                                             reinterpret_cast<const uint64_t*>(dense), lo, hi);
    default:
      break;
  }
  switch (p.es) {
    case 1: return Cast<uint8_t>(kind, p, view, dense, lo, hi);
    case 2: return Cast<uint16_t>(kind, p, view, dense, lo, hi);
    case 4: return Cast<uint32_t>(kind, p, view, dense, lo, hi);
    case 8: return Cast<uint64_t>(kind, p, view, dense, lo, hi);
    default: return Cast<U128>(kind, p, view, dense, lo, hi);
  }
}

// The work of one call, shared with the Crew's helpers (which may start on it after the call ends:
// then they find no chunk left and only drop their reference).
struct Work {
  Kind kind = kRead;
  Plan plan;
  char* view = nullptr;   // where the view starts in its storage (the offset applied)
  char* dense = nullptr;  // the dense array
  int64_t per_chunk = 1;  // blocks per chunk
  int64_t chunks = 0;
  int parts = 1;          // the threads that drain it, one range of chunks each
  std::fenv_t fenv;        // the calling thread's floating-point environment (flush-to-zero
                           // included), which the helpers take on for their chunks
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

  // Run by each of the `parts` threads once: its own range in order, then the others' from
  // their backs.
  void Drain() {
    const int me = joined.fetch_add(1) % parts;
    for (int64_t c; (c = Claim(me, false)) >= 0;) Run(c);
    for (int k = 1; k < parts; ++k) {
      for (int64_t c; (c = Claim((me + k) % parts, true)) >= 0;) Run(c);
    }
  }
};

// How long the calling thread spins for the helpers' last chunks before it sleeps.
constexpr int64_t kSpinMicros = 200;

inline void Pause() {
#if defined(__SSE2__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long a helper of the Crew spins for the next call's work before it sleeps.
constexpr int64_t kCrewSpinMicros = 100;

// The helper threads that share a call's chunks with the calling thread. Each helper runs
// every call's work offered while it is awake (Work::Drain: the chunks left, if any), then
// spins kCrewSpinMicros for the next before it sleeps; an offer wakes the sleepers (a wake-up
// on the calling thread's path, which the spin spares calls that follow each other). A call
// that finds the helpers on an earlier call's work (calls from several threads at once)
// replaces it as the work they take next, and its calling thread drains whatever they leave.
// Handing the ranges to XLA's intra-op pool instead (ffi::ThreadPool::Schedule) cost a
// wake-up of a sleeping worker on the calling thread's path on many calls, which on a virtual
// machine took 24-56 us at the 90th percentile (and 40-60 us at the median in some
// processes), while the caller's own chunks of 1 MiB of frames took 15 us. Against that pool,
// medians of 20 interleaved rounds in one process (a temporary build that switched between
// the two at run time), 2-core virtual x86-64, frames 256/64 and near-square transposes: each
// sample following other columns' calls, two runs, 2^17 to 2^22 elements 0.20-0.91x the time
// but for two outliers (1.04x, and 2.03x of frames at 2^22 in a run where the same work
// offered the same way took 0.82x), 2^16 0.97x, 2^24 0.95-1.01x; each in the steady state of
// its own loop (20 ms of its calls first), 0.94-1.03x up to 2^19 but for frames at 2^19
// (0.58x), 0.81-0.99x at 2^20 and 2^22.
class Crew {
 public:
  // The process's crew; a child of fork() starts a new one (the parent's helpers are not there).
  static Crew& Get() {
    static const bool made = [] {
      current_ = new Crew();  // never destroyed: its helpers may outlive static destruction
      pthread_atfork(nullptr, nullptr, [] { current_ = new Crew(); });
      return true;
    }();
    (void)made;
    return *current_;
  }

  // Offers `work` to the crew, starting helpers until there are `helpers`.
  void Offer(std::shared_ptr<Work> work, int helpers) {
    std::unique_lock<std::mutex> lock(mu_);
    for (; started_ < helpers; ++started_) std::thread([this] { Loop(); }).detach();
    work_ = std::move(work);
    offers_.fetch_add(1, std::memory_order_release);
    const bool sleepers = sleeping_ > 0;
    lock.unlock();
    if (sleepers) cv_.notify_all();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (uint64_t seen = offers_;;) {
      if (offers_ == seen) {
        lock.unlock();
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kCrewSpinMicros);
        while (offers_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until) {
          Pause();
        }
        lock.lock();
        if (offers_ == seen) {
          ++sleeping_;
          cv_.wait(lock, [&] { return offers_ != seen; });
          --sleeping_;
        }
      }
      seen = offers_;
      std::shared_ptr<Work> work = work_;  // set by the offer that moved offers_ past `seen`
      lock.unlock();
      std::fenv_t own;
      std::fegetenv(&own);
      std::fesetenv(&work->fenv);
      work->Drain();
      std::fesetenv(&own);
      work.reset();
      lock.lock();
    }
  }

  static Crew* current_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Work> work_;         // the latest offer (under mu_)
  std::atomic<uint64_t> offers_{0};    // offers made (changed under mu_; read by the spinners)
  int sleeping_ = 0;                   // helpers waiting on cv_ (under mu_)
  int started_ = 0;                    // helpers started (under mu_)
};

Crew* Crew::current_ = nullptr;

int64_t OffsetAt(const ffi::AnyBuffer& offset) {
  if (offset.element_type() == ffi::DataType::S64) {
    return *static_cast<const int64_t*>(offset.untyped_data());
  }
  return *static_cast<const int32_t*>(offset.untyped_data());
}

// Whether a read stores its output past the caches: forced, or (kAutoStores) for a permute
// (tiles, or whole rows that a permute moves: some outer dim steps less than the next) whose
// output is at least kStreamMinBytes, where every run it stores is a cache line or more. A
// large output evicts itself from the caches anyway; the stores that bypass them spare the
// read of each line that a cached store makes first.
// (`python benchmarks/lowering_choices.py --only stores`, float32, streaming / cached, two
// runs: permutes of 6 to 64 MiB 0.51-0.96x but for two outliers, 1.06x and 1.13x, of one
// run each; of 1.5 to 4 MiB 0.41-1.55x, either way round (there the output fits in the
// caches). Overlapping windows (unfold frames), read straight through, took 1.02-1.91x at
// every size: they keep cached stores.)
bool Streams(const Plan& p, ffi::Span<const int64_t> sizes, ffi::Span<const int64_t> strides, int64_t es,
             Stores stores) {
  if (stores != kAutoStores) return stores == kStreamingStores;
  int64_t bytes = es;
  for (int64_t n : sizes) bytes *= n;
  if (bytes < kStreamMinBytes) return false;
  if (p.tiled) return std::min(p.n_last, p.t_cols) * es >= kLineBytes;
  bool permuted = false;  // some outer dim steps less than the one inside it
  for (size_t k = 0; k + 2 < strides.size(); ++k) permuted |= Abs(strides[k]) < Abs(strides[k + 1]);
  return permuted && p.s_last == 1 && p.piece * es >= kLineBytes;
}

// One call: the checks, the chunks, the threads. `view_base` is the storage (n elements),
// `dense_base` the dense array of the view's shape, `serial` a write through a view whose
// elements share slots: in row-major order (the last write wins), on one thread unless the
// view is windows (MakePlan); `order` the order of the blocks, `tiles` the shape of a read's tiles and
// `stores` how a read stores the output (Streams).
ffi::Error Launch(ffi::ThreadPool& pool, Kind kind, const char* what, char* view_base,
                  ffi::AnyBuffer::Dimensions sdims, int64_t es, char* dense_base, const ffi::AnyBuffer& offset,
                  ffi::Span<const int64_t> sizes, ffi::Span<const int64_t> strides, int64_t below,
                  int64_t reach, bool serial, Order order, Tiles tiles, Stores stores) {
  if (es != 1 && es != 2 && es != 4 && es != 8 && es != 16) {
    return ffi::Error::InvalidArgument(std::string(what) + ": element size must be 1, 2, 4, 8 or 16 bytes");
  }
  if (sizes.size() != strides.size() || static_cast<int64_t>(sizes.size()) > kMaxRank - 2) {
    return ffi::Error::InvalidArgument(std::string(what) + ": sizes and strides must have one rank, at most 62");
  }
  if ((offset.element_type() != ffi::DataType::S32 && offset.element_type() != ffi::DataType::S64) ||
      offset.dimensions().size() != 0) {
    return ffi::Error::InvalidArgument(std::string(what) + ": the offset must be an int32 or int64 scalar");
  }
  if (sdims.size() != 1) {
    return ffi::Error::InvalidArgument(std::string(what) + ": the storage must be 1-D");
  }
  const int64_t n = sdims[0];
  if (reach > n || reach < 1) {
    return ffi::Error::InvalidArgument(std::string(what) + ": the view spans more elements than the storage holds");
  }
  auto work = std::make_shared<Work>();
  work->kind = kind;
  work->plan = MakePlan(sizes.begin(), strides.begin(), static_cast<int64_t>(sizes.size()), es, kind == kRead,
                        serial, order, tiles);
  work->plan.stream = kind == kRead && Streams(work->plan, sizes, strides, es, stores);
  const Plan& plan = work->plan;
  const int64_t start = std::clamp(OffsetAt(offset) + below, int64_t{0}, n - reach);
  work->view = view_base + (start - below) * es;
  work->dense = dense_base;
  // Chunks of kChunkBytes' cost at least, and no more than kChunksPerThread per thread, dealt in
  // ranges (Work::Split). Frames 1024/256 of a 4 Mi-sample float32 signal (64 MiB of fresh
  // output) on two threads, medians of interleaved calls: 6.30-7.34 ms against 7.11-7.77 ms for
  // 4 chunks a thread claimed in turn from one counter, and 7.49-7.70 ms for 16 or 32 so
  // claimed (neighbouring chunks then run at once on both threads); the 4096^2 transpose 10.6
  // against 12.1 ms, the attention heads 7.0-7.4 against 9.1 ms, NCHW->NHWC 2.7 against 3.2 ms.
  // Timed inside the handler, the helper joined 50-110 us after the calling thread, and in some
  // calls one thread's chunks took 2-3x the other's (a busy virtual CPU), which the other then
  // took over from the back. Writes took the same time with 4 chunks a thread as with 64
  // (overlap-add of frames 1024/256 1.18-1.27x PyTorch's time against 1.23-1.26x, the heads' +=
  // 1.01-1.07x against 1.03-1.05x, two runs).
  const int64_t threads = std::clamp<int64_t>(pool.num_threads(), 1, kMaxThreads);
  const int64_t block_cost = std::max<int64_t>(1, plan.block_cost);
  const int64_t fewest = (plan.blocks + kChunksPerThread * threads - 1) / (kChunksPerThread * threads);
  const bool one_thread = serial && !plan.windows;
  work->per_chunk = one_thread ? plan.blocks : std::max<int64_t>({1, kChunkBytes / block_cost, fewest});
  work->chunks = (plan.blocks + work->per_chunk - 1) / work->per_chunk;
  if (work->chunks == 0) return ffi::Error::Success();
  const int64_t helpers = one_thread ? 0 : std::min<int64_t>(threads, work->chunks) - 1;
  work->Split(static_cast<int>(helpers + 1));
  if (helpers > 0) {
    std::fegetenv(&work->fenv);
    Crew::Get().Offer(work, static_cast<int>(helpers));
  }
  work->Drain();
  // Every chunk is claimed: what is left runs on a helper and takes one chunk's time at most,
  // far less than a sleep and a wake-up cost on a loaded or virtual machine; spin that long
  // before sleeping.
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  while (work->done.load(std::memory_order_acquire) != work->chunks) {
    if (std::chrono::steady_clock::now() > spin_until) {
      std::unique_lock<std::mutex> lock(work->mu);
      work->cv.wait(lock, [&] { return work->done.load() == work->chunks; });
      break;
    }
    Pause();
  }
  return ffi::Error::Success();
}

// The time spent inside the handlers since the module was loaded (steady clock, nanoseconds)
// and the calls, for benchmarks that tell a call's kernel from the runtime around it
// (handler_time() in Python).
std::atomic<int64_t> g_handler_ns{0};
std::atomic<int64_t> g_handler_calls{0};

// Adds the time from its construction to its destruction to the handlers' clock.
struct HandlerClock {
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  ~HandlerClock() {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    g_handler_ns.fetch_add(ns.count(), std::memory_order_relaxed);
    g_handler_calls.fetch_add(1, std::memory_order_relaxed);
  }
};

int64_t ElementBytes(const ffi::AnyBuffer& buffer) {
  return static_cast<int64_t>(ffi::ByteWidth(buffer.element_type()));
}

ffi::Error StridedCopy(ffi::ThreadPool pool, ffi::AnyBuffer storage, ffi::AnyBuffer offset,
                       ffi::Result<ffi::AnyBuffer> out, ffi::Span<const int64_t> sizes,
                       ffi::Span<const int64_t> strides, int64_t below, int64_t reach, int64_t order,
                       int64_t tiles, int64_t stores) {
  const HandlerClock clock;
  if (order < kAutoOrder || order > kStorageOrder) {
    return ffi::Error::InvalidArgument("strided_copy: order must be 0 (auto), 1 (dense) or 2 (storage)");
  }
  if (tiles < kAutoTiles || tiles > kWideTiles) {
    return ffi::Error::InvalidArgument("strided_copy: tiles must be 0 (auto), 1 (short), 2 (tall) or 3 (wide)");
  }
  if (stores < kAutoStores || stores > kStreamingStores) {
    return ffi::Error::InvalidArgument("strided_copy: stores must be 0 (auto), 1 (cached) or 2 (streaming)");
  }
  return Launch(pool, kRead, "strided_copy", static_cast<char*>(storage.untyped_data()), storage.dimensions(),
                ElementBytes(storage), static_cast<char*>(out->untyped_data()), offset, sizes, strides, below,
                reach, false, static_cast<Order>(order), static_cast<Tiles>(tiles), static_cast<Stores>(stores));
}

// The read with the view's strides as an operand (int32 or int64, one per dim of the output)
// rather than attributes, for calls outside jit: one compiled program per output shape reads
// every layout of that shape. The dims are coalesced here as _copy_kernel.coalesced does.
ffi::Error StridedCopyOperands(ffi::ThreadPool pool, ffi::AnyBuffer storage, ffi::AnyBuffer offset,
                               ffi::AnyBuffer strides, ffi::Result<ffi::AnyBuffer> out) {
  const HandlerClock clock;
  const auto shape = out->dimensions();
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool wide = strides.element_type() == ffi::DataType::S64;
  if ((!wide && strides.element_type() != ffi::DataType::S32) || strides.dimensions().size() != 1 ||
      strides.dimensions()[0] != rank) {
    return ffi::Error::InvalidArgument("strided_copy: strides must be int32 or int64, one per dim of the output");
  }
  std::vector<int64_t> sizes, steps;
  int64_t below = 0, reach = 1;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t n = shape[k];
    const int64_t s = wide ? static_cast<const int64_t*>(strides.untyped_data())[k]
                           : static_cast<const int32_t*>(strides.untyped_data())[k];
    if (n == 0) return ffi::Error::Success();  // nothing to read
    if (n == 1) continue;
    if (s < 0) below += (n - 1) * s;
    reach += (n - 1) * Abs(s);
    if (!sizes.empty() && steps.back() == s * n) {  // runs on from the dim before: one dim
      sizes.back() *= n;
      steps.back() = s;
    } else {
      sizes.push_back(n);
      steps.push_back(s);
    }
  }
  return Launch(pool, kRead, "strided_copy", static_cast<char*>(storage.untyped_data()), storage.dimensions(),
                ElementBytes(storage), static_cast<char*>(out->untyped_data()), offset,
                ffi::Span<const int64_t>(sizes.data(), sizes.size()),
                ffi::Span<const int64_t>(steps.data(), steps.size()), below, reach, false, kAutoOrder,
                kAutoTiles, kAutoStores);
}

// The write: the output is the storage (aliased to it by the caller), updated in place.
ffi::Error StridedWrite(ffi::ThreadPool pool, ffi::AnyBuffer storage, ffi::AnyBuffer values,
                        ffi::AnyBuffer offset, ffi::Result<ffi::AnyBuffer> out, ffi::Span<const int64_t> sizes,
                        ffi::Span<const int64_t> strides, int64_t below, int64_t reach, int64_t mode,
                        bool serial) {
  const HandlerClock clock;
  if (mode < kSet || mode > kAddI64) {
    return ffi::Error::InvalidArgument("strided_write: unknown mode");
  }
  char* target = static_cast<char*>(out->untyped_data());
  if (target != storage.untyped_data()) {  // not aliased: start from a copy of the storage
    std::memcpy(target, storage.untyped_data(), storage.size_bytes());
  }
  return Launch(pool, static_cast<Kind>(mode), "strided_write", target, out->dimensions(), ElementBytes(storage),
                static_cast<char*>(values.untyped_data()), offset, sizes, strides, below, reach, serial,
                serial ? kDenseOrder : kStorageOrder, kAutoTiles, kCachedStores);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(FsStridedCopy, StridedCopy,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("sizes")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<int64_t>("below")
                                  .Attr<int64_t>("reach")
                                  .Attr<int64_t>("order")
                                  .Attr<int64_t>("tiles")
                                  .Attr<int64_t>("stores"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(FsStridedCopyOperands, StridedCopyOperands,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(FsStridedWrite, StridedWrite,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<ffi::Span<const int64_t>>("sizes")
                                  .Attr<ffi::Span<const int64_t>>("strides")
                                  .Attr<int64_t>("below")
                                  .Attr<int64_t>("reach")
                                  .Attr<int64_t>("mode")
                                  .Attr<bool>("serial"));

// The Python module: strided_copy(), strided_copy_operands() and strided_write() return the
// handlers as capsules, for jax.ffi.register_ffi_target.
template <XLA_FFI_Handler* handler>
PyObject* Capsule(PyObject*, PyObject*) {
  return PyCapsule_New(reinterpret_cast<void*>(handler), nullptr, nullptr);
}

PyObject* HandlerTime(PyObject*, PyObject*) {
  return Py_BuildValue("(Ld)", static_cast<long long>(g_handler_calls.load()), g_handler_ns.load() * 1e-9);
}

static PyMethodDef kMethods[] = {
    {"strided_copy", Capsule<FsStridedCopy>, METH_NOARGS,
     "strided_copy() -> capsule: the XLA FFI handler of the strided copy (XLA:CPU)."},
    {"strided_copy_operands", Capsule<FsStridedCopyOperands>, METH_NOARGS,
     "strided_copy_operands() -> capsule: the strided copy with strides as an operand (XLA:CPU)."},
    {"strided_write", Capsule<FsStridedWrite>, METH_NOARGS,
     "strided_write() -> capsule: the XLA FFI handler of the strided write (XLA:CPU)."},
    {"handler_time", HandlerTime, METH_NOARGS,
     "handler_time() -> (calls, seconds): the calls of the three handlers since the module was loaded and "
     "the time spent inside them (steady clock), to tell a call's kernel from the runtime around it."},
    {nullptr, nullptr, 0, nullptr}};

static PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_copy_native",
                              "The strided copy of functional_strides as an XLA:CPU FFI handler.", -1,
                              kMethods};

PyMODINIT_FUNC PyInit__copy_native(void) { return PyModule_Create(&kModule); }

// The movers: the loops that move the elements of one block of a plan (plan.h), a read's
// (dense output from the view) and a write's (the view's slots set or added from the dense
// values), with the vector forms of the hot ones (SSE2, part of every x86-64; AVX2 and AVX-512
// in functions compiled for them and called where the CPU has them, checked once), and the
// dispatch of a range of blocks by the call's kind and element size (RunBytes).

#ifndef FUNCTIONAL_STRIDES_NATIVE_MOVERS_H_
#define FUNCTIONAL_STRIDES_NATIVE_MOVERS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>  // AVX2 and AVX-512, in functions compiled for them, called where the CPU has them
#endif

#include "plan.h"

namespace functional_strides::native {

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
inline bool HasAvx2();

// n contiguous bytes copied with 32-byte loads and stores, four to an iteration, the rest by
// memcpy: into a fresh output (every page faulted in by the copy) it took less time than
// glibc's memcpy (see docs/performance.md, "At the memory limit").
inline __attribute__((target("avx2"))) void CopyRunAvx2(char* __restrict d, const char* __restrict s, size_t bytes) {
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
// input, forwards or backwards (row_in == 1 or -1), transposed in registers: 16x16 blocks of
// 1-byte elements, 8x8 of 2-byte, 4x4 of 4-byte, 2x2 of 8-byte ones (rows and columns
// multiples of the block) (SSE2, part of every x86-64). False where it does not apply; the
// caller then copies element by element.
template <typename T>
bool TransposeIn(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t) {
  return false;
}

#if defined(__SSE2__)
template <>
inline bool TransposeIn(const uint32_t* in, uint32_t* buf, int64_t rows, int64_t cols, int64_t row_in,
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
inline bool TransposeIn(const uint64_t* in, uint64_t* buf, int64_t rows, int64_t cols, int64_t row_in,
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

// Interleaving of the low (high) halves of two vectors, element by element, at E bytes.
template <int E>
inline __m128i UnpackLo(__m128i a, __m128i b) {
  return E == 1 ? _mm_unpacklo_epi8(a, b) : _mm_unpacklo_epi16(a, b);
}
template <int E>
inline __m128i UnpackHi(__m128i a, __m128i b) {
  return E == 1 ? _mm_unpackhi_epi8(a, b) : _mm_unpackhi_epi16(a, b);
}

// The elements of E bytes of a vector in reverse order (SSE2 has no byte shuffle: the bytes
// of each 16-bit word are swapped by shifts, then the words reversed).
template <int E>
inline __m128i Reversed(__m128i x) {
  if constexpr (E == 1) x = _mm_or_si128(_mm_slli_epi16(x, 8), _mm_srli_epi16(x, 8));
  x = _mm_shuffle_epi32(x, 0x4E);
  x = _mm_shufflelo_epi16(x, 0x1B);
  return _mm_shufflehi_epi16(x, 0x1B);
}

// K x K elements of E bytes (K * E = 16, one vector a row) transposed in registers: log2(K)
// rounds, each interleaving vectors j and j + K/2 into 2j and 2j + 1 at the elements' own
// width (a perfect shuffle; K rounds of it put element i of vector j at element j of vector i).
template <int E>
inline void TransposeVectors(__m128i* v) {
  constexpr int K = 16 / E;
  for (int round = 1; round < K; round *= 2) {
    __m128i w[K];
    for (int j = 0; j < K / 2; ++j) {
      w[2 * j] = UnpackLo<E>(v[j], v[j + K / 2]);
      w[2 * j + 1] = UnpackHi<E>(v[j], v[j + K / 2]);
    }
    for (int j = 0; j < K; ++j) v[j] = w[j];
  }
}

// TransposeIn for elements of 1 and 2 bytes: blocks of 16x16 and 8x8 (rows and columns
// multiples of the block), each a vector per column loaded, transposed and stored a vector
// per row of the buffer.
template <typename U>
inline bool TransposeSmall(const U* in, U* buf, int64_t rows, int64_t cols, int64_t row_in, int64_t col_in,
                           int64_t pitch) {
  constexpr int E = sizeof(U), K = 16 / E;
  if ((row_in != 1 && row_in != -1) || rows % K != 0 || cols % K != 0) return false;
  const bool back = row_in < 0;
  for (int64_t b = 0; b < cols; b += K) {
    for (int64_t a = 0; a < rows; a += K) {
      const int64_t at = back ? -a - (K - 1) : a;  // the lowest address of elements a..a+K-1
      __m128i v[K];
      for (int j = 0; j < K; ++j) {
        v[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + (b + j) * col_in + at));
        if (back) v[j] = Reversed<E>(v[j]);
      }
      TransposeVectors<E>(v);
      for (int i = 0; i < K; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + (a + i) * pitch + b), v[i]);
    }
  }
  return true;
}

template <>
inline bool TransposeIn(const uint8_t* in, uint8_t* buf, int64_t rows, int64_t cols, int64_t row_in,
                        int64_t col_in, int64_t pitch) {
  return TransposeSmall(in, buf, rows, cols, row_in, col_in, pitch);
}

template <>
inline bool TransposeIn(const uint16_t* in, uint16_t* buf, int64_t rows, int64_t cols, int64_t row_in,
                        int64_t col_in, int64_t pitch) {
  return TransposeSmall(in, buf, rows, cols, row_in, col_in, pitch);
}
#endif

// Data movement only: float and double tiles move as the integers of their width.
template <>
inline bool TransposeIn(const float* in, float* buf, int64_t rows, int64_t cols, int64_t row_in, int64_t col_in,
                 int64_t pitch) {
  return TransposeIn(reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(buf), rows, cols,
                     row_in, col_in, pitch);
}

template <>
inline bool TransposeIn(const double* in, double* buf, int64_t rows, int64_t cols, int64_t row_in, int64_t col_in,
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
// (UpdateRuns). Runs updated once (the heads' +=) wait on memory and take AVX2 a stretch of
// runs at a time; a window's slots are updated once per window that holds them, from lines
// the window before left in L1, so that loop is bound by the core's loads and stores and
// takes AVX-512 (see benchmarks/bench_writes.py, cases "attention heads" and "overlap-add";
// docs/performance.md, "Writes through views").
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

inline bool HasAvx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}

inline bool HasAvx512() {
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
// element sizes): the caller then sets element by element (see docs/performance.md,
// "Writes through views").
template <typename T>
bool SetEveryOther(T*, const T*, int64_t) {
  return false;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
inline __attribute__((target("avx2"))) void SetEveryOther4(uint32_t* view, const uint32_t* values, int64_t n) {
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

inline __attribute__((target("avx2"))) void SetEveryOther8(uint64_t* view, const uint64_t* values, int64_t n) {
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
inline bool SetEveryOther(uint32_t* view, const uint32_t* values, int64_t n) {
  if (!HasAvx2()) return false;
  SetEveryOther4(view, values, n);
  return true;
}

template <>
inline bool SetEveryOther(uint64_t* view, const uint64_t* values, int64_t n) {
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

template <typename T>
void Cast(Kind kind, const Plan& p, char* view, char* dense, int64_t lo, int64_t hi) {
  if (kind == kRead) {
    RunBlocks<Read<T>>(p, reinterpret_cast<const T*>(view), reinterpret_cast<T*>(dense), lo, hi);
  } else {
    RunBlocks<Write<T, Set>>(p, reinterpret_cast<T*>(view), reinterpret_cast<const T*>(dense), lo, hi);
  }
}

inline void RunBytes(Kind kind, const Plan& p, char* view, char* dense, int64_t lo, int64_t hi) {
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

}  // namespace functional_strides::native

#endif  // FUNCTIONAL_STRIDES_NATIVE_MOVERS_H_

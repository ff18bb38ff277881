// The plan of a strided copy or write: how the dense array of a view is cut into blocks, in
// which order the blocks are numbered, and the walk over a range of them. Pure index
// arithmetic over the view's sizes and strides (elements); what moves each block's elements is
// movers.h, who runs which range parallel.h.
//
// The dense array is visited once, in row-major order within blocks:
//   * a plain block is the last dim: one copied run when its stride is 1, a fill when 0, every
//     other element picked out of whole vector loads when 2, else a strided loop (whole rows
//     along the dim inside taken a stretch at a time);
//   * a tile block, when the last dim's stride jumps a cache line per element and another
//     dim runs through memory, is a tile of those two dims: a read's 64 x 64 elements of at
//     most 4 bytes (16 KiB), else 32 x 32, or up to 128 rows by 32 where the last dim spans
//     at most two tiles; a write's 32 x 32. It is moved through a buffer in L1 along the
//     running dim on the view's side and along the last on the dense side, so each cache
//     line on either side is moved whole.
// A write through a view whose elements share slots runs in the view's row-major order (the
// last write of a slot wins, additions arrive in that order): overlapping windows (dims
// (rows, len):(step, 1), step < len: overlap-add of frames) by blocks of storage slots, each
// window clipped to the block and the windows added row by row, as PyTorch's loop adds them;
// any other such view on one thread, in plain blocks.
// Blocks are numbered in the order of the dense array, or of the storage for a write whose
// elements share no slot (its stores sweep the storage, as PyTorch orders a loop by its
// output) and for a read of whole contiguous rows that the storage's order spreads over few
// runs of the output (attention heads).

#ifndef FUNCTIONAL_STRIDES_NATIVE_PLAN_H_
#define FUNCTIONAL_STRIDES_NATIVE_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace functional_strides::native {

constexpr int64_t kRows = 32;  // a tile's extent along the running dim (output rows)
constexpr int64_t kCols = 32;  // a tile's extent along the last dim (output columns)
constexpr int64_t kTallRows = 128;     // a read's tile where the last dim is short, at most
constexpr int64_t kTileBytes = 16384;  // ... and at most this many bytes (half of L1)
constexpr int64_t kWide = 64;          // a read's wide tile: kWide x kWide, if it fits kTileBytes
constexpr int64_t kLineBytes = 64;               // a cache line
constexpr int64_t kChunkBytes = int64_t{1} << 18;  // bytes of memory a chunk of blocks touches, at least
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
inline int64_t ElementCost(int64_t stride, int64_t es) {
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
inline Plan MakePlan(const int64_t* sizes, const int64_t* strides, int64_t rank, int64_t es, bool read,
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
  // most kWriteStreams runs of the output at once, which the prefetcher follows; past that
  // many runs the dense order, as PyTorch's, stays (see benchmarks/lowering_choices.py,
  // table "rows"; docs/performance.md).
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
    // memory opened per byte moved (see benchmarks/lowering_choices.py, table "tiles").
    // Elements of 8 bytes and more keep 32 columns, the tile within kTileBytes.
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

// Whether a read stores its output past the caches: forced, or (kAutoStores) for a permute
// (tiles, or whole rows that a permute moves: some outer dim steps less than the next) whose
// output is at least kStreamMinBytes, where every run it stores is whole cache lines. A
// large output evicts itself from the caches anyway; the stores that bypass them spare the
// read of each line that a cached store makes first. Overlapping windows (unfold frames),
// read straight through, keep cached stores (see benchmarks/lowering_choices.py, table
// "stores").
inline bool Streams(const Plan& p, const int64_t* sizes, const int64_t* strides, int64_t rank, int64_t es,
                    Stores stores) {
  if (stores != kAutoStores) return stores == kStreamingStores;
  int64_t bytes = es;
  for (int64_t k = 0; k < rank; ++k) bytes *= sizes[k];
  if (bytes < kStreamMinBytes) return false;
  // Every run stored must start and end on a cache line: a streamed store of part of a line
  // flushes its write-combining buffer half full, and the line's other part, stored by
  // another run later, pays the same again (3-6x the cached copy where the output's rows
  // are not a whole number of lines: benchmarks/bench_permutes.py, the odd extents). The
  // output is dense and its buffer line-aligned, so its rows, and the tiles' runs along
  // them, start on lines when both are whole lines long.
  if (p.n_last * es % kLineBytes != 0) return false;
  if (p.tiled) return std::min(p.n_last, p.t_cols) * es % kLineBytes == 0;
  bool permuted = false;  // some outer dim steps less than the one inside it
  for (int64_t k = 0; k + 2 < rank; ++k) permuted |= Abs(strides[k]) < Abs(strides[k + 1]);
  return permuted && p.s_last == 1 && p.piece * es % kLineBytes == 0;
}

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

}  // namespace functional_strides::native

#endif  // FUNCTIONAL_STRIDES_NATIVE_PLAN_H_

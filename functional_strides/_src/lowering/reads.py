"""Lowering: materialise a ``Layout`` over a 1-D storage as a dense JAX array.

A small compiler from a layout to XLA ops. The layout is first brought to canonical form
(:mod:`functional_strides._src.core.canonical`: size-1 dims dropped, stride-0 dims set apart, mergeable
dims merged, dims sorted by stride), then one of these paths reads it:

* ``"structured"`` -- the canonical dims form a strided box: a strided ``slice`` of the
  storage, a ``reshape`` into rows, a strided ``slice`` per dim (``pad`` first when the last
  row runs past the storage end). Every composition of slicing, permutation and expansion
  of a contiguous array takes this path; no ``gather`` is emitted.
* ``"slices"`` -- overlapping windows (``unfold``): the windows are cut from rows of the
  storage by a few shifted ``slice`` ops stacked together (or one read per window when there
  are fewer windows than shifts).
* ``"row_gather"`` -- a ``gather`` whose slices are whole rows of the inner box
  (``slice_sizes=(row,)``), then the structured read inside each row.
* ``"gather"`` -- one ``gather`` of single elements, indices built in the graph from
  ``lax.broadcasted_iota`` (never baked in as constants).
* ``"strided_copy"`` -- on CPU, one call of a compiled strided copy (an XLA FFI handler,
  :mod:`functional_strides._src.native.copy_kernel`); other platforms, derivatives and
  ``vmap`` take the XLA path ``"auto"`` picks without it.

Each path ends with ``transpose`` to the user's order of dims (a loop over cache-sized
tiles for large permutes, :mod:`functional_strides._src.lowering.tiled`), ``reshape``,
``broadcast_in_dim`` for stride-0 dims and ``rev`` for dims of negative stride (the canonical
form reads them forwards). :func:`plan` tells which path ``"auto"`` takes;
``materialize(..., method=...)`` forces one.

Inside a user's ``jit``/``vmap``/``grad`` shape and strides are static and take these
paths. The offset is usually traced there (it is a pytree leaf, so that moving a view never
recompiles): the view is then read from the window ``lax.dynamic_slice(storage, offset,
span + 1)`` (:func:`dynamic_window`) with the same plan as at offset 0, so a traced offset
costs a ``dynamic_slice`` and no gather. Eager use (concrete storage outside ``jit``)
passes strides and offset as traced int arrays to a program compiled once per (output
shape, storage shape, dtype), so a new layout of a known shape costs no XLA compile: on CPU
the strided copy with strides as operands, elsewhere a gather.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..core.canonical import Box, Canonical, box, canonicalize, inner_box_start, split_windows
from ..core.config import config as _config
from ..core.errors import LayoutError, LayoutTypeError, StorageError
from ..core.layout import (
    Layout,
    check_in_storage,
    check_static_storage_shape,
    is_static_offset,
    is_traced,
    leaf_kind,
)
from ..core.overlap.overlap import is_monotone, is_non_overlapping_sufficient
from ..core.strategies import Need, Plan, Strategies, Strategy
from ..native import copy_kernel as _copy_kernel
from ..native.process import check_not_forked
from . import programs as _programs
from . import tiled as _tiled

__all__ = ["METHODS", "READS", "check_operands", "dynamic_window", "index_dtype", "materialize", "read_plan",
           "storage_indices"]

_INT32_MAX = int(np.iinfo(np.int32).max)


# Overlapping windows: whole rows in one gather beat the element gather for rows of a few
# elements or more that lie apart; the shifted slices never won (benchmarks/lowering_choices.py,
# table "windows"; docs/performance.md, "Thresholds").
#: Windows of fewer elements than this read with the element gather.
ROW_GATHER_MIN_ROW = 8
#: Windows closer together than this (in storage elements) read with the element gather.
ROW_GATHER_MIN_STEP = 2
#: "auto" picks the shifted slices when they cut at most this many slices; 0 turns them off
#: (no measured case favours them). Forcing ``method="slices"`` still works.
SLICES_MAX_PIECES = 0
#: A box whose permute moves at most this many input rows to the innermost dim, the rows a
#: multiple of ``GATHER_ROWS_APART`` elements apart (NCDHW->NDHWC: all in the same cache sets), is
#: read by one gather over the view's dims, which XLA:CPU's gather loop runs better than its
#: transpose or the tile loop there (benchmarks/bench_contiguous.py, case "ncdhw_to_ndhwc").
GATHER_MAX_ROWS = 32
GATHER_ROWS_APART = 1024
# The strided copy on CPU against XLA's best read of the same view: it pays for permutes whose
# innermost dim jumps a cache line, from a few thousand elements; for permutes of whole rows and
# overlapping windows only from larger sizes, where its fixed cost is amortised
# (benchmarks/lowering_choices.py, table "copy").
#: Permutes read by cache tiles: from this many elements the strided copy takes them ...
COPY_MIN_ELEMENTS = 2**14
#: ... when their innermost dim jumps at least this many elements (a 64-byte line of float32)
#: and runs at least ``COPY_TILE_MIN_COLS`` (tiles of fewer columns move too little per tile:
#: XLA's transpose then leads, ``benchmarks/bench_permutes.py``).
COPY_TILE_JUMP = 16
COPY_TILE_MIN_COLS = 16
#: Permutes that keep the innermost dim contiguous, and overlapping windows: from this many
#: elements ...
COPY_ROWS_MIN_ELEMENTS = 2**17
#: ... and rows of at least this many elements.
COPY_MIN_ROW = 64
# Far-apart elements (a column, a diagonal): XLA's strided slice reads them on one thread, the
# strided copy on several; elements a page apart cost a TLB miss each, so they pay earlier
# (benchmarks/lowering_choices.py, table "far").
#: One far-apart dim (stride >= ``COPY_TILE_JUMP``): the strided copy from this many elements ...
COPY_FAR_MIN_ELEMENTS = 2**14
#: ... or from this many where they lie at least ``COPY_FAR_PAGE`` elements apart (a 4 KiB page
#: of float32).
COPY_FAR_PAGE_MIN_ELEMENTS = 2**12
COPY_FAR_PAGE = 1024
# Every other element (a last dim of stride 2, no permute: x[::2], x[::2, ::2]), picked out of
# whole vector loads by the strided copy, beats XLA's strided slice at mid sizes; past them both
# run at the memory's bandwidth; reversed (stride -2) it reads element by element and XLA keeps
# them (benchmarks/lowering_choices.py, table "every_other").
#: A last dim of stride 2: the strided copy from this many elements ...
COPY_EVERY_OTHER_MIN_ELEMENTS = 2**16
#: ... up to this many (and from COPY_FRESH_MIN_ELEMENTS again, as any read).
COPY_EVERY_OTHER_MAX_ELEMENTS = 2**20
# Fresh outputs: an output this large is a fresh mapping of the allocator on every call (glibc
# maps blocks past its largest reuse threshold, 32 MiB, anew), faulted in page by page; the
# strided copy advises it to take 2 MiB pages first, XLA's own ops cannot, so from there the
# copy takes the reads XLA's slices and broadcasts would write; below, where the allocator
# hands back memory already mapped, they keep XLA's ops (benchmarks/lowering_choices.py, table
# "routes").
#: Any read of this many output elements (32 MiB of float32) but one contiguous run takes the
#: strided copy: slices, every other element, reversed rows, broadcasts whose innermost dim
#: runs at least ``COPY_MIN_ROW`` elements (an expanded row or column: "expand"), and permutes
#: whose rows are as long as the permute rules ask (``COPY_TILE_MIN_COLS``, ``COPY_MIN_ROW``).
COPY_FRESH_MIN_ELEMENTS = 2**23


def index_dtype(layout: Layout, storage_size: int, op: str = "materialize") -> np.dtype:
    """int32 when every storage index fits, else int64 (needs ``jax_enable_x64``).

    The indices are ``offset + sum_d i_d * strides[d]``: the storage's own indices and the
    layout's (a traced offset counts as 0 here, its span still counts) must fit.

    Args:
      layout: the layout to read.
      storage_size: elements in the storage.
      op: the name used in the error message.
    Returns:
      ``np.dtype(np.int32)`` or ``np.dtype(np.int64)``.
    Raises:
      StorageError: indices exceed int32 and x64 is disabled.
    Example:
      >>> index_dtype(Layout((2, 3), (3, 1)), 6)
      dtype('int32')
    """
    reach = 0 if layout.is_empty else sum((n - 1) * abs(s) for n, s in zip(layout.shape, layout.strides,
                                                                             strict=True))
    start = abs(layout.offset) if layout.has_static_offset else 0
    bound = max(storage_size, start + reach + 1)
    if bound - 1 <= _INT32_MAX:
        return np.dtype(np.int32)
    if jax.config.read("jax_enable_x64"):
        return np.dtype(np.int64)
    raise StorageError(
        f"{op}: layout {layout} over a storage of {storage_size} elements needs storage "
        f"indices up to {bound - 1}, past int32's {_INT32_MAX}. Enable 64-bit indices with "
        "jax.config.update('jax_enable_x64', True)."
    )


def storage_indices(shape, strides, offset, dtype) -> jax.Array:
    """``offset + sum_d iota_d * strides[d]`` of shape ``shape``, built in the graph.

    Args:
      shape: output shape (static ints).
      strides: one stride per dim in elements: Python ints (static) or a traced int array.
      offset: an int or an integer scalar (traced or concrete).
      dtype: index dtype (``index_dtype``).
    Returns:
      An array of ``shape`` and ``dtype``; XLA fuses it into the gather that consumes it.
      (The library's reads pass traced offsets through a ``dynamic_slice`` window, which clamps
      them in their own width, so ``offset`` always fits ``dtype``.)
    Raises:
      Nothing of its own; indices that do not fit ``dtype`` wrap, so pick ``dtype`` with
      :func:`index_dtype`.
    Example:
      >>> fs.storage_indices((2, 3), (1, 2), 1, np.int32).tolist()
      [[1, 3, 5], [2, 4, 6]]
      >>> storage = jnp.arange(10.0)
      >>> storage[fs.storage_indices((2, 3), (1, 2), 1, np.int32)].tolist()   # a strided read
      [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]

    Semantics: ``torch.as_strided(torch.arange(N), shape, strides, offset)`` as an index
    array, computed from ``iota`` inside the XLA graph (never a baked-in constant).
    """
    idx = jnp.zeros(shape, dtype)
    static = isinstance(strides, tuple)
    for d in range(len(shape)):
        if shape[d] <= 1 or (static and strides[d] == 0):
            continue
        step = strides[d] if static else strides[d].astype(dtype)
        idx = idx + lax.broadcasted_iota(dtype, shape, d) * step
    return idx + jnp.asarray(offset, dtype)


# -- building blocks ----------------------------------------------------------------------

def _read_box(x: jax.Array, offset: int, b: Box) -> jax.Array:
    """Read box ``b`` whose first element is at ``offset`` along the last axis of ``x``
    (leading axes are batch axes). Returns ``x.shape[:-1] + b.shape``."""
    batch, n, axis = x.shape[:-1], x.shape[-1], x.ndim - 1
    if len(b.dims) < 2:  # one element, or one strided slice
        stop = offset + (b.reach if b.dims else 1)
        x = lax.slice_in_dim(x, offset, stop, b.pitches[0] if b.dims else 1, axis=axis)
        return x.reshape((*batch, *b.shape))
    base, starts = b.origin(offset)
    rows, pitch = b.dims[0][0] + starts[0], b.pitches[0]
    first_row = _first_row(n, base, rows, pitch)
    if first_row is not None:  # the whole storage as rows (a bitcast); the box's rows are sliced last
        x = x.reshape((*batch, n // pitch, pitch))
        starts = (starts[0] + first_row, *starts[1:])
    else:
        stop = min(n, base + rows * pitch)
        if (base, stop) != (0, n):
            x = lax.slice_in_dim(x, base, stop, axis=axis)
        if stop - base < rows * pitch:  # the last row runs past the storage end: pad its tail
            pads = [(0, 0, 0)] * len(batch) + [(0, rows * pitch - (stop - base), 0)]
            x = lax.pad(x, jnp.zeros((), x.dtype), pads)
        x = x.reshape((*batch, rows, pitch))
    for p, sub in zip(b.grid, b.pitches[1:], strict=True):
        if p * sub != x.shape[-1]:  # drop the end of each row that holds no sub-row
            x = lax.slice_in_dim(x, 0, p * sub, axis=x.ndim - 1)
        x = x.reshape((*x.shape[:-1], p, sub))
    x = x.reshape(x.shape[:-1])  # the last pitch is 1
    limits = tuple(a + (n_ - 1) * t + 1
                   for a, (n_, _), t in zip(starts, b.dims, b.steps, strict=True))
    if starts != (0,) * len(starts) or limits != x.shape[len(batch):] or set(b.steps) != {1}:
        x = lax.slice(x, (0,) * len(batch) + starts, (*batch, *limits), (1,) * len(batch) + b.steps)
    return x


def _to_user(c: Canonical, x: jax.Array, read: Callable[[], jax.Array] | None = None) -> jax.Array:
    """Canonical-order array -> the user's shape: transpose, reshape, broadcast, reverse.
    ``read``: a function that computes ``x`` again, for a tile loop to fuse into its steps;
    without it a permute is XLA's ``transpose`` (a loop would materialise ``x`` first)."""
    if c.perm == tuple(range(len(c.perm))):
        return _finish(c, x)
    rev = _reversed_groups(c)
    if rev is None:  # a group mixes reversed and forward dims: reverse the user's dims last
        return _finish(c, _tiled.transpose(x, c.perm, read=read))
    # lax.transpose, tile by tile for large permutes (each tile reversed where the view is)
    return _finish(c, _tiled.transpose(x, c.perm, rev, read=read), reversed_=True)


def _reversed_groups(c: Canonical) -> tuple[int, ...] | None:
    """Axes of the transposed canonical array (one per group, in the user's order) whose
    every user dim is reversed; None when a group has reversed and forward dims. Reversing
    a group's axis reverses each of its dims (a group is row-major over its dims)."""
    flipped, axes = set(c.flipped), []
    for u, a in enumerate(c.perm):
        inside = [d in flipped for d in c.groups[a]]
        if all(inside):
            axes.append(u)
        elif any(inside):
            return None
    return tuple(axes)


def _finish(c: Canonical, x: jax.Array, reversed_: bool = False) -> jax.Array:
    """Array of the groups in user order -> the user's shape (split groups, size-1 and
    stride-0 dims restored, dims of negative stride reversed unless ``reversed_``: done)."""
    kept = c.kept
    if not c.broadcast:
        x = x.reshape(c.shape)
    else:
        x = lax.broadcast_in_dim(x.reshape(tuple(c.shape[d] for d in kept)), c.shape, kept)
    return lax.rev(x, c.flipped) if c.flipped and not reversed_ else x


_DNUMS = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))


def _gather(storage, idx, *, sorted_: bool, unique: bool, mode) -> jax.Array:
    return lax.gather(storage, idx[..., None], _DNUMS, slice_sizes=(1,), mode=mode,
                      indices_are_sorted=sorted_, unique_indices=unique)


# -- the paths (static layout, static offset) ---------------------------------------------

def _structured(storage: jax.Array, c: Canonical) -> jax.Array:
    b = box(c.dims)
    assert b is not None  # the strategy applies to boxes only

    def read() -> jax.Array:
        return _read_box(storage, c.offset, b)

    # A tile loop reads its tiles through read() where that is reshapes and one last slice
    # (fused into each tile's read); other reads (a slice or pad of the storage first) it would
    # hoist out of the loop into a temporary as large as the output: XLA's transpose then.
    return _to_user(c, read(), read if reads_by_reshapes(storage.shape[-1], c.offset, b) else None)


def _first_row(n: int, base: int, rows: int, pitch: int) -> int | None:
    """The box's first row when a storage of ``n`` elements is whole rows of ``pitch`` and the
    box's ``rows`` rows from storage index ``base`` lie inside it; else None (then the box's
    span is sliced out of the storage, and padded where its last row runs past the end)."""
    if n % pitch or base % pitch or base + rows * pitch > n:
        return None
    return base // pitch


def reads_by_reshapes(n: int, offset: int, b: Box) -> bool:
    """True when :func:`_read_box` of box ``b`` at ``offset`` in a storage of ``n`` elements
    is reshapes of the whole storage and one last ``slice`` (no slice or pad before it)."""
    if len(b.dims) < 2:
        return False
    base, starts = b.origin(offset)
    rows, pitch = b.dims[0][0] + starts[0], b.pitches[0]
    return _first_row(n, base, rows, pitch) is not None and all(
        p * sub == above for p, sub, above in zip(b.grid, b.pitches[1:], b.pitches[:-1], strict=True))


def _slices(storage: jax.Array, c: Canonical) -> jax.Array:
    w = split_windows(c.dims)
    assert w is not None  # the strategy applies to windows only
    axis = len(w.outer)
    if w.stacked is not None and (w.shifted is None or w.count <= w.shifts):
        pieces = [_read_box(storage, c.offset + f * w.step, w.stacked) for f in range(w.count)]
        return _to_user(c, jnp.stack(pieces, axis=axis))
    assert w.shifted is not None
    rows = _read_box(storage, c.offset, w.shifted)  # outer + (count + shifts - 1, step)
    pieces = [lax.slice_in_dim(rows, j, j + w.count, axis=axis) for j in range(w.shifts)]
    x = jnp.stack(pieces, axis=axis + 1)  # outer + (count, shifts, step)
    x = x.reshape((*x.shape[:axis], w.count, w.shifts * w.step))
    return _to_user(c, _read_box(x, 0, _inner_box(w.inner)))


def _row_gather(storage: jax.Array, c: Canonical) -> jax.Array:
    k = max(1, inner_box_start(c.dims))
    outer, inner = Layout(*zip(*c.dims[:k], strict=True)), _inner_box(c.dims[k:])
    row = _row_length(inner, storage.shape[0] - (c.offset + outer.span))
    starts = storage_indices(outer.shape, outer.strides, c.offset,
                             index_dtype(c.layout(), storage.shape[0]))
    dnums = lax.GatherDimensionNumbers(offset_dims=(k,), collapsed_slice_dims=(), start_index_map=(0,))
    rows = lax.gather(storage, starts[..., None], dnums, slice_sizes=(row,),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS,
                      indices_are_sorted=is_monotone(outer), unique_indices=False)
    return _to_user(c, _read_box(rows, 0, inner))


def _inner_box(dims: Any) -> Box:
    """The box of the inner dims from ``inner_box_start`` on (or of a window), which always exists."""
    b = box(dims)
    assert b is not None, dims
    return b


def _row_length(b: Box, room: int) -> int:
    """Elements to gather per row for box ``b`` (read from offset 0 of the row): its rows
    from start to end, or ``room`` (what the storage holds past the last row start) when
    less, in which case ``_read_box`` pads the tail."""
    if len(b.dims) < 2:
        return b.reach
    return min(room, b.dims[0][0] * b.pitches[0])


def _read_dims(c: Canonical) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(shape, strides)`` of the dims read, in the user's order: the canonical groups split
    back into the user's dims (extent >= 2, stride >= 1, reversed dims read forwards)."""
    shape: list[int] = []
    strides: list[int] = []
    for a in c.perm:
        stride = c.dims[a][1]
        extents = [c.shape[d] for d in c.groups[a]]
        for k, n in enumerate(extents):
            shape.append(n)
            strides.append(stride * math.prod(extents[k + 1:]))
    return tuple(shape), tuple(strides)


def _few_far_rows(c: Canonical) -> bool:
    """True when the view is a permute of at least ``TILED_MIN_ELEMENTS`` that moves at most
    ``GATHER_MAX_ROWS`` rows of the input to the innermost dim, the rows a multiple of
    ``GATHER_ROWS_APART`` elements apart (NCDHW->NDHWC: 32 channels 2^17 elements apart)."""
    if c.perm == tuple(range(len(c.perm))) or c.numel < _tiled.TILED_MIN_ELEMENTS:
        return False
    blocks = _tiled.blocks(tuple(n for n, _ in c.dims), c.perm)
    return blocks is not None and blocks[1] <= GATHER_MAX_ROWS and blocks[2] % GATHER_ROWS_APART == 0


def _element_gather(storage: jax.Array, c: Canonical) -> jax.Array:
    # A permute of few rows far apart: indices over the user's own dims, not the merged groups,
    # which XLA:CPU's gather loop runs better there; elsewhere over the merged groups, which it
    # runs as well or better (benchmarks/bench_contiguous.py, cases "ncdhw_to_ndhwc" and
    # "nchw_to_nhwc").
    if _few_far_rows(c):
        shape, strides = _read_dims(c)
    else:
        shape, strides = tuple(n for n, _ in c.user_dims), tuple(s for _, s in c.user_dims)
    user = Layout(shape, strides, c.offset)
    idx = storage_indices(user.shape, user.strides, c.offset, index_dtype(user, storage.shape[0]))
    x = _gather(storage, idx, sorted_=is_monotone(user), unique=is_non_overlapping_sufficient(user),
                mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
    return _finish(c, x)


def _applies_structured(c: Canonical, need: Need) -> bool:
    return box(c.dims) is not None


def _applies_slices(c: Canonical, need: Need) -> bool:
    w = None if box(c.dims) is not None else split_windows(c.dims)
    return w is not None and (w.shifted is not None or w.stacked is not None)


def _slice_pieces(c: Canonical) -> int:
    w = split_windows(c.dims)
    assert w is not None  # called where _applies_slices holds
    counts = [w.shifts] if w.shifted is not None else []
    counts += [w.count] if w.stacked is not None else []
    return min(counts)


def _applies_strided_copy(c: Canonical, need: Need) -> bool:
    return need.copy_kernel and _copy_kernel.enabled()


def copy_kind(c: Canonical) -> str | None:
    """How the strided copy would read canonical form ``c``, for the ``"auto"`` rule:
    ``"expand"`` (a broadcast whose innermost dim runs at least ``COPY_MIN_ROW`` elements, filled
    or copied: an expanded row or column), ``"tiles"`` (a permute whose innermost dim jumps at
    least ``COPY_TILE_JUMP`` elements, while another dim runs through memory: stride 1),
    ``"rows"`` (a permute that keeps the innermost dim contiguous: a ``memcpy`` per row),
    ``"windows"`` (no permute, contiguous
    rows that overlap: ``unfold`` frames), ``"far"`` (one dim whose stride jumps at least
    ``COPY_TILE_JUMP`` elements: a column, a diagonal), ``"every_other"`` (no permute, the
    innermost dim of stride 2, not reversed: ``x[::2]``, ``x[::2, ::2]``) or None (none of
    these)."""
    if c.broadcast:
        return "expand" if _broadcast_run(c) >= COPY_MIN_ROW else None
    if not c.dims:
        return None
    forwards = not set(c.groups[c.perm[-1]]) & set(c.flipped)  # the user's last dim not reversed
    if len(c.dims) == 1:
        if c.dims[0][1] == 2 and forwards:
            return "every_other"
        return "far" if c.dims[0][1] >= COPY_TILE_JUMP else None
    last = c.dims[c.perm[-1]][1]
    if c.perm != tuple(range(len(c.perm))):
        if last >= COPY_TILE_JUMP and c.dims[-1][1] == 1:
            return "tiles"
        return "rows" if last == 1 else None
    if last == 2 and forwards:
        return "every_other"
    return "windows" if last == 1 and _rows_overlap(c.dims) else None


def _broadcast_run(c: Canonical) -> int:
    """The elements of the user's innermost dim (of extent >= 2) of a broadcast when the strided
    copy writes them as one run: broadcast (a fill) or read forwards with stride 1 (a copied
    run); else 0."""
    dims = [d for d, n in enumerate(c.shape) if n >= 2]
    if not dims:
        return 0
    last = dims[-1]
    if last in c.broadcast:
        return c.shape[last]
    a = next(a for a, group in enumerate(c.groups) if last in group)
    return c.shape[last] if c.dims[a][1] == 1 and last not in c.flipped else 0


def _rows_overlap(dims) -> bool:
    """Some dim steps by less than the span of the dims inside it (its rows share slots)."""
    span = 1
    for n, s in reversed(dims):
        if s < span:
            return True
        span += (n - 1) * s
    return False


def _short_rows(c: Canonical, kind: str | None) -> bool:
    """A permute whose user's innermost dim is too short for the strided copy's tiles or rows."""
    if kind not in ("tiles", "rows"):
        return False
    return c.dims[c.perm[-1]][0] < (COPY_TILE_MIN_COLS if kind == "tiles" else COPY_MIN_ROW)


def _copy_pays(c: Canonical) -> bool:
    kind = copy_kind(c)
    if _short_rows(c, kind):
        return False
    if math.prod(c.shape) >= COPY_FRESH_MIN_ELEMENTS and not _one_run(c) and (
            kind == "expand" or not c.broadcast):
        return True
    if kind == "tiles":
        return c.numel >= COPY_MIN_ELEMENTS
    if kind == "far":
        return c.numel >= (COPY_FAR_PAGE_MIN_ELEMENTS if c.dims[0][1] >= COPY_FAR_PAGE
                           else COPY_FAR_MIN_ELEMENTS)
    if kind == "every_other":
        return COPY_EVERY_OTHER_MIN_ELEMENTS <= c.numel <= COPY_EVERY_OTHER_MAX_ELEMENTS
    return (kind in ("rows", "windows") and c.numel >= COPY_ROWS_MIN_ELEMENTS
            and c.dims[c.perm[-1]][0] >= COPY_MIN_ROW)


def _one_run(c: Canonical) -> bool:
    """The view is one contiguous run of the storage, forwards (a slice XLA may not even copy)."""
    return len(c.dims) <= 1 and (not c.dims or c.dims[0][1] == 1) and not c.flipped and not c.broadcast


def _auto(c: Canonical, need: Need, ok: dict[str, bool]) -> str:
    if ok["strided_copy"] and _copy_pays(c):
        return "strided_copy"
    if ok["structured"]:
        return "gather" if _few_far_rows(c) else "structured"
    if ok["slices"] and _slice_pieces(c) <= SLICES_MAX_PIECES:
        return "slices"
    k = max(1, inner_box_start(c.dims))
    row, step = _inner_box(c.dims[k:]).reach, c.dims[k - 1][1]
    if row >= ROW_GATHER_MIN_ROW and step >= ROW_GATHER_MIN_STEP:
        return "row_gather"
    return "gather"


def _dims_text(dims) -> str:
    """Canonical dims as ``[extent x stride, ...]``."""
    return "[" + ", ".join(f"{n}x{s}" for n, s in dims) + "]"


def _why(layout: Layout, c: Canonical, need: Need, path: str, method: str) -> list[str]:
    """The reasons of read path ``path`` for ``layout`` (canonical form ``c``), chosen by
    ``method``: one sentence a fact, the first saying why the path applies (what a
    :class:`~functional_strides._src.core.strategies.Plan` carries)."""
    n = need.storage_size if need.storage_size is not None else layout.required_storage_size
    asked = [f"Asked for with method={method!r}."] if method != "auto" else []
    if path != "strided_copy":
        return [*asked, *_xla_why(layout, c, n, path)]
    xla = _plan(layout, "auto", Need(n, copy_kernel=False))
    kind = copy_kind(c)
    row = c.dims[c.perm[-1]][0] if c.dims else 0
    what = {
        "tiles": f"A permute of {c.numel} >= {COPY_MIN_ELEMENTS} elements whose last dim jumps "
                 f">= {COPY_TILE_JUMP} elements and runs {row} >= {COPY_TILE_MIN_COLS}.",
        "rows": f"A permute of {c.numel} >= {COPY_ROWS_MIN_ELEMENTS} elements moving rows of "
                f"{row} >= {COPY_MIN_ROW} contiguous elements.",
        "windows": f"{c.numel} >= {COPY_ROWS_MIN_ELEMENTS} elements in overlapping windows of "
                   f"{row} >= {COPY_MIN_ROW} contiguous elements.",
        "far": (f"{c.numel} >= {COPY_FAR_PAGE_MIN_ELEMENTS} elements a page apart (stride "
                f"{c.dims[0][1]} >= {COPY_FAR_PAGE})."
                if c.dims and c.dims[0][1] >= COPY_FAR_PAGE else
                f"{c.numel} >= {COPY_FAR_MIN_ELEMENTS} far-apart elements (stride "
                f"{c.dims[0][1] if c.dims else 0} >= {COPY_TILE_JUMP})."),
        "every_other": (f"Every other element, {COPY_EVERY_OTHER_MIN_ELEMENTS} <= {c.numel} <= "
                        f"{COPY_EVERY_OTHER_MAX_ELEMENTS} elements (last dim of stride 2)."),
    }.get(kind or "", f"{c.numel} elements.")
    return [
        *asked,
        what,
        "On CPU: one call of the compiled strided copy.",
        "It writes the output once, in order, with a memcpy per contiguous run.",
        "It moves tiles of 64 columns by 64 rows (32 by 32 for elements of 8 bytes or more) where the "
        "last dim jumps a cache line per element.",
        "It stores a large permute's output past the caches where its rows are whole cache lines.",
        "It spreads its chunks over as many threads as XLA's pool has.",
        f"On other platforms, for jax.export and under a vmap split across devices: {xla}.",
        *xla.reasons,
    ]


def _xla_why(layout: Layout, c: Canonical, n: int, path: str) -> list[str]:
    """Why the XLA read ``path`` of ``layout`` (canonical form ``c``) over a storage of ``n``
    elements, one sentence a fact."""
    if path == "empty":
        return ["A zero extent: nothing is read.", "Zeros of the shape are returned."]
    dims = _dims_text(c.dims) if c.dims else "[] (one element)"
    head = f"Canonical dims {dims} (extent x stride; size-1 dims dropped, merged, sorted by stride)."
    tail = []
    b = box(c.dims)
    if c.perm != tuple(range(len(c.perm))):
        plan = _tiled.tiled_plan(b.shape, c.perm, 4) if b is not None else None
        if plan is not None and b is not None and reads_by_reshapes(n, c.offset, b):
            tail.append(f"Then a transpose back to your order of dims, as a loop over tiles ({plan.p_tile} x "
                        f"{plan.q_tile} for a 4-byte dtype) of a batch of {plan.batch} ({plan.p}, {plan.q}) "
                        "matrices.")
        else:
            tail.append("Then a transpose back to your order of dims.")
    if c.broadcast:
        tail.append(f"Then a broadcast along stride-0 dims {list(c.broadcast)}.")
    if path == "gather" and b is not None:  # a box whose permute reads faster as one gather
        blocks = _tiled.blocks(b.shape, c.perm)
        assert blocks is not None  # the gather path of a box is chosen by its blocks
        _, p, q = blocks
        return [head, "They form a strided box.",
                f"Its permute moves {p} rows, {q} elements apart, to the innermost dim (<= "
                f"{GATHER_MAX_ROWS} rows, a multiple of {GATHER_ROWS_APART} apart).",
                "One gather of single elements over your dims reads it faster than a transpose "
                "(indices built in the graph from iota)."]
    if path == "structured":
        assert b is not None  # the structured path reads boxes only
        if len(b.dims) < 2:
            how = "One strided slice of the storage reads it; no gather."
        else:
            how = (f"A slice of the storage, a reshape into rows of {b.pitches[0]} and a strided slice "
                   "read it; no gather.")
        return [head, "They form a strided box.", how, *tail]
    k = max(1, inner_box_start(c.dims))
    inner, step = box(c.dims[k:]), c.dims[k - 1][1]
    assert inner is not None  # the dims from inner_box_start on are a box
    why = [head, "They form no strided box.",
           f"Rows of {inner.reach} storage elements start every {step}, so they overlap or interleave."]
    if path == "row_gather":
        return [*why, f"The rows hold >= {ROW_GATHER_MIN_ROW} elements and lie at least "
                      f"{ROW_GATHER_MIN_STEP} apart.",
                "One gather of whole rows reads them, then the strided read inside each row.", *tail]
    if path == "slices":
        return [*why, "A few shifted slices cover the windows.", *tail]
    short = []
    if inner.reach < ROW_GATHER_MIN_ROW:
        short.append(f"rows of {inner.reach} < {ROW_GATHER_MIN_ROW} elements")
    if step < ROW_GATHER_MIN_STEP:
        short.append(f"rows {step} < {ROW_GATHER_MIN_STEP} apart")
    return [*why, f"A row gather does not pay ({' and '.join(short)}).",
            "One gather of single elements reads them (indices built in the graph from iota).", *tail]


#: The read strategies, in order, and the rule "auto" follows (see :func:`read_plan`).
READS = Strategies("materialize", (
    Strategy("structured", _applies_structured, _structured),
    Strategy("slices", _applies_slices, _slices),
    Strategy("row_gather", lambda c, need: len(c.dims) >= 2, _row_gather),
    Strategy("gather", lambda c, need: True, _element_gather),
    # lowered by _lower from the layout itself (the handler takes the user's dims)
    Strategy("strided_copy", _applies_strided_copy, None),
), _auto, _why)


#: Lowering paths accepted by ``materialize(..., method=...)``: ``"auto"`` and each strategy.
METHODS = READS.methods


def plan_subject(op: str, x: Any) -> tuple[Layout, int | None]:
    """What :func:`read_plan` and :func:`write_plan` plan for: a ``Layout`` (no storage), or
    a ``StridedArray`` (its layout, and the size of its storage's last axis).

    Raises:
      LayoutTypeError: ``x`` is neither."""
    if isinstance(x, Layout):
        return x, None
    layout, shape = getattr(x, "layout", None), getattr(getattr(x, "storage", None), "shape", None)
    if isinstance(layout, Layout) and shape is not None:
        return layout, int(shape[-1]) if len(shape) else None
    raise LayoutTypeError(f"{op}: expected a functional_strides.Layout or a StridedArray, not "
                          f"{type(x).__name__} (got {x!r}); pass x.layout, or the array itself.")


def read_plan(layout: Layout | Any, method: str = "auto") -> Plan:
    """The path ``materialize`` takes for ``layout`` when the layout is static (inside ``jit``).

    ``"auto"`` follows the read table's rule, stated in code beside the table (named
    thresholds, each naming the table of ``benchmarks/lowering_choices.py`` that set it) and
    in words in docs/performance.md ("How reads and writes are lowered"; "Thresholds and
    their evidence" gives the measurements). ``"strided_copy"`` is planned only on CPU where
    the C++ extension is built and ``fs.config.native_copy`` is on; other platforms,
    derivatives and ``vmap`` then take the XLA strategy ``"auto"`` picks without it.
    Writes are planned by :func:`functional_strides.write_plan`, with the same skeleton.

    Args:
      layout: the layout to read, or a ``StridedArray`` (its layout); with a traced offset
        the path is that of the same layout at its lowest offset, read from a
        ``dynamic_slice`` of the storage.
      method: ``"auto"`` or one of :data:`functional_strides.READ_METHODS` to check that it
        applies.
    Returns:
      A :class:`functional_strides.Plan`: a ``str``, ``"empty"`` (a zero extent: no read),
      ``"structured"``, ``"slices"``, ``"row_gather"``, ``"gather"`` or ``"strided_copy"``,
      whose ``reasons`` say why, one sentence a fact (what ``fs.explain`` prints).
    Raises:
      LayoutError: ``method`` is unknown, or does not apply to ``layout``.
      LayoutTypeError: ``layout`` is neither a ``Layout`` nor a ``StridedArray``.
    Example:
      >>> read_plan(Layout((4, 4), (1, 4))), read_plan(Layout((7, 1024), (256, 1)))
      ('structured', 'row_gather')
      >>> read_plan(Layout((3, 3), (2, 3)))
      'gather'
      >>> read_plan(Layout((3, 3), (2, 3))).reasons[1]
      'They form no strided box.'

    Semantics: no PyTorch or NumPy counterpart (they copy with one strided loop); the
    choice ``jax.numpy`` would make is always a gather.
    """
    layout, size = plan_subject("read_plan", layout)
    return _plan(layout, method, Need(size))


def read_plan_over(layout: Layout, storage_size: int) -> Plan:
    """:func:`read_plan` of ``layout`` over a storage of ``storage_size`` elements (whose
    reasons may depend on it), for ``fs.explain``."""
    return _plan(layout, "auto", Need(storage_size))


def _plan(layout: Layout, method: str, need: Need) -> Plan:
    # a traced offset is read through dynamic_window: planned as the view at its lowest offset
    if not layout.has_static_offset:
        layout = Layout(layout.shape, layout.strides, -layout.low_reach)
    return READS.plan(layout, method, need)


def xla_read_plan(layout: Layout) -> Plan:
    """The path ``"auto"`` takes among the XLA strategies (:func:`read_plan` without the
    strided copy): on platforms other than CPU, for ``jax.export``, under a ``vmap`` split
    across devices (or at per-item offsets), and for sharded storages that XLA's partitioner splits."""
    return _plan(layout, "auto", Need(copy_kernel=False))


def _check_span(layout: Layout, n: int) -> int:
    """Elements a view with a traced offset spans (``span + 1``); ``StorageError`` when a
    storage of ``n`` elements cannot hold them at any offset."""
    reach = layout.span + 1
    if reach > n:
        raise StorageError(
            f"materialize: layout {layout} spans {reach} storage elements (sum((size-1)*stride) + 1), "
            f"but the storage has {n} elements, so no offset fits. Shrink the shape or strides, or "
            "pass a larger storage.")
    return reach


def dynamic_window(storage: jax.Array, layout: Layout) -> tuple[jax.Array, jax.Array, Layout]:
    """The part of ``storage`` that a layout with a traced offset addresses, as static data.

    Shape and strides are static, so the span of the view is too: the view lies in the
    ``span + 1`` elements from its lowest index (its offset plus ``sum((n-1)*s for s < 0)``,
    which is the offset itself without negative strides). That start is clamped into ``[0,
    n - span - 1]`` (as ``lax.dynamic_slice`` clamps), so the window always lies in the
    storage; inside it the view starts at index 0 and every static lowering path applies.

    Args:
      storage: 1-D array of ``n`` elements.
      layout: a non-empty layout whose offset is an integer scalar (traced or not).
    Returns:
      ``(start, window, local)``: the clamped start (index dtype), the window
      ``storage[start : start + span + 1]`` and ``layout`` at offset ``-sum((n-1)*s for s <
      0)`` (0 without negative strides) in it.
    Raises:
      StorageError: the view spans more elements than the storage holds (no offset fits),
        or its indices exceed int32 while ``jax_enable_x64`` is off.
    """
    n = storage.shape[0]
    reach = _check_span(layout, n)
    dtype = index_dtype(layout, n)
    below = layout.low_reach
    local = Layout(layout.shape, layout.strides, -below)
    if reach == n:  # the view spans the whole storage: 0 is the only offset that fits
        return jnp.zeros((), dtype), storage, local
    # clamp the offset in its own width into the offsets that fit, then narrow (the clamped
    # value lies in [0, n)) and add `below`: an int64 offset past int32, or an int32 one within
    # |below| of its minimum, must neither wrap nor overflow
    start = jnp.clip(jnp.asarray(layout.offset), *layout.offset_bounds(n)).astype(dtype) + below
    return start, lax.dynamic_slice(storage, (start,), (reach,)), local


def lower_impl(storage: jax.Array, layout: Layout, method: str, *, kernel: bool) -> jax.Array:
    """What one read lowers to: the plan's XLA ops, or the strided copy's FFI call where
    ``kernel`` (the primitive ``strided_read`` lowered for XLA:CPU alone, not for export).

    Args:
      storage: 1-D array of ``n`` elements (checked by the primitive's abstract evaluation).
      layout: the view; a traced offset is clamped (:func:`dynamic_window`).
      method: ``"auto"`` or a path of :data:`METHODS` (``"strided_copy"`` without ``kernel``
        takes the XLA plan ``"auto"`` picks).
      kernel: whether the strided copy may be emitted.
    Returns:
      The dense row-major array of ``layout.shape``."""
    if method == "strided_copy" and not kernel:
        method = "auto"
    path = _plan(layout, method, Need(copy_kernel=kernel))
    if path == "empty":
        return jnp.zeros(layout.shape, storage.dtype)
    n = storage.shape[0]
    dtype = index_dtype(layout, n)  # storages past int32 indices need x64, on every path
    if path == "strided_copy":
        if not _copy_kernel.supports(storage.dtype):  # packed sub-byte types: XLA's read
            return lower_impl(storage, layout, "auto", kernel=False)
        offset = _copy_kernel.kernel_offset(layout, n, dtype)
        return _copy_kernel.ffi_read(storage, offset, layout.shape, layout.strides)
    if not layout.has_static_offset:
        _, storage, layout = dynamic_window(storage, layout)
    return READS.lower(path)(storage, canonicalize(layout))


#: The primitives' entry points, ``"read"``: ``read(storage, layout, method)`` and
#: ``"write"``: ``write(storage, layout, values, mode=, overlapping=, method=, op=)``, set by
#: :mod:`functional_strides._src.lowering.primitives` (which imports this module).
PRIMITIVES: dict[str, Callable[..., jax.Array]] = {}


def check_read_method(layout: Layout, dtype: Any, method: str) -> None:
    """The checks of a forced ``method`` that depend on ``fs.config`` (whether the strided copy
    is enabled) and the dtype, made where a read is bound (an abstract evaluation is cached
    without ``fs.config`` in its key).

    Raises:
      LayoutError: ``method`` does not apply to ``layout``, or is ``"strided_copy"`` for a
        dtype the strided copy does not move."""
    _plan(layout, method, Need(copy_kernel=_copy_kernel.enabled()))
    if method == "strided_copy" and not _copy_kernel.supports(dtype):
        raise LayoutError(
            f"materialize: method='strided_copy' copies whole elements of 1, 2, 4, 8 or 16 bytes, "
            f"not {np.dtype(dtype)}; use method='auto'.")


def _lower(storage: jax.Array, layout: Layout, method: str) -> jax.Array:
    """The read inside a trace: one ``strided_read`` (nothing for an empty view)."""
    if layout.is_empty:
        return jnp.zeros(layout.shape, storage.dtype)
    return PRIMITIVES["read"](storage, layout, method)


def _lower_xla(storage: jax.Array, layout: Layout) -> jax.Array:
    """The ``"auto"`` read among the XLA strategies (other platforms, derivatives, ``vmap``)."""
    return lower_impl(storage, layout, "auto", kernel=False)


@_programs.cached(static_argnames=("layout", "method", "native"))
def _jit_lower(storage, *, layout, method, native):
    # `native` (fs.config's native_copy as it stands) is part of the key: the traced program
    # differs with it, and an eager call follows the switch at once
    with _config.using(native_copy=native):
        return _lower(storage, layout, method)


@_programs.cached(static_argnames=("shape",))
def _eager_gather(storage, strides, offset, *, shape):
    return _gather_at(storage, strides, offset, shape)


def _gather_at(storage, strides, offset, shape):
    """One gather of the elements of ``shape`` at ``offset`` + strides (traced arrays)."""
    idx = storage_indices(shape, strides, offset, strides.dtype)
    return _gather(storage, idx, sorted_=False, unique=False,
                   mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


@_programs.cached(static_argnames=("shape",))
def _eager_copy(storage, strides, offset, *, shape):
    return PRIMITIVES["read_operands"](storage, strides, offset, shape)


@_programs.cached(static_argnames=("shape",))
def _eager_slice(storage, offset, *, shape):
    flat = lax.dynamic_slice(storage, (offset,), (math.prod(shape),))
    return flat.reshape(shape)


#: The most bytes an array may take: XLA counts an array's bytes in int64 (a larger one ends
#: the process inside XLA instead of raising).
MAX_BYTES = 2**63 - 1

#: What a placeholder leaf comes from, and the way to a gradient through a view.
PLACEHOLDER_HINT = (
    "A pytree transform leaves placeholders as leaves (jax.eval_shape: ShapeDtypeStructs; eqx.partition "
    "and eqx.filter_grad: None; jax.grad(..., allow_int=True): a float0 offset), which describe a view "
    "but hold no values. To differentiate through a view x, take the gradient with respect to its "
    "storage: jax.grad(lambda s: loss(x.with_storage(s)))(x.storage) (docs/gradients.md).")


def _is_array(value) -> bool:
    return isinstance(value, (jax.Array, np.ndarray))


def check_operands(op: str, storage, layout, *, batch: bool = False) -> None:
    """The entry check of every read and write: the storage is a 1-D array (with ``batch``:
    of shape ``(*batch, N)``), the layout a :class:`Layout` whose offset is an integer, and
    the view's bytes fit XLA's int64 count.

    Raises:
      LayoutTypeError: ``layout`` is not a ``Layout``; the storage is not a JAX or NumPy
        array, or the offset not an integer (placeholders such as ``None``, a
        ``ShapeDtypeStruct`` or a float0 cotangent: the message says where they come from).
      StorageError: the storage is not 1-D; the offset holds one offset per item of a batch
        the storage does not have; the view takes more than :data:`MAX_BYTES`.
    Example:
      >>> check_operands("materialize", jnp.zeros((10, 10)), Layout((2,), (1,)))
      Traceback (most recent call last):
      ...
      functional_strides.StorageError: materialize: storage must be 1-D (got shape (10, 10); ..."""
    if not isinstance(layout, Layout):
        raise LayoutTypeError(f"{op}: layout must be a functional_strides.Layout, not "
                              f"{type(layout).__name__} (got layout={layout!r}); build one with "
                              "Layout(shape, strides, offset).")
    if not _is_array(storage) or np.dtype(storage.dtype).names is not None:
        raise LayoutTypeError(f"{op}: storage must be a 1-D JAX or NumPy array, not {leaf_kind(storage)} "
                              f"(layout {layout}). {PLACEHOLDER_HINT}")
    shape = tuple(storage.shape)
    check_static_storage_shape(op, shape, layout)
    if len(shape) != 1 and not (batch and len(shape) > 1):
        raise StorageError(f"{op}: storage must be 1-D (got shape {shape}; layout {layout}); pass "
                           "storage.reshape(-1) for its elements in row-major order, or fs.from_array(x) for "
                           "the contiguous view of an array of any rank.")
    offset = layout.offset
    if not is_static_offset(offset) and not (_is_array(offset) and np.dtype(offset.dtype).kind in ("i", "u")):
        raise LayoutTypeError(f"{op}: the layout's offset is {leaf_kind(offset)}, not an integer (layout "
                              f"{layout}). {PLACEHOLDER_HINT}")
    if not is_static_offset(offset) and np.ndim(offset) and tuple(np.shape(offset)) != shape[:-1]:
        raise StorageError(
            f"{op}: the layout's offset has shape {tuple(np.shape(offset))} (one offset per item of a "
            f"batch) but the storage of shape {shape} has batch shape {shape[:-1]} (layout {layout}); pass "
            "a scalar offset (an int, or an integer array of shape ()), or one offset per item of a "
            "storage of shape (*batch, N).")
    itemsize = np.dtype(storage.dtype).itemsize
    items = math.prod(shape[:-1]) * layout.numel
    if items * itemsize > MAX_BYTES:
        what = f"{math.prod(shape[:-1])} items of " if len(shape) > 1 else ""
        raise StorageError(
            f"{op}: the view {layout} has {what}{layout.numel} elements of {itemsize} "
            f"bytes ({items * itemsize} bytes), more than any array can hold "
            f"({MAX_BYTES} bytes, XLA's int64 count). Read or write a part of it (narrow, select, "
            "slicing), or reduce it without materialising it.")


def materialize(storage: jax.Array, layout: Layout, *, method: str = "auto") -> jax.Array:
    """Dense row-major array of shape ``layout.shape``: ``out[i] = storage[layout(*i)]``.

    Args:
      storage: 1-D array of any dtype holding at least ``layout.required_storage_size``
        elements.
      layout: the view to read (strides and offset in elements). A traced offset cannot be
        checked at trace time: it is clamped into ``[0, storage size - span - 1]``, as
        ``lax.dynamic_slice`` clamps; shape and strides are still
        checked (a view longer than the storage raises).
      method: ``"auto"`` (default: the path :func:`functional_strides.read_plan` names), or
        one of ``"structured"``,
        ``"slices"``, ``"row_gather"``, ``"gather"``, ``"strided_copy"`` (CPU; other platforms
        read by XLA ops) to force a path. Outside ``jit``,
        ``"auto"`` uses a program compiled once per output shape (no compile per layout:
        on CPU the strided copy with strides as operands, elsewhere a gather),
        while a forced method compiles once per layout.
    Returns:
      A ``jax.Array`` of shape ``layout.shape`` and ``storage.dtype``.
    Raises:
      StorageError: the layout addresses past the storage end (static offset), or the
        storage's indices exceed int32 while ``jax_enable_x64`` is off (on every path, so
        that whether a program runs never depends on which lowering was picked); the storage
        is not 1-D; the view takes more bytes than an array can (:data:`MAX_BYTES`).
      LayoutTypeError: the storage is not an array, or the offset not an integer (the
        placeholders of pytree transforms; see :func:`check_operands`).
      LayoutError: ``method`` is unknown or does not apply to the layout (``"strided_copy"``
        where the extension is not built, or for a packed sub-byte dtype such as ``int4``).
    Example:
      >>> import jax.numpy as jnp
      >>> materialize(jnp.arange(6), Layout((3, 2), (1, 3))).tolist()
      [[0, 3], [1, 4], [2, 5]]

    Semantics: ``torch.Tensor.contiguous()`` of ``torch.as_strided(storage, shape, strides,
    offset)``; NumPy's ``np.ascontiguousarray(as_strided(...))`` with element strides.
    """
    check_operands("materialize", storage, layout)
    READS.check_method(method)
    check_not_forked("materialize")
    if is_traced(storage) or is_traced(layout.offset):
        return _lower(storage, layout, method)
    n = storage.shape[0]
    if not layout.has_static_offset:  # a concrete array scalar: read its value
        layout = Layout(layout.shape, layout.strides, int(np.asarray(layout.offset)))
    if method != "auto":
        return _jit_lower(storage, layout=layout, method=method, native=_copy_kernel.enabled())
    if layout.is_empty:
        return jnp.zeros(layout.shape, storage.dtype)
    check_in_storage("materialize", layout.shape, layout.strides, layout.offset, n)
    dtype = index_dtype(layout, n)
    offset = np.asarray(layout.offset, dtype)
    if layout.is_contiguous():
        return _eager_slice(storage, offset, shape=layout.shape)
    # a size-1 dim's stride never reaches storage (and may not fit the index dtype)
    live = [s if n > 1 else 0 for n, s in zip(layout.shape, layout.strides, strict=False)]
    strides = np.asarray(live, dtype).reshape(len(layout.shape))
    if _copy_kernel.supports(storage.dtype):  # on CPU the strided copy, elsewhere the gather
        return _eager_copy(storage, strides, offset, shape=layout.shape)
    return _eager_gather(storage, strides, offset, shape=layout.shape)

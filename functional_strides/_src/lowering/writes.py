"""Functional writes through views: the new storage an in-place PyTorch write would leave.

``write(storage, layout, src, mode=...)`` returns a new 1-D storage in which the elements
addressed by ``layout`` are replaced by (``"set"``) or combined with (``"add"``, ``"mul"``,
``"min"``, ``"max"``) the matching element of ``src``.

Writes share the canonical form of reads (:mod:`functional_strides._src.core.canonical`): stride-0
(broadcast) dims are combined first (summed for ``"add"``, multiplied for ``"mul"``, the
last element kept for ``"set"``), then one of these paths writes the rest:

* ``"block"`` -- the canonical dims nest in a grid of the storage (every stride divides the
  one above it and the storage length): ``reshape`` the storage to that grid and
  ``dynamic_update_slice`` one block (after a ``slice`` and the combine for the combining
  modes). With the storage donated XLA writes it in place, touching only the view; without,
  XLA:CPU copies the reshaped storage twice, so ``"auto"`` takes it only for one contiguous
  run, which needs no reshape.
* ``"structured"`` -- any strided box (the read plan ``"structured"``): the transpose of the
  read (``pad`` with interior padding for steps, ``reshape``) places the values in a
  storage-sized array, and a ``select`` keeps the storage outside the view. No index is
  built; the whole storage is rewritten, so ``"auto"`` takes it for views covering much of
  the storage (transposes, attention heads, ``x[::2, ::2]``).
* ``"row_scatter"`` -- one XLA scatter whose updates are whole rows (``update_window_dims``):
  overlap-add of frames, row blocks. A row is the innermost canonical dim when it is dense
  (stride 1), so every slot a row update covers belongs to the view: the storage between
  rows is never written (not even with the mode's identity, which would not keep a NaN's
  payload bit for bit on every backend). ``"set"`` takes it only where rows do not overlap.
* ``"scatter"`` -- one XLA scatter of single elements, indices generated in the graph from
  iota (never baked in as constants).

:func:`plan` tells which path ``"auto"`` takes; ``write(..., method=...)`` forces one.

Where several elements of a view address one storage slot (an overlapping view):
``"add"``/``"mul"``/``"min"``/``"max"`` combine every contribution (``"add"`` is
overlap-add); ``"set"`` with ``overlap="last"`` keeps the element that comes last in
row-major order of the view, computed deterministically (along a stride-0 dim the last
index; otherwise a max-scatter picks each slot's winning position, then only winners are
written), never left to scatter order.

Every path differentiates (``jax.grad``, ``jax.jvp``, to any order) through the
``strided_write`` primitive's rules (``primitives.py``): ``"mul"`` through an overlapping view,
where ``lax.scatter_mul`` has no derivative with respect to its updates, takes the product
rule there (exact with zeros, no division), so the paths here are plain XLA ops.

Eager use (concrete storage outside ``jit``) with ``method="auto"`` passes strides and
offset as traced int arrays to a scatter (or, for a contiguous view, a
``dynamic_update_slice``) compiled once per (view shape, storage shape, dtype, mode, whether
the view overlaps itself), so a new layout of a known shape costs no XLA compile.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..core.canonical import Box, Canonical, box, canonicalize
from ..core.checks import check_choice
from ..core.config import config as _config
from ..core.errors import LayoutError, OverlapError
from ..core.layout import Layout, check_in_storage, is_traced
from ..core.overlap import overlap as _overlap
from ..core.overlap.overlap import is_monotone
from ..core.strategies import Need, Plan, Strategies, Strategy
from ..native import copy_kernel as _copy_kernel
from ..native.process import check_not_forked
from . import programs as _programs
from . import reads as _reads
from .modes import COMBINE as _COMBINE
from .modes import MODES, identity, storage_mode
from .reads import check_operands, dynamic_window, index_dtype, storage_indices

__all__ = ["METHODS", "MODES", "WRITES", "check_src", "write", "write_plan"]


# Choice between the paths (benchmarks/write_choices.py; docs/performance.md, "Thresholds"):
# "block" reshapes the storage, an extra copy of it unless donated, so "auto" takes it only for
# one contiguous run; "row_scatter" wins where the rows are the innermost dense dim and long (no
# slot outside the view is written); "structured" rewrites the whole storage, so it wins only for a
# block of a grid of the storage that covers much of it.
#: "auto" takes "structured" for a view that is a block of a grid of the storage covering at
#: least this fraction of a storage of at least ``STRUCTURED_MIN_STORAGE`` elements ...
STRUCTURED_MIN_FRACTION = 0.5
STRUCTURED_MIN_STORAGE = 2**14
#: ... or at least this fraction of a storage of at least ``STRUCTURED_SPARSE_MIN_STORAGE``.
STRUCTURED_SPARSE_MIN_FRACTION = 0.25
STRUCTURED_SPARSE_MIN_STORAGE = 2**20
#: "auto" takes "row_scatter" for rows spanning at least this many storage elements ...
ROW_SCATTER_MIN_ROW = 8
#: ... of which at least this fraction belongs to the view.
ROW_SCATTER_MIN_DENSITY = 0.5
# The strided write on CPU is at or below the fastest XLA path from a thousand elements or so
# (benchmarks/write_choices.py --sweep).
#: On CPU, writes of at least this many elements (other than one contiguous run) take the
#: strided-write handler (modes "set" and "add").
COPY_WRITE_MIN_ELEMENTS = 2**10
# Overlapping windows (overlap-add), which the handler splits by storage slots, pay from windows
# of a few elements (benchmarks/write_choices.py --only overlap-add).
#: ... and so do writes through windows of at least this many elements that overlap.
COPY_WRITE_MIN_WINDOW = 4

_DNUMS = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
_SCATTER = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul,
            "min": lax.scatter_min, "max": lax.scatter_max}


def _check_integer_values(src: Any, dtype: Any, *, op: str) -> None:
    """NumPy integers (scalars and arrays) must keep their values: in the integer type JAX
    makes of them (with ``jax_enable_x64`` off, int64 becomes int32 and uint64 uint32, by
    wrapping) and in an integer storage's dtype, as a Python int out of range is refused."""
    if not isinstance(src, (np.ndarray, np.generic)) or src.dtype.kind not in ("i", "u") or src.size == 0:
        return
    targets = [np.dtype(jax.dtypes.canonicalize_dtype(src.dtype))]
    if np.dtype(dtype).kind in ("i", "u"):
        targets.append(np.dtype(dtype))
    low, high = src.min(), src.max()
    for target in targets:
        info = np.iinfo(target)
        if low < info.min or high > info.max:
            if target == np.dtype(dtype):
                why, fix = "the storage dtype", "cast src explicitly (src.astype(...))"
            else:
                why = f"what JAX makes of {src.dtype} with jax_enable_x64 off"
                fix = "enable 64-bit types: jax.config.update('jax_enable_x64', True)"
            raise LayoutError(
                f"{op}: src holds integers from {low} to {high} (dtype {src.dtype}), out of the range of "
                f"{target} ({why}: {info.min} to {info.max}), so writing them would change their "
                f"values. Pass values in range, or {fix}.")


def _narrows(arr: Any, dtype: Any) -> bool:
    """A JAX integer array (not weakly typed) of a type whose range the storage's integer
    dtype does not hold (uint32 into int32): jnp's rule refuses it with 64-bit types on; with
    them off, jnp's promotion narrows the answer (int64) to int32 and would let it wrap."""
    if not isinstance(arr, jax.Array) or np.dtype(arr.dtype).kind not in ("i", "u"):
        return False
    if np.dtype(dtype).kind not in ("i", "u") or jax.typeof(arr).weak_type:
        return False
    return np.promote_types(arr.dtype, dtype) != np.dtype(dtype)


def check_src(src: Any, shape: tuple[int, ...], dtype: Any, *, op: str, layout: Layout | None = None,
              exact: bool = False, batch_shape: tuple[int, ...] = ()) -> jax.Array:
    """``src`` as an array of the storage ``dtype`` and of shape ``(*batch_shape, *shape)`` (a
    batched view's items share ``shape``): the one check of what may be written.

    Two rules: jnp's ``.at[]`` (the default) takes any ``src`` that broadcasts to ``shape``
    and casts without loss (``result_type(src, dtype)`` must be ``dtype``; Python scalars are
    weakly typed); PyTorch's ``*_scatter`` (``exact=True``) takes a ``src`` of exactly
    ``shape`` and casts it as ``copy_`` does.

    Raises:
      LayoutError: ``src`` does not broadcast to (``exact``: does not have) ``shape``, its
        dtype cannot be cast to ``dtype`` without loss, or it is no number/array or a Python
        number out of the dtype's range. ``layout`` (the view), when given, is named."""
    at = f" (layout {layout})" if layout is not None else ""
    kind = "batched view's" if batch_shape else "view's"
    shape = (*batch_shape, *shape)
    if exact:
        src_shape = tuple(np.shape(src))
        if src_shape != tuple(shape):
            raise LayoutError(
                f"{op}: expected src to have a size equal to the slice of input: src shape {src_shape}, "
                f"slice shape {tuple(shape)}{at}. Give src exactly that shape.")
        return jnp.asarray(src).astype(dtype)
    _check_integer_values(src, dtype, op=op)
    arr = src if isinstance(src, jax.Array) else None
    try:
        if arr is None:
            arr = jnp.asarray(src) if not isinstance(src, (int, float, complex, bool)) else src
        fits = jnp.result_type(arr, dtype) == jnp.dtype(dtype) and not _narrows(arr, dtype)
        arr = jnp.asarray(arr, dtype) if fits else arr
    except (TypeError, ValueError, OverflowError) as err:
        raise LayoutError(
            f"{op}: src {src!r} cannot be written to a storage of dtype {jnp.dtype(dtype)} ({err}). "
            "Pass numbers or an array of that dtype."
        ) from None
    if not fits:
        src_dtype = getattr(arr, "dtype", type(arr).__name__)
        raise LayoutError(
            f"{op}: cannot cast src of dtype {src_dtype} to the storage dtype {jnp.dtype(dtype)} "
            f"without loss (the rule of jnp's .at[]: result_type(src, storage) must be the storage "
            f"dtype). Cast src explicitly, e.g. src.astype({jnp.dtype(dtype).name})."
        )
    try:
        return _programs.broadcast_to(arr, shape)  # outside jit: a program of the bounded cache
    except ValueError:
        raise LayoutError(
            f"{op}: src of shape {tuple(np.shape(arr))} is not broadcastable to the {kind} shape "
            f"{tuple(shape)}{at}. Give src that shape, or one that broadcasts to it."
        ) from None


# -- values: user order -> canonical order ---------------------------------------------------

#: Modes whose contributions to one slot round differently in another order: through stride-0
#: dims they are not combined ahead but folded into the stored value one by one, in the view's
#: row-major order, as the oracle does (:func:`_fold_broadcast`).
ORDERED_MODES = ("add", "mul")


def _folds_broadcast(c: Canonical, need: Need) -> bool:
    """Whether the view's stride-0 dims carry contributions that must reach the storage one by
    one (an add or multiply through an ``expand``)."""
    return bool(c.broadcast) and need.mode in ORDERED_MODES


#: The fold of stride-0 contributions is unrolled this many steps a loop iteration
#: (benchmarks/write_choices.py --fold).
FOLD_UNROLL = 8


def _folded_layout(layout: Layout, mode: str) -> Layout | None:
    """For an add or multiply through stride-0 dims whose other dims address each slot once:
    ``layout`` without those dims (and its size-1 dims), which the write then sets with the
    stored values folded one by one with the contributions (:func:`_fold_broadcast`); else
    ``None``."""
    if mode not in ORDERED_MODES:
        return None
    c = canonicalize(layout)
    if not c.broadcast:
        return None
    reduced = _reduced_layout(layout, c)
    return None if _overlap.write_check(reduced) is not None else reduced


def _fold_broadcast(old: jax.Array, values: jax.Array, layout: Layout, mode: str) -> jax.Array:
    """``old`` (the slots' stored values, shape of the reduced layout) combined with each
    contribution in the view's row-major order: the stride-0 dims' multi-index outermost and
    in order, one step of ``mode`` each (:data:`ORDERED_MODES`), as the oracle's loop does."""
    c = canonicalize(layout)
    axes = tuple(c.broadcast)
    rest = tuple(d for d in range(layout.ndim) if d not in axes)
    k = math.prod(layout.shape[d] for d in axes)
    v = jnp.transpose(values, axes + rest).reshape((k, *old.shape))
    combine = _COMBINE[mode]
    if k <= FOLD_UNROLL:
        acc = old
        for i in range(k):
            acc = combine(acc, v[i])
        return acc
    return lax.fori_loop(0, k, lambda i, acc: combine(acc, lax.dynamic_index_in_dim(v, i, 0, keepdims=False)),
                         old, unroll=FOLD_UNROLL)


def _combine_broadcast(c: Canonical, values: jax.Array, mode: str) -> jax.Array:
    """Values over the read dims in the user's order (extents >= 2): stride-0 dims combined
    with the mode (``"set"``: their last index, the row-major winner; ``"min"``/``"max"``:
    their extreme, which no order changes), size-1 dims dropped. Adds and multiplies through
    stride-0 dims never come here (:func:`_folds_broadcast`)."""
    axes = c.broadcast
    if axes and mode == "set":
        values = values[tuple(-1 if d in axes else slice(None) for d in range(values.ndim))]
    elif axes:
        assert mode not in ORDERED_MODES, mode
        values = {"min": jnp.min, "max": jnp.max}[mode](values, axis=axes)
    return values.reshape(tuple(c.shape[d] for d in c.kept))


def _canonical_values(c: Canonical, values: jax.Array, mode: str) -> jax.Array:
    """User-shaped values -> an array of the canonical dims' extents (``c.dims`` order;
    reversed dims, which the canonical form writes forwards, flipped first)."""
    x = _combine_broadcast(c, values, mode)
    if c.flipped:
        kept = c.kept
        x = lax.rev(x, tuple(kept.index(d) for d in c.flipped))
    x = x.reshape(tuple(n for n, _ in c.user_dims))
    if c.perm != tuple(range(len(c.perm))):
        x = lax.transpose(x, tuple(int(u) for u in np.argsort(c.perm)))
    return x


def _reduced_layout(layout: Layout, c: Canonical) -> Layout:
    """``layout`` without its size-1 and stride-0 dims (what ``_combine_broadcast`` leaves)."""
    kept = c.kept
    return Layout(tuple(layout.shape[d] for d in kept), tuple(layout.strides[d] for d in kept),
                  layout.offset)


# -- building blocks ----------------------------------------------------------------------

def _place_box(x: jax.Array, n: int, offset: int, b: Box, fill: jax.Array) -> jax.Array:
    """Transpose of the read of box ``b`` from offset ``offset`` of an ``n``-element axis:
    ``x`` of shape ``batch + b.shape`` placed in a ``batch + (n,)`` array, ``fill``
    elsewhere (``pad`` with interior padding for steps, ``reshape``; no index)."""
    nb = x.ndim - len(b.dims)
    batch, keep = x.shape[:nb], [(0, 0, 0)] * nb
    if len(b.dims) < 2:  # one element, or one strided slice
        count, step = (b.dims[0][0], b.pitches[0]) if b.dims else (1, 1)
        x = x.reshape((*batch, count))
        return lax.pad(x, fill, [*keep, (offset, n - offset - (count - 1) * step - 1, step - 1)])
    base, starts = b.origin(offset)
    rows, pitches, m = b.dims[0][0] + starts[0], b.pitches, len(b.dims)
    grid = (rows, *b.grid)
    x = lax.pad(x, fill, [*keep, *((a, g - a - (k - 1) * t - 1, t - 1) for a, g, (k, _), t
                                   in zip(starts, grid, b.dims, b.steps, strict=True))])
    for j in range(m - 1, 0, -1):  # grid axis j (sub-rows of pitch_j) back into rows of pitch_{j-1}
        if j < m - 1:
            x = x.reshape((*x.shape[:-2], x.shape[-2] * x.shape[-1]))
        if x.shape[-1] != pitches[j - 1]:  # the read dropped each row's end: restore it
            x = lax.pad(x, fill, [(0, 0, 0)] * (x.ndim - 1) + [(0, pitches[j - 1] - x.shape[-1], 0)])
    x = x.reshape((*batch, rows * pitches[0]))
    stop = min(n, base + rows * pitches[0])
    if stop - base < rows * pitches[0]:  # the read padded the last row's tail: cut it
        x = lax.slice_in_dim(x, 0, stop - base, axis=nb)
    return lax.pad(x, fill, [*keep, (base, n - stop, 0)])


def _block_grid(dims, offset: int, n: int):
    """``(grid, starts, block)`` when ``dims`` (a box, strides decreasing) are one block of the
    ``n``-element storage reshaped to ``grid``: every stride divides the one above it (and
    ``S_0`` divides ``n``) and the block does not wrap at any level. ``None`` otherwise."""
    grid, starts, block = [], [], []
    above, rem = n, offset
    for k, s in dims:
        if above % s:
            return None
        digit, rem = divmod(rem, s)
        if digit + k > above // s:
            return None
        grid.append(above // s)
        starts.append(digit)
        block.append(k)
        above = s
    if above > 1:  # the position inside the innermost stride
        grid.append(above)
        starts.append(rem)
        block.append(1)
    return tuple(grid), tuple(starts), tuple(block)


def _scatter(storage, idx, values, *, mode: str, last_wins: bool, unique: bool, sorted_: bool):
    # losers of a last-wins write are sent past the end, to be dropped
    gmode = lax.GatherScatterMode.FILL_OR_DROP if last_wins else lax.GatherScatterMode.PROMISE_IN_BOUNDS
    if last_wins:
        # Each slot's winner is the largest row-major position writing to it.
        pos = jnp.arange(values.size, dtype=idx.dtype).reshape(values.shape)
        winner = lax.scatter_max(jnp.full(storage.shape, -1, idx.dtype), idx[..., None], pos, _DNUMS,
                                 mode=gmode)
        won = jnp.take(winner, idx, mode="fill", fill_value=-1) == pos
        idx = jnp.where(won, idx, jnp.asarray(storage.shape[0], idx.dtype))
        unique = False
    return _SCATTER[mode](storage, idx[..., None], values, _DNUMS, unique_indices=unique, mode=gmode,
                          indices_are_sorted=sorted_ and not last_wins)


# -- the paths ------------------------------------------------------------------------------

def _block(storage: jax.Array, layout: Layout, c: Canonical, values: jax.Array, mode: str,
           overlapping: bool) -> jax.Array:
    n = storage.shape[0]
    plan = _block_grid(c.dims, c.offset, n)
    assert plan is not None  # the strategy applies to blocks only
    grid, starts, block = plan
    vals = _canonical_values(c, values, mode).reshape(block)
    g = storage.reshape(grid)
    if mode != "set":
        old = lax.slice(g, starts, tuple(a + k for a, k in zip(starts, block, strict=True)))
        vals = _COMBINE[mode](old, vals)
    return lax.dynamic_update_slice(g, vals, starts).reshape(n)


def _structured(storage: jax.Array, layout: Layout, c: Canonical, values: jax.Array, mode: str,
                overlapping: bool) -> jax.Array:
    n, b = storage.shape[0], box(c.dims)
    assert b is not None  # the strategy applies to boxes only
    placed = _place_box(_canonical_values(c, values, mode), n, c.offset, b,
                        jnp.zeros((), storage.dtype))
    mask = _place_box(jnp.ones(b.shape, bool), n, c.offset, b, jnp.asarray(False))
    return lax.select(mask, placed if mode == "set" else _COMBINE[mode](storage, placed), storage)


def _split_rows(c: Canonical) -> tuple[int, Layout, Box]:
    """``(k, outer, inner)``: the canonical dims as row starts (``dims[:k]``) times one row,
    the innermost dim (``k = len(dims) - 1``). ``"row_scatter"`` applies only where that dim
    is dense (stride 1), so a row update covers no slot outside the view: slots between the
    rows are untouched by construction, whatever the mode."""
    k = max(1, len(c.dims) - 1)
    inner = box(c.dims[k:])
    assert inner is not None  # one dim is always a box
    return k, Layout(*zip(*c.dims[:k], strict=True), offset=c.offset), inner


def _row_scatter(storage: jax.Array, layout: Layout, c: Canonical, values: jax.Array, mode: str,
                 overlapping: bool) -> jax.Array:
    k, outer, inner = _split_rows(c)
    fill = identity(mode, storage.dtype)
    rows = _place_box(_canonical_values(c, values, mode), inner.reach, 0, inner, fill)
    dtype = index_dtype(c.layout(), storage.shape[0])
    starts = storage_indices(outer.shape, outer.strides, c.offset, dtype)
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(k,), inserted_window_dims=(),
                                        scatter_dims_to_operand_dims=(0,))
    return _SCATTER[mode](storage, starts[..., None], rows, dnums, indices_are_sorted=is_monotone(outer),
                          unique_indices=mode == "set", mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _element_scatter(storage: jax.Array, layout: Layout, c: Canonical, values: jax.Array, mode: str,
                     overlapping: bool) -> jax.Array:
    if c.broadcast and mode in ORDERED_MODES:  # every contribution, in row-major order
        idx = storage_indices(layout.shape, layout.strides, layout.offset,
                              index_dtype(layout, storage.shape[0]))
        return _scatter(storage, idx, values, mode=mode, last_wins=False, unique=False,
                        sorted_=is_monotone(layout))
    reduced = _reduced_layout(layout, c)
    if overlapping and c.broadcast:  # the stride-0 dims may have been the only overlap
        overlapping = _overlap.write_check(reduced) is not None
    idx = storage_indices(reduced.shape, reduced.strides, reduced.offset,
                          index_dtype(reduced, storage.shape[0]))
    return _scatter(storage, idx, _combine_broadcast(c, values, mode), mode=mode,
                    last_wins=overlapping and mode == "set", unique=not overlapping,
                    sorted_=is_monotone(reduced))


def _applies_block(c: Canonical, need: Need) -> bool:
    return (box(c.dims) is not None and not _folds_broadcast(c, need) and need.storage_size is not None
            and _block_grid(c.dims, c.offset, need.storage_size) is not None)


def _applies_structured(c: Canonical, need: Need) -> bool:
    return box(c.dims) is not None and not _folds_broadcast(c, need)


def _applies_row_scatter(c: Canonical, need: Need) -> bool:
    # dense rows only (no slot outside the view is written); "set" needs rows that do not overlap
    return (len(c.dims) >= 2 and c.dims[-1][1] == 1 and not _folds_broadcast(c, need)
            and (need.mode != "set" or box(c.dims) is not None))


def _row_density(c: Canonical) -> float:
    """Fraction of the elements of a scattered row that belong to the view."""
    _, _, inner = _split_rows(c)
    return math.prod(inner.shape) / inner.reach


def _covers(dims, offset: Any, n: int | None) -> bool:
    """Whether canonical ``dims`` at ``offset`` visit every slot of an ``n``-element storage once:
    sorted by stride, each stride is the product of the extents below it, from 1 to ``n``."""
    if n is None or offset != 0:
        return False
    step = 1
    for extent, stride in sorted(dims, key=lambda d: d[1]):
        if stride != step:
            return False
        step *= extent
    return step == n


def _applies_permutation(c: Canonical, need: Need) -> bool:
    return need.mode == "set" and not c.broadcast and _covers(c.dims, c.offset, need.storage_size)


def permutation_inverse(layout: Layout, n: int) -> Layout | None:
    """For a view that visits every slot of an ``n``-element storage once (a permutation of it,
    reversed dims allowed): the view of its row-major values that reads them back in storage
    order, so that ``write(s, layout, v) == materialize(v.reshape(-1), inverse)`` and the
    transpose of a read through ``layout`` is a read through ``inverse``; else ``None``.

    Example:
      >>> permutation_inverse(Layout((2, 3), (1, 2)), 6)
      Layout(shape=(3, 2), strides=(1, 3), offset=0)
    """
    if not layout.has_static_offset or layout.numel != n or n == 0:
        return None
    pairs = enumerate(zip(layout.shape, layout.strides, strict=True))
    dims = sorted(((size, stride, k) for k, (size, stride) in pairs if size > 1), key=lambda d: abs(d[1]))
    lowest = int(layout.offset) + layout.low_reach
    if not _covers([(size, abs(stride)) for size, stride, _ in dims], lowest, n):
        return None
    row_major = Layout.contiguous(layout.shape).strides
    shape, strides, offset = [], [], 0
    for size, stride, k in reversed(dims):  # the storage's order, outermost first
        shape.append(size)
        strides.append(row_major[k] if stride > 0 else -row_major[k])
        if stride < 0:
            offset += (size - 1) * row_major[k]
    return Layout(tuple(shape), tuple(strides), offset)


def _permuted(storage: jax.Array, layout: Layout, values: jax.Array, kernel: bool) -> jax.Array:
    """The ``"permutation"`` path: the values read back through the inverse view."""
    inverse = permutation_inverse(layout, storage.shape[0])
    assert inverse is not None  # the path is taken only where it applies
    flat = jnp.broadcast_to(values, layout.shape).reshape(-1)
    return _reads.lower_impl(flat, inverse, "auto", kernel=kernel).reshape(storage.shape)


def _applies_strided_copy(c: Canonical, need: Need) -> bool:
    return need.copy_kernel and _copy_kernel.enabled() and need.mode in ("set", "add")


def _shares_slots(c: Canonical) -> bool:
    """Whether elements of the view share storage slots (the strided write would then run on
    one thread, except for windows: XLA's scatter, which splits the work, is faster there)."""
    return bool(c.broadcast) or _overlap.write_check(c.layout()) is not None


def _parallel_windows(c: Canonical) -> bool:
    """Whether the view is windows the strided write splits across threads although they
    overlap: dims ``(count, length):(step, 1)`` with ``step < length`` as the user wrote them
    (no flip, no expansion, no permute: the test of ``MakePlan`` in ``_src/native/plan.h``)."""
    if c.broadcast or c.flipped or len(c.dims) != 2 or c.perm != (0, 1):
        return False
    (_, step), (length, inner) = c.dims
    return inner == 1 and step < length and length >= COPY_WRITE_MIN_WINDOW


def _auto(c: Canonical, need: Need, ok: dict[str, bool]) -> str:
    n = need.storage_size
    assert n is not None  # a write always knows its storage
    if ok["block"] and len(c.dims) <= 1 and all(s == 1 for _, s in c.dims):
        return "block"  # one contiguous run: a dynamic_update_slice of the 1-D storage
    if ok["permutation"]:
        return "permutation"  # the old storage is not read at all: the values, permuted, are the new one
    if (ok["strided_copy"] and c.numel >= COPY_WRITE_MIN_ELEMENTS
            and (_parallel_windows(c) or not _shares_slots(c))):
        return "strided_copy"
    rows = (ok["row_scatter"] and _split_rows(c)[2].reach >= ROW_SCATTER_MIN_ROW
            and _row_density(c) >= ROW_SCATTER_MIN_DENSITY)
    if rows and c.perm == tuple(range(len(c.perm))):
        return "row_scatter"
    # the full-storage rewrite pays where the view is a block of a grid of the storage
    cover = c.numel / n if ok["block"] else 0.0
    if cover >= STRUCTURED_MIN_FRACTION and n >= STRUCTURED_MIN_STORAGE:
        return "structured"
    if rows:
        return "row_scatter"
    if cover >= STRUCTURED_SPARSE_MIN_FRACTION and n >= STRUCTURED_SPARSE_MIN_STORAGE:
        return "structured"
    return "scatter"


def _why(layout: Layout, c: Canonical, need: Need, path: str, method: str) -> list[str]:
    """The reasons of write path ``path`` for ``layout`` (canonical form ``c``; the mode and
    the storage's size in ``need``), chosen by ``method``: one sentence a fact, the first
    saying why the path applies (what a
    :class:`~functional_strides._src.core.strategies.Plan` carries)."""
    n, mode = need.storage_size, need.mode
    assert n is not None and mode is not None  # a write knows both
    asked = [f"Asked for with method={method!r}."] if method != "auto" else []
    if path != "strided_copy":
        return [*asked, *_xla_why(layout, c, n, mode, path)]
    xla = WRITES.plan(layout, "auto", Need(n, mode, copy_kernel=False))
    out = [*asked, f"{c.numel} >= {COPY_WRITE_MIN_ELEMENTS} elements, mode {mode!r}."]
    if _parallel_windows(c):
        out.append(f"Overlapping windows {_reads._dims_text(c.dims)}: split over the threads by runs of "
                   "storage slots, each slot's elements in row-major order.")
    return [
        *out,
        "On CPU: one call of the compiled strided write.",
        "It updates the view's slots in place when the storage is donated (else XLA copies the storage "
        "first).",
        f"On other platforms, for jax.export, under a vmap split across devices and for dtypes it does not "
        f"{mode}: {xla}.",
        *xla.reasons,
    ]


def _xla_why(layout: Layout, c: Canonical, n: int, mode: str, path: str) -> list[str]:
    """Why the XLA write ``path`` of ``layout`` (canonical form ``c``; ``mode``, a storage of
    ``n``), one sentence a fact."""
    if path == "empty":
        return ["A zero extent: the storage is returned unchanged."]
    if path == "block":
        return ["One contiguous run: a dynamic_update_slice of the storage."]
    if path == "permutation":
        inverse = permutation_inverse(layout, n)
        return [f"A set through a view that visits each of the {n} slots once.",
                f"The new storage is the values read back through the inverse view {inverse} (the read "
                "plan of that view); the old storage is not read."]
    ok = WRITES.applies(c, Need(n, mode))
    cover = c.numel / n if ok["block"] else 0.0
    rows = None
    if ok["row_scatter"]:
        _, _, inner = _split_rows(c)
        rows = (inner.reach, _row_density(c))
    if path == "row_scatter":
        assert rows is not None  # the path is taken only where it applies
        return [f"Rows of {rows[0]} storage elements, {rows[1]:.0%} written (>= "
                f"{ROW_SCATTER_MIN_ROW} elements, >= {ROW_SCATTER_MIN_DENSITY:.0%} "
                "written).", "One scatter of whole rows."]
    if path == "structured":
        return [f"A block of a grid of the storage covering {cover:.0%} of its {n} elements.",
                "The storage is rewritten by pad/reshape and a select, with no index."]
    why = []
    if not ok["row_scatter"]:
        if len(c.dims) < 2:
            why.append("No rows to scatter (one canonical dim).")
        elif c.dims[-1][1] != 1:
            why.append(f"No dense rows: the innermost canonical dim has stride {c.dims[-1][1]}, so a "
                       "row update would write the slots between its elements.")
        else:
            why.append("No row scatter: the rows would overlap.")
    elif rows is not None:
        why.append(f"Rows of {rows[0]} elements, {rows[1]:.0%} written, are too short or sparse.")
    if ok["block"]:
        why.append(f"A grid block covers {cover:.0%} of {n} elements; a full rewrite pays from "
                   f"{STRUCTURED_MIN_FRACTION:.0%} of {STRUCTURED_MIN_STORAGE} elements.")
    else:
        why.append("No grid block of the storage.")
    return [*why, "One scatter of single elements."]


#: The write strategies, in order, and the rule "auto" follows (see :func:`write_plan`).
WRITES = Strategies("write", (
    Strategy("block", _applies_block, _block),
    Strategy("structured", _applies_structured, _structured),
    Strategy("row_scatter", _applies_row_scatter, _row_scatter),
    Strategy("scatter", lambda c, need: True, _element_scatter),
    # lowered by lower_impl from the layout itself (the handler takes the user's dims)
    Strategy("strided_copy", _applies_strided_copy, None),
    Strategy("permutation", _applies_permutation, None),
), _auto, _why)

#: Write paths accepted by ``write(..., method=...)``: ``"auto"`` and each strategy.
METHODS = WRITES.methods


def _plan(layout: Layout, n: int, mode: str, method: str, op: str, copy_kernel: bool = True) -> Plan:
    folded = _folded_layout(layout, mode)
    if folded is not None:  # a set of the folded values through the rest of the view
        plan = _plan(folded, n, "set", method, op, copy_kernel)
        fold = (f"The stride-0 dims' contributions are folded into the stored values one by one "
                f"(mode {mode!r}, row-major order), then the view {folded} is set.")
        return Plan(plan, lambda: [fold, *plan.reasons])
    if not layout.has_static_offset:  # written through dynamic_window: the view at its lowest index
        layout, n = Layout(layout.shape, layout.strides, -layout.low_reach), layout.span + 1
    return WRITES.plan(layout, method, Need(n, mode, copy_kernel), op=op)


def xla_write_plan(layout: Layout, storage_size: int, mode: str = "set") -> Plan:
    """The path ``"auto"`` takes among the XLA strategies (:func:`write_plan` without the
    strided write): on platforms other than CPU, for ``jax.export``, under a ``vmap`` split
    across devices (or at per-item offsets), and for dtypes or modes the strided write does not
    handle."""
    check_choice("write", "mode", mode, MODES)
    return _plan(layout, storage_size, mode, "auto", "write", copy_kernel=False)


def write_plan(layout: Layout | Any, storage_size: int | None = None, *, mode: str = "set",
               method: str = "auto") -> Plan:
    """The path ``write`` takes for ``layout`` when the layout is static (inside ``jit``).

    Paths that apply: ``"block"`` when every canonical stride divides the one above it and
    ``storage_size`` and the view does not wrap around (a block of the storage reshaped to a
    grid); ``"structured"`` for a strided box (the canonical dims form a box:
    every composition of slicing, permutation and expansion); ``"row_scatter"`` for two or
    more canonical dims whose innermost is dense (rows of adjacent slots, so no slot outside
    the view is written), with ``mode="set"`` only when the rows do not overlap;
    ``"scatter"`` always; ``"strided_copy"`` for modes ``"set"`` and ``"add"`` where the C++
    extension is built (on CPU: one call of a compiled strided write that changes only the
    view's slots, in place when the storage is donated; elsewhere and under ``vmap``, the XLA
    path ``"auto"`` picks without it); ``"permutation"`` for a ``"set"`` through a view that
    visits every slot of the storage once (a transpose or permute of all of it, reversed dims
    allowed): the old storage is not read, and the new one is the values read back through
    the inverse view by the read plan (the strided copy on CPU).
    ``"auto"`` takes it wherever it applies.

    ``"auto"`` follows the write table's rule, stated in code beside the table (named
    thresholds, each naming the table of ``benchmarks/write_choices.py`` that set it) and in
    words in docs/performance.md ("How reads and writes are lowered"; "Thresholds and their
    evidence" gives the measurements).

    Args:
      layout: the view written through (strides/offset in elements), or a ``StridedArray``
        (its layout and its storage); with a traced offset the path is that of the same
        layout at offset 0 over the ``span + 1`` elements it lies in (written back with
        ``dynamic_update_slice``).
      storage_size: elements in the storage; by default that of the ``StridedArray``'s
        storage, or for a ``Layout`` the least that holds it (``required_storage_size``;
        ``span + 1`` with a traced offset).
      mode: one of ``"set"``, ``"add"``, ``"mul"``, ``"min"``, ``"max"``.
      method: ``"auto"`` or one of :data:`functional_strides.WRITE_METHODS` to check that it
        applies.
    Returns:
      A :class:`functional_strides.Plan`: a ``str``, ``"empty"`` (a zero extent: nothing
      written), ``"block"``, ``"structured"``, ``"row_scatter"``, ``"scatter"``,
      ``"strided_copy"`` or ``"permutation"``, whose ``reasons`` say why, one sentence a fact
      (what ``fs.explain`` prints).
    Raises:
      LayoutError: ``mode`` or ``method`` is unknown, or ``method`` does not apply.
      LayoutTypeError: ``layout`` is neither a ``Layout`` nor a ``StridedArray``.
    Example:
      >>> write_plan(Layout((64,), (64,), 7), 4096), write_plan(Layout((7, 1024), (256, 1)), 2560, mode="mul")
      ('scatter', 'row_scatter')
      >>> write_plan(Layout((512, 512), (1, 512)), 512 * 512, mode="max")
      'structured'
      >>> write_plan(Layout((512, 512), (1, 512)), 512 * 512)
      'permutation'
      >>> write_plan(Layout((3, 4), (4, 1), 2), 20)
      'block'
    """
    check_choice("write", "mode", mode, MODES)
    layout, size = _reads.plan_subject("write_plan", layout)
    if storage_size is not None:
        size = storage_size
    elif size is None:
        size = layout.required_storage_size if layout.has_static_offset else layout.span + 1
    return _plan(layout, size, mode, method, "write")


def lower_impl(storage, layout: Layout, values, *, mode: str, overlapping: bool, method: str, op: str,
               kernel: bool):
    """What one write lowers to: the plan's XLA ops, or the strided write's FFI call where
    ``kernel`` (the primitive ``strided_write`` lowered for XLA:CPU alone, not for export).

    Args:
      storage: 1-D array of ``n`` elements (checked by the primitive's abstract evaluation).
      layout: the non-empty view; a traced offset is clamped (:func:`dynamic_window`).
      values: of ``layout.shape`` and the storage's dtype.
      mode, overlapping, op: as for :func:`write`; ``overlapping``: whether elements of the
        view share slots.
      method: ``"auto"`` or a path of :data:`METHODS` (``"strided_copy"`` without ``kernel``
        takes the XLA plan ``"auto"`` picks).
      kernel: whether the strided write may be emitted.
    Returns:
      The new storage."""
    if method == "strided_copy" and not kernel:
        method = "auto"
    folded = _folded_layout(layout, mode)
    if folded is not None:  # read the slots, fold the contributions in, set them back
        old = _reads.lower_impl(storage, folded, "auto", kernel=kernel)
        values = _fold_broadcast(old, values, layout, mode)
        layout, mode, overlapping = folded, "set", False
    path = _plan(layout, storage.shape[0], mode, method, op, kernel)
    if path == "empty":
        return storage
    if path == "strided_copy":
        if not _copy_kernel.supports_write(storage.dtype, mode):  # XLA's write for this dtype
            return lower_impl(storage, layout, values, mode=mode, overlapping=overlapping, method="auto",
                              op=op, kernel=False)
        n = storage.shape[0]
        offset = _copy_kernel.kernel_offset(layout, n, index_dtype(layout, n, op))
        return _copy_kernel.ffi_write(storage, jnp.broadcast_to(values, layout.shape), offset,
                                      tuple(layout.shape), tuple(layout.strides), mode, overlapping)
    def lower(s, lay):
        if path == "permutation":
            return _permuted(s, lay, values, kernel)
        return WRITES.lower(path)(s, lay, canonicalize(lay), values, mode, overlapping)

    if not layout.has_static_offset:  # write the window the view lies in, then put it back
        start, window, local = dynamic_window(storage, layout)
        return lax.dynamic_update_slice(storage, lower(window, local), (start,))
    return lower(storage, layout)


def check_write_method(layout: Layout, n: int, dtype: Any, mode: str, method: str, op: str) -> None:
    """The checks of a forced ``method`` that depend on ``fs.config`` and the dtype, made where a
    write is bound (an abstract evaluation is cached without ``fs.config`` in its key).

    Raises:
      LayoutError: ``method`` does not apply to ``layout`` in a storage of ``n`` elements, or is
        ``"strided_copy"`` for a mode or dtype the strided write does not handle."""
    _plan(layout, n, mode, method, op, _copy_kernel.enabled())
    if method == "strided_copy" and _folded_layout(layout, mode) is None \
            and not _copy_kernel.supports_write(dtype, mode):
        raise LayoutError(
            f"{op}: method='strided_copy' writes mode 'set' for elements of 1, 2, 4, 8 or 16 bytes "
            f"and 'add' for float32, float64 and 32/64-bit integers, not mode {mode!r} into "
            f"{np.dtype(dtype)}; use method='auto'.")


def _lower(storage, layout: Layout, values, *, mode: str, overlapping: bool, method: str, op: str):
    """The write inside a trace: one ``strided_write`` (the storage itself for an empty view)."""
    if layout.is_empty:
        return storage
    return _reads.PRIMITIVES["write"](storage, layout, values, mode=mode, overlapping=overlapping,
                                      method=method, op=op)


def _lower_xla(storage, layout: Layout, values, *, mode: str, overlapping: bool, op: str):
    """The ``"auto"`` write among the XLA strategies (other platforms, derivatives, ``vmap``)."""
    return lower_impl(storage, layout, values, mode=mode, overlapping=overlapping, method="auto", op=op,
                      kernel=False)


@_programs.cached(static_argnames=("layout", "mode", "overlapping", "method", "op", "native"))
def _jit_write(storage, values, *, layout, mode, overlapping, method, op, native):
    # `native` (fs.config's native_copy as it stands): part of the key, as in reads._jit_lower
    with _config.using(native_copy=native):
        return _lower(storage, layout, values, mode=mode, overlapping=overlapping, method=method, op=op)


@_programs.cached(static_argnames=("shape", "mode", "last_wins", "unique"))
def _eager_write(storage, values, strides, offset, *, shape, mode, last_wins, unique):
    idx = storage_indices(shape, strides, offset, strides.dtype)
    return _scatter(storage, idx, values, mode=mode, last_wins=last_wins, unique=unique, sorted_=False)


@_programs.cached(static_argnames=("mode",))
def _eager_update(storage, values, offset, *, mode):
    flat = values.reshape(-1)
    if mode != "set":
        flat = _COMBINE[mode](lax.dynamic_slice(storage, (offset,), flat.shape), flat)
    return lax.dynamic_update_slice(storage, flat, (offset,))


def write(storage: jax.Array, layout: Layout, src: Any, *, mode: str = "set",
          overlap: str = "error", op: str = "write", method: str = "auto") -> jax.Array:
    """New storage after writing ``src`` through ``layout``.

    Args:
      storage: 1-D array (any dtype) that holds ``layout``.
      layout: the view written through; strides/offset in elements.
      src: values broadcastable to ``layout.shape``, castable to ``storage.dtype``.
      mode: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"`` (as ``jnp``'s ``.at[]``;
        on a bool storage ``"add"`` is a logical or and ``"mul"`` a logical and, as in PyTorch).
      overlap: for ``mode="set"`` through an internally overlapping view: ``"error"``
        (default) or ``"last"`` (the last element in row-major order wins).
      op: the name used in error messages (``"write"``; the methods of ``StridedArray`` pass
        theirs, e.g. ``"at[].add"``).
      method: ``"auto"`` (default: the path :func:`functional_strides.write_plan` names), or
        one of ``"block"``,
        ``"structured"``, ``"row_scatter"``, ``"scatter"``, ``"strided_copy"`` (CPU, modes
        ``"set"`` and ``"add"``) to force a path. Outside ``jit``,
        ``"auto"`` uses a scatter (a ``dynamic_update_slice`` for a contiguous view)
        compiled once per view shape (no compile per layout), while a forced method
        compiles once per layout.
    Returns:
      A new 1-D storage of the same shape and dtype.
    Raises:
      OverlapError: ``mode="set"``, ``overlap="error"`` and two elements of the view share a
        storage slot (the message names one such pair of coordinates).
      LayoutError: bad ``mode``/``overlap``/``method`` (or a method that does not apply),
        or ``src`` of a wrong shape or dtype (or no number, or out of the dtype's range).
      StorageError: a static offset and the view runs past the storage end, or the storage's
        indices exceed int32 while ``jax_enable_x64`` is off; the storage is not 1-D; the view
        takes more bytes than an array can.
      LayoutTypeError: the storage is not an array, or the offset not an integer (the
        placeholders of pytree transforms).
    Example:
      >>> import jax.numpy as jnp
      >>> write(jnp.zeros(6), Layout((2, 2), (1, 3)), jnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
      [1.0, 3.0, 0.0, 2.0, 4.0, 0.0]

    A traced offset cannot be checked at trace time: it is clamped into ``[0, storage size -
    span - 1]`` as ``lax.dynamic_update_slice`` clamps (reads clamp the same way), and the
    window of ``span + 1`` elements it starts is written with the static plan of the view at
    offset 0.

    Semantics: ``torch.as_strided(storage, ...).copy_(src)`` (``add_``, ``mul_``, ...)
    functionalized; ``storage.at[layout.indices()].set(src)`` (``add``, ``mul``, ``min``,
    ``max``) in jnp, with ``"set"`` made deterministic for overlapping views."""
    check_operands(op, storage, layout)
    check_choice(op, "mode", mode, MODES)
    check_choice(op, "overlap", overlap, ("error", "last"))
    WRITES.check_method(method, op)
    check_not_forked(op)
    values = check_src(src, layout.shape, storage.dtype, op=op, layout=layout)
    if layout.is_empty:
        return storage
    witness = _overlap.write_check(layout)  # UNDECIDED past the bound: planned as overlapping
    if isinstance(witness, tuple) and mode == "set" and overlap == "error":
        a, b = witness
        index = sum(i * s for i, s in zip(a, layout.strides, strict=True))
        index = layout.offset + index if layout.has_static_offset else f"offset + {index}"
        raise OverlapError(
            f"{op}: the view {layout} has elements that share a storage slot (coordinates {a} and "
            f"{b} both address index {index}), so a write through it is ambiguous. PyTorch "
            "refuses such writes to expanded tensors; pass overlap='last' to keep the last element "
            "in row-major order, use add() to accumulate, or write through a contiguous() copy."
        )
    mode = storage_mode(mode, storage.dtype)  # bool: add_ is a logical or, mul_ a logical and (PyTorch)
    n = storage.shape[0]
    if not layout.has_static_offset and not is_traced(layout.offset):  # a concrete array scalar
        layout = Layout(layout.shape, layout.strides, int(np.asarray(layout.offset)))
    if layout.has_static_offset:
        check_in_storage(op, layout.shape, layout.strides, layout.offset, n)
    dtype = index_dtype(layout, n, op)  # past int32 indices needs x64, on every path
    kw = {"mode": mode, "overlapping": witness is not None, "method": method, "op": op}
    if is_traced(storage) or is_traced(values) or not layout.has_static_offset:
        return _lower(storage, layout, values, **kw)
    if method != "auto":
        return _jit_write(storage, values, layout=layout, native=_copy_kernel.enabled(), **kw)
    if layout.is_contiguous():
        return _eager_update(storage, values, np.asarray(layout.offset, dtype), mode=mode)
    # a size-1 dim's stride addresses nothing (and may not fit the index dtype)
    strides = np.asarray([0 if k == 1 else t for k, t in zip(layout.shape, layout.strides, strict=True)],
                         dtype).reshape(layout.ndim)
    return _eager_write(storage, values, strides, np.asarray(layout.offset, dtype), shape=layout.shape,
                        mode=mode, last_wins=witness is not None and mode == "set",
                        unique=witness is None)

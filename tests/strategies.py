"""Hypothesis strategies for layouts, strided arrays and chains of view ops.

* :func:`layouts` draws ``Layout`` records of rank 0..4 with extents 0..5 (size-0 and size-1
  dims included) whose strides are contiguous, permuted, sliced, broadcast (stride 0) or
  arbitrary (overlapping), at an offset 0..5.
* :func:`strided_arrays` draws a ``StridedArray`` over ``arange(N)`` as float32, so every
  value names its storage index.
* :func:`ops` draws one view op (an :class:`Op`) for a given shape, with arguments that are
  mostly valid and sometimes invalid (out-of-range dims, mismatched sizes, bad steps), so
  that tests check both the results and the refusals.
* :func:`op_chains` draws a starting array and a chain of ops, each drawn for the shape the
  previous op produced.

An :class:`Op` applies to a ``torch.Tensor`` and to a ``StridedArray`` alike (methods of the
same names), or through the module-level function of ``functional_strides``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import functional_strides as fs
from functional_strides import Layout, LayoutError, StorageError, views

__all__ = [
    "OPS",
    "OP_NAMES",
    "Op",
    "OpSpec",
    "apply_to_layout",
    "expand_shapes",
    "getitem_keys",
    "layouts",
    "op_chains",
    "ops",
    "shapes",
    "storage_for",
    "strided_arrays",
    "view_shapes",
]

MAX_RANK = 4
MAX_EXTENT = 5

#: Every view op drawn by :func:`ops` (method names of ``torch.Tensor`` and ``StridedArray``), in
#: the order of the per-op table :data:`OPS`.
OP_NAMES = (
    "as_strided", "view", "reshape", "flatten", "unflatten", "contiguous", "permute",
    "transpose", "t", "T", "mT", "movedim", "squeeze", "unsqueeze", "expand", "expand_as",
    "broadcast_to", "narrow", "select", "unfold", "diagonal", "split", "chunk", "unbind",
    "getitem",
)

_MULTI = ("split", "chunk", "unbind")  # ops that return a tuple of views
_STAR_OK = ("view", "reshape", "permute", "expand")  # also accept x.op(2, 3) for x.op((2, 3))


# -- layouts and storages -----------------------------------------------------------------
_PERCENT = st.sampled_from(range(100))  # near-uniform, unlike integers(), which favours bounds
_EXTENT_WEIGHTS = (1, 3, 4, 4, 2, 2)  # relative frequency of extents 0, 1, 2, 3, 4, 5, ...


def _chance(draw, percent: int) -> bool:
    """True about ``percent`` % of the time."""
    return draw(_PERCENT) < percent


def shapes(min_rank: int = 0, max_rank: int = MAX_RANK, max_extent: int = MAX_EXTENT):
    """Tuples of ``min_rank..max_rank`` extents in ``0..max_extent``; every rank about as
    likely, extents 2 and 3 favoured, 0 rarer (about one dim in 16)."""
    weights = _EXTENT_WEIGHTS + (1,) * max(0, max_extent + 1 - len(_EXTENT_WEIGHTS))
    extent = st.sampled_from([n for n, w in enumerate(weights[:max_extent + 1]) for _ in range(w)])
    rank = st.sampled_from(range(min_rank, max_rank + 1))
    return rank.flatmap(lambda r: st.tuples(*[extent] * r))


@st.composite
def layouts(draw, *, min_rank: int = 0, max_rank: int = MAX_RANK, max_extent: int = MAX_EXTENT,
            max_stride: int = 7, max_offset: int = 5, kinds: tuple[str, ...] | None = None,
            negative: bool = False) -> Layout:
    """``Layout`` records with varied strides; extents, strides and offset in elements.

    ``kinds`` restricts the stride pattern: ``"contiguous"`` (row-major; size-1 dims may
    carry any stride, which PyTorch ignores), ``"permuted"`` (a permutation of a dense
    layout), ``"sliced"`` (every dim of a larger dense array sliced with a step),
    ``"broadcast"`` (dense, some strides set to 0) and ``"random"`` (independent strides
    ``0..max_stride``, often overlapping). With ``negative``, some strides change sign (a
    NumPy-style reversed dim) and the offset rises so that the lowest index stays >= 0."""
    shape = draw(shapes(min_rank, max_rank, max_extent))
    r = len(shape)
    kind = draw(st.sampled_from(kinds or ("contiguous", "permuted", "sliced", "broadcast", "random")))
    if kind == "random":
        strides = tuple(draw(st.integers(0, max_stride)) for _ in shape)
    elif kind == "sliced":
        steps = [draw(st.integers(1, 3)) for _ in shape]
        parent = [n * k + draw(st.integers(0, 2)) for n, k in zip(shape, steps, strict=True)]
        strides = tuple(s * k for s, k in zip(fs.contiguous_strides(tuple(parent)), steps, strict=True))
    elif kind == "permuted":
        perm = draw(st.permutations(range(r)))
        dense = fs.contiguous_strides(tuple(shape[p] for p in perm))
        out = [0] * r
        for i, p in enumerate(perm):
            out[p] = dense[i]
        strides = tuple(out)
    else:
        strides = fs.contiguous_strides(shape)
        if kind == "broadcast":
            strides = tuple(0 if draw(st.booleans()) else s for s in strides)
    if kind in ("contiguous", "permuted") and draw(st.booleans()):
        strides = tuple(draw(st.integers(0, max_stride)) if n == 1 else s
                        for n, s in zip(shape, strides, strict=True))
    offset = draw(st.integers(0, max_offset))
    if negative:
        strides = tuple(-s if draw(st.booleans()) else s for s in strides)
        if 0 not in shape:
            offset -= sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    return Layout(shape, strides, offset)


def storage_for(layout: Layout, slack: int = 0, dtype: Any = np.float32) -> np.ndarray:
    """``arange(layout.required_storage_size + slack)``: the smallest storage that fits
    ``layout``, plus ``slack`` elements; each value equals its storage index."""
    return np.arange(layout.required_storage_size + slack, dtype=dtype)


@st.composite
def strided_arrays(draw, layout_strategy=None, *, max_slack: int = 3) -> fs.StridedArray:
    """A ``StridedArray`` over a float32 ``jnp.arange`` storage that fits the drawn layout
    with ``0..max_slack`` spare elements (``x.storage[i] == i``)."""
    layout = draw(layout_strategy if layout_strategy is not None else layouts())
    storage = storage_for(layout, draw(st.integers(0, max_slack)))
    return fs.as_strided(jnp.asarray(storage), layout.shape, layout.strides, layout.offset)


# -- arguments ------------------------------------------------------------------------------
def _mostly(valid, invalid, percent_invalid: int = 15):
    """``valid`` most of the time, ``invalid`` about ``percent_invalid`` % of the time."""
    return _PERCENT.flatmap(lambda k: invalid if k < percent_invalid else valid)


def _dim(rank: int, *, extra: int = 1, percent_invalid: int = 10):
    """A dim index for a tensor of rank ``rank`` (negative ones too; rank 0 accepts -1, 0)."""
    n = max(rank, 1)
    bad = st.one_of(st.integers(-n - extra, -n - 1), st.integers(n, n - 1 + extra))
    return _mostly(st.integers(-n, n - 1), bad, percent_invalid)


def _extent(shape: tuple[int, ...], dim: int) -> int:
    """Extent of ``dim`` (wrapped), 1 for rank 0, 0 when out of range (args are then moot)."""
    if not shape:
        return 1
    return shape[dim] if -len(shape) <= dim < len(shape) else 0


def _factorize(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


@st.composite
def _factor_shape(draw, numel: int, max_rank: int = 5) -> tuple[int, ...]:
    """A shape with ``prod == numel``: the prime factors spread over 0..max_rank dims, plus 1s."""
    if numel == 0:
        shape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=max_rank))
        i = draw(st.integers(0, len(shape) - 1))
        return (*shape[:i], 0, *shape[i + 1:])
    primes = _factorize(numel)
    rank = draw(st.integers(1 if primes else 0, max_rank))
    bins = [1] * rank
    for p in primes:
        bins[draw(st.integers(0, rank - 1))] *= p
    return tuple(bins)


@st.composite
def _regroup(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Merge adjacent dims, split dims into two factors and insert/drop 1s: the reshapes
    that PyTorch's ``computeStride`` can often express as views."""
    out: list[int] = []
    for n in shape:
        action = draw(st.sampled_from(["keep", "merge", "split", "one", "drop"]))
        if action == "merge" and out:
            out[-1] *= n
        elif action == "split" and n > 1:
            divs = [d for d in range(1, n + 1) if n % d == 0]
            d = draw(st.sampled_from(divs))
            out += [d, n // d]
        elif action == "one":
            out += [1, n] if draw(st.booleans()) else [n, 1]
        elif action == "drop" and n == 1:
            pass
        else:
            out.append(n)
    return tuple(out) if len(out) <= 6 else tuple(shape)


@st.composite
def view_shapes(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Target shapes for ``view``/``reshape`` of an array of ``shape``: regrouped or freshly
    factorised (``prod`` preserved), sometimes with one ``-1``, sometimes invalid (wrong
    element count, two ``-1``, an extent below -1)."""
    numel = math.prod(shape)
    kind = draw(st.sampled_from(["regroup", "regroup", "factor", "bad"]))
    if kind == "bad":
        bad = draw(st.sampled_from(["count", "two", "negative"]))
        if bad == "count":
            return draw(_factor_shape(numel + draw(st.integers(1, 3))))
        base = list(draw(_factor_shape(numel)))
        if bad == "two":
            return (*base, -1, -1)
        return (*base, -2)
    new = list(draw(_regroup(shape)) if kind == "regroup" else draw(_factor_shape(numel)))
    if new and _chance(draw, 33):
        new[draw(st.integers(0, len(new) - 1))] = -1
    return tuple(new)


@st.composite
def expand_shapes(draw, shape: tuple[int, ...], *, allow_negative: bool = True) -> tuple[int, ...]:
    """Targets of ``expand``/``broadcast_to``: size-1 dims broadcast, others kept (or -1),
    0..2 new leading dims; about 15 % invalid (a non-1 dim changed, too few dims, -1 in a
    new leading dim). With ``allow_negative=False`` no -1 appears (``expand_as``)."""
    keep = [-1, 0] if allow_negative else [0]
    lead = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))]
    tail = []
    for n in shape:
        options = [1, 0, 2, 3] if n == 1 else [n, n]
        choice = draw(st.sampled_from(options + keep))
        tail.append(n if choice == 0 else choice)
    if _chance(draw, 15):
        bad = draw(st.sampled_from(["grow", "short", "lead"]))
        if bad == "grow" and any(n != 1 for n in shape):
            d = draw(st.sampled_from([i for i, n in enumerate(shape) if n != 1]))
            tail[d] = shape[d] + 1
        elif bad == "short" and shape:
            tail = tail[1:]
        elif bad == "lead" and allow_negative:
            lead = [-1, *lead]
    return (*lead, *tail)


@st.composite
def getitem_keys(draw, shape: tuple[int, ...]) -> Any:
    """Basic-indexing keys for ``x[key]``: ints (negative too), slices with steps 1..3
    (starts/stops past the ends, negative ones), ``None`` and one ``...``; a single item is
    sometimes given bare (``x[1]``). About 10 % are refused by PyTorch: an int out of range,
    a zero or negative step, one index too many."""
    rank = len(shape)
    consumed = draw(st.integers(0, rank))
    if _chance(draw, 4):
        consumed = rank + 1
    ellipsis_at = draw(st.integers(0, consumed)) if draw(st.booleans()) else None
    dims = list(range(consumed)) if ellipsis_at is None else (
        list(range(ellipsis_at)) + list(range(rank - (consumed - ellipsis_at), rank)))
    items: list[Any] = []
    for d in dims:
        n = shape[d] if 0 <= d < rank else 1
        if draw(st.booleans()):
            index = _mostly(st.integers(-n, n - 1) if n else st.integers(-1, 0),
                            st.sampled_from([n, -n - 1]), 5)
            items.append(draw(index))
        else:
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = _mostly(st.sampled_from([None, 1, 1, 2, 3]), st.sampled_from([0, -1]), 4)
            items.append(slice(draw(bound), draw(bound), draw(step)))
    if ellipsis_at is not None:
        items.insert(ellipsis_at, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def _sections(n: int):
    """Split sizes summing to ``n`` (a composition), or, rarely, ones that do not."""
    @st.composite
    def good(draw):
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
        bounds = [0, *cuts, n]
        return [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    bad = st.lists(st.integers(0, n + 1), min_size=1, max_size=3).filter(lambda s: sum(s) != n)
    return _mostly(good(), bad, 10)


# -- ops --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Op:
    """One view op with its arguments, applicable to a ``torch.Tensor`` or ``StridedArray``.

    ``args`` are the positional arguments (a shape is one tuple argument); ``star`` passes
    that tuple unpacked (``x.view(2, 3)``); ``pick`` chooses which piece of a split/chunk/
    unbind a chain continues with (modulo the number of pieces)."""

    name: str
    args: tuple[Any, ...] = ()
    star: bool = False
    pick: int = 0

    def __str__(self) -> str:
        if self.name == "getitem":
            return f"[{self.args[0]!r}]"
        if self.name in ("T", "mT"):
            return f".{self.name}"
        args = self.args[0] if self.star else self.args
        return f".{self.name}({', '.join(repr(a) for a in args)})"

    __repr__ = __str__

    @property
    def returns_tuple(self) -> bool:
        """True for split/chunk/unbind."""
        return self.name in _MULTI

    def apply(self, x: Any, *, module: Any = None) -> Any:
        """``x.<name>(*args)`` (or ``x[key]``, ``x.T``); with ``module`` given (e.g.
        ``functional_strides``), the module-level function ``module.<name>(x, *args)``."""
        args = self.args
        if self.name == "getitem":
            return x[args[0]]
        if self.name == "expand_as":
            args = (_empty_like(x, args[0]),)
        if module is not None:
            return getattr(module, self.name)(x, *args)
        if self.name in ("T", "mT"):
            return getattr(x, self.name)
        if self.star:
            args = tuple(args[0])
        return getattr(x, self.name)(*args)

    def follow(self, result: Any) -> Any:
        """The array a chain continues with: the result, or one piece of a tuple result
        (``None`` when there are no pieces)."""
        if not self.returns_tuple:
            return result
        return result[self.pick % len(result)] if len(result) else None


def _empty_like(x: Any, shape: tuple[int, ...]) -> Any:
    """An array of ``shape`` of the same kind as ``x`` (for ``expand_as``)."""
    if type(x).__module__.startswith("torch"):
        return x.new_empty(shape)
    return np.empty(shape, np.float32)


@st.composite
def ops(draw, shape: tuple[int, ...], name: str | None = None, *, storage_size: int = 64) -> Op:
    """One :class:`Op` for an array of ``shape`` (``name`` fixed or drawn from
    :data:`OP_NAMES`); ``storage_size`` bounds ``as_strided`` so that most draws fit."""
    shape = tuple(shape)
    name = name or draw(st.sampled_from(OP_NAMES))
    r = len(shape)
    draw_args = OPS[name].args
    args = draw_args(draw, shape, r, storage_size) if draw_args else ()
    star = name in _STAR_OK and len(args[0]) > 0 and draw(st.booleans())
    pick = draw(st.integers(0, 7)) if name in _MULTI else 0
    return Op(name, args, star, pick)


def _args_as_strided(draw, shape, r, storage_size):
    """Mostly in bounds of the storage; sometimes past its end, negative or mismatched."""
    rank = draw(st.sampled_from(range(4)))
    size = [draw(st.sampled_from([0, 1, 1, 2, 2, 3, 3, 4])) for _ in range(rank)]
    stride = [draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4])) for _ in range(rank)]
    reach = sum((n - 1) * s for n, s in zip(size, stride, strict=True)) if all(size) else -1
    if reach < storage_size and not _chance(draw, 20):
        offset = draw(st.one_of(st.none(), st.integers(0, max(storage_size - reach - 1, 0))))
    else:
        offset = draw(st.integers(0, storage_size + 1))
    if rank and _chance(draw, 8):
        (size if draw(st.booleans()) else stride)[draw(st.integers(0, rank - 1))] = -1
    if _chance(draw, 5):
        stride = stride + [1]  # length mismatch
    return (tuple(size), tuple(stride), offset)


def _args_view(draw, shape, r, storage_size):
    return (draw(view_shapes(shape)),)


def _args_flatten(draw, shape, r, storage_size):
    if _chance(draw, 25):
        return ()
    return (draw(_dim(r)), draw(_dim(r)))


def _args_unflatten(draw, shape, r, storage_size):
    dim = draw(_dim(r))
    n = _extent(shape, dim)
    sizes = list(draw(_factor_shape(n, 3)))
    if sizes and _chance(draw, 33):
        sizes[draw(st.integers(0, len(sizes) - 1))] = -1
    if _chance(draw, 10):
        sizes = draw(st.sampled_from([[], [n + 1], [-1, -1]]))
    return (dim, tuple(sizes))


def _args_permute(draw, shape, r, storage_size):
    perm = [p - r if draw(st.booleans()) else p for p in draw(st.permutations(range(r)))]
    if _chance(draw, 10):
        perm = draw(st.sampled_from([perm[:-1], [*perm, 0], [0] * max(r, 1)]))
    return (tuple(perm),)


def _args_transpose(draw, shape, r, storage_size):
    return (draw(_dim(r)), draw(_dim(r)))


def _args_movedim(draw, shape, r, storage_size):
    if draw(st.booleans()):
        return (draw(_dim(r)), draw(_dim(r)))
    k = draw(st.integers(0, r))
    src = draw(st.permutations(range(r)))[:k]
    dst = draw(st.permutations(range(r)))[:k]
    if _chance(draw, 10):
        src, dst = draw(st.sampled_from([(src, [*dst, 0]), ([*src, *src[:1]], [*dst, 0])]))
    return (tuple(src), tuple(dst))


def _args_squeeze(draw, shape, r, storage_size):
    how = draw(st.sampled_from(["all", "dim", "dims"]))
    if how == "all":
        return ()
    if how == "dim":
        return (draw(_dim(r)),)
    return (tuple(draw(st.lists(_dim(r), max_size=3, unique=True))),)


def _args_unsqueeze(draw, shape, r, storage_size):
    return (draw(_dim(r + 1)),)


def _args_expand(draw, shape, r, storage_size):
    return (draw(expand_shapes(shape)),)


def _args_expand_as(draw, shape, r, storage_size):
    return (draw(expand_shapes(shape, allow_negative=False)),)


def _args_narrow(draw, shape, r, storage_size):
    dim = draw(_dim(r))
    n = _extent(shape, dim)
    start = draw(_mostly(st.integers(-n, n), st.sampled_from([n + 1, -n - 1]), 8))
    length = draw(_mostly(st.integers(0, n), st.sampled_from([-1, n + 1]), 8))
    return (dim, start, length)


def _args_select(draw, shape, r, storage_size):
    dim = draw(_dim(r))
    n = _extent(shape, dim)
    valid = st.integers(-n, n - 1) if n else st.integers(-1, 0)  # nothing is valid when n == 0
    return (dim, draw(_mostly(valid, st.sampled_from([n, -n - 1]), 8)))


def _args_unfold(draw, shape, r, storage_size):
    dim = draw(_dim(r))
    n = _extent(shape, dim)
    size = draw(_mostly(st.integers(0, n), st.sampled_from([-1, n + 1]), 8))
    step = draw(_mostly(st.integers(1, 3), st.sampled_from([0, -1]), 6))
    return (dim, size, step)


def _args_diagonal(draw, shape, r, storage_size):
    offset = draw(st.integers(-3, 3))
    if r >= 2 and not _chance(draw, 15):
        d1, d2 = draw(st.permutations(range(r)))[:2]
        return (offset, d1 - r if draw(st.booleans()) else d1, d2 - r if draw(st.booleans()) else d2)
    return (offset, draw(_dim(r)), draw(_dim(r)))


def _args_split(draw, shape, r, storage_size):
    dim = draw(_dim(r))
    n = _extent(shape, dim)
    if draw(st.booleans()):
        return (list(draw(_sections(n))), dim)
    size = draw(_mostly(st.integers(1 if n else 0, n + 1), st.sampled_from([0, -1]), 8))
    return (size, dim)


def _args_chunk(draw, shape, r, storage_size):
    dim = draw(_dim(r))
    n = _extent(shape, dim)
    return (draw(_mostly(st.integers(1, n + 2), st.sampled_from([0, -1]), 6)), dim)


def _args_unbind(draw, shape, r, storage_size):
    return (draw(_dim(r)),)


def _args_getitem(draw, shape, r, storage_size):
    return (draw(getitem_keys(shape)),)


# -- NumPy's own result of each op, on the dense array (the oracle leg's reference) -------------
def _axis(d: int, ndim: int) -> int:
    return d % max(ndim, 1)


def _dims_tuple(dims: Any) -> tuple[Any, ...]:
    return tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)


def _np_reshape(op: Op, a: np.ndarray) -> Any:
    return a.reshape(op.args[0])


def _np_flatten(op: Op, a: np.ndarray) -> Any:
    nd = a.ndim
    s, e = (_axis(d, nd) for d in (op.args or (0, -1)))
    if nd == 0:
        return a.reshape(1)
    return a.reshape(*a.shape[:s], math.prod(a.shape[s:e + 1]), *a.shape[e + 1:])


def _np_unflatten(op: Op, a: np.ndarray) -> Any:
    d = _axis(op.args[0], a.ndim)
    known = math.prod(n for n in op.args[1] if n != -1)
    sizes = [a.shape[d] // known if n == -1 else n for n in op.args[1]]
    return a.reshape(*a.shape[:d], *sizes, *a.shape[d + 1:])


def _np_squeeze(op: Op, a: np.ndarray) -> Any:
    nd = a.ndim
    dims = range(nd) if not op.args else _dims_tuple(op.args[0])
    return np.squeeze(a, axis=tuple(d for d in dims if nd and a.shape[d] == 1))


def _np_expand(op: Op, a: np.ndarray) -> Any:
    target = list(op.args[0])
    for i in range(1, a.ndim + 1):
        if target[-i] == -1:
            target[-i] = a.shape[-i]
    return np.broadcast_to(a, target)


def _np_narrow(op: Op, a: np.ndarray) -> Any:
    d, length = _axis(op.args[0], a.ndim), op.args[2]
    start = op.args[1] + a.shape[d] if op.args[1] < 0 else op.args[1]
    return a[(slice(None),) * d + (slice(start, start + length),)]


def _np_unfold(op: Op, a: np.ndarray) -> Any:
    d, size, step = _axis(op.args[0], a.ndim), op.args[1], op.args[2]
    if a.ndim == 0:
        return a.reshape(1)[:size]
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return windows[(slice(None),) * d + (slice(None, None, step),)]


def _np_split(op: Op, a: np.ndarray) -> Any:
    d = _axis(op.args[1], a.ndim)
    n = a.shape[d]
    if op.name == "chunk":
        size = -(-n // op.args[0])
        sizes = [min(size, n - i) for i in range(0, n, size)] if n else [0] * op.args[0]
    elif isinstance(op.args[0], list):
        sizes = op.args[0]
    else:
        sizes = [min(op.args[0], n - i) for i in range(0, n, op.args[0])] if n else [0]
    return np.split(a, np.cumsum(sizes)[:-1], axis=d)


def _np_unbind(op: Op, a: np.ndarray) -> Any:
    d = _axis(op.args[0], a.ndim)
    return [np.take(a, i, axis=d) for i in range(a.shape[d])]


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """One row of :data:`OPS`: how to draw an op's arguments for a shape, and NumPy's own
    result of the op on the dense array (``None``: NumPy has no counterpart, as for
    ``as_strided``'s element strides). The PyTorch leg applies the op by its method name
    (:meth:`Op.apply`), so a row needs nothing for it."""

    args: Any
    numpy: Any


#: The per-op table: every view op the tests draw (method names of ``torch.Tensor`` and
#: ``StridedArray``), its argument drawer and its NumPy reference. The oracle tests
#: (``tests/core/test_views.py``), the PyTorch parity tests (``tests/array/test_torch_parity.py``)
#: and the chains of both iterate over it.
OPS: dict[str, OpSpec] = {
    "as_strided": OpSpec(_args_as_strided, None),
    "view": OpSpec(_args_view, _np_reshape),
    "reshape": OpSpec(_args_view, _np_reshape),
    "flatten": OpSpec(_args_flatten, _np_flatten),
    "unflatten": OpSpec(_args_unflatten, _np_unflatten),
    "contiguous": OpSpec(None, lambda op, a: a),
    "permute": OpSpec(_args_permute, lambda op, a: np.transpose(a, op.args[0])),
    "transpose": OpSpec(_args_transpose, lambda op, a: np.swapaxes(a, *op.args) if a.ndim else a),
    "t": OpSpec(None, lambda op, a: a.T),
    "T": OpSpec(None, lambda op, a: np.transpose(a)),
    "mT": OpSpec(None, lambda op, a: np.swapaxes(a, -1, -2) if a.ndim else a),
    "movedim": OpSpec(_args_movedim, lambda op, a: np.moveaxis(a, op.args[0], op.args[1]) if a.ndim else a),
    "squeeze": OpSpec(_args_squeeze, _np_squeeze),
    "unsqueeze": OpSpec(_args_unsqueeze, lambda op, a: np.expand_dims(a, op.args[0])),
    "expand": OpSpec(_args_expand, _np_expand),
    "expand_as": OpSpec(_args_expand_as, _np_expand),
    "broadcast_to": OpSpec(_args_expand, _np_expand),
    "narrow": OpSpec(_args_narrow, _np_narrow),
    "select": OpSpec(_args_select, lambda op, a: np.take(a, op.args[1], axis=_axis(op.args[0], a.ndim))),
    "unfold": OpSpec(_args_unfold, _np_unfold),
    "diagonal": OpSpec(_args_diagonal, lambda op, a: np.diagonal(a, *op.args)),
    "split": OpSpec(_args_split, _np_split),
    "chunk": OpSpec(_args_chunk, _np_split),
    "unbind": OpSpec(_args_unbind, _np_unbind),
    "getitem": OpSpec(_args_getitem, lambda op, a: a[op.args[0]]),
}
assert tuple(OPS) == OP_NAMES


# -- layout-level application (for drawing chains) ------------------------------------------
def apply_to_layout(op: Op, layout: Layout, storage_size: int) -> tuple[Any, bool]:
    """Apply ``op`` to a layout over a storage of ``storage_size`` elements with the view
    algebra only: ``(layout or tuple of layouts, copied)``, where ``copied`` says that the
    result lives in a fresh row-major storage of ``numel`` elements (``reshape``/``flatten``
    that cannot be views, ``contiguous`` of a non-contiguous layout).

    Raises:
      LayoutError: as the op would on a ``StridedArray``."""
    name, args = op.name, op.args
    if name == "as_strided":
        out = views.as_strided(layout, *args)
        if out.required_storage_size > storage_size:
            raise StorageError(f"as_strided: {out} needs {out.required_storage_size} elements")
        return out, False
    if name in ("reshape", "flatten"):
        if name == "flatten":
            target = views.flatten_shape(layout, *args)
            if target is None:
                return layout, False
        else:
            target = views.infer_size(args[0], layout.numel, op="reshape")
        strides = views.view_strides(layout.shape, layout.strides, target)
        if strides is None:
            return Layout.contiguous(target), True
        return Layout(target, strides, layout.offset), False
    if name == "contiguous":
        return (layout, False) if layout.is_contiguous() else (Layout.contiguous(layout.shape), True)
    if name == "unflatten":
        return views.view(layout, views.unflatten_shape(layout, *args)), False
    if name == "T":
        return views.permute(layout, tuple(range(layout.ndim - 1, -1, -1))), False
    if name == "mT" and layout.ndim == 0:
        return layout, False  # views.mT warns (PyTorch's deprecation) and returns the layout
    if name in ("expand_as", "broadcast_to"):
        return views.expand(layout, args[0]), False
    fn = views.getitem if name == "getitem" else getattr(views, name)
    return fn(layout, *args), False


@st.composite
def op_chains(draw, *, min_len: int = 1, max_len: int = 4, names: tuple[str, ...] | None = None):
    """``(x, [op, ...])``: a :func:`strided_arrays` start and a chain of ops, each drawn for
    the shape that the previous ops produce (refused ops leave the shape unchanged; a
    split/chunk/unbind continues with piece ``op.pick``)."""
    x = draw(strided_arrays())
    layout, size = x.layout, int(x.storage.shape[0])
    chain = []
    for _ in range(draw(st.integers(min_len, max_len))):
        op = draw(ops(layout.shape, draw(st.sampled_from(names or OP_NAMES)), storage_size=size))
        chain.append(op)
        try:
            result, copied = apply_to_layout(op, layout, size)
        except LayoutError:
            continue
        result = op.follow(result)
        if result is None:
            break
        layout = result
        size = layout.numel if copied else size
    return x, chain


@st.composite
def sliced_permuted_expanded(draw, flips: bool = False):
    """A contiguous array inside a larger storage, sliced with steps (some dims selected
    away), permuted, and expanded with new stride-0 dims; returns (layout, storage size).
    With ``flips``, some sliced dims are also reversed (negative strides, as ``fs.flip``)."""
    base = Layout.contiguous(tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))))
    offset = draw(st.integers(0, 4))
    shape, strides = [], []
    for n, s in zip(base.shape, base.strides, strict=True):
        start = draw(st.integers(0, n - 1))
        offset += start * s
        if draw(st.integers(0, 3)) == 0:
            continue  # select()
        step = draw(st.integers(1, 3))
        stop = draw(st.integers(start + 1, n))
        shape.append(len(range(start, stop, step)))
        strides.append(step * s)
        if flips and draw(st.booleans()):  # reversed: start at the last element, walk back
            offset += (shape[-1] - 1) * strides[-1]
            strides[-1] = -strides[-1]
    order = draw(st.permutations(range(len(shape))))
    shape, strides = [shape[i] for i in order], [strides[i] for i in order]
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(shape)))
        shape.insert(at, draw(st.integers(1, 3)))
        strides.insert(at, 0)
    return Layout(tuple(shape), tuple(strides), offset), base.numel + offset + draw(st.integers(0, 4))

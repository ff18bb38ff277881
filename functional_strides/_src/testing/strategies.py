"""Hypothesis strategies of layouts, strided arrays and chains of view ops.

* :func:`layouts` draws ``Layout`` records of rank 0..4 with extents 0..5 (size-0 and size-1
  dims included) whose strides are contiguous, permuted, sliced, broadcast (stride 0) or
  arbitrary (overlapping), at an offset 0..5; keywords bound them and ask for or exclude
  contiguous, overlapping or empty layouts.
* :func:`strided_arrays` draws a ``StridedArray`` over a storage that fits the drawn layout;
  by default every value names its storage index (``x.storage[i] == i``).
* :func:`view_ops` draws one view op (a :class:`ViewOp`) for a given shape, with arguments
  that are mostly valid and sometimes invalid (out-of-range dims, mismatched sizes, bad
  steps), so that tests check both the results and the refusals.
* :func:`view_chains` draws a chain of view ops (a :class:`ViewChain`) for a given array,
  each op drawn for the shape the previous ones produced; it prints as the PyTorch code it
  runs (``x.permute((1, 0))[1:, ::2].view((-1,))``), so a shrunk failure reads as code.
  :func:`op_chains` draws a starting array and such a chain, refusals included.

A :class:`ViewOp` applies to a ``torch.Tensor`` and to a ``StridedArray`` alike (methods of
the same names), or through the module-level function of ``functional_strides``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

try:
    from hypothesis import assume
    from hypothesis import strategies as st
    from hypothesis.errors import InvalidArgument
except ImportError:  # pragma: no cover - exercised in an environment without hypothesis
    raise ImportError(
        "functional_strides.testing needs hypothesis, which is not installed: "
        "pip install 'functional_strides[testing]' (or pip install hypothesis)."
    ) from None

import jax.numpy as jnp
import numpy as np

from ..array.ops import as_strided
from ..array.strided import StridedArray
from ..core import views
from ..core.errors import LayoutError, StorageError
from ..core.layout import Layout, contiguous_strides

__all__ = [
    "OPS",
    "OP_NAMES",
    "OpSpec",
    "ViewChain",
    "ViewOp",
    "apply_to_layout",
    "expand_shapes",
    "getitem_keys",
    "layouts",
    "op_chains",
    "shapes",
    "sliced_permuted_expanded",
    "storage_for",
    "strided_arrays",
    "view_chains",
    "view_ops",
    "view_shapes",
]

MAX_RANK = 4
MAX_EXTENT = 5

#: Every view op drawn by :func:`view_ops` (method names of ``torch.Tensor`` and ``StridedArray``),
#: in the order of the per-op table ``OPS``.
OP_NAMES = (
    "as_strided", "view", "reshape", "flatten", "unflatten", "contiguous", "permute",
    "transpose", "t", "T", "mT", "movedim", "squeeze", "unsqueeze", "expand", "expand_as",
    "broadcast_to", "narrow", "select", "unfold", "diagonal", "split", "chunk", "unbind",
    "getitem",
)

_MULTI = ("split", "chunk", "unbind")  # ops that return a tuple of views
_STAR_OK = ("view", "reshape", "permute", "expand")  # also accept x.op(2, 3) for x.op((2, 3))
_KINDS = ("contiguous", "permuted", "sliced", "broadcast", "random")


# -- layouts and storages -----------------------------------------------------------------
_PERCENT = st.sampled_from(range(100))  # near-uniform, unlike integers(), which favours bounds
_EXTENT_WEIGHTS = (1, 3, 4, 4, 2, 2)  # relative frequency of extents 0, 1, 2, 3, 4, 5, ...


def _chance(draw, percent: int) -> bool:
    """True about ``percent`` % of the time."""
    return draw(_PERCENT) < percent


def shapes(min_rank: int = 0, max_rank: int = MAX_RANK, max_extent: int = MAX_EXTENT, *,
           min_extent: int = 0) -> st.SearchStrategy[tuple[int, ...]]:
    """Tuples of ``min_rank..max_rank`` extents in ``min_extent..max_extent``; every rank about
    as likely, extents 2 and 3 favoured, 0 rarer (about one dim in 16)."""
    weights = _EXTENT_WEIGHTS + (1,) * max(0, max_extent + 1 - len(_EXTENT_WEIGHTS))
    extent = st.sampled_from([n for n, w in enumerate(weights[:max_extent + 1]) for _ in range(w)
                              if n >= min_extent])
    rank = st.sampled_from(range(min_rank, max_rank + 1))
    return rank.flatmap(lambda r: st.tuples(*[extent] * r))


def _check_layouts_arguments(min_rank: int, max_rank: int, max_extent: int, contiguous: bool | None,
                             overlapping: bool | None, empty: bool | None,
                             kinds: tuple[str, ...] | None) -> None:
    problems = []
    if not 0 <= min_rank <= max_rank:
        problems.append(f"need 0 <= min_rank <= max_rank (got min_rank={min_rank}, max_rank={max_rank})")
    if max_extent < 0:
        problems.append(f"max_extent must be >= 0 (got max_extent={max_extent})")
    if empty and max_rank < 1:
        problems.append(f"empty=True needs a dim of extent 0, so max_rank >= 1 (got max_rank={max_rank})")
    if overlapping and (max_rank < 1 or max_extent < 2):
        problems.append("overlapping=True needs a dim of extent >= 2, so max_rank >= 1 and max_extent >= 2 "
                        f"(got max_rank={max_rank}, max_extent={max_extent})")
    if overlapping and (empty or contiguous):
        problems.append(f"an overlapping layout is neither empty nor contiguous (got overlapping=True, "
                        f"empty={empty}, contiguous={contiguous})")
    if contiguous is False and (empty or max_rank < 1 or max_extent < 2):
        problems.append(f"a non-contiguous layout has 2 or more elements (got contiguous=False, "
                        f"empty={empty}, max_rank={max_rank}, max_extent={max_extent})")
    bad = sorted(set(kinds or ()) - set(_KINDS))
    if bad or (kinds is not None and not kinds):
        problems.append(f"kinds must be a non-empty tuple of {_KINDS} (got kinds={kinds})")
    if problems:
        raise InvalidArgument("layouts: " + "; ".join(problems) + ".")


@st.composite
def layouts(draw, *, min_rank: int = 0, max_rank: int = MAX_RANK, max_extent: int = MAX_EXTENT,
            max_stride: int = 7, max_offset: int = 5, max_storage: int | None = None,
            contiguous: bool | None = None, overlapping: bool | None = None, empty: bool | None = None,
            kinds: tuple[str, ...] | None = None, negative: bool = False) -> Layout:
    """``Layout`` records with varied strides; extents, strides, offset and storage in elements.

    The shape has ``min_rank..max_rank`` extents in ``0..max_extent`` (ranks about equally
    likely; extents 2 and 3 favoured, 0 about one dim in 16), the offset is ``0..max_offset``.
    The stride pattern is one of ``kinds``: ``"contiguous"`` (row-major; size-1 dims may carry
    any stride, which PyTorch ignores), ``"permuted"`` (a permutation of a dense layout),
    ``"sliced"`` (every dim of a larger dense array sliced with a step), ``"broadcast"``
    (dense, some strides set to 0) and ``"random"`` (independent strides ``0..max_stride``,
    often overlapping). With ``negative``, some strides change sign (a NumPy-style reversed
    dim; PyTorch refuses them) and the offset rises so that the lowest index stays >= 0.

    ``contiguous``, ``overlapping`` and ``empty`` ask for (``True``) or exclude (``False``)
    layouts that :meth:`functional_strides.Layout.is_contiguous`,
    :meth:`functional_strides.Layout.has_internal_overlap` or
    :attr:`functional_strides.Layout.is_empty` hold of; ``None`` (the default) allows both.
    ``max_storage`` bounds :attr:`functional_strides.Layout.required_storage_size` (a drawn
    layout too large for it is moved to offset 0, then made row-major, before it is
    rejected).

    Args:
      min_rank: the lowest rank (0 is a scalar).
      max_rank: the highest rank.
      max_extent: the largest extent of a dim.
      max_stride: the largest stride of the ``"random"`` pattern.
      max_offset: the largest storage offset (before ``negative`` raises it).
      max_storage: the largest storage (in elements) a layout may need, or ``None``.
      contiguous: ``True`` (only contiguous layouts), ``False`` (none) or ``None`` (either).
      overlapping: ``True`` (only layouts with internal overlap), ``False`` (none) or ``None``.
      empty: ``True`` (only layouts with a size-0 dim), ``False`` (none) or ``None``.
      kinds: the stride patterns to draw from (all five by default).
      negative: allow negative strides.
    Returns:
      A hypothesis strategy of :class:`functional_strides.Layout`.
    Raises:
      hypothesis.errors.InvalidArgument: bounds that no layout meets (``min_rank > max_rank``,
        ``overlapping=True`` with ``max_extent < 2``, ``overlapping=True`` with
        ``contiguous=True``, ...), or unknown ``kinds``; raised when the strategy is drawn from.
    Example:
      >>> from hypothesis import given
      >>> import functional_strides.testing as fst
      >>> @given(fst.layouts(overlapping=True, max_rank=3))
      ... def test(layout):
      ...     assert layout.has_internal_overlap() and 1 <= layout.ndim <= 3
      >>> test()

    Semantics: the layouts ``torch.as_strided(storage, shape, strides, offset)`` accepts
    (negative strides, with ``negative``, as ``numpy.lib.stride_tricks.as_strided``)."""
    _check_layouts_arguments(min_rank, max_rank, max_extent, contiguous, overlapping, empty, kinds)
    nonempty = empty is False or overlapping or contiguous is False
    if overlapping:
        kinds = tuple(k for k in (kinds or _KINDS) if k in ("broadcast", "random")) or kinds
    elif overlapping is False:
        kinds = tuple(k for k in (kinds or _KINDS) if k not in ("broadcast", "random")) or kinds
    if contiguous:
        kinds, negative = ("contiguous",), False
    elif contiguous is False:
        kinds = tuple(k for k in (kinds or _KINDS) if k != "contiguous") or kinds
    low_rank = max(min_rank, 1) if (empty or overlapping or contiguous is False) else min_rank
    shape = list(draw(shapes(low_rank, max_rank, max_extent, min_extent=1 if nonempty else 0)))
    if empty and 0 not in shape:
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    if (overlapping or contiguous is False) and all(n < 2 for n in shape):
        shape[draw(st.integers(0, len(shape) - 1))] = draw(st.integers(2, max_extent))
    shape_t = tuple(shape)
    r = len(shape_t)
    kind = draw(st.sampled_from(kinds or _KINDS))
    if kind == "random":
        strides = tuple(draw(st.integers(0, max_stride)) for _ in shape_t)
    elif kind == "sliced":
        steps = [draw(st.integers(1, 3)) for _ in shape_t]
        parent = [n * k + draw(st.integers(0, 2)) for n, k in zip(shape_t, steps, strict=True)]
        strides = tuple(s * k for s, k in zip(contiguous_strides(tuple(parent)), steps, strict=True))
    elif kind == "permuted":
        perm = draw(st.permutations(range(r)))
        dense = contiguous_strides(tuple(shape_t[p] for p in perm))
        out = [0] * r
        for i, p in enumerate(perm):
            out[p] = dense[i]
        strides = tuple(out)
    else:
        strides = contiguous_strides(shape_t)
        if kind == "broadcast":
            strides = tuple(0 if draw(st.booleans()) else s for s in strides)
    if kind in ("contiguous", "permuted") and draw(st.booleans()):
        strides = tuple(draw(st.integers(0, max_stride)) if n == 1 else s
                        for n, s in zip(shape_t, strides, strict=True))
    if overlapping and not Layout(shape_t, strides).has_internal_overlap():
        # collide two coordinates: one dim of extent >= 2 gets stride 0 or another such dim's stride
        wide = [d for d, n in enumerate(shape_t) if n >= 2]
        d = draw(st.sampled_from(wide))
        others = [strides[e] for e in wide if e != d]
        new = draw(st.sampled_from([0, *others]))
        strides = (*strides[:d], new, *strides[d + 1:])
    offset = draw(st.integers(0, max_offset))
    if negative:
        strides = tuple(-s if draw(st.booleans()) else s for s in strides)
        if 0 not in shape_t:
            offset -= sum((n - 1) * s for n, s in zip(shape_t, strides, strict=True) if s < 0)
    layout = Layout(shape_t, strides, offset)
    if max_storage is not None and layout.required_storage_size > max_storage:
        reach = zip(shape_t, strides, strict=True)
        low = sum((n - 1) * s for n, s in reach if s < 0) if 0 not in shape_t else 0
        layout = Layout(shape_t, strides, -low)
        if layout.required_storage_size > max_storage and not overlapping:
            layout = Layout.contiguous(shape_t)
        assume(layout.required_storage_size <= max_storage)
    if contiguous is not None:
        assume(layout.is_contiguous() == contiguous)
    if overlapping is False:
        assume(not layout.has_internal_overlap())
    return layout


def storage_for(layout: Layout, slack: int = 0, dtype: Any = np.float32) -> np.ndarray:
    """``arange(layout.required_storage_size + slack)`` as ``dtype``: the smallest storage that
    fits ``layout``, plus ``slack`` elements; each value equals its storage index (wrapped or
    rounded where ``dtype`` cannot hold it, as ``numpy.ndarray.astype`` does)."""
    with np.errstate(all="ignore"):
        return np.arange(layout.required_storage_size + slack).astype(dtype)


@st.composite
def strided_arrays(draw, layout_strategy: st.SearchStrategy[Layout] | None = None, *, dtype: Any = np.float32,
                   elements: st.SearchStrategy[Any] | None = None, max_slack: int = 3) -> StridedArray:
    """``StridedArray`` views over 1-D storages that fit their layouts.

    The layout is drawn from ``layout_strategy`` (:func:`layouts` by default); the storage
    has ``layout.required_storage_size`` elements plus ``0..max_slack`` spare ones. By default
    every value names its storage index (``x.storage[i] == i``, so a wrong element read names
    where it came from; wrapped or rounded where ``dtype`` cannot hold the index, as
    ``astype`` does: int8 wraps past 127, bool is ``i != 0``, bfloat16 rounds past 256); with
    ``elements`` (a hypothesis strategy of scalars of ``dtype``), the values are drawn.

    Args:
      layout_strategy: a strategy of :class:`functional_strides.Layout`, or ``None``.
      dtype: the storage's dtype (a NumPy, ml_dtypes or ``jax.numpy`` dtype); float32 by default.
      elements: a strategy of the storage's values (``hypothesis.extra.numpy.arrays``'s
        ``elements``), or ``None`` for the index values.
      max_slack: the most spare elements past the layout's reach.
    Returns:
      A hypothesis strategy of :class:`functional_strides.StridedArray`, its storage a JAX
      array of ``dtype`` (a dtype JAX does not enable, such as float64 without x64, becomes
      JAX's default of its kind).
    Raises:
      hypothesis.errors.InvalidArgument: ``max_slack < 0``, or ``elements`` that are not of
        ``dtype`` (raised by ``hypothesis.extra.numpy.arrays`` when drawn).
    Example:
      >>> import numpy as np
      >>> from hypothesis import given
      >>> import functional_strides.testing as fst
      >>> @given(fst.strided_arrays(dtype=np.int32))
      ... def test(x):
      ...     fst.assert_matches_oracle(x)
      >>> test()

    Semantics: ``torch.as_strided(torch.arange(n), shape, strides, offset)``."""
    if max_slack < 0:
        raise InvalidArgument(f"strided_arrays: max_slack must be >= 0 (got max_slack={max_slack}).")
    layout = draw(layout_strategy if layout_strategy is not None else layouts())
    slack = draw(st.integers(0, max_slack))
    if elements is None:
        storage = storage_for(layout, slack, dtype)
    else:
        from hypothesis.extra import numpy as hnp

        storage = draw(hnp.arrays(np.dtype(dtype), layout.required_storage_size + slack, elements=elements))
    return as_strided(jnp.asarray(storage), layout.shape, layout.strides, layout.offset)


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
def _key_item(item: Any) -> str:
    if item is Ellipsis:
        return "..."
    if isinstance(item, slice):
        text = ":".join("" if v is None else repr(v) for v in (item.start, item.stop))
        return text if item.step is None else f"{text}:{item.step!r}"
    return repr(item)


def format_key(key: Any) -> str:
    """An indexing key as written between brackets: ``(slice(1, None), None, 0)`` -> ``1:, None, 0``."""
    if isinstance(key, tuple):
        return ", ".join(_key_item(k) for k in key) if key else "()"
    return _key_item(key)


@dataclasses.dataclass(frozen=True)
class ViewOp:
    """One view op with its arguments, applicable to a ``torch.Tensor`` or a ``StridedArray``.

    ``name`` is the method's name (:data:`OP_NAMES`: ``"view"``, ``"permute"``, ...,
    ``"getitem"`` for ``x[key]``); ``args`` are its positional arguments (a shape is one
    tuple argument, ``expand_as``'s is the shape of its model array); ``star`` passes that
    tuple unpacked (``x.view(2, 3)``); ``pick`` chooses which piece of a split/chunk/unbind a
    chain continues with (modulo the number of pieces). ``str(op)`` is the PyTorch code of the
    call (``.view((2, 3))``, ``[1:, None]``, ``.expand_as(torch.empty((2, 3)))``).

    Args:
      name: the op, one of :data:`OP_NAMES`.
      args: its positional arguments.
      star: pass a shape argument unpacked.
      pick: the piece of a split, chunk or unbind a chain continues with.
    Raises:
      Nothing at construction; :meth:`apply` raises what the op raises on its operand
      (:class:`functional_strides.LayoutError` here, ``RuntimeError`` and friends in torch).
    Example:
      >>> import jax.numpy as jnp
      >>> import functional_strides as fs
      >>> from functional_strides.testing import ViewOp
      >>> op = ViewOp("getitem", ((slice(1, None), None),))
      >>> print(op), op.apply(fs.from_array(jnp.zeros((3, 2)))).shape
      [1:, None]
      (None, (2, 1, 2))

    Semantics: the ``torch.Tensor`` method of the same name (``__getitem__`` for
    ``"getitem"``)."""

    name: str
    args: tuple[Any, ...] = ()
    star: bool = False
    pick: int = 0

    def __str__(self) -> str:
        if self.name == "getitem":
            return f"[{format_key(self.args[0])}]"
        if self.name in ("T", "mT"):
            return f".{self.name}"
        if self.name == "expand_as":
            return f".expand_as(torch.empty({self.args[0]!r}))"
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


@dataclasses.dataclass(frozen=True)
class ViewChain:
    """A chain of view ops, applied left to right; it prints as the code it runs.

    ``ops`` are :class:`ViewOp` records; after a split, chunk or unbind the chain continues
    with piece ``op.pick``, printed as an index (``x.split(2, 0)[1]``). ``str(chain)`` is the
    PyTorch expression of the chain on an array named ``x``, so a failing example shrunk by
    hypothesis reads as code to paste into a PyTorch session.

    Args:
      ops: the :class:`ViewOp` records, first to last.
    Raises:
      Nothing at construction; :meth:`apply` raises what the first refused op raises
      (:class:`functional_strides.LayoutError` here, ``RuntimeError`` and friends in torch).
    Example:
      >>> import jax.numpy as jnp
      >>> import functional_strides as fs
      >>> from functional_strides.testing import ViewChain, ViewOp
      >>> chain = ViewChain((ViewOp("t"), ViewOp("split", (1, 0), pick=1), ViewOp("view", ((-1,),))))
      >>> print(chain)
      x.t().split(1, 0)[1].view((-1,))
      >>> chain.apply(fs.from_array(jnp.arange(6.0).reshape(2, 3))).tolist()
      [1.0, 4.0]

    Semantics: the same expression on a ``torch.Tensor``."""

    ops: tuple[ViewOp, ...] = ()

    def __str__(self) -> str:
        return "x" + "".join(f"{op}[{op.pick}]" if op.returns_tuple else str(op) for op in self.ops)

    __repr__ = __str__

    def __len__(self) -> int:
        return len(self.ops)

    def apply(self, x: Any, *, module: Any = None) -> Any:
        """The array at the end of the chain, applied to ``x`` (a ``StridedArray`` or a
        ``torch.Tensor``); ``module`` as in :meth:`ViewOp.apply`. ``None`` if a split leaves no
        piece to continue with."""
        for op in self.ops:
            x = op.follow(op.apply(x, module=module))
            if x is None:
                return None
        return x


@st.composite
def view_ops(draw, shape: tuple[int, ...], name: str | None = None, *, storage_size: int = 64) -> ViewOp:
    """One :class:`ViewOp` for an array of ``shape``, valid or not.

    ``name`` fixes the op (one of :data:`OP_NAMES`) or, as ``None``, draws it. The arguments
    are mostly valid; about one draw in ten is refused by PyTorch (an out-of-range dim, a
    size that does not divide, a zero step, ...), so that tests see both the results and the
    refusals.

    Args:
      shape: the extents of the array the op applies to.
      name: the op, or ``None`` to draw one.
      storage_size: the elements of the storage, bounding ``as_strided``'s arguments so that
        most of them fit.
    Returns:
      A hypothesis strategy of :class:`ViewOp`.
    Raises:
      KeyError: ``name`` is not one of :data:`OP_NAMES`.
    Example:
      >>> from hypothesis import given
      >>> from functional_strides.testing import view_ops
      >>> @given(view_ops((2, 3), "permute"))
      ... def test(op):
      ...     assert op.name == "permute"
      >>> test()

    Semantics: the arguments ``torch.Tensor``'s view methods take."""
    shape = tuple(shape)
    name = name or draw(st.sampled_from(OP_NAMES))
    r = len(shape)
    draw_args = OPS[name].args
    args: tuple[Any, ...] = draw_args(draw, shape, r, storage_size) if draw_args else ()
    star = name in _STAR_OK and len(args[0]) > 0 and draw(st.booleans())
    pick = draw(st.integers(0, 7)) if name in _MULTI else 0
    return ViewOp(name, args, star, pick)


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


def _np_reshape(op: ViewOp, a: np.ndarray) -> Any:
    return a.reshape(op.args[0])


def _np_flatten(op: ViewOp, a: np.ndarray) -> Any:
    nd = a.ndim
    s, e = (_axis(d, nd) for d in (op.args or (0, -1)))
    if nd == 0:
        return a.reshape(1)
    return a.reshape(*a.shape[:s], math.prod(a.shape[s:e + 1]), *a.shape[e + 1:])


def _np_unflatten(op: ViewOp, a: np.ndarray) -> Any:
    d = _axis(op.args[0], a.ndim)
    known = math.prod(n for n in op.args[1] if n != -1)
    sizes = [a.shape[d] // known if n == -1 else n for n in op.args[1]]
    return a.reshape(*a.shape[:d], *sizes, *a.shape[d + 1:])


def _np_squeeze(op: ViewOp, a: np.ndarray) -> Any:
    nd = a.ndim
    dims = range(nd) if not op.args else _dims_tuple(op.args[0])
    return np.squeeze(a, axis=tuple(d for d in dims if nd and a.shape[d] == 1))


def _np_expand(op: ViewOp, a: np.ndarray) -> Any:
    target = list(op.args[0])
    for i in range(1, a.ndim + 1):
        if target[-i] == -1:
            target[-i] = a.shape[-i]
    return np.broadcast_to(a, target)


def _np_narrow(op: ViewOp, a: np.ndarray) -> Any:
    d, length = _axis(op.args[0], a.ndim), op.args[2]
    start = op.args[1] + a.shape[d] if op.args[1] < 0 else op.args[1]
    return a[(slice(None),) * d + (slice(start, start + length),)]


def _np_unfold(op: ViewOp, a: np.ndarray) -> Any:
    d, size, step = _axis(op.args[0], a.ndim), op.args[1], op.args[2]
    if a.ndim == 0:
        return a.reshape(1)[:size]
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return windows[(slice(None),) * d + (slice(None, None, step),)]


def _np_split(op: ViewOp, a: np.ndarray) -> Any:
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


def _np_unbind(op: ViewOp, a: np.ndarray) -> Any:
    d = _axis(op.args[0], a.ndim)
    return [np.take(a, i, axis=d) for i in range(a.shape[d])]


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """One row of :data:`OPS`: how to draw an op's arguments for a shape, and NumPy's own
    result of the op on the dense array (``None``: NumPy has no counterpart, as for
    ``as_strided``'s element strides). The PyTorch leg applies the op by its method name
    (:meth:`ViewOp.apply`), so a row needs nothing for it."""

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
def apply_to_layout(op: ViewOp, layout: Layout, storage_size: int) -> tuple[Any, bool]:
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


def _warns(name: str, ndim: int) -> bool:
    """PyTorch (and this library) warn of ``x.T`` on rank != 2 and ``x.mT`` on rank 0."""
    return (name == "T" and ndim != 2) or (name == "mT" and ndim == 0)


def _chain(draw, layout: Layout, size: int, *, min_len: int, max_len: int, names: tuple[str, ...] | None,
           refusals: bool) -> list[ViewOp]:
    chain: list[ViewOp] = []
    for _ in range(draw(st.integers(min_len, max_len))):
        for _attempt in range(1 if refusals else 8):
            pool = names or OP_NAMES
            if not refusals:
                pool = tuple(n for n in pool if not _warns(n, layout.ndim)) or pool
            op = draw(view_ops(layout.shape, draw(st.sampled_from(pool)), storage_size=size))
            try:
                result, copied = apply_to_layout(op, layout, size)
            except LayoutError:
                if refusals:
                    chain.append(op)
                    break
                continue
            if op.returns_tuple:
                if not len(result):
                    if refusals:
                        chain.append(op)
                        return chain
                    continue
                op = dataclasses.replace(op, pick=op.pick % len(result))
                result = result[op.pick]
            chain.append(op)
            layout = result
            size = layout.numel if copied else size
            break
    return chain


@st.composite
def view_chains(draw, x: StridedArray, *, min_len: int = 1, max_len: int = 4,
                names: tuple[str, ...] | None = None, refusals: bool = False) -> ViewChain:
    """Chains of view ops for the array ``x``, each op drawn for the shape the previous ones produce.

    Without ``refusals`` every op of the chain is one that PyTorch accepts on the array it
    gets (a drawn op that would be refused is drawn again, up to 8 times per step, so a chain
    may come out shorter than ``min_len``; ``x.T`` on rank != 2 and ``x.mT`` on rank 0, which
    PyTorch deprecates with a warning, are left out). With ``refusals``, about one op in ten
    is refused by PyTorch, and the chain goes on from the array before it, so that a test
    checks the refusals too. After a split, chunk or unbind the chain continues with one of
    the pieces (``ViewOp.pick``, shrinking towards the first); a ``reshape``, ``flatten`` or
    ``contiguous`` that copies continues over the copy.

    Args:
      x: the :class:`functional_strides.StridedArray` the chain applies to (its layout and
        its storage's size: ``as_strided`` steps are drawn to fit it).
      min_len: the fewest ops (a chain may come out shorter, see above).
      max_len: the most ops.
      names: the ops to draw from (a sub-tuple of :data:`OP_NAMES`), or ``None`` for all.
      refusals: include ops that PyTorch refuses.
    Returns:
      A hypothesis strategy of :class:`ViewChain`; ``str(chain)`` is its PyTorch code.
    Raises:
      KeyError: a name of ``names`` is not one of :data:`OP_NAMES` (when drawn).
    Example:
      >>> import jax.numpy as jnp
      >>> from hypothesis import given
      >>> import functional_strides as fs
      >>> import functional_strides.testing as fst
      >>> x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
      >>> @given(fst.view_chains(x, max_len=3))
      ... def test(chain):
      ...     fst.assert_matches_oracle(chain.apply(x))
      >>> test()

    Semantics: ``torch.Tensor``'s view methods, as :data:`OP_NAMES` lists them."""
    return ViewChain(tuple(_chain(draw, x.layout, int(x.storage.shape[0]), min_len=min_len, max_len=max_len,
                                  names=names, refusals=refusals)))


@st.composite
def op_chains(draw, *, min_len: int = 1, max_len: int = 4,
              names: tuple[str, ...] | None = None) -> tuple[StridedArray, list[ViewOp]]:
    """``(x, [op, ...])``: a :func:`strided_arrays` start and a chain of ops, refusals
    included (:func:`view_chains` with ``refusals=True``): a refused op leaves the array
    unchanged, a split/chunk/unbind continues with piece ``op.pick``."""
    x = draw(strided_arrays())
    chain = _chain(draw, x.layout, int(x.storage.shape[0]), min_len=min_len, max_len=max_len, names=names,
                   refusals=True)
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

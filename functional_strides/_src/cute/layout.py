"""CuTe's layout algebra over hierarchical layouts (pure Python, no ``jax``).

A CuTe layout is a pair of congruent int tuples ``shape:stride``; it maps a coordinate
(or its colexicographic index) to ``sum(crd_i * stride_i)``. This module holds the
immutable, hashable :class:`Layout` and the core of the algebra on it (``coalesce``,
``composition``, ``complement``, inverses); divides and products are in ``_cute_divide``,
``Swizzle``/``ComposedLayout`` in ``_cute_swizzle``. The names
and conventions of CUTLASS's ``pycute``. Each operation is exact: where the result is not
expressible as a layout it raises :class:`~functional_strides.LayoutError` rather than
return a wrong layout. Units: shapes count elements, strides and indices are in elements.

Public through :mod:`functional_strides.cute`. :func:`coalesce` runs the merge of flat modes
that the view rules and the canonical form share (``core/modes.py``).
"""

from __future__ import annotations

from typing import Any

from ..core.errors import LayoutError
from ..core.modes import coalesce_modes
from .int_tuple import (
    congruent,
    crd2idx,
    flatten,
    has_none,
    is_int,
    is_tuple,
    normalize,
    prefix_product,
    product,
    slice_,
)

__all__ = [
    "Layout",
    "LayoutBase",
    "coalesce",
    "complement",
    "composition",
    "cosize",
    "depth",
    "filter",
    "is_layout",
    "left_inverse",
    "make_layout",
    "rank",
    "right_inverse",
    "size",
    "slice_and_offset",
]


class LayoutBase:
    """Common base of :class:`Layout` and :class:`ComposedLayout`: the marker :func:`is_layout` tests.

    It holds no shape, stride or behaviour; a layout-like argument of the algebra (something
    with a domain of coordinates and a map to indices in elements) is one of its subclasses.

    Raises:
      Nothing: a marker class without fields; ``LayoutBase()`` builds an empty instance that
        no function of the algebra accepts as a layout (they need ``shape`` and ``stride``).
    Example:
      >>> isinstance(Layout(4), LayoutBase), isinstance((4,), LayoutBase)
      (True, False)

    Semantics: pycute ``LayoutBase``."""

    __slots__ = ()


def is_layout(x: Any) -> bool:
    """True for a :class:`Layout` or :class:`ComposedLayout` (any :class:`LayoutBase`), False for
    int tuples, :class:`Swizzle`\\ s and everything else.

    Args:
      x: any object.
    Returns:
      ``bool``: ``isinstance(x, LayoutBase)``.
    Raises:
      Nothing: every object gets an answer.
    Example:
      >>> is_layout(Layout((2, 3))), is_layout((2, 3))
      (True, False)

    Semantics: pycute ``is_layout`` / CuTe ``is_layout``."""
    return isinstance(x, LayoutBase)


class Layout(LayoutBase):
    """A CuTe layout ``shape:stride``: coordinates of ``shape`` to indices, in elements.

    ``L(c) = sum_i c_i * stride_i`` over the leaves; an int argument ``L(k)`` is first
    turned into the coordinate ``idx2crd(k, shape)`` (colexicographic: mode 0 fastest).
    Immutable and hashable; equal when shape and stride are equal (``4:1 != (4,):(1,)``).

    Args:
      shape: int or nested tuple of ints >= 0 (extents).
      stride: int tuple congruent with ``shape`` (any sign); default the compact
        column-major strides ``prefix_product(shape)`` as in CuTe.
    Raises:
      LayoutError: a non-integer entry, a negative extent, or ``stride`` not congruent
        with ``shape``.
    Example:
      >>> L = Layout((2, (2, 3)), (3, (1, 6)))
      >>> L.size(), L.cosize(), L((1, (1, 2))), L(5), str(L)
      (12, 17, 16, 9, '(2, (2, 3)):(3, (1, 6))')
      >>> L(None, (1, None))        # a slice: the modes where the coordinate is None
      Layout((2, 3),(3, 6))

    Semantics: ``pycute.Layout`` / CuTe ``Layout<Shape, Stride>`` (``cute::Layout`` in C++),
    Ascend C ``Layout``. Deviation: ``cosize`` is right for negative strides too.
    """

    __slots__ = ("shape", "stride", "_hash")
    shape: Any
    stride: Any
    _hash: int | None

    def __init__(self, _shape: Any, _stride: Any = None) -> None:
        shape = normalize("shape", _shape, op="Layout", minimum=0)
        if _stride is None:
            stride = prefix_product(shape)
        else:
            stride = normalize("stride", _stride, op="Layout")
            if not congruent(shape, stride):
                raise LayoutError(
                    f"Layout: shape {shape!r} and stride {stride!r} are not congruent (they must nest "
                    "alike, one stride per extent); omit stride for the compact column-major strides.")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Layout is immutable; cannot set {name!r}. Build a new Layout.")

    def __eq__(self, other: object) -> bool:
        return type(other) is Layout and self.shape == other.shape and self.stride == other.stride

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.shape, self.stride))
            object.__setattr__(self, "_hash", h)
        return h

    def __len__(self) -> int:
        return len(self.shape) if is_tuple(self.shape) else 1

    def __call__(self, *args: Any) -> Any:
        crd = args[0] if len(args) == 1 else args
        if has_none(crd):
            return _trusted(slice_(crd, self.shape), slice_(crd, self.stride))
        return crd2idx(crd, self.shape, self.stride)

    def __getitem__(self, i: int) -> Layout:
        if is_tuple(self.shape):
            return _trusted(self.shape[i], self.stride[i])
        if i not in (0, -1):
            raise LayoutError(f"Layout: mode {i} of rank-1 layout {self} does not exist (use 0).")
        return self

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def size(self) -> int:
        """Size of the domain: the product of the extents."""
        return product(self.shape)

    def cosize(self) -> int:
        """Size of the codomain: ``max(L(c)) + 1`` over the domain (0 for an empty layout)."""
        shapes, strides = flatten(self.shape), flatten(self.stride)
        if 0 in shapes:
            return 0
        return 1 + sum((n - 1) * d for n, d in zip(shapes, strides, strict=True) if d > 0)

    def __str__(self) -> str:
        return f"{self.shape}:{self.stride}"

    def __repr__(self) -> str:
        return f"Layout({self.shape},{self.stride})"

    def __reduce__(self):
        return (Layout, (self.shape, self.stride))


def _trusted(shape: Any, stride: Any) -> Layout:
    """A Layout from int tuples already known to be valid and congruent (no checks)."""
    out = object.__new__(Layout)
    _set(out, "shape", shape)
    _set(out, "stride", stride)
    _set(out, "_hash", None)
    return out


_set = object.__setattr__


def _as_layout(x: Any, op: str, name: str) -> Layout:
    if isinstance(x, Layout):
        return x
    if is_int(x) or is_tuple(x):
        return Layout(x)
    raise LayoutError(f"{op}: {name} must be a Layout, an int or a tuple (got {type(x).__name__} {x!r}).")


def make_layout(*layouts: Any) -> Layout:
    """The layout whose modes are ``layouts`` (each a Layout, or an int/tuple shape).

    ``make_layout(A, B)`` has shape ``(A.shape, B.shape)`` and stride ``(A.stride, B.stride)``:
    mode ``i`` of the result is ``layouts[i]`` unchanged. An int or tuple argument is the
    shape of a compact column-major layout (``Layout(shape)``, strides ``prefix_product``).
    A single iterable argument is unpacked (``make_layout(layout for ...)``).

    Args:
      *layouts: Layouts, ints or int tuples (extents in elements, strides in elements); or one
        iterable of them. No argument gives the rank-0 layout ``():()``.
    Returns:
      A :class:`Layout` of rank ``len(layouts)`` (a tuple shape even for one mode).
    Raises:
      LayoutError: an argument is not a Layout, an int or a tuple (message names its type and
        value), or an int/tuple shape has a negative or non-integer extent (from
        :class:`Layout`).
    Example:
      >>> make_layout(Layout(4, 2), Layout((2, 3)))
      Layout((4, (2, 3)),(2, (1, 2)))
      >>> make_layout(3, (2, 2)), make_layout()
      (Layout((3, (2, 2)),(1, (1, 2))), Layout((),()))

    Semantics: pycute ``make_layout`` / CuTe ``make_layout(layouts...)``; pycute takes Layouts
    only."""
    if len(layouts) == 1 and not is_layout(layouts[0]) and not is_int(layouts[0]):
        layouts = tuple(layouts[0])
    modes = [_as_layout(x, "make_layout", "each argument") for x in layouts]
    return _trusted(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def size(x: Any) -> int:
    """Size of the domain of a layout (the number of coordinates), or the product of an int tuple.

    Args:
      x: a Layout or ComposedLayout, or an int tuple (a shape; extents count elements).
    Returns:
      ``int``: ``x.size()`` for a layout, :func:`product` of ``x`` otherwise.
    Raises:
      TypeError: a tuple leaf that does not multiply with an int (as :func:`product`). A
        non-tuple, non-layout ``x`` is returned as is, unchecked.
    Example:
      >>> size(Layout((2, (3, 4)), (1, (2, 6)))), size((2, (3, 4))), size(5)
      (24, 24, 5)

    Semantics: pycute ``size`` / CuTe ``size``."""
    return x.size() if is_layout(x) else product(x)


def cosize(x: Any) -> int:
    """Size of the codomain: ``max(L(c)) + 1`` over the domain, in elements (0 for an empty layout).

    For non-negative strides it is ``L(size(L) - 1) + 1``; negative strides add nothing (the
    lowest index of a layout is then below 0, and the count starts at ``L(0) = 0``).

    Args:
      x: a Layout, or a ComposedLayout (then the cosize of its outer function ``layoutB``).
    Returns:
      ``int``.
    Raises:
      AttributeError: ``x`` is not a layout (an int tuple has no codomain: ``'tuple' object has
        no attribute 'cosize'``); ``Layout(shape)`` turns a shape into one.
    Example:
      >>> cosize(Layout((2, 3), (3, 1))), cosize(Layout((2, 3), (-1, 2))), cosize(Layout((2, 0)))
      (6, 5, 0)

    Semantics: pycute ``cosize`` / CuTe ``cosize``; pycute's is wrong for negative strides (it
    returns ``L(size - 1) + 1``)."""
    return x.cosize()


def rank(x: Any) -> int:
    """Number of top-level modes: ``len`` of a tuple shape, 1 for an int shape or int.

    Args:
      x: a Layout or ComposedLayout, or an int tuple.
    Returns:
      ``int``; nested modes count once (``rank(((2, 3), 4)) == 2``).
    Raises:
      Nothing: any non-tuple, non-layout ``x`` counts as an int (rank 1), unchecked.
    Example:
      >>> rank(Layout((2, (3, 4)))), rank((2, 3, 4)), rank(7), rank(Layout(4))
      (2, 3, 1, 1)

    Semantics: CuTe ``rank`` (``len(layout)`` in pycute)."""
    if is_layout(x):
        return len(x)
    return len(x) if is_tuple(x) else 1


def depth(x: Any) -> int:
    """Nesting depth: 0 for an int (or a layout of int shape), 1 + max over modes for a tuple.

    Args:
      x: an int tuple, a Layout (its shape is measured), or a ComposedLayout (the shape of its
        inner ``layoutA``).
    Returns:
      ``int`` >= 0; ``depth(()) == 1``.
    Raises:
      Nothing: any non-tuple, non-layout ``x`` counts as an int (depth 0), unchecked.
    Example:
      >>> depth(4), depth((2, 3)), depth(Layout(((2, 2), 3)))
      (0, 1, 2)

    Semantics: CuTe ``depth`` (not in pycute)."""
    if is_layout(x):
        x = x.layoutA.shape if hasattr(x, "layoutA") else x.shape
    if is_tuple(x):
        return 1 + max((depth(v) for v in x), default=0)
    return 0


def coalesce(layout: Layout, profile: Any = None) -> Layout:
    """The layout with the fewest modes and the same map from 1-D index to index.

    With a tuple ``profile``, mode ``i`` is coalesced separately for ``i < len(profile)`` (each by
    ``profile[i]``) and the rest kept, so the result keeps the rank of ``profile``.

    Args:
      layout: a Layout.
      profile: ``None`` or an int (coalesce all) or an int tuple.
    Returns:
      A Layout of int shape (one mode) or flat tuple shape; ``1:0`` when every extent is 1.
    Raises:
      LayoutError: ``profile`` has more modes than ``layout``.
    Example:
      >>> coalesce(Layout((2, (1, 6)), (1, (7, 2))))
      Layout(12,1)
      >>> coalesce(Layout(((2, 3), (4, 5))), (1, 1))
      Layout((6, 20),(1, 6))

    Semantics: ``pycute.coalesce``, CuTe ``coalesce(layout[, profile])``."""
    layout = _as_layout(layout, "coalesce", "layout")
    if is_tuple(profile):
        _check_rank("coalesce", layout, profile, "profile")
        return make_layout(*(coalesce(layout[i], profile[i]) for i in range(len(profile))),
                           *(layout[i] for i in range(len(profile), len(layout))))
    modes = coalesce_modes(flatten(layout.shape), flatten(layout.stride))
    if not modes:
        return _trusted(1, 0)
    if len(modes) == 1:
        return _trusted(modes[0][0], modes[0][1])
    return _trusted(tuple(m[0] for m in modes), tuple(m[1] for m in modes))


def _check_rank(op: str, layout: Layout, tiler: tuple[Any, ...], name: str) -> None:
    if len(tiler) > len(layout):
        raise LayoutError(f"{op}: {name} {tiler!r} has {len(tiler)} modes but layout {layout} has only "
                          f"{len(layout)}; give at most one entry per mode.")


def filter(layout: Layout, profile: Any = None) -> Layout:  # noqa: A001 - pycute's name
    """``layout`` without extent-1 and stride-0 modes, coalesced: the same image set, each index once
    per distinct non-broadcast coordinate.

    With a tuple ``profile``, mode ``i`` is filtered separately for ``i < len(profile)`` and the
    later modes are kept as they are, so the result keeps ``len(layout)`` modes.

    Args:
      layout: a Layout (or an int/tuple shape, meaning its compact column-major layout).
      profile: ``None`` or an int (filter everything) or an int tuple.
    Returns:
      A Layout of int shape or flat tuple shape (coalesced, column-major order kept); ``1:0``
      when every mode is dropped.
    Raises:
      LayoutError: ``layout`` is not a Layout, int or tuple (a ComposedLayout included), or
        ``profile`` has more modes than ``layout``.
    Example:
      >>> filter(Layout((2, 3, 4), (1, 0, 2)))
      Layout(8,1)
      >>> filter(Layout(((2, 1), (3, 4)), ((1, 5), (0, 2))), (1, 1))
      Layout((2, 4),(1, 2))

    Semantics: pycute ``filter`` / CuTe ``filter``."""
    layout = _as_layout(layout, "filter", "layout")
    if is_tuple(profile):
        _check_rank("filter", layout, profile, "profile")
        return make_layout(*(filter(layout[i], profile[i]) for i in range(len(profile))),
                           *(layout[i] for i in range(len(profile), len(layout))))
    kept = [(n, d) for n, d in zip(flatten(layout.shape), flatten(layout.stride), strict=True)
            if n != 1 and d != 0]
    if not kept:
        return _trusted(1, 0)
    return coalesce(_trusted(tuple(n for n, _ in kept), tuple(d for _, d in kept)))


def _tiled(op: str, fn: Any, layout: Any, tiler: tuple[Any, ...]) -> Layout:
    """Apply ``fn`` mode by mode for a tuple tiler; modes past the tiler are kept."""
    layout = _as_layout(layout, op, "layout")
    _check_rank(op, layout, tiler, "tiler")
    return make_layout(*(fn(layout[i], tiler[i]) for i in range(len(tiler))),
                       *(layout[i] for i in range(len(tiler), len(layout))))


def composition(layoutA: Any, layoutB: Any) -> Any:  # noqa: N803 - pycute's names
    """The layout ``R`` with ``R(c) == A(B(c))`` for every coordinate ``c`` of ``B`` (``R`` has B's shape).

    ``B`` may be a Layout, an int ``n`` (``n:1``), ``None`` (``A`` itself) or a tuple *tiler*
    composed mode by mode with ``A``. ``A``'s last mode is unbounded, as in CuTe, so ``B``
    may index past ``size(A)``. ``A`` may be a :class:`Swizzle` or :class:`ComposedLayout`;
    the result is then a ComposedLayout.

    Args:
      layoutA: the outer layout ``A``: a Layout, a :class:`Swizzle` or a :class:`ComposedLayout`.
      layoutB: the inner ``B``: a Layout, an int ``n`` (``n:1``), ``None`` or a tuple tiler.
    Raises:
      LayoutError: ``B`` has a negative stride; the result is not a layout because a stride
        of ``B`` and an extent of ``coalesce(A)`` do not divide one another (stride
        divisibility) or ``B``'s extent does not split over ``A``'s modes (shape divisibility).
    Example:
      >>> composition(Layout((4, 3), (3, 1)), Layout((6, 2), (2, 1)))
      Layout(((2, 3), 2),((6, 1), 3))
      >>> composition(Layout((4, 6, 8, 10), (2, 3, 5, 7)), Layout(6, 12))
      Layout((2, 3),(9, 5))

    Semantics: ``pycute.composition`` / CuTe ``composition``. pycute does not check shape
    divisibility and returns wrong layouts: ``composition(Layout((4, 3), (1, 10)), Layout(6, 1))``
    gives ``4:1`` (4 elements for a 6-element B); here it raises."""
    if layoutB is None:
        return layoutA
    if hasattr(layoutA, "compose"):   # a Swizzle or ComposedLayout (functional_strides._src.cute.swizzle)
        return layoutA.compose(layoutB)
    if is_int(layoutB):
        layoutB = Layout(layoutB)
    if is_tuple(layoutB):
        return _tiled("composition", composition, layoutA, layoutB)
    layoutA = _as_layout(layoutA, "composition", "layoutA")
    if not isinstance(layoutB, Layout):
        raise LayoutError(f"composition: layoutB must be a Layout, an int, a tuple or None "
                          f"(got {type(layoutB).__name__}).")
    if is_tuple(layoutB.shape):
        return make_layout(*(composition(layoutA, b) for b in layoutB))
    return _compose_mode(layoutA, layoutB.shape, layoutB.stride)


def _compose_mode(a: Layout, n: int, d: int) -> Layout:
    """``A o (n:d)`` for one flat mode of B."""
    if d == 0:
        return _trusted(n, 0)
    if d < 0:
        if n <= 1:
            return _trusted(n, 0)
        raise LayoutError(f"composition: layoutB mode {n}:{d} has a negative stride; its images would "
                          f"index layoutA {a} at negative positions. Compose with non-negative strides.")
    flat = coalesce(a)
    shapes, strides = flatten(flat.shape), flatten(flat.stride)
    out_n: list[int] = []
    out_d: list[int] = []
    rest_n, rest_d = n, d
    for s, t in zip(shapes[:-1], strides[:-1], strict=True):
        if rest_n == 1:                       # one element left: only its stride is carried
            rest_d = -(-rest_d // s)
        elif rest_d % s == 0:                 # the mode is stepped over entirely
            rest_d //= s
        elif s % rest_d == 0:                 # the mode holds k elements of B
            k = s // rest_d
            if rest_n <= k:
                out_n.append(rest_n)
                out_d.append(rest_d * t)
                rest_n, rest_d = 1, 1
                continue
            if rest_n % k:
                raise LayoutError(
                    f"composition: shape divisibility fails: {rest_n} elements of layoutB mode {n}:{d} "
                    f"do not split over the {k} that mode {s}:{t} of coalesce(layoutA)={flat} holds.")
            out_n.append(k)
            out_d.append(rest_d * t)
            rest_n, rest_d = rest_n // k, 1
        else:
            raise LayoutError(
                f"composition: stride divisibility fails: stride {rest_d} (from layoutB mode {n}:{d}) and "
                f"extent {s} of coalesce(layoutA)={flat} do not divide one another; the result is not a "
                "layout.")
    if rest_n != 1 or not out_n:
        out_n.append(rest_n)
        out_d.append(rest_d * strides[-1])
    if len(out_n) == 1:
        return _trusted(out_n[0], out_d[0])
    return _trusted(tuple(out_n), tuple(out_d))


def complement(layout: Any, max_idx: int = 1) -> Layout:
    """The ordered layout ``C`` whose images fill the gaps of ``layout``'s, up to ``max_idx``.

    Postconditions: ``C`` is strictly increasing; ``layout(a) != C(b)`` unless both are 0;
    when ``layout`` is injective with strides that divide one another (sorted), the layout
    ``(layout, C)`` is a bijection onto ``[0, size(layout) * size(C))`` and
    ``size(layout) * size(C) >= max_idx``. Stride-0 and extent-1 modes are ignored. When a
    sorted stride is not a multiple of the span below it (``(4, 6):(1, 6)``), ``C`` is still
    ordered and disjoint but leaves some gaps unfilled, as pycute's.

    Args:
      layout: a Layout (or an int ``n``, meaning ``n:1``).
      max_idx: the bound to cover.
    Raises:
      LayoutError: a negative stride; a mode starts inside the span of the modes with smaller
        strides (``layout`` overlaps itself, or interleaves as ``(3, 2):(2, 3)`` does).
    Example:
      >>> complement(Layout(4, 2), 24)
      Layout((2, 3),(1, 8))
      >>> complement(Layout((2, 4), (1, 6)))
      Layout(3,2)

    Semantics: ``pycute.complement`` / CuTe ``complement(layout, cosize_hi)``; pycute's ``int``
    overload drops ``max_idx``, and pycute returns extent-0 modes for overlapping layouts."""
    layout = _as_layout(layout, "complement", "layout")
    if not is_int(max_idx):
        raise LayoutError(f"complement: max_idx must be an int (got {max_idx!r}).")
    modes = sorted((d, n) for n, d in zip(flatten(layout.shape), flatten(layout.stride), strict=True))
    out_n: list[int] = []
    out_d: list[int] = []
    current = 1
    for d, n in modes:
        if d == 0 or n == 1:
            continue
        if d < 0:
            raise LayoutError(f"complement: layout {layout} has a negative stride {d}; the complement is "
                              "defined for non-negative strides.")
        if d < current:
            raise LayoutError(
                f"complement: mode {n}:{d} of layout {layout} starts inside the span [0, {current}) of the "
                "modes with smaller strides: the layout overlaps itself or interleaves its modes, and no "
                "layout fills its gaps. Complement a layout whose sorted strides each reach past the "
                "modes below them.")
        out_n.append(d // current)
        out_d.append(current)
        current = n * d
    out_n.append(-(-max_idx // current))
    out_d.append(current)
    return coalesce(_trusted(tuple(out_n), tuple(out_d)))


def right_inverse(layout: Any) -> Any:
    """A layout ``R`` with ``layout(R(i)) == i`` for every ``i < size(R)``, ``size(R)`` as large as
    the contiguous part of ``layout``'s image starting at 0 allows.

    The modes of ``layout`` (extent-1 modes skipped) are taken in order of increasing stride
    while each stride equals the span of those before it (1, then ``n0 * d0``, ...); ``R``
    maps an index to the colexicographic index of that coordinate. The run stops at the first
    mode that breaks it, so the smallest stride must be 1: a layout with no stride-1 mode, or
    with a stride-0 or negative mode of extent > 1 (it sorts first), gives ``1:0``.

    Args:
      layout: a Layout (or an int/tuple shape), or ``None``.
    Returns:
      A coalesced Layout (``None`` for ``None``); ``size(R)`` counts elements.
    Raises:
      LayoutError: ``layout`` is not a Layout, int, tuple or ``None``. Negative, zero or gapped
        strides raise nothing: the modes from the first that breaks the run are left out
        (``right_inverse(Layout((2, 3), (1, 4)))`` is ``2:1``).
    Example:
      >>> right_inverse(Layout((2, 4), (4, 1)))
      Layout((4, 2),(2, 1))
      >>> right_inverse(Layout((2, 3), (2, 4)))     # no stride 1: only index 0 is reached
      Layout(1,0)

    Semantics: pycute ``right_inverse`` / CuTe ``right_inverse``."""
    if layout is None:
        return None
    layout = _as_layout(layout, "right_inverse", "layout")
    shapes, strides = flatten(layout.shape), flatten(layout.stride)
    out_n: list[int] = []
    out_d: list[int] = []
    current = 1
    for d, n, r in sorted(zip(strides, shapes, prefix_product(shapes), strict=True)):
        if n == 1:
            continue
        if d != current:
            break
        out_n.append(n)
        out_d.append(r)
        current = n * d
    return coalesce(_trusted(tuple(out_n), tuple(out_d)))


def left_inverse(layout: Any) -> Any:
    """A layout ``L`` with ``L(layout(i)) == i`` for every ``i < size(layout)``.

    Raises:
      LayoutError: ``layout`` is not injective (a stride-0 mode of extent > 1, or overlapping
        modes), has a negative stride, or its sorted strides do not divide one another (then
        the complement does not fill its gaps and pycute returns a wrong inverse).
    Example:
      >>> left_inverse(Layout((2, 4), (4, 1)))
      Layout((4, 2),(2, 1))

    Semantics: ``pycute.left_inverse``, CuTe ``left_inverse``; pycute returns a non-inverse
    for non-injective layouts."""
    if layout is None:
        return None
    layout = _as_layout(layout, "left_inverse", "layout")
    current = 1
    for d, n in sorted((d, n) for n, d in zip(flatten(layout.shape), flatten(layout.stride), strict=True)):
        if n == 1:
            continue
        if d == 0:
            raise LayoutError(f"left_inverse: layout {layout} is not injective (mode {n}:0 broadcasts); "
                              "no left inverse exists.")
        if d < 0 or d % current:
            raise LayoutError(
                f"left_inverse: mode {n}:{d} of layout {layout} is not a multiple of the span {current} of "
                "the modes with smaller strides; the left inverse is built for layouts whose sorted strides "
                "divide one another (and non-negative).")
        current = n * d
    return right_inverse(make_layout(layout, complement(layout)))


def slice_and_offset(crd: Any, layout: Layout) -> tuple[Layout, int]:
    """``(layout(crd), offset)``: the modes where ``crd`` is ``None``, and the index of the rest.

    The sub-layout keeps the modes (shape and stride) at ``None`` leaves of ``crd``, one level
    flat; the offset is ``crd2idx(crd, shape, stride)`` with ``None`` read as 0, in elements.
    Coordinates are not bounds-checked (as in CuTe).

    Args:
      crd: a coordinate congruent with ``layout.shape`` (ints and ``None``).
      layout: a Layout
        (or an int/tuple shape).
    Returns:
      ``(Layout, int)``.
    Raises:
      LayoutError: ``layout`` is not a Layout, int or tuple; ``crd`` nests deeper than
        ``layout.shape`` or a rank differs (raised by :func:`slice_`, named ``slice_`` in the
        message).
    Example:
      >>> slice_and_offset((None, 2), Layout((4, 8), (8, 1)))
      (Layout((4,),(8,)), 2)
      >>> slice_and_offset((1, None), Layout((4, 8), (8, 1)))
      (Layout((8,),(1,)), 8)

    Semantics: pycute ``slice_and_offset`` / CuTe ``slice_and_offset``."""
    layout = _as_layout(layout, "slice_and_offset", "layout")
    return (_trusted(slice_(crd, layout.shape), slice_(crd, layout.stride)),
            crd2idx(crd, layout.shape, layout.stride))

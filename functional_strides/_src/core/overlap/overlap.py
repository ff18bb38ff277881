"""Overlap analysis of layouts: does a layout address one storage slot twice; do two share one?

Pure Python and NumPy, no ``jax`` import. Every answer is exact (never "too hard") and comes
with a witness: a pair of coordinates that address the same storage index.

Both questions are bounded linear Diophantine problems. A layout ``(n_d, s_d)`` overlaps
itself iff ``sum_d c_d * s_d == 0`` has a solution ``c != 0`` with ``|c_d| <= n_d - 1``:
then ``x = max(c, 0)`` and ``y = max(-c, 0)`` are two distinct coordinates with equal
indices, and conversely ``c = x - y`` for any colliding pair. Two layouts ``a``, ``b``
share an index iff ``sum x_d * sa_d - sum y_e * sb_e == b.offset - a.offset`` has a
solution with ``0 <= x_d < na_d``, ``0 <= y_e < nb_e``. Both are instances of one problem,
solved by :func:`_solve`: find integers ``z_k`` with ``lo_k <= z_k <= hi_k`` and
``sum_k z_k * s_k == T`` (``s_k > 0``), optionally with ``z != 0``.

Three stages, each exact:

1. A depth-first search (:mod:`._dfs`, the bounded Euclid search NumPy's ``shares_memory``
   runs, on NumPy's choice of the smaller of the two mirrored right-hand sides), with the
   fast paths (empty, disjoint index ranges, zero strides, nested strides). Compiled (the C
   extension ``_dfs_native``: one call that reads the layouts' tuples, ``_COMPILED_STEPS``
   steps at NumPy's own speed), else in Python (``_QUICK_STEPS`` steps;
   ``benchmarks/bench_overlap.py`` times both). It decides everyday views, most colliding
   pairs and NumPy's fuzz instances;
   past its budget it hands over.
2. Reductions (below), then closed forms for two unknowns and a meet-in-the-middle search
   when its estimated size is small.
3. For larger residual equations: the compiled search again, ``_REDUCED_STEPS`` steps on the
   reduced equation (narrower ranges: often a far smaller tree), then (at most
   ``_LATTICE_MAX_UNKNOWNS`` unknowns, values within float64's exact range) lattice
   reduction and branching (:mod:`._lattice`). This decides
   knapsacks whose coefficients hide a common structure, such as the instance in NumPy's
   ``shares_memory`` docstring (strides ``p*12224 + r``), which a search over the unknowns
   (NumPy's, or our enumeration) takes orders of magnitude longer to decide.

The reductions each keep the solution set (up to an explicit change of variables, undone to
build the witness):

* **fold**: a variable with ``lo == hi`` moves into the target;
* **merge** (no ``z != 0`` constraint): two variables of equal coefficient become one whose
  range is the sum of theirs;
* **gcd**: ``G = gcd(s)`` must divide ``T``; divide by it;
* **congruence**: with ``g`` the gcd of the other coefficients, ``z_k * s_k == T (mod g)``
  pins ``z_k`` to one residue class ``z_k = z0 + q*w``: substitute ``w`` (its coefficient
  becomes ``q * s_k``, its range shrinks ``q``-fold, or the variable vanishes);
* **reach**: ``z_k * s_k = T - (others)`` lies between ``T - max(others)`` and
  ``T - min(others)``, which bounds ``z_k`` (a dim whose stride exceeds the reach of all
  others drops out entirely);
* for ``z != 0`` also three proofs: two equal coefficients collide (``c = e_i - e_j``); the
  coefficients nest after sorting (each exceeds the reach of the smaller ones: no
  collision, PyTorch's sufficient test); and the exact two-variable test: ``c_i s_i + c_j
  s_j = 0`` has the smallest nonzero solution ``(s_j/g, -s_i/g)``, so a pair collides iff
  ``s_j/g <= n_i - 1`` and ``s_i/g <= n_j - 1``.

What is left is decided exactly: by closed form for at most two variables (extended
Euclid: all solutions are ``z_i = z0 + k*s_j/g``, ``z_j = z1 - k*s_i/g``, and the ranges make
``k`` an interval), else by a meet-in-the-middle search (:func:`_search`) or, when that
search would generate more than ``_LATTICE_ABOVE`` candidates, by the lattice solver. The variables
are split into two sides, ``A`` and ``B``. The set of values ``sum_A z*s`` is built one
variable at a time (largest coefficient first) as a sorted, deduplicated NumPy array,
keeping only partial sums that the variables still to come and side ``B`` can bring to
``T`` (an interval, and a residue class modulo the gcd of their coefficients); one way to
reach a value is recovered afterwards by searching the partial sets backwards. If ``B``
has exactly two variables it is not enumerated: every value ``v`` of ``A`` is tested in
closed form (vectorised) for ``T - v``; otherwise ``B``'s set is built the same way and the
two sorted sets are matched. Correctness: pruning removes only partial sums that cannot
reach ``T``, deduplication keeps every reachable value, so a solution exists iff some
``v_A + v_B == T``. With ``z != 0``: a nonzero solution either has ``v_A != 0`` (found by
the match, which excludes ``v_A == 0``), or ``v_A == v_B == 0`` with ``z_A != 0`` or
``z_B != 0``, a collision inside one side, found by recursing into each side alone.

Cost: the reductions take O(rank^2) integer operations per round (at most 64 rounds; they
only save work). The search costs about the size of the larger side set; a set is bounded
by the product of its ranges (``prod(2 n_d - 1)`` for one layout) and by the width of its
window divided by its modulus, so a balanced split costs about ``sqrt(prod_d (2 n_d - 1))``
set entries, at most ``1.5^12 * 2^12 ~ 5e5`` for a layout of 2^24 elements (rank 24,
extents 2), and the ranges that reach/congruence leave are usually much smaller (rank 3
with extents 256: one set of 511 values). The plan (which two variables go in closed form,
where to split) minimises an estimate of the candidates generated. Two layouts of ``N``
elements each whose strides share no structure cost up to ``N`` entries per side (the
sorted merge of their index sets). The problem is NP-hard in general (subset sum), so
layouts far beyond 2^24 elements with many unrelated strides can be slow, but every answer
stays exact. The lattice solver's cost is instead driven by how many values its branching
coefficients take, which for structured strides is a handful even when every set is huge.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import LayoutError
from . import dfs as _dfs
from . import lattice as _lattice

if TYPE_CHECKING:  # the queries read any record with shape, strides and offset; layout.py imports this module
    from ..layout import Layout

__all__ = [
    "has_internal_overlap",
    "internal_overlap_witness",
    "is_monotone",
    "is_non_overlapping_sufficient",
    "overlap_witness",
    "overlaps",
]

Coord = tuple[int, ...]
Witness = tuple[Coord, Coord]
_Assignment = list[tuple[int, int]]  # (index of an original unknown, its value)

_MAX_ROUNDS = 64  # reduction rounds (each shrinks something; the cap only bounds the work)
_CHUNK = 1 << 22  # candidates materialised at once while building a side set
_INT64_SAFE = 1 << 62
_QUICK_STEPS = 1024  # steps of the bounded depth-first search tried first, in Python
_COMPILED_STEPS = 1 << 17  # ... and compiled (C), where a step costs a small fraction of Python's
_FIRST_STEPS = 1 << 10  # compiled steps on a self-overlap query before its cache is consulted
_REDUCED_STEPS = 1 << 17  # compiled steps on the reduced equation, before a large search
_LATTICE_ABOVE = 1 << 14  # estimated search candidates above which the lattice solver runs
_LATTICE_MAX_UNKNOWNS = 10  # ... when the equation has at most this many unknowns
_FLOAT_SAFE = 1 << 52  # ... and its values stay in float64's exact range


def _live_dims(layout: Layout) -> list[tuple[int, int]]:
    """(extent, stride) of dims with extent > 1, in the layout's dim order."""
    return [(n, s) for n, s in zip(layout.shape, layout.strides, strict=True) if n > 1]


def is_monotone(layout: Layout) -> bool:
    """True when the storage indices, read in row-major order, never decrease.

    Holds iff every dim's stride is at least the span of all later dims (size-1 dims
    ignored). Used to tell XLA's gather that its indices are sorted."""
    tail = 0
    for n, s in reversed(_live_dims(layout)):
        if s < tail:
            return False
        tail += (n - 1) * s
    return True


def is_non_overlapping_sufficient(layout: Layout) -> bool:
    """Fast proof of no internal overlap (``False`` means "not proven", not "overlaps").

    Sort the dims of extent > 1 by ``|stride|`` (a reversed dim addresses the same slots as
    its mirror); each must exceed the largest index reachable with the smaller-stride dims.
    Empty layouts never overlap.

    Semantics: the sufficient test of PyTorch's historical MemoryOverlap note."""
    if layout.is_empty:
        return True
    reach = 0
    for n, s in sorted(((n, abs(s)) for n, s in _live_dims(layout)), key=lambda p: p[1]):
        if s <= reach:
            return False
        reach += (n - 1) * s
    return True


# -- public API ---------------------------------------------------------------------------
def internal_overlap_witness(layout: Layout) -> Witness | None:
    """Two distinct coordinates of ``layout`` that address one storage index, or ``None``.

    Exact for every layout (any rank, extents >= 0, strides of any sign); the offset plays no part
    (it may be traced). Fast paths: empty -> ``None``; a dim of extent > 1 with stride 0 ->
    that dim's coordinates 0 and 1; strides that nest after sorting -> ``None``. The rest is
    solved as described in the module docstring; results are cached per (shape, strides).

    Args:
      layout: a :class:`Layout`; strides and offset in elements.
    Returns:
      ``None`` when every element has its own storage index, else ``(x, y)``: two tuples of
      ``layout.ndim`` ints, ``x != y``, ``0 <= x[d], y[d] < shape[d]``, ``x`` before ``y``
      in row-major order, and ``layout(*x) == layout(*y)``.
    Raises:
      Nothing for a :class:`Layout` (a traced offset included: it plays no part).
    Example:
      >>> internal_overlap_witness(Layout((4096, 4096), (4095, 1)))
      ((0, 4095), (1, 0))
      >>> internal_overlap_witness(Layout((4096, 4096), (4097, 4095))) is None
      True

    Semantics: ``torch._debug_has_internal_overlap`` (``MemOverlap::Yes/No``) without its
    ``TooHard`` answer, which it gives for every overlapping layout without a zero stride."""
    first = _internal_first(layout)
    if first.__class__ is tuple:
        return _difference_witness(first, layout.strides)
    return None if first == 0 else _internal_witness(tuple(layout.shape), tuple(layout.strides))


def has_internal_overlap(layout: Layout) -> bool:
    """True when two elements of ``layout`` address the same storage index (exact).

    Args:
      layout: a :class:`Layout` of any rank; strides in elements; the offset plays no part.
    Returns:
      A Python bool; ``False`` for empty layouts and layouts of one element.
    Raises:
      Nothing for a :class:`Layout` (a traced offset included: it plays no part).
    Example:
      >>> has_internal_overlap(Layout((5, 4), (2, 1))), has_internal_overlap(Layout((5, 2), (2, 1)))
      (True, False)

    Semantics: ``torch._debug_has_internal_overlap(t) == 1``, decided for every layout; see
    :func:`internal_overlap_witness` for a colliding pair."""
    first = _internal_first(layout)
    if first.__class__ is tuple:
        return True
    return first != 0 and _internal_witness(tuple(layout.shape), tuple(layout.strides)) is not None


def _internal_first(layout: Layout) -> tuple[int, ...] | int:
    """One compiled call with ``_FIRST_STEPS`` steps, before the cache of
    :func:`_internal_witness`: a nonzero ``c`` with ``sum c*s == 0`` (``|c_d| < n_d``), 0 when
    there is none, or -1 (undecided), -2 (no extension, or numbers beyond int64)."""
    native = _dfs.compiled()
    if native is None:
        return -2
    return native.internal(layout.shape, layout.strides, _FIRST_STEPS)


class _Placed(NamedTuple):
    """A layout's shape, strides and a concrete offset (what the pair queries read)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


def _concrete_offset(name: str, lay: Layout) -> Layout:
    """``lay`` with its offset as a Python int (any integer scalar with a known value: a
    NumPy or concrete JAX scalar converts); a traced offset, or one offset per item of a
    batched array, is refused."""
    if type(lay.offset) is int:
        return lay
    try:
        offset = operator.index(lay.offset)
    except Exception:  # a tracer, or an array of offsets
        raise LayoutError(
            f"overlap_witness: the offset of {name} (layout {lay}) is not one known integer (traced, "
            "or one per item); overlap analysis needs concrete offsets. Compare layouts outside jit."
        ) from None
    return _Placed(lay.shape, lay.strides, offset)  # type: ignore[return-value]


def overlap_witness(a: Layout, b: Layout) -> Witness | None:
    """A coordinate of ``a`` and one of ``b`` that address one storage index, or ``None``.

    Both layouts index the same storage; offsets matter and must be Python ints. Exact for
    every pair of layouts. Fast paths: either empty or disjoint index ranges
    ``[offset, offset + span]`` -> ``None``; equal layouts -> the first element.

    Args:
      a, b: :class:`Layout` records (any ranks); strides and offsets in elements.
    Returns:
      ``None`` when no index is shared, else ``(x, y)`` with ``x`` a coordinate of ``a``,
      ``y`` one of ``b`` and ``a(*x) == b(*y)``.
    Raises:
      LayoutError: an offset is traced (not a Python int); pass concrete offsets.
    Example:
      >>> a = Layout((4, 2), (8, 1), 0)                # x[:, 0:2] of a (4, 8) array
      >>> overlap_witness(a, Layout((4, 2), (8, 1), 2)) is None    # x[:, 2:4]
      True
      >>> overlap_witness(a, Layout((3,), (5,), 1))    # indices 1, 6, 11
      ((0, 1), (0,))

    Semantics: ``numpy.shares_memory(a, b)`` (exact, ``max_work=None``) for two views of one
    buffer; PyTorch's ``get_overlap_status`` answers ``TooHard`` for most such pairs."""
    a, b = _concrete_offset("a", a), _concrete_offset("b", b)
    quick = _quick_pair(a, b, witness=True)
    return _solved_pair(a, b) if quick is False else quick


def overlaps(a: Layout, b: Layout) -> bool:
    """True when layouts ``a`` and ``b`` over one storage share a storage index (exact).

    Args:
      a, b: :class:`Layout` records of any ranks over the same storage; strides and
        offsets in elements, offsets Python ints.
    Returns:
      A Python bool; ``False`` when either layout is empty.
    Raises:
      LayoutError: an offset is traced.
    Example:
      >>> window = Layout((4,), (1,), 0)
      >>> overlaps(window, Layout((4,), (1,), 3)), overlaps(window, Layout((4,), (1,), 4))
      (True, False)

    Semantics: ``numpy.shares_memory``; see :func:`overlap_witness` for the shared pair."""
    if type(a.offset) is not int or type(b.offset) is not int:
        a, b = _concrete_offset("a", a), _concrete_offset("b", b)
    quick = _quick_pair(a, b, witness=False)
    if quick is False:
        return _solved_pair(a, b) is not None
    return quick is not None


def _solved_pair(a: Layout, b: Layout) -> Witness | None:
    """:func:`overlap_witness` by the exact stages (reductions, searches, lattice), for a pair
    the bounded search left undecided."""
    variables = [_Var(0, n - 1, s, _base_lift(d))
                 for d, (n, s) in enumerate(zip(a.shape, a.strides, strict=True))]
    variables += [_Var(-(n - 1), 0, s, _base_lift(a.ndim + e, -1))  # y -> -y: positive ranges
                  for e, (n, s) in enumerate(zip(b.shape, b.strides, strict=True))]
    found = _solve([_positive(v) for v in variables if v.s != 0 and v.lo != v.hi],
                   b.offset - a.offset, nonzero=False)
    if found is None:
        return None
    coord = [0] * (a.ndim + b.ndim)
    for k, value in found:
        coord[k] = value
    x, y = tuple(coord[:a.ndim]), tuple(coord[a.ndim:])
    assert a(*x) == b(*y), (a, b, x, y)
    return x, y


@functools.lru_cache(maxsize=4096)
def _internal_witness(shape: tuple[int, ...], strides: tuple[int, ...]) -> Witness | None:
    """:func:`internal_overlap_witness` on plain tuples (the cache key); strides may be negative.

    The fast paths and the bounded search run compiled (``_dfs_native.internal``, one call)
    when the extension is built and the numbers fit in int64, else in Python below."""
    status = -2
    native = _dfs.compiled()
    if native is not None:
        found = native.internal(shape, strides, _COMPILED_STEPS)
        if found.__class__ is tuple:
            return _difference_witness(found, strides)
        if found == 0:
            return None
        status = found
    if 0 in shape:
        return None
    live = [d for d, n in enumerate(shape) if n > 1]
    for d in live:
        if strides[d] == 0:
            x = tuple(1 if e == d else 0 for e in range(len(shape)))
            return (0,) * len(shape), x
    reach = 0
    for d in sorted(live, key=lambda e: abs(strides[e])):
        if abs(strides[d]) <= reach:
            break
        reach += (shape[d] - 1) * abs(strides[d])
    else:
        return None
    if status == -2:  # the compiled search did not run (status -1: it ran out of steps)
        quick = _quick_internal(shape, strides, live)
        if quick is not False:
            return quick
    sign = [1 if s > 0 else -1 for s in strides]
    variables = [_Var(-(shape[d] - 1), shape[d] - 1, abs(strides[d]), _base_lift(d, sign[d])) for d in live]
    found = _solve(variables, 0, nonzero=True)
    if found is None:
        return None
    c = [0] * len(shape)
    for d, value in found:
        c[d] = value
    return _difference_witness(c, strides)


def _difference_witness(c: list[int] | tuple[int, ...], strides: tuple[int, ...]) -> Witness:
    """The colliding pair ``(max(c, 0), max(-c, 0))`` of a nonzero ``c`` with ``sum c*s == 0``,
    in row-major order."""
    x = tuple([v if v > 0 else 0 for v in c])
    y = tuple([0 if v > 0 else -v for v in c])
    assert x != y and sum(map(operator.mul, strides, c)) == 0, c
    return (x, y) if x < y else (y, x)


# -- a quick bounded search first ------------------------------------------------------------
def _quick_pair(a: Layout, b: Layout, witness: bool) -> Witness | None | bool:
    """:func:`overlap_witness` by the fast paths and a bounded depth-first search; ``False``
    when undecided; with ``witness=False``, ``True`` stands for a witness.

    Compiled (``_dfs_native.pair``, one call) when the extension is built and the numbers fit
    in int64, else :func:`_quick_pair_python`; both give the same answers."""
    native = _dfs.compiled()
    if native is not None:
        found = native.pair(a.shape, a.strides, a.offset, b.shape, b.strides, b.offset,
                            _COMPILED_STEPS, witness)
        if found.__class__ is tuple:
            assert _index(a, found[0]) == _index(b, found[1]), (a, b, found)
            return found
        if found != -2:  # else an offset, extent or stride beyond int64: Python integers
            return True if found == 1 else None if found == 0 else False
    return _quick_pair_python(a, b, witness)


def _quick_pair_python(a: Layout, b: Layout, witness: bool) -> Witness | None | bool:
    """:func:`_quick_pair` in Python (any integer sizes).

    Offsets are Python ints. Unknowns ``x_k`` in ``[0, n_k - 1]`` for the dims of extent > 1
    and nonzero stride; ``a``'s enter ``sum c_k x_k == b.offset - a.offset`` with ``+stride``,
    ``b``'s with ``-stride``, and a negative coefficient ``c`` is flipped by ``x -> n - 1 - x``
    (the right-hand side moves by ``-c (n - 1)``). With every ``c_k > 0`` the left side spans
    ``[0, total]``: a right-hand side outside it means disjoint index ranges. The search runs on
    the smaller of the right-hand side and its mirror ``total - rhs`` (every ``x -> n - 1 - x``),
    as NumPy's ``solve_may_share_memory`` does: fewer candidates at the top of the tree."""
    rhs = b.offset - a.offset
    coef: list[int] = []
    bound: list[int] = []
    dims: list[int] = []
    k = 0
    for shape, strides, sign in ((a.shape, a.strides, 1), (b.shape, b.strides, -1)):
        for n, s in zip(shape, strides, strict=True):
            if n > 1 and s:
                c = sign * s
                if c < 0:
                    rhs -= c * (n - 1)
                    c = -c
                    dims.append(~k)
                else:
                    dims.append(k)
                coef.append(c)
                bound.append(n - 1)
            elif n == 0:
                return None
            k += 1
    total = sum(map(operator.mul, coef, bound))
    if rhs < 0 or rhs > total:
        return None
    if not coef or (a.shape, a.strides, a.offset) == (b.shape, b.strides, b.offset):
        return ((0,) * len(a.shape), (0,) * len(b.shape)) if witness else True
    mirror = total - rhs < rhs
    found = _dfs.search_python(coef, bound, total - rhs if mirror else rhs, _QUICK_STEPS)
    if found is None or found is False or not witness:
        return found
    coord = [0] * k
    for d, v, n in zip(dims, found, bound, strict=True):
        if mirror:
            v = n - v
        if d < 0:
            coord[~d] = n - v
        else:
            coord[d] = v
    x, y = tuple(coord[:len(a.shape)]), tuple(coord[len(a.shape):])
    assert _index(a, x) == _index(b, y), (a, b, x, y)
    return x, y


def _index(layout: Layout, coord: Coord) -> int:
    """``layout(*coord)`` without its argument checks (for internal assertions)."""
    return layout.offset + sum(map(operator.mul, coord, layout.strides))


def _quick_internal(shape: tuple[int, ...], strides: tuple[int, ...], live: list[int]
                    ) -> Witness | None | bool:
    """:func:`_internal_witness` by the same bounded search: ``sum |s_d| x_d == sum |s_d| (n_d-1)``
    with ``0 <= x_d <= 2(n_d-1)`` and ``x != (n_d-1)``; then ``c_d = x_d - (n_d-1)``."""
    coef = [abs(strides[d]) for d in live]
    centre = [shape[d] - 1 for d in live]
    target = sum(s * m for s, m in zip(coef, centre, strict=True))
    found = _dfs.search_python(coef, [2 * m for m in centre], target, _QUICK_STEPS, avoid=centre)
    if found is None or found is False:
        return found
    c = [0] * len(shape)
    for d, v, m in zip(live, found, centre, strict=True):
        c[d] = (v - m) if strides[d] > 0 else (m - v)
    return _difference_witness(c, strides)


# -- the solver -----------------------------------------------------------------------------
class _Var:
    """Unknown ``z`` with ``lo <= z <= hi`` and coefficient ``s`` in ``sum z*s == T``;
    ``lift(z)`` gives the values of the original unknowns it stands for."""

    __slots__ = ("lo", "hi", "s", "lift")

    def __init__(self, lo: int, hi: int, s: int, lift: Callable[[int], _Assignment]):
        self.lo, self.hi, self.s, self.lift = lo, hi, s, lift

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"_Var([{self.lo}, {self.hi}] * {self.s})"


def _base_lift(k: int, sign: int = 1) -> Callable[[int], _Assignment]:
    return lambda z: [(k, sign * z)]


def _positive(v: _Var) -> _Var:
    """The same unknown with a positive coefficient (``z -> -z`` for a negative one)."""
    if v.s > 0:
        return v
    return _Var(-v.hi, -v.lo, -v.s, lambda z, lift=v.lift: lift(-z))


class _Settled(Exception):
    """Internal: a reduction settled the problem; ``result`` is the answer."""

    def __init__(self, result: _Assignment | None):
        super().__init__()
        self.result = result


def _solve(variables: list[_Var], target: int, *, nonzero: bool) -> _Assignment | None:
    """Integers ``z`` with ``lo <= z <= hi`` and ``sum z*s == target`` (and ``z != 0`` when
    ``nonzero``, then every range is symmetric and ``target == 0``), lifted to the original
    unknowns; ``None`` when there are none. Unknowns missing from the answer are 0."""
    fixed: _Assignment = []
    try:
        for _ in range(_MAX_ROUNDS):
            before = ([(v.lo, v.hi, v.s) for v in variables], target)
            variables, target = _fold(variables, target, fixed)
            if nonzero:
                _nonzero_proofs(variables)
            else:
                variables = _merge_equal(variables)
            variables, target = _divide_gcd(variables, target)
            variables, target = _congruences(variables, target, nonzero)
            variables = _shrink(variables, target)
            if ([(v.lo, v.hi, v.s) for v in variables], target) == before:
                break
        variables, target = _fold(variables, target, fixed)
        if nonzero:
            _nonzero_proofs(variables)
        found = _decide(variables, target, nonzero)
    except _Settled as settled:
        found = settled.result
    return None if found is None else fixed + found


def _fold(variables: list[_Var], target: int, fixed: _Assignment) -> tuple[list[_Var], int]:
    keep = []
    for v in variables:
        if v.lo > v.hi:
            raise _Settled(None)
        if v.lo == v.hi:
            target -= v.lo * v.s
            fixed.extend(v.lift(v.lo))
        else:
            keep.append(v)
    return keep, target


def _nonzero_proofs(variables: list[_Var]) -> None:
    """Raise :class:`_Settled` when equal coefficients, the sorted nesting test or one pair
    decides ``sum c*s == 0, c != 0`` (ranges symmetric, ``hi >= 1``)."""
    ordered = sorted(variables, key=lambda v: v.s)
    reach = 0
    nested = True
    for v in ordered:
        nested = nested and v.s > reach
        reach += v.hi * v.s
    if nested:
        raise _Settled(None)
    for u, v in itertools.combinations(ordered, 2):
        g = math.gcd(u.s, v.s)
        if v.s // g <= u.hi and u.s // g <= v.hi:
            raise _Settled(u.lift(v.s // g) + v.lift(-(u.s // g)))


def _merge_equal(variables: list[_Var]) -> list[_Var]:
    by_s: dict[int, _Var] = {}
    for v in variables:
        u = by_s.get(v.s)
        by_s[v.s] = v if u is None else _Var(u.lo + v.lo, u.hi + v.hi, v.s, _split_lift(u, v))
    return list(by_s.values())


def _split_lift(u: _Var, v: _Var) -> Callable[[int], _Assignment]:
    def lift(total: int) -> _Assignment:
        first = max(u.lo, total - v.hi)  # smallest share of ``u`` that leaves ``v`` in range
        return u.lift(first) + v.lift(total - first)
    return lift


def _divide_gcd(variables: list[_Var], target: int) -> tuple[list[_Var], int]:
    g = math.gcd(*(v.s for v in variables)) if variables else 0
    if g == 0:
        if target != 0:
            raise _Settled(None)
        return variables, target
    if target % g:
        raise _Settled(None)
    if g == 1:
        return variables, target
    return [_Var(v.lo, v.hi, v.s // g, v.lift) for v in variables], target // g


def _congruences(variables: list[_Var], target: int, nonzero: bool) -> tuple[list[_Var], int]:
    """Pin each unknown to the residue class its equation forces modulo the gcd of the others."""
    variables = list(variables)
    for k in range(len(variables) if len(variables) > 1 else 0):
        v = variables[k]
        g = math.gcd(*(u.s for i, u in enumerate(variables) if i != k))
        h = math.gcd(v.s, g)
        if target % h:
            raise _Settled(None)
        q = g // h
        if q == 1:
            continue
        if nonzero:  # target == 0: z == 0 (mod q); keep the range symmetric
            m = v.hi // q
            variables[k] = _Var(-m, m, v.s * q, lambda w, lift=v.lift, q=q: lift(q * w))
            continue
        z0 = (target // h) * pow(v.s // h, -1, q) % q
        first = v.lo + (z0 - v.lo) % q
        if first > v.hi:
            raise _Settled(None)
        target -= first * v.s
        variables[k] = _Var(0, (v.hi - first) // q, v.s * q,
                            lambda w, lift=v.lift, q=q, first=first: lift(first + q * w))
    return variables, target


def _shrink(variables: list[_Var], target: int) -> list[_Var]:
    """Bound each unknown by what the others can cancel (bound propagation, one sweep)."""
    lo_sum = sum(v.lo * v.s for v in variables)
    hi_sum = sum(v.hi * v.s for v in variables)
    out = []
    for v in variables:
        others_lo, others_hi = lo_sum - v.lo * v.s, hi_sum - v.hi * v.s
        lo = max(v.lo, -((others_hi - target) // v.s))
        hi = min(v.hi, (target - others_lo) // v.s)
        if lo > hi:
            raise _Settled(None)
        lo_sum += (lo - v.lo) * v.s
        hi_sum += (hi - v.hi) * v.s
        out.append(v if (lo, hi) == (v.lo, v.hi) else _Var(lo, hi, v.s, v.lift))
    return out


def _decide(variables: list[_Var], target: int, nonzero: bool) -> _Assignment | None:
    """Exact answer for reduced unknowns (pair proofs already applied when ``nonzero``)."""
    if nonzero and len(variables) <= 2:
        return None  # one unknown: c*s != 0; two: the pair test was exact
    if not variables:
        return [] if target == 0 else None
    if len(variables) == 1:
        (v,) = variables
        z, r = divmod(target, v.s)
        return v.lift(z) if r == 0 and v.lo <= z <= v.hi else None
    if len(variables) == 2:
        a, b = variables
        ok, za, zb = _pair_hits(np.array([target], dtype=object), a, b)
        return a.lift(int(za[0])) + b.lift(int(zb[0])) if ok[0] else None
    return _search(variables, target, nonzero)


def _pair_hits(t: np.ndarray, a: _Var, b: _Var) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each target ``t``: is there ``za*a.s + zb*b.s == t`` in range, and one such (za, zb).

    All solutions are ``za = za0 + k*b.s/g``, ``zb = zb0 - k*a.s/g``; the ranges make ``k`` an
    interval. ``t`` is int64 (when every product fits) or object (Python ints)."""
    g = math.gcd(a.s, b.s)
    sa, sb = a.s // g, b.s // g
    if t.dtype != object and max(sa, sb) ** 2 >= _INT64_SAFE:
        t = t.astype(object)
    ok = t % g == 0
    tt = t // g
    za0 = (tt % sb) * (pow(sa, -1, sb) if sb > 1 else 0) % sb
    zb0 = (tt - sa * za0) // sb
    k_lo = np.maximum(-((za0 - a.lo) // sb), -((b.hi - zb0) // sa))
    k_hi = np.minimum((a.hi - za0) // sb, (zb0 - b.lo) // sa)
    ok &= k_lo <= k_hi
    return ok, za0 + k_lo * sb, zb0 - k_lo * sa


# -- meet-in-the-middle search ----------------------------------------------------------------
def _search(variables: list[_Var], target: int, nonzero: bool) -> _Assignment | None:
    """Exact search over >= 3 reduced unknowns: two sides, set of one vs set or pair of other.

    When that search would be large (``cost > _LATTICE_ABOVE``), the compiled depth-first
    search first gets ``_REDUCED_STEPS`` steps on the reduced equation (whose ranges the
    reductions have narrowed: often a far smaller tree than the first stage's)."""
    cost, side, other = _plan(variables)
    if cost > _LATTICE_ABOVE and _REDUCED_STEPS:
        found = _reduced_search(variables, target, nonzero)
        if found is not False:
            return found
    magnitude = abs(target) + sum(max(-v.lo, v.hi) * v.s for v in variables)
    if cost > _LATTICE_ABOVE and len(variables) <= _LATTICE_MAX_UNKNOWNS and magnitude < _FLOAT_SAFE:
        z = _lattice.solve([v.s for v in variables], [v.lo for v in variables],
                           [v.hi for v in variables], target, nonzero)
        return None if z is None else [p for v, zk in zip(variables, z, strict=True) for p in v.lift(zk)]
    dtype = np.int64 if magnitude < _INT64_SAFE else object
    if nonzero:  # a collision inside one side, the other side being 0
        for part in (side, other):
            found = _solve(part, 0, nonzero=True)
            if found is not None:
                return found
    o_lo = sum(v.lo * v.s for v in other)
    o_hi = sum(v.hi * v.s for v in other)
    o_gcd = math.gcd(*(v.s for v in other))
    first = _SideSet(side, target - o_hi, target - o_lo, o_gcd, target, dtype)
    vals = first.vals
    if len(other) == 2:
        ok, za, zb = _pair_hits(target - vals, *other)
        if nonzero:
            ok &= vals != 0
        hits = np.flatnonzero(ok)
        if not len(hits):
            return None
        i = int(hits[0])
        return first.lift(int(vals[i])) + other[0].lift(int(za[i])) + other[1].lift(int(zb[i]))
    if not len(vals):
        return None
    s_gcd = math.gcd(*(v.s for v in side))
    second = _SideSet(other, target - vals[-1], target - vals[0], s_gcd, target, dtype)
    wanted = target - second.vals[::-1]  # ascending, so the search below walks forward
    pos = np.minimum(np.searchsorted(vals, wanted), len(vals) - 1)
    ok = vals[pos] == wanted
    if nonzero:
        ok &= wanted != 0
    hits = np.flatnonzero(ok)
    if not len(hits):
        return None
    value = int(wanted[hits[0]])
    return first.lift(value) + second.lift(target - value)


def _reduced_search(variables: list[_Var], target: int, nonzero: bool) -> _Assignment | None | bool:
    """The compiled depth-first search on ``sum z*s == target``, ``lo <= z <= hi`` (``z != 0``
    when ``nonzero``), as ``x = z - lo`` in ``[0, hi - lo]`` (``z = 0`` is ``x = -lo``, the
    solution to avoid); ``False`` when it is not compiled, does not fit in int64, or runs out
    of steps."""
    if _dfs.compiled() is None:
        return False
    found = _dfs.search([v.s for v in variables], [v.hi - v.lo for v in variables],
                        target - sum(v.s * v.lo for v in variables), 0,
                        [-v.lo for v in variables] if nonzero else None, compiled_budget=_REDUCED_STEPS)
    if found is None or found is False:
        return found
    return [p for v, x in zip(variables, found, strict=True) for p in v.lift(v.lo + x)]


def _plan(variables: list[_Var]) -> tuple[float, list[_Var], list[_Var]]:
    """Choose ``(cost, side, other)``: ``side`` is enumerated as a set, ``other`` is either a
    pair tested in closed form or a second set; minimises ``cost``, the estimated number of
    candidates generated."""
    r = len(variables)
    by_width = sorted(range(r), key=lambda k: variables[k].lo - variables[k].hi)
    by_stride = sorted(range(r), key=lambda k: -variables[k].s)
    pairs = set(itertools.combinations(sorted(by_width[:6]), 2))
    pairs.add(tuple(sorted(by_stride[-2:])))
    candidates = [[k for k in range(r) if k not in pair] for pair in pairs]
    candidates += [by_stride[:k] for k in range(1, r - 1)]
    greedy: tuple[list[int], list[int]] = ([], [])
    logs = [0.0, 0.0]
    for k in by_width:
        side = 0 if logs[0] <= logs[1] else 1
        greedy[side].append(k)
        logs[side] += math.log(variables[k].hi - variables[k].lo + 1)
    candidates.append(greedy[0])
    best: tuple[float, list[int], list[int]] | None = None
    for chosen in candidates:
        side = [variables[k] for k in chosen]
        other = [variables[k] for k in range(r) if k not in chosen]
        if not side or not other:
            continue
        cost = _estimate(side, other)
        if len(other) > 2:
            cost += _estimate(other, side)
        if best is None or cost < best[0]:
            best = (cost, side, other)
    assert best is not None
    return best


def _estimate(side: list[_Var], other: list[_Var]) -> float:
    """Approximate number of candidates generated while building ``side``'s value set."""
    window = sum((v.hi - v.lo) * v.s for v in other)
    modulus = math.gcd(*(v.s for v in other))
    order = sorted(side, key=lambda v: -v.s)
    suffix_window, suffix_gcd = [window], [modulus]
    for v in reversed(order[1:]):
        suffix_window.append(suffix_window[-1] + (v.hi - v.lo) * v.s)
        suffix_gcd.append(math.gcd(suffix_gcd[-1], v.s))
    cost, size = 0.0, 1.0
    for v, width, m in zip(order, reversed(suffix_window), reversed(suffix_gcd), strict=True):
        generated = size * (v.hi - v.lo + 1)
        cost += generated
        size = min(generated, float(width // max(m, 1) + 1))
    return cost


class _SideSet:
    """Values ``sum z*s`` reachable by ``variables`` that lie in ``[lo, hi]`` and are
    ``== residue (mod modulus)``: the sorted, unique array ``vals``.

    Built one unknown at a time, largest coefficient first; after adding an unknown a
    partial sum is kept only when the remaining unknowns can still bring it into
    ``[lo, hi]`` and into the residue class (modulo the gcd of ``modulus`` and their
    coefficients). The partial sets are kept to recover, by search, one way to reach a
    value (:meth:`lift`)."""

    def __init__(self, variables: list[_Var], lo: int, hi: int, modulus: int, residue: int,
                 dtype: Any):
        self.order = sorted(variables, key=lambda v: -v.s)
        self.stages = [np.zeros(1, dtype)]
        for k, v in enumerate(self.order):
            rest = self.order[k + 1:]
            lo_k = lo - sum(u.hi * u.s for u in rest)
            hi_k = hi - sum(u.lo * u.s for u in rest)
            m = math.gcd(modulus, *(u.s for u in rest))
            self.stages.append(_extend(self.stages[-1], v, lo_k, hi_k, m, residue))
            if not len(self.stages[-1]):
                break
        self.vals = self.stages[-1]

    def lift(self, value: int) -> _Assignment:
        """The unknowns' values that reach ``value`` (an entry of ``vals``)."""
        out: _Assignment = []
        for k in range(len(self.order) - 1, -1, -1):
            v, prev = self.order[k], self.stages[k]
            z_lo = max(v.lo, -((prev[-1] - value) // v.s))
            z_hi = min(v.hi, (value - prev[0]) // v.s)
            zs = np.arange(z_lo, z_hi + 1, dtype=prev.dtype)
            need = value - zs * v.s
            pos = np.minimum(np.searchsorted(prev, need), len(prev) - 1)
            z = int(zs[np.flatnonzero(prev[pos] == need)[0]])
            out += v.lift(z)
            value -= z * v.s
        assert value == 0
        return out


def _extend(vals: np.ndarray, v: _Var, lo: int, hi: int, m: int, residue: int) -> np.ndarray:
    """Sorted ``unique(vals + z*v.s)`` over ``v.lo <= z <= v.hi``, restricted to ``[lo, hi]``
    and to ``residue (mod m)``.

    The candidates form sorted runs (one per ``z`` when there are fewer ``z`` than values,
    else one per value), each found by interval arithmetic without materialising the
    pruned candidates; they are produced in chunks of about ``_CHUNK`` and merged with a
    stable (run-detecting) sort."""
    zs = np.arange(v.lo, v.hi + 1, dtype=vals.dtype)
    if len(zs) <= len(vals):  # run per z: the slice of vals that lands in [lo, hi]
        shift = zs * v.s
        first = np.searchsorted(vals, lo - shift, "left")
        counts = np.maximum(np.searchsorted(vals, hi - shift, "right") - first, 0)

        def run(sel: slice, n: np.ndarray, step: np.ndarray) -> np.ndarray:
            return vals[np.repeat(first[sel], n) + step] + np.repeat(shift[sel], n)
    else:  # run per value: the interval of z that lands in [lo, hi]
        z_lo = np.maximum(-((vals - lo) // v.s), v.lo)
        counts = np.maximum(np.minimum((hi - vals) // v.s, v.hi) - z_lo + 1, 0)

        def run(sel: slice, n: np.ndarray, step: np.ndarray) -> np.ndarray:
            z = np.repeat(z_lo[sel], n) + (step.astype(object) if vals.dtype == object else step)
            return np.repeat(vals[sel], n) + z * v.s
    counts = counts.astype(np.int64)
    ends = np.cumsum(counts)
    pieces = []
    start = 0
    while start < len(counts):
        base = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, base + _CHUNK, "right")), start + 1)
        n = counts[start:stop]
        step = np.arange(int(ends[stop - 1]) - base) - np.repeat(np.cumsum(n) - n, n)
        cand = run(slice(start, stop), n, step)
        if m > 1:
            cand = cand[(cand - residue) % m == 0]
        pieces.append(_sorted_unique(cand))
        start = stop
    return _sorted_unique(np.concatenate(pieces)) if len(pieces) > 1 else pieces[0]


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    a = np.sort(a, kind="stable")  # timsort: linear on a few sorted runs
    if len(a) > 1:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a

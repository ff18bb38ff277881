"""Overlap analysis of layouts: does a layout address one storage slot twice; do two share one?

Pure Python and NumPy, no ``jax`` import. Every answer is exact (never "too hard" unless the
caller bounds the work with ``max_work``) and comes with a witness: a pair of coordinates
that address the same storage index. The search's memory is capped (:data:`MEMORY_CAP`,
256 MiB) whatever the layouts.

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
   fast paths (empty, disjoint index ranges, zero strides, nested strides; for
   :func:`has_internal_overlap`, which names no witness, also more elements than indices in
   the layout's range, the pigeonhole principle). Compiled (the C
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

Memory: the sets of the meet-in-the-middle search, and the temporaries that build and match
them, are counted before they are made and kept under ``MEMORY_CAP`` bytes (256 MiB). Past it
the search is repeated over narrower ranges of the first side's values (8, 64, then 512
consecutive ranges of ``[lo, hi]``, one at a time: the sets of one range are a fraction of
the whole, and every solution lies in one range), as long as narrowing shrinks the set that
overflowed; then the depth-first search decides, without a step budget, on the reduced
equation. It holds a few integers per unknown whatever its steps (the problem is NP-hard, so
its time can be very long on adversarial layouts: dozens of dims of similar strides), and
polls for signals (Ctrl-C interrupts it). A ``MemoryError`` (a process with less memory than
the cap) becomes :class:`~functional_strides.TooHardError` naming the cap.

Work (``max_work``, NumPy's ``shares_memory`` meaning): ``-1`` (the default; ``None`` too)
decides exactly whatever it costs; ``0`` answers from the bounds only (for a pair, disjoint
index ranges or an empty layout; for one layout, an empty one, a stride 0, nested strides,
or more elements than indices in its range), as NumPy's ``max_work=0``; ``n > 0`` allows about
``n`` units of work: a step of a depth-first search, a candidate of the enumeration, a node
of the lattice branching (the reductions and closed forms cost O(rank^2) and are not
counted, as NumPy does not count its simplification). When the work runs out, or would
before the next stage completes, :class:`~functional_strides.TooHardError` is raised, as
NumPy raises ``TooHardError``; an answer given is always exact.

Cost: the reductions take O(rank^2) integer operations per round (at most 64 rounds; they
only save work). The search costs about the size of the larger side set; a set is bounded by
the product of its ranges (``prod(2 n_d - 1)`` for one layout) and by the width of its
window divided by its modulus, so a balanced split costs about ``sqrt(prod_d (2 n_d - 1))``
set entries, at most ``1.5^12 * 2^12 ~ 5e5`` for a layout of 2^24 elements (rank 24, extents
2), and the ranges that reach/congruence leave are usually much smaller (rank 3 with extents
256: one set of 511 values). The plan (which two variables go in closed form, where to
split) minimises an estimate of the candidates generated. Two layouts of ``N`` elements each
whose strides share no structure cost up to ``N`` entries per side (the sorted merge of
their index sets). The problem is NP-hard in general (subset sum), so layouts far beyond
2^24 elements with many unrelated strides can be slow (bound the work with ``max_work``),
but every answer stays exact and the memory stays under the cap. The lattice solver's cost
is instead driven by how many values its branching coefficients take, which for structured
strides is a handful even when every set is huge.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import LayoutError, LayoutTypeError, TooHardError
from . import dfs as _dfs
from . import lattice as _lattice

if TYPE_CHECKING:  # the queries read any record with shape, strides and offset; layout.py imports this module
    from ..layout import Layout

__all__ = [
    "MEMORY_CAP",
    "check_max_work",
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

#: Bytes the meet-in-the-middle search may hold at once: its sets and the temporaries that
#: build and match them (256 MiB). Past it the query falls back to the depth-first search,
#: whose memory is a few integers per unknown whatever its steps.
MEMORY_CAP = 1 << 28
# Arrays alive at once, in units of the array they scale with (counted against MEMORY_CAP):
_RUN_TEMPORARIES = 6  # _extend: the z values, the runs' starts, counts, ends and shifts
_CHUNK_TEMPORARIES = 8  # ... a chunk of candidates: the steps, repeats, candidates, mask, uniques
_MERGE_TEMPORARIES = 4  # ... the pieces, their concatenation, its sorted copy, the mask
_PAIR_TEMPORARIES = 12  # _meet: the closed form of two unknowns on every value of a set
_MATCH_TEMPORARIES = 4  # ... the wanted values, positions, matches, hits
_OBJECT_ITEMSIZE = 48  # bytes per Python integer in an object array (pointer and int object)
_NO_LIMIT = (1 << 63) - 1  # the step budget of an exact search (it stops by deciding)
_LIFT_BLOCK = 1 << 16  # candidates examined at once while recovering a solution from the sets
_SLICE_GROWTH = 8  # past the cap, the meet-in-the-middle search retries with 8 times more ranges
_MAX_SLICES = 512  # ... up to this many, before the depth-first search decides


class _OutOfWork(Exception):
    """Internal: the query's ``max_work`` is spent."""


class _OverCap(Exception):
    """Internal: an array of the meet-in-the-middle search would pass :data:`MEMORY_CAP`;
    ``sliceable``: a narrower range of the first side's values would shrink it."""

    sliceable = True


class _Work:
    """The budget of one query: ``max_work`` units of work (-1: unlimited) and the bytes its
    meet-in-the-middle sets hold (``held``, against :data:`MEMORY_CAP`); ``capped`` records
    that the cap sent the query to the depth-first search."""

    __slots__ = ("max_work", "left", "held", "capped")

    def __init__(self, max_work: int):
        self.max_work = max_work
        self.left = None if max_work < 0 else max_work
        self.held = 0
        self.capped = False

    def budget(self, steps: int | None) -> int:
        """Steps for one depth-first search: ``steps`` (``None``: no limit of its own), at most
        what is left."""
        if self.left is None:
            return _NO_LIMIT if steps is None else steps
        return self.left if steps is None else min(steps, self.left)

    def affords(self, cost: float) -> bool:
        return self.left is None or cost <= self.left

    def spend(self, units: int) -> None:
        if self.left is not None:
            self.left -= units
            if self.left < 0:
                raise _OutOfWork

    def check(self, nbytes: int) -> None:
        """Raise :class:`_OverCap` unless ``nbytes`` more fit beside what is held."""
        if self.held + nbytes > MEMORY_CAP:
            raise _OverCap


def _itemsize(dtype: Any) -> int:
    return _OBJECT_ITEMSIZE if np.dtype(dtype) == np.dtype(object) else np.dtype(dtype).itemsize


def _nbytes(a: np.ndarray) -> int:
    return len(a) * _itemsize(a.dtype)


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
def internal_overlap_witness(layout: Layout, *, max_work: int | None = -1) -> Witness | None:
    """Two distinct coordinates of ``layout`` that address one storage index, or ``None``.

    Exact for every layout (any rank, extents >= 0, strides of any sign); the offset plays no part
    (it may be traced). Fast paths: empty -> ``None``; a dim of extent > 1 with stride 0 ->
    that dim's coordinates 0 and 1; strides that nest after sorting -> ``None``. The rest is
    solved as described in the module docstring; exact results are cached per (shape, strides).
    The search's arrays stay under :data:`MEMORY_CAP` (256 MiB) whatever the layout: past it,
    a depth-first search whose memory does not grow decides, which may take long on
    adversarial layouts (many dims of similar strides) unless ``max_work`` bounds the work.

    Args:
      layout: a :class:`Layout`; strides and offset in elements.
      max_work: the work allowed, as in ``numpy.shares_memory``: ``-1`` (default) or ``None``:
        exact, whatever it costs; ``0``: the bounds only (the fast paths above); ``n > 0``:
        at most about ``n`` units of work (a unit: a step of a depth-first search, a
        candidate of the enumeration, a node of the lattice branching).
    Returns:
      ``None`` when every element has its own storage index, else ``(x, y)``: two tuples of
      ``layout.ndim`` ints, ``x != y``, ``0 <= x[d], y[d] < shape[d]``, ``x`` before ``y``
      in row-major order, and ``layout(*x) == layout(*y)``.
    Raises:
      TooHardError: ``max_work`` did not suffice to decide (never with the default), or the
        process could not allocate the memory the search keeps under its cap.
      LayoutTypeError: ``max_work`` is not an integer (or ``None``).
      LayoutError: ``max_work`` is below -1.
    Example:
      >>> internal_overlap_witness(fs.Layout((4096, 4096), (4095, 1)))
      ((0, 4095), (1, 0))
      >>> internal_overlap_witness(fs.Layout((4096, 4096), (4097, 4095))) is None
      True

    Semantics: ``torch._debug_has_internal_overlap`` (``MemOverlap::Yes/No``) without its
    ``TooHard`` answer, which it gives for every overlapping layout without a zero stride;
    ``max_work`` as in ``numpy.shares_memory`` (``TooHardError`` when it does not suffice)."""
    if max_work != -1:
        return _internal_limited("internal_overlap_witness", layout, max_work, witness=True)
    first = _internal_first(layout)
    if first.__class__ is tuple:
        return _difference_witness(first, layout.strides)
    return None if first == 0 else _exact_internal("internal_overlap_witness", layout)


def has_internal_overlap(layout: Layout, *, max_work: int | None = -1) -> bool:
    """True when two elements of ``layout`` address the same storage index (exact).

    Args:
      layout: a :class:`Layout` of any rank; strides in elements; the offset plays no part.
      max_work: the work allowed, as in ``numpy.shares_memory``: ``-1`` (default) or ``None``:
        exact; ``0``: the bounds only (empty, a stride 0, nested strides, or more elements
        than the index range holds); ``n > 0``: at most about ``n`` units of work (see
        :func:`internal_overlap_witness`).
    Returns:
      A Python bool; ``False`` for empty layouts and layouts of one element.
    Raises:
      TooHardError: ``max_work`` did not suffice to decide (never with the default), or the
        process could not allocate the memory the search keeps under its cap
        (:data:`MEMORY_CAP`, 256 MiB).
      LayoutTypeError: ``max_work`` is not an integer (or ``None``).
      LayoutError: ``max_work`` is below -1.
    Example:
      >>> has_internal_overlap(fs.Layout((5, 4), (2, 1))), has_internal_overlap(fs.Layout((5, 2), (2, 1)))
      (True, False)
      >>> has_internal_overlap(fs.Layout((3, 3, 3), (7, 5, 3)), max_work=0)
      Traceback (most recent call last):
      ...
      functional_strides.TooHardError: has_internal_overlap: max_work=0 checks the bounds only, ...

    Semantics: ``torch._debug_has_internal_overlap(t) == 1``, decided for every layout; see
    :func:`internal_overlap_witness` for a colliding pair; ``max_work`` as in
    ``numpy.shares_memory``."""
    if max_work != -1:
        return _internal_limited("has_internal_overlap", layout, max_work, witness=False) is not None
    first = _internal_first(layout)
    if first.__class__ is tuple:
        return True
    if first == 0:
        return False
    if _more_elements_than_slots(layout.shape, layout.strides):
        return True
    return _exact_internal("has_internal_overlap", layout) is not None


def _internal_first(layout: Layout) -> tuple[int, ...] | int:
    """One compiled call with ``_FIRST_STEPS`` steps, before the cache of
    :func:`_internal_witness`: a nonzero ``c`` with ``sum c*s == 0`` (``|c_d| < n_d``), 0 when
    there is none, or -1 (undecided), -2 (no extension, or numbers beyond int64)."""
    if _dfs.native is None:
        return -2
    return _dfs.native.internal(layout.shape, layout.strides, _FIRST_STEPS)


def _exact_internal(op: str, layout: Layout) -> Witness | None:
    """The cached exact answer; a ``MemoryError`` (the process has less memory than the
    search's cap) becomes the library's error."""
    shape, strides = tuple(layout.shape), tuple(layout.strides)
    try:
        return _internal_witness(shape, strides)
    except MemoryError:
        raise _too_hard(op, _internal_subject(shape, strides), _Work(-1), memory=True) from None


def _internal_limited(op: str, layout: Layout, max_work: Any, witness: bool) -> Witness | None | bool:
    """:func:`internal_overlap_witness` (``witness``) or :func:`has_internal_overlap` (then
    ``True`` may stand for a witness) within ``max_work``."""
    max_work = check_max_work(op, max_work)
    if max_work == -1:
        return (internal_overlap_witness if witness else has_internal_overlap)(layout)
    shape, strides = tuple(layout.shape), tuple(layout.strides)
    proof = _bounds_proof(shape, strides)
    if proof is not False:
        return proof
    if not witness and _more_elements_than_slots(shape, strides):
        return True
    work = _Work(max_work)
    try:
        if max_work == 0:
            raise _OutOfWork
        return _internal_search(shape, strides, work)
    except _OutOfWork:
        raise _too_hard(op, _internal_subject(shape, strides), work) from None
    except MemoryError:
        raise _too_hard(op, _internal_subject(shape, strides), work, memory=True) from None


def _bounds_proof(shape: tuple[int, ...], strides: tuple[int, ...]) -> Witness | None | bool:
    """The O(rank) answers: empty -> ``None``; a stride 0 on a dim of extent > 1 -> that dim's
    coordinates 0 and 1; strides that nest after sorting by size -> ``None``; else ``False``."""
    if 0 in shape:
        return None
    live = [d for d, n in enumerate(shape) if n > 1]
    for d in live:
        if strides[d] == 0:
            return (0,) * len(shape), tuple(1 if e == d else 0 for e in range(len(shape)))
    reach = 0
    for d in sorted(live, key=lambda e: abs(strides[e])):
        if abs(strides[d]) <= reach:
            return False
        reach += (shape[d] - 1) * abs(strides[d])
    return None


def _more_elements_than_slots(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Pigeonhole: more elements than storage indices between the lowest and the highest
    addressed, so two of them share one (no witness named)."""
    numel = math.prod(shape)
    return numel > 1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True)) if numel else False


def check_max_work(op: str, max_work: Any) -> int:
    """``max_work`` as an int: -1 (``None`` too: exact), 0 (bounds only) or a positive budget.

    Raises:
      LayoutTypeError: not an integer (a bool, a float, a string).
      LayoutError: below -1."""
    if max_work is None:
        return -1
    if isinstance(max_work, bool):
        raise LayoutTypeError(f"{op}: max_work must be an integer or None, not a bool (got max_work="
                              f"{max_work!r}). Pass -1 (exact), 0 (bounds only) or a positive budget.")
    try:
        max_work = operator.index(max_work)
    except TypeError:
        raise LayoutTypeError(f"{op}: max_work must be an integer or None (got max_work={max_work!r} of type "
                              f"{type(max_work).__name__}). Pass -1 (exact), 0 (bounds only) or a positive "
                              "budget.") from None
    if max_work < -1:
        raise LayoutError(f"{op}: max_work must be -1 (exact), 0 (bounds only) or a positive budget (got "
                          f"max_work={max_work}).")
    return max_work


def _notation(shape: tuple[int, ...], strides: tuple[int, ...], offset: Any = None) -> str:
    """``(2,3):(3,1)+0``, as ``Layout.__str__`` prints (no offset: ``(2,3):(3,1)``)."""
    def tup(t: tuple[int, ...]) -> str:
        return "(" + ",".join(map(str, t)) + ("," if len(t) == 1 else "") + ")"
    return f"{tup(tuple(shape))}:{tup(tuple(strides))}" + ("" if offset is None else f"{offset:+d}")


def _internal_subject(shape: tuple[int, ...], strides: tuple[int, ...]) -> str:
    return f"whether the layout {_notation(shape, strides)} addresses a storage index twice"


def _pair_subject(a: Layout, b: Layout) -> str:
    return (f"whether the layouts {_notation(a.shape, a.strides, a.offset)} and "
            f"{_notation(b.shape, b.strides, b.offset)} share a storage index")


def _too_hard(op: str, subject: str, work: _Work, *, memory: bool = False) -> TooHardError:
    """The library's error for a query left undecided: the work ran out, or memory did."""
    cap = f"{MEMORY_CAP >> 20} MiB"
    if memory:
        return TooHardError(
            f"{op}: the exact search ran out of memory (MemoryError) deciding {subject}: its arrays "
            f"stay under the memory cap of {cap} (MEMORY_CAP), but the process could not allocate "
            "that much. Free memory, or pass max_work=n to bound the work (the answer is then exact "
            "or this error is raised).")
    if work.max_work == 0:
        return TooHardError(
            f"{op}: max_work=0 checks the bounds only, which do not decide {subject}. Pass max_work=-1 "
            "(the default: exact) or a positive budget, as with numpy.shares_memory.")
    why = (f"; the meet-in-the-middle search would pass the memory cap of {cap}, so the bounded-memory "
           "depth-first search ran" if work.capped else "")
    return TooHardError(
        f"{op}: max_work={work.max_work} units of work did not suffice to decide {subject}{why}. Pass a "
        "larger max_work, or max_work=-1 (the default) for the exact answer, which may take long (the "
        f"problem is NP-hard) while its memory stays under the cap of {cap}.")


class _Placed(NamedTuple):
    """A layout's shape, strides and a concrete offset (what the pair queries read)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int


def _concrete_offset(name: str, lay: Layout, op: str = "overlap_witness") -> Layout:
    """``lay`` with its offset as a Python int (any integer scalar with a known value: a
    NumPy or concrete JAX scalar converts); a traced offset, or one offset per item of a
    batched array, is refused."""
    if type(lay.offset) is int:
        return lay
    try:
        offset = operator.index(lay.offset)
    except Exception:  # a tracer, or an array of offsets
        raise LayoutError(
            f"{op}: the offset of {name} (layout {lay}) is not one known integer (traced, "
            "or one per item); overlap analysis needs concrete offsets. Compare layouts outside jit."
        ) from None
    return _Placed(lay.shape, lay.strides, offset)  # type: ignore[return-value]


def overlap_witness(a: Layout, b: Layout, *, max_work: int | None = -1) -> Witness | None:
    """A coordinate of ``a`` and one of ``b`` that address one storage index, or ``None``.

    Both layouts index the same storage; offsets matter and must be Python ints. Exact for
    every pair of layouts. Fast paths: either empty or disjoint index ranges
    ``[offset, offset + span]`` -> ``None``; equal layouts -> the first element. The search's
    arrays stay under :data:`MEMORY_CAP` (256 MiB); past it a depth-first search whose memory
    does not grow decides (slowly, on adversarial layouts, unless ``max_work`` bounds it).

    Args:
      a, b: :class:`Layout` records (any ranks); strides and offsets in elements.
      max_work: the work allowed, as in ``numpy.shares_memory``: ``-1`` (default) or ``None``:
        exact; ``0``: the bounds only (disjoint index ranges or an empty layout answer
        ``None``, anything else raises); ``n > 0``: at most about ``n`` units of work (see
        :func:`internal_overlap_witness`).
    Returns:
      ``None`` when no index is shared, else ``(x, y)`` with ``x`` a coordinate of ``a``,
      ``y`` one of ``b`` and ``a(*x) == b(*y)``.
    Raises:
      LayoutError: an offset is traced (not a Python int); pass concrete offsets. Or
        ``max_work`` is below -1.
      LayoutTypeError: ``max_work`` is not an integer (or ``None``).
      TooHardError: ``max_work`` did not suffice to decide (never with the default), or the
        process could not allocate the memory the search keeps under its cap.
    Example:
      >>> a = fs.Layout((4, 2), (8, 1), 0)                # x[:, 0:2] of a (4, 8) array
      >>> overlap_witness(a, fs.Layout((4, 2), (8, 1), 2)) is None    # x[:, 2:4]
      True
      >>> overlap_witness(a, fs.Layout((3,), (5,), 1))    # indices 1, 6, 11
      ((0, 1), (0,))

    Semantics: ``numpy.shares_memory(a, b, max_work)`` for two views of one buffer (default
    exact, as ``max_work=None``; ``TooHardError`` when the work does not suffice); PyTorch's
    ``get_overlap_status`` answers ``TooHard`` for most such pairs."""
    if max_work != -1:
        return _pair_limited("overlap_witness", a, b, max_work, witness=True)
    a, b = _concrete_offset("a", a), _concrete_offset("b", b)
    quick = _quick_pair(a, b, witness=True)
    return _exact_pair("overlap_witness", a, b) if quick is False else quick


def overlaps(a: Layout, b: Layout, *, max_work: int | None = -1) -> bool:
    """True when layouts ``a`` and ``b`` over one storage share a storage index (exact).

    Args:
      a, b: :class:`Layout` records of any ranks over the same storage; strides and
        offsets in elements, offsets Python ints.
      max_work: the work allowed, as in ``numpy.shares_memory``: ``-1`` (default) or ``None``:
        exact; ``0``: the bounds only; ``n > 0``: at most about ``n`` units of work (see
        :func:`overlap_witness`). The search's memory stays under :data:`MEMORY_CAP`
        (256 MiB) whatever ``max_work``.
    Returns:
      A Python bool; ``False`` when either layout is empty.
    Raises:
      LayoutError: an offset is traced, or ``max_work`` is below -1.
      LayoutTypeError: ``max_work`` is not an integer (or ``None``).
      TooHardError: ``max_work`` did not suffice to decide (never with the default), or the
        process could not allocate the memory the search keeps under its cap.
    Example:
      >>> window = fs.Layout((4,), (1,), 0)
      >>> overlaps(window, fs.Layout((4,), (1,), 3)), overlaps(window, fs.Layout((4,), (1,), 4))
      (True, False)
      >>> overlaps(window, fs.Layout((4,), (1,), 4), max_work=0)   # disjoint index ranges
      False

    Semantics: ``numpy.shares_memory(a, b, max_work)``; see :func:`overlap_witness` for the
    shared pair."""
    if max_work != -1:
        return _pair_limited("overlaps", a, b, max_work, witness=False) is not None
    if type(a.offset) is not int or type(b.offset) is not int:
        a, b = _concrete_offset("a", a, "overlaps"), _concrete_offset("b", b, "overlaps")
    quick = _quick_pair(a, b, witness=False)
    if quick is False:
        return _exact_pair("overlaps", a, b) is not None
    return quick is not None


def _exact_pair(op: str, a: Layout, b: Layout) -> Witness | None:
    try:
        return _solved_pair(a, b, _Work(-1))
    except MemoryError:
        raise _too_hard(op, _pair_subject(a, b), _Work(-1), memory=True) from None


def _pair_limited(op: str, a: Layout, b: Layout, max_work: Any, witness: bool) -> Witness | None | bool:
    """:func:`overlap_witness` (``witness``) or :func:`overlaps` (then ``True`` may stand for a
    witness) within ``max_work``: NumPy's rules (0: disjoint index ranges, else too hard)."""
    max_work = check_max_work(op, max_work)
    if max_work == -1:
        return (overlap_witness if witness else overlaps)(a, b)
    a, b = _concrete_offset("a", a, op), _concrete_offset("b", b, op)
    work = _Work(max_work)
    try:
        if max_work == 0:
            if _disjoint_ranges(a, b):
                return None
            raise _OutOfWork
        quick = _quick_pair(a, b, witness=witness, work=work)
        return _solved_pair(a, b, work) if quick is False else quick
    except _OutOfWork:
        raise _too_hard(op, _pair_subject(a, b), work) from None
    except MemoryError:
        raise _too_hard(op, _pair_subject(a, b), work, memory=True) from None


def _disjoint_ranges(a: Layout, b: Layout) -> bool:
    """Either layout empty, or their index ranges ``[lowest, highest]`` apart (NumPy's bounds
    check, ``max_work=0``)."""
    ranges = []
    for lay in (a, b):
        if 0 in lay.shape:
            return True
        low = lay.offset + sum((n - 1) * s for n, s in zip(lay.shape, lay.strides, strict=True) if s < 0)
        high = lay.offset + sum((n - 1) * s for n, s in zip(lay.shape, lay.strides, strict=True) if s > 0)
        ranges.append((low, high))
    (lo_a, hi_a), (lo_b, hi_b) = ranges
    return hi_a < lo_b or hi_b < lo_a


def _solved_pair(a: Layout, b: Layout, work: _Work) -> Witness | None:
    """:func:`overlap_witness` by the exact stages (reductions, searches, lattice), for a pair
    the bounded search left undecided."""
    variables = [_Var(0, n - 1, s, _base_lift(d))
                 for d, (n, s) in enumerate(zip(a.shape, a.strides, strict=True))]
    variables += [_Var(-(n - 1), 0, s, _base_lift(a.ndim + e, -1))  # y -> -y: positive ranges
                  for e, (n, s) in enumerate(zip(b.shape, b.strides, strict=True))]
    found = _solve([_positive(v) for v in variables if v.s != 0 and v.lo != v.hi],
                   b.offset - a.offset, nonzero=False, work=work)
    if found is None:
        return None
    coord = [0] * (len(a.shape) + len(b.shape))
    for k, value in found:
        coord[k] = value
    x, y = tuple(coord[:len(a.shape)]), tuple(coord[len(a.shape):])
    assert _index(a, x) == _index(b, y), (a, b, x, y)
    return x, y


@functools.lru_cache(maxsize=4096)
def _internal_witness(shape: tuple[int, ...], strides: tuple[int, ...]) -> Witness | None:
    """:func:`internal_overlap_witness` on plain tuples (the cache key), exact; strides may
    be negative."""
    return _internal_search(shape, strides, _Work(-1))


def _internal_search(shape: tuple[int, ...], strides: tuple[int, ...], work: _Work) -> Witness | None:
    """:func:`_internal_witness` within ``work``.

    The fast paths and the bounded search run compiled (``_dfs_native.internal``, one call)
    when the extension is built and the numbers fit in int64, else in Python below."""
    status = -2
    if _dfs.native is not None:
        steps = work.budget(_COMPILED_STEPS)
        found = _dfs.native.internal(shape, strides, steps)
        if found.__class__ is tuple:
            return _difference_witness(found, strides)
        if found == 0:
            return None
        if found == -1:
            work.spend(steps)
        status = found
    proof = _bounds_proof(shape, strides)
    if proof is not False:
        return proof
    live = [d for d, n in enumerate(shape) if n > 1]
    if status == -2:  # the compiled search did not run (status -1: it ran out of steps)
        steps = work.budget(_QUICK_STEPS)
        quick = _quick_internal(shape, strides, live, steps)
        if quick is not False:
            return quick
        work.spend(steps)
    sign = [1 if s > 0 else -1 for s in strides]
    variables = [_Var(-(shape[d] - 1), shape[d] - 1, abs(strides[d]), _base_lift(d, sign[d])) for d in live]
    found = _solve(variables, 0, nonzero=True, work=work)
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
def _quick_pair(a: Layout, b: Layout, witness: bool, work: _Work | None = None) -> Witness | None | bool:
    """:func:`overlap_witness` by the fast paths and a bounded depth-first search; ``False``
    when undecided (its steps then charged to ``work``, when given); with ``witness=False``,
    ``True`` stands for a witness.

    Compiled (``_dfs_native.pair``, one call) when the extension is built and the numbers fit
    in int64, else :func:`_quick_pair_python`; both give the same answers."""
    if _dfs.native is not None:
        steps = _COMPILED_STEPS if work is None else work.budget(_COMPILED_STEPS)
        found = _dfs.native.pair(a.shape, a.strides, a.offset, b.shape, b.strides, b.offset, steps, witness)
        if found.__class__ is tuple:
            assert _index(a, found[0]) == _index(b, found[1]), (a, b, found)
            return found
        if found != -2:  # else an offset, extent or stride beyond int64: Python integers
            if found == -1 and work is not None:
                work.spend(steps)
            return True if found == 1 else None if found == 0 else False
    steps = _QUICK_STEPS if work is None else work.budget(_QUICK_STEPS)
    found = _quick_pair_python(a, b, witness, steps)
    if found is False and work is not None:
        work.spend(steps)
    return found


def _quick_pair_python(a: Layout, b: Layout, witness: bool, steps: int | None = None
                       ) -> Witness | None | bool:
    """:func:`_quick_pair` in Python (any integer sizes), ``steps`` steps (default
    ``_QUICK_STEPS``).

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
    found = _dfs.search_python(coef, bound, total - rhs if mirror else rhs,
                               _QUICK_STEPS if steps is None else steps)
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


def _quick_internal(shape: tuple[int, ...], strides: tuple[int, ...], live: list[int], steps: int
                    ) -> Witness | None | bool:
    """:func:`_internal_witness` by the same bounded search (``steps`` steps):
    ``sum |s_d| x_d == sum |s_d| (n_d-1)`` with ``0 <= x_d <= 2(n_d-1)`` and ``x != (n_d-1)``;
    then ``c_d = x_d - (n_d-1)``."""
    coef = [abs(strides[d]) for d in live]
    centre = [shape[d] - 1 for d in live]
    target = sum(s * m for s, m in zip(coef, centre, strict=True))
    found = _dfs.search_python(coef, [2 * m for m in centre], target, steps, avoid=centre)
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


def _solve(variables: list[_Var], target: int, *, nonzero: bool, work: _Work | None = None
           ) -> _Assignment | None:
    """Integers ``z`` with ``lo <= z <= hi`` and ``sum z*s == target`` (and ``z != 0`` when
    ``nonzero``, then every range is symmetric and ``target == 0``), lifted to the original
    unknowns; ``None`` when there are none. Unknowns missing from the answer are 0.

    ``work`` is the query's budget (default: unlimited work; the memory cap always holds);
    :class:`_OutOfWork` escapes when it runs out."""
    work = _Work(-1) if work is None else work
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
        found = _decide(variables, target, nonzero, work)
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


def _decide(variables: list[_Var], target: int, nonzero: bool, work: _Work) -> _Assignment | None:
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
    return _search(variables, target, nonzero, work)


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
def _search(variables: list[_Var], target: int, nonzero: bool, work: _Work) -> _Assignment | None:
    """Exact search over >= 3 reduced unknowns: two sides, set of one vs set or pair of other.

    When that search would be large (``cost > _LATTICE_ABOVE``), the compiled depth-first
    search first gets ``_REDUCED_STEPS`` steps on the reduced equation (whose ranges the
    reductions have narrowed: often a far smaller tree than the first stage's), then the
    lattice solver runs where it applies. The sets of the meet-in-the-middle search stay
    under :data:`MEMORY_CAP`: past it (or past what ``work`` has left), the bounded-memory
    depth-first search decides instead."""
    cost, side, other = _plan(variables)
    if cost > _LATTICE_ABOVE and _REDUCED_STEPS:
        found = _reduced_search(variables, target, nonzero, work, _REDUCED_STEPS, compiled_only=True)
        if found is not False:
            return found
    magnitude = abs(target) + sum(max(-v.lo, v.hi) * v.s for v in variables)
    if cost > _LATTICE_ABOVE and len(variables) <= _LATTICE_MAX_UNKNOWNS and magnitude < _FLOAT_SAFE:
        z = _lattice.solve([v.s for v in variables], [v.lo for v in variables],
                           [v.hi for v in variables], target, nonzero, spend=work.spend)
        return None if z is None else [p for v, zk in zip(variables, z, strict=True) for p in v.lift(zk)]
    dtype = np.int64 if magnitude < _INT64_SAFE else object
    if work.affords(cost):
        if nonzero:  # a collision inside one side, the other side being 0
            for part in (side, other):
                found = _solve(part, 0, nonzero=True, work=work)
                if found is not None:
                    return found
        slices = 1
        while True:
            try:
                return _meet(side, other, target, nonzero, work, dtype, slices)
            except _OverCap as over:
                work.capped = True
                if not over.sliceable or slices >= _MAX_SLICES:
                    break
                slices *= _SLICE_GROWTH
    found = _reduced_search(variables, target, nonzero, work, None)
    if found is False:
        raise _OutOfWork
    return found


def _meet(side: list[_Var], other: list[_Var], target: int, nonzero: bool, work: _Work, dtype: Any,
          slices: int) -> _Assignment | None:
    """The meet-in-the-middle search of :func:`_search`: the plan's ``side`` as a set, ``other``
    as a pair in closed form or a second set (a nonzero solution with ``side``'s sum 0 is
    sought beforehand). The values of ``side``'s sum are taken in ``slices`` consecutive
    ranges, one at a time, so that the sets of one range (and of ``other`` against it) are
    held at once; :class:`_OverCap` when they would pass :data:`MEMORY_CAP`."""
    o_lo = sum(v.lo * v.s for v in other)
    o_hi = sum(v.hi * v.s for v in other)
    lo, hi = target - o_hi, target - o_lo
    for k in range(slices):
        first, last = lo + (hi - lo + 1) * k // slices, lo + (hi - lo + 1) * (k + 1) // slices - 1
        if first > last:
            continue
        held = work.held
        try:
            found = _match(side, other, first, last, target, nonzero, work, dtype)
        finally:
            work.held = held  # the sets of this range are released
        if found is not None:
            return found
    return None


def _match(side: list[_Var], other: list[_Var], lo: int, hi: int, target: int, nonzero: bool,
           work: _Work, dtype: Any) -> _Assignment | None:
    """A solution whose ``side`` sum lies in ``[lo, hi]`` (nonzero when ``nonzero``), or ``None``."""
    o_gcd = math.gcd(*(v.s for v in other))
    first = _SideSet(side, lo, hi, o_gcd, target, dtype, work)
    vals = first.vals
    if len(other) == 2:
        work.check(_PAIR_TEMPORARIES * _nbytes(vals))
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
    second = _SideSet(other, target - vals[-1], target - vals[0], s_gcd, target, dtype, work)
    work.check(_MATCH_TEMPORARIES * _nbytes(second.vals))
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


def _reduced_search(variables: list[_Var], target: int, nonzero: bool, work: _Work, steps: int | None,
                    *, compiled_only: bool = False) -> _Assignment | None | bool:
    """The depth-first search on ``sum z*s == target``, ``lo <= z <= hi`` (``z != 0`` when
    ``nonzero``), as ``x = z - lo`` in ``[0, hi - lo]`` (``z = 0`` is ``x = -lo``, the
    solution to avoid), with ``steps`` steps (``None``: all that ``work`` has left) charged to
    ``work``; ``False`` when they did not decide, or, with ``compiled_only``, when the search
    is not compiled or the numbers do not fit its int64 arithmetic. Its memory is a few
    integers per unknown, whatever the steps."""
    if compiled_only and _dfs.native is None:
        return False
    budget = work.budget(steps)
    found = _dfs.search([v.s for v in variables], [v.hi - v.lo for v in variables],
                        target - sum(v.s * v.lo for v in variables), 0 if compiled_only else budget,
                        [-v.lo for v in variables] if nonzero else None, compiled_budget=budget)
    if found is False:
        work.spend(budget)
        return False
    if found is None:
        return None
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
                 dtype: Any, work: _Work):
        self.order = sorted(variables, key=lambda v: -v.s)
        self.stages = [np.zeros(1, dtype)]
        for k, v in enumerate(self.order):
            rest = self.order[k + 1:]
            lo_k = lo - sum(u.hi * u.s for u in rest)
            hi_k = hi - sum(u.lo * u.s for u in rest)
            m = math.gcd(modulus, *(u.s for u in rest))
            try:
                self.stages.append(_extend(self.stages[-1], v, lo_k, hi_k, m, residue, work))
            except _OverCap as over:  # the range [lo, hi] sets at most half of this stage's window
                over.sliceable = 2 * (hi - lo) >= hi_k - lo_k
                raise
            work.held += _nbytes(self.stages[-1])  # kept until the search ends (lift reads them)
            if not len(self.stages[-1]):
                break
        self.vals = self.stages[-1]

    def lift(self, value: int) -> _Assignment:
        """The unknowns' values that reach ``value`` (an entry of ``vals``), found stage by
        stage backwards, a block of ``_LIFT_BLOCK`` candidates at a time."""
        out: _Assignment = []
        for k in range(len(self.order) - 1, -1, -1):
            v, prev = self.order[k], self.stages[k]
            z_lo = max(v.lo, -((prev[-1] - value) // v.s))
            z_hi = min(v.hi, (value - prev[0]) // v.s)
            z = _lift_one(prev, v.s, value, z_lo, z_hi)
            out += v.lift(z)
            value -= z * v.s
        assert value == 0
        return out


def _lift_one(prev: np.ndarray, s: int, value: int, z_lo: int, z_hi: int) -> int:
    """One ``z`` in ``[z_lo, z_hi]`` with ``value - z*s`` in the sorted ``prev`` (one exists):
    over the ``z`` when they are fewer, else over the entries of ``prev``."""
    if z_hi - z_lo + 1 <= len(prev):
        for start in range(z_lo, z_hi + 1, _LIFT_BLOCK):
            zs = np.arange(start, min(start + _LIFT_BLOCK, z_hi + 1), dtype=prev.dtype)
            need = value - zs * s
            pos = np.minimum(np.searchsorted(prev, need), len(prev) - 1)
            hits = np.flatnonzero(prev[pos] == need)
            if len(hits):
                return int(zs[hits[0]])
    else:
        for start in range(0, len(prev), _LIFT_BLOCK):
            rest = value - prev[start:start + _LIFT_BLOCK]
            hits = np.flatnonzero((rest % s == 0) & (rest >= z_lo * s) & (rest <= z_hi * s))
            if len(hits):
                return int(rest[hits[0]]) // s
    raise AssertionError((value, s, z_lo, z_hi))


def _extend(vals: np.ndarray, v: _Var, lo: int, hi: int, m: int, residue: int, work: _Work
            ) -> np.ndarray:
    """Sorted ``unique(vals + z*v.s)`` over ``v.lo <= z <= v.hi``, restricted to ``[lo, hi]``
    and to ``residue (mod m)``.

    The candidates form sorted runs (one per ``z`` when there are fewer ``z`` than values,
    else one per value), each found by interval arithmetic without materialising the
    pruned candidates; they are produced in chunks of about ``_CHUNK`` (fewer where the
    memory cap asks) and merged with a stable (run-detecting) sort. Every candidate is
    charged to ``work``; every array is checked against :data:`MEMORY_CAP` before it is
    made (:class:`_OverCap`)."""
    item = _itemsize(vals.dtype)
    width = v.hi - v.lo + 1
    work.check(_RUN_TEMPORARIES * min(width, len(vals)) * item)  # the arrays of one entry per run
    if width <= len(vals):  # run per z: the slice of vals that lands in [lo, hi]
        shift = np.arange(v.lo, v.hi + 1, dtype=vals.dtype) * v.s
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
    work.spend(int(ends[-1]) if len(ends) else 0)
    pieces = []
    kept = 0  # bytes of the pieces so far
    start = 0
    while start < len(counts):
        base = int(ends[start - 1]) if start else 0
        room = (MEMORY_CAP - work.held - kept) // (_CHUNK_TEMPORARIES * item)  # candidates that fit
        stop = max(int(np.searchsorted(ends, base + max(min(_CHUNK, room), 1), "right")), start + 1)
        n = counts[start:stop]
        work.check(kept + _CHUNK_TEMPORARIES * (int(ends[stop - 1]) - base) * item)
        step = np.arange(int(ends[stop - 1]) - base) - np.repeat(np.cumsum(n) - n, n)
        cand = run(slice(start, stop), n, step)
        if m > 1:
            cand = cand[(cand - residue) % m == 0]
        pieces.append(_sorted_unique(cand))
        kept += _nbytes(pieces[-1])
        start = stop
    if len(pieces) == 1:
        return pieces[0]
    work.check(_MERGE_TEMPORARIES * kept)  # the pieces, their concatenation, its sorted copy, the mask
    return _sorted_unique(np.concatenate(pieces))


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    a = np.sort(a, kind="stable")  # timsort: linear on a few sorted runs
    if len(a) > 1:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a

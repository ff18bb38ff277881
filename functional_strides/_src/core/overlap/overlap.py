"""Overlap analysis of layouts: does a layout address one storage slot twice; do two share one?

Pure Python and NumPy, no ``jax`` import. Every answer is exact (never "too hard" unless the
caller bounds the work with ``max_work``) and comes with a witness: a pair of coordinates
that address the same storage index. The search's memory is capped (``MEMORY_CAP``,
256 MiB) whatever the layouts.

Both questions are bounded linear Diophantine problems. A layout ``(n_d, s_d)`` overlaps
itself iff ``sum_d c_d * s_d == 0`` has a solution ``c != 0`` with ``|c_d| <= n_d - 1``:
then ``x = max(c, 0)`` and ``y = max(-c, 0)`` are two distinct coordinates with equal
indices, and conversely ``c = x - y`` for any colliding pair. Two layouts ``a``, ``b``
share an index iff ``sum x_d * sa_d - sum y_e * sb_e == b.offset - a.offset`` has a
solution with ``0 <= x_d < na_d``, ``0 <= y_e < nb_e``. Both are instances of one problem,
solved by :mod:`.solver`: find integers ``z_k`` with ``lo_k <= z_k <= hi_k`` and
``sum_k z_k * s_k == T`` (``s_k > 0``), optionally with ``z != 0``. The folder's README
gives the algorithm in a page.

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
2. Reductions (:mod:`.solver`), then closed forms for two unknowns and a meet-in-the-middle
   search when its estimated size is small.
3. For larger residual equations: the compiled search again, ``_REDUCED_STEPS`` steps on the
   reduced equation (narrower ranges: often a far smaller tree), then (at most
   ``_LATTICE_MAX_UNKNOWNS`` unknowns, values within float64's exact range) lattice
   reduction and branching (:mod:`._lattice`). This decides
   knapsacks whose coefficients hide a common structure, such as the instance in NumPy's
   ``shares_memory`` docstring (strides ``p*12224 + r``), which a search over the unknowns
   (NumPy's, or our enumeration) takes orders of magnitude longer to decide.

The meet-in-the-middle search holds at most ``MEMORY_CAP`` bytes (256 MiB): past it, it
runs over narrower ranges of values, then the depth-first search decides with no step budget
(its memory does not grow). ``max_work`` has NumPy's meaning: ``-1`` exact, ``0`` the bounds
only, ``n > 0`` about ``n`` units of work, then :class:`~functional_strides.TooHardError`
(:mod:`.solver` details both); by default it is ``fs.config.overlap_max_work`` (``10**6``
units, a few milliseconds compiled and about a second in Python at most), so that no query
runs unbounded unless asked to.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from ..config import config as _config
from ..errors import LayoutError, LayoutTypeError, TooHardError
from . import dfs as _dfs
from . import solver as _solver
from .solver import MEMORY_CAP, _base_lift, _OutOfWork, _positive, _solve, _Var, _Work

if TYPE_CHECKING:  # the queries read any record with shape, strides and offset; layout.py imports this module
    from ..layout import Layout

__all__ = [
    "CONFIGURED",
    "MEMORY_CAP",
    "UNDECIDED",
    "check_max_work",
    "has_internal_overlap",
    "internal_overlap_witness",
    "is_monotone",
    "is_non_overlapping_sufficient",
    "overlap_witness",
    "overlaps",
    "pair_check",
    "write_check",
]

Coord = tuple[int, ...]
Witness = tuple[Coord, Coord]

_QUICK_STEPS = 1024  # steps of the bounded depth-first search tried first, in Python
_COMPILED_STEPS = 1 << 17  # ... and compiled (C), where a step costs a small fraction of Python's
_FIRST_STEPS = 1 << 10  # compiled steps on a self-overlap query before its cache is consulted


class _Configured:
    """The default of ``max_work``: the value of ``fs.config.overlap_max_work`` at the call."""

    def __repr__(self) -> str:
        return "fs.config.overlap_max_work"


#: ``max_work``'s default in every query: ``fs.config.overlap_max_work`` (``10**6`` units).
CONFIGURED: Any = _Configured()
#: What :func:`write_check` and :func:`pair_check` answer when the bound did not decide.
UNDECIDED: Any = "undecided"


def _resolve(max_work: Any) -> Any:
    return _config.overlap_max_work if max_work is CONFIGURED else max_work


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
def internal_overlap_witness(layout: Layout, *, max_work: Any = CONFIGURED) -> Witness | None:
    """Two distinct coordinates of ``layout`` that address one storage index, or ``None``.

    Exact for every layout (any rank, extents >= 0, strides of any sign); the offset plays no part
    (it may be traced). Fast paths: empty -> ``None``; a dim of extent > 1 with stride 0 ->
    that dim's coordinates 0 and 1; strides that nest after sorting -> ``None``. The rest is
    solved as described in the module docstring; exact results are cached per (shape, strides).
    The search's arrays stay under ``MEMORY_CAP`` (256 MiB) whatever the layout: past it,
    a depth-first search whose memory does not grow decides, which may take long on
    adversarial layouts (many dims of similar strides) unless ``max_work`` bounds the work.

    Args:
      layout: a :class:`Layout`; strides and offset in elements.
      max_work: the work allowed, as in ``numpy.shares_memory`` (default:
        ``fs.config.overlap_max_work``, ``10**6`` units): ``-1`` or ``None``:
        exact, whatever it costs; ``0``: the bounds only (the fast paths above); ``n > 0``:
        at most about ``n`` units of work (a unit: a step of a depth-first search, a
        candidate of the enumeration, a node of the lattice branching).
    Returns:
      ``None`` when every element has its own storage index, else ``(x, y)``: two tuples of
      ``layout.ndim`` ints, ``x != y``, ``0 <= x[d], y[d] < shape[d]``, ``x`` before ``y``
      in row-major order, and ``layout(*x) == layout(*y)``.
    Raises:
      TooHardError: ``max_work`` did not suffice to decide (the message names
        ``fs.config.overlap_max_work``), or the
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
    max_work = _resolve(max_work)
    if max_work.__class__ is not int or max_work != -1:  # anything but exact is checked
        found = _internal_limited("internal_overlap_witness", layout, max_work, witness=True)
        return cast("Witness | None", found)
    first = _internal_first(layout)
    if isinstance(first, tuple):
        return _difference_witness(first, layout.strides)
    return None if first == 0 else _exact_internal("internal_overlap_witness", layout)


def has_internal_overlap(layout: Layout, *, max_work: Any = CONFIGURED) -> bool:
    """True when two elements of ``layout`` address the same storage index (exact).

    Args:
      layout: a :class:`Layout` of any rank; strides in elements; the offset plays no part.
      max_work: the work allowed, as in ``numpy.shares_memory`` (default:
        ``fs.config.overlap_max_work``, ``10**6`` units): ``-1`` or ``None``:
        exact; ``0``: the bounds only (empty, a stride 0, nested strides, or more elements
        than the index range holds); ``n > 0``: at most about ``n`` units of work (see
        :func:`internal_overlap_witness`).
    Returns:
      A Python bool; ``False`` for empty layouts and layouts of one element.
    Raises:
      TooHardError: ``max_work`` did not suffice to decide (the message names
        ``fs.config.overlap_max_work``), or the
        process could not allocate the memory the search keeps under its cap
        (``MEMORY_CAP``, 256 MiB).
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
    max_work = _resolve(max_work)
    if max_work.__class__ is not int or max_work != -1:  # anything but exact is checked
        return _internal_limited("has_internal_overlap", layout, max_work, witness=False) is not None
    first = _internal_first(layout)
    if first.__class__ is tuple:
        return True
    if first == 0:
        return False
    if _more_elements_than_slots(layout.shape, layout.strides):
        return True
    return _exact_internal("has_internal_overlap", layout) is not None


def write_check(layout: Layout) -> Witness | None | str:
    """The overlap check of a write through ``layout``: :func:`internal_overlap_witness`
    within ``fs.config.overlap_max_work``, or :data:`UNDECIDED` (not ``None``: the write is
    planned as overlapping, which gives the same values) when the bound does not decide."""
    try:
        return internal_overlap_witness(layout)
    except TooHardError:
        return UNDECIDED


def pair_check(a: Layout, b: Layout) -> Witness | None | str:
    """:func:`overlap_witness` within ``fs.config.overlap_max_work``, or :data:`UNDECIDED`."""
    try:
        return overlap_witness(a, b)
    except TooHardError:
        return UNDECIDED


def _internal_first(layout: Layout) -> tuple[int, ...] | int:
    """One compiled call with ``_FIRST_STEPS`` steps, before the cache of
    :func:`_internal_witness`: a nonzero ``c`` with ``sum c*s == 0`` (``|c_d| < n_d``), 0 when
    there is none, or -1 (undecided), -2 (no extension, or numbers beyond int64)."""
    native = _dfs.compiled()
    if native is None:
        return -2
    return native.internal(layout.shape, layout.strides, _FIRST_STEPS)


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
        if witness:
            return internal_overlap_witness(layout)
        return True if has_internal_overlap(layout) else None
    shape, strides = tuple(layout.shape), tuple(layout.strides)
    proof = _bounds_proof(shape, strides)
    if proof is not False:
        return proof
    if not witness and _more_elements_than_slots(shape, strides):
        return True
    if max_work == 0:
        raise _too_hard(op, _internal_subject(shape, strides), _Work(0))
    first = _internal_first(layout) if max_work >= _FIRST_STEPS else -1
    if isinstance(first, tuple):
        return _difference_witness(first, strides)
    if first == 0:
        return None
    found = _bounded_internal(shape, strides, max_work)
    if found.__class__ is _Undecided:
        raise _too_hard(op, _internal_subject(shape, strides), found.work, memory=found.memory)
    return found


class _Undecided(NamedTuple):
    """A bounded search that did not decide: its work record, and whether memory ran out."""

    work: _Work
    memory: bool


@functools.lru_cache(maxsize=1024)
def _bounded_internal(shape: tuple[int, ...], strides: tuple[int, ...], max_work: int) -> Any:
    """:func:`_internal_search` within ``max_work`` (> 0), cached per (shape, strides, budget)
    like the exact answer, undecided results included (a write through a hard layout checks it
    once, not on every call)."""
    work = _Work(max_work)
    try:
        return _internal_search(shape, strides, work)
    except _OutOfWork:
        return _Undecided(work, False)
    except MemoryError:
        return _Undecided(work, True)


def _bounds_proof(shape: tuple[int, ...], strides: tuple[int, ...]) -> Witness | None | Literal[False]:
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
    cap = f"{_solver.MEMORY_CAP >> 20} MiB"
    if memory:
        return TooHardError(
            f"{op}: the exact search ran out of memory (MemoryError) deciding {subject}: its arrays "
            f"stay under the memory cap of {cap} (MEMORY_CAP), but the process could not allocate "
            "that much. Free memory, or pass max_work=n to bound the work (the answer is then exact "
            "or this error is raised).")
    if work.max_work == 0:
        return TooHardError(
            f"{op}: max_work=0 checks the bounds only, which do not decide {subject}. Pass max_work=-1 "
            "(exact) or a positive budget, as with numpy.shares_memory.")
    why = (f"; the meet-in-the-middle search would pass the memory cap of {cap}, so the bounded-memory "
           "depth-first search ran" if work.capped else "")
    return TooHardError(
        f"{op}: max_work={work.max_work} units of work did not suffice to decide {subject}{why}. Pass a "
        "larger max_work, or max_work=-1 for the exact answer, which may take long (the problem is "
        f"NP-hard) while its memory stays under the cap of {cap}; the default of every query and of the "
        "library's own checks is fs.config.overlap_max_work (fs.config.update('overlap_max_work', n); "
        "-1: exact).")


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


def overlap_witness(a: Layout, b: Layout, *, max_work: Any = CONFIGURED) -> Witness | None:
    """A coordinate of ``a`` and one of ``b`` that address one storage index, or ``None``.

    Both layouts index the same storage; offsets matter and must be Python ints. Exact for
    every pair of layouts. Fast paths: either empty or disjoint index ranges
    ``[offset, offset + span]`` -> ``None``; equal layouts -> the first element. The search's
    arrays stay under ``MEMORY_CAP`` (256 MiB); past it a depth-first search whose memory
    does not grow decides (slowly, on adversarial layouts, unless ``max_work`` bounds it).

    Args:
      a: a :class:`Layout` record (any rank); strides and offset in elements.
      b: another, likewise.
      max_work: the work allowed, as in ``numpy.shares_memory`` (default:
        ``fs.config.overlap_max_work``, ``10**6`` units): ``-1`` or ``None``:
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
      TooHardError: ``max_work`` did not suffice to decide (the message names
        ``fs.config.overlap_max_work``), or the
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
    max_work = _resolve(max_work)
    if max_work.__class__ is not int or max_work != -1:  # anything but exact is checked
        return cast("Witness | None", _pair_limited("overlap_witness", a, b, max_work, witness=True))
    a, b = _concrete_offset("a", a), _concrete_offset("b", b)
    quick = _quick_pair(a, b, witness=True)
    return _exact_pair("overlap_witness", a, b) if quick is False else cast("Witness | None", quick)


def overlaps(a: Layout, b: Layout, *, max_work: Any = CONFIGURED) -> bool:
    """True when layouts ``a`` and ``b`` over one storage share a storage index (exact).

    Args:
      a: a :class:`Layout` record of any rank; strides and offset in elements, the offset a
        Python int.
      b: another, over the same storage, likewise.
      max_work: the work allowed, as in ``numpy.shares_memory`` (default:
        ``fs.config.overlap_max_work``, ``10**6`` units): ``-1`` or ``None``:
        exact; ``0``: the bounds only; ``n > 0``: at most about ``n`` units of work (see
        :func:`overlap_witness`). The search's memory stays under ``MEMORY_CAP``
        (256 MiB) whatever ``max_work``.
    Returns:
      A Python bool; ``False`` when either layout is empty.
    Raises:
      LayoutError: an offset is traced, or ``max_work`` is below -1.
      LayoutTypeError: ``max_work`` is not an integer (or ``None``).
      TooHardError: ``max_work`` did not suffice to decide (the message names
        ``fs.config.overlap_max_work``), or the
        process could not allocate the memory the search keeps under its cap.
    Example:
      >>> window = fs.Layout((4,), (1,), 0)
      >>> overlaps(window, fs.Layout((4,), (1,), 3)), overlaps(window, fs.Layout((4,), (1,), 4))
      (True, False)
      >>> overlaps(window, fs.Layout((4,), (1,), 4), max_work=0)   # disjoint index ranges
      False

    Semantics: ``numpy.shares_memory(a, b, max_work)``; see :func:`overlap_witness` for the
    shared pair."""
    max_work = _resolve(max_work)
    if max_work.__class__ is not int or max_work != -1:  # anything but exact is checked
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
        if witness:
            return overlap_witness(a, b)
        return True if overlaps(a, b) else None
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
    native = _dfs.compiled()
    if native is not None:
        steps = work.budget(_COMPILED_STEPS)
        found = native.internal(shape, strides, steps)
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
    native = _dfs.compiled()
    if native is not None:
        steps = _COMPILED_STEPS if work is None else work.budget(_COMPILED_STEPS)
        found = native.pair(a.shape, a.strides, a.offset, b.shape, b.strides, b.offset, steps, witness)
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
    if found is None or found is False:
        return found
    if not witness:
        return True
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
                    ) -> Witness | None | Literal[False]:
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



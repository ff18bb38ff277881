"""The exact solver behind the overlap queries: integers ``z`` with ``lo <= z <= hi`` and
``sum z*s == T``.

Pure Python and NumPy, no ``jax`` import; :mod:`.overlap` builds the equations and calls
:func:`_solve` when its fast paths and bounded search leave a query undecided.

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

import itertools
import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from . import dfs as _dfs
from . import lattice as _lattice

__all__ = ["MEMORY_CAP"]

_Assignment = list[tuple[int, int]]  # (index of an original unknown, its value)

_MAX_ROUNDS = 64  # reduction rounds (each shrinks something; the cap only bounds the work)
_CHUNK = 1 << 22  # candidates materialised at once while building a side set
_INT64_SAFE = 1 << 62
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
                    *, compiled_only: bool = False) -> _Assignment | None | Literal[False]:
    """The depth-first search on ``sum z*s == target``, ``lo <= z <= hi`` (``z != 0`` when
    ``nonzero``), as ``x = z - lo`` in ``[0, hi - lo]`` (``z = 0`` is ``x = -lo``, the
    solution to avoid), with ``steps`` steps (``None``: all that ``work`` has left) charged to
    ``work``; ``False`` when they did not decide, or, with ``compiled_only``, when the search
    is not compiled or the numbers do not fit its int64 arithmetic. Its memory is a few
    integers per unknown, whatever the steps."""
    if compiled_only and _dfs.compiled() is None:
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
    pairs: set[tuple[int, ...]] = set(itertools.combinations(sorted(by_width[:6]), 2))
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
    best: tuple[float, list[_Var], list[_Var]] | None = None
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

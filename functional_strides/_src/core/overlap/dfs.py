"""A bounded depth-first search for ``sum s_k x_k == b``, ``0 <= x_k <= u_k`` (``s_k > 0``).

Pure Python, no ``jax`` import; the C extension ``_dfs_native`` (built from ``_dfs_native.c``
when the package is installed with a C compiler) runs the same search, one to two orders of
magnitude faster a step (``benchmarks/bench_overlap.py``), and :func:`search` picks it. The
overlap queries (``overlap.py``) run the search first, with a work budget: on the equations of
everyday views (and on most pairs whose index sets do meet) it finds a solution, or proves
there is none, within a few dozen to a few thousand steps, far cheaper than the reductions
and searches that follow.

The unknowns are taken largest coefficient first. With ``g_j = gcd(s_0..s_j)``, the first
``j`` unknowns contribute ``g_{j-1} y`` with ``0 <= y <= Y_{j-1} = sum_{i<j} s_i u_i / g_{j-1}``,
so ``s_j x_j + g_{j-1} y == b`` is a two-unknown equation: ``x_j`` is pinned to one residue
class modulo ``g_{j-1} / g_j`` and to the interval that keeps ``y`` in range. The search
tries those ``x_j`` (last unknown first), recursing on ``b - s_j x_j``; it counts one step per
candidate and gives up past its budget. This is the depth-first bounded Euclid search of
Ramachandran (2006) that NumPy's ``mem_overlap.c`` implements.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Literal

from ..builds import load_extension
from ..config import config

__all__ = ["compiled", "native", "search", "search_python"]

_loaded = False

#: The loaded C extension; None when it was not built (no C compiler at install time) or is
#: stale (older than ``_dfs_native.c`` beside it), or not loaded yet because
#: ``FUNCTIONAL_STRIDES_PURE_PYTHON`` was set at import (it loads when ``fs.config`` turns
#: ``native_overlap`` on). Whether the search takes it is :func:`compiled`.
native: ModuleType | None = None


def compiled() -> ModuleType | None:
    """The C extension when ``fs.config.native_overlap`` is on and it is built (loaded on first
    use), else None: then every search runs in Python, with the same answers."""
    global native, _loaded
    if not config.native_overlap:
        return None
    if not _loaded:
        _loaded = True
        native = load_extension(f"{__package__}._dfs_native", ("_dfs_native.c",))
    return native


compiled()


def search(s: list[int], u: list[int], b: int, budget: int, avoid: list[int] | None = None, *,
           compiled_budget: int | None = None) -> list[int] | None | Literal[False]:
    """A solution ``x`` (list), ``None`` when there is none, or ``False`` when the step budget
    did not decide. ``avoid``: one solution not to return (then another is sought).

    Runs the C search, with ``compiled_budget`` steps (default ``budget``), when the extension
    is built and the numbers fit its int64 arithmetic (coefficients and ``|b| + sum s_k u_k``
    below ``2**61``; coefficients below ``2**31`` where the compiler has no 128-bit integers);
    else :func:`search_python` with ``budget`` steps. Both search the same tree in the same
    order: with equal budgets, equal answers. Memory: a few integers per unknown, whatever
    the budget; a signal handler that raises (Ctrl-C) interrupts either search."""
    module = compiled()
    if module is not None:
        found = module.search(s, u, b, budget if compiled_budget is None else compiled_budget, avoid)
        if found.__class__ is not int:  # -2: numbers too large for int64
            return found
    return search_python(s, u, b, budget, avoid)


class _OutOfSteps(Exception):
    pass


def search_python(s: list[int], u: list[int], b: int, budget: int, avoid: list[int] | None = None
                  ) -> list[int] | None | Literal[False]:
    """:func:`search` in pure Python (any integer sizes)."""
    order = sorted(range(len(s)), key=lambda k: -s[k])
    ss = [s[k] for k in order]
    uu = [min(u[k], b // s[k]) if b >= 0 else u[k] for k in order]  # s_k x_k <= b
    avoid_sorted = None if avoid is None else [avoid[k] for k in order]
    gcds, reach = [ss[0]], [uu[0]]  # g_j and Y_j
    periods, inverses = [1], [0]  # g_{j-1} / g_j and the inverse of s_j / g_j modulo it
    for j in range(1, len(ss)):
        g = math.gcd(gcds[-1], ss[j])
        reach.append((reach[-1] * gcds[-1] + ss[j] * uu[j]) // g)
        periods.append(gcds[-1] // g)
        inverses.append(pow(ss[j] // g, -1, periods[-1]) if periods[-1] > 1 else 0)
        gcds.append(g)
    x = [0] * len(ss)
    steps = [budget]

    def rec(j: int, b: int) -> bool:
        steps[0] -= 1
        if steps[0] < 0:
            raise _OutOfSteps
        if j == 0:
            q, r = divmod(b, ss[0])
            if r or not 0 <= q <= uu[0]:
                return False
            x[0] = q
            return avoid_sorted is None or x != avoid_sorted
        g, sj, period = gcds[j], ss[j], periods[j]
        if b % g:
            return False
        residue = (b // g) * inverses[j] % period
        first = max(0, -((gcds[j - 1] * reach[j - 1] - b) // sj))
        last = min(uu[j], b // sj)
        for xj in range(last - (last - residue) % period, first - 1, -period):
            x[j] = xj
            if rec(j - 1, b - sj * xj):
                return True
        return False

    try:
        found = rec(len(ss) - 1, b) if b >= 0 else False
    except _OutOfSteps:
        return False
    if not found:
        return None
    out = [0] * len(s)
    for k, v in zip(order, x, strict=True):
        out[k] = v
    return out

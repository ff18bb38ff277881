"""A bounded depth-first search for ``sum s_k x_k == b``, ``0 <= x_k <= u_k`` (``s_k > 0``).

Pure Python, no ``jax`` import; :mod:`._dfs_compiled` runs the same search compiled with
numba when numba is installed (:func:`search` picks). :mod:`functional_strides._overlap` runs
it first, with a work budget: on the equations of everyday views (and on most pairs whose
index sets do meet) it finds a solution, or proves there is none, within a few dozen to a
few thousand steps, far cheaper than the reductions and searches that follow.

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
import operator
import os
from typing import Any

import numpy as np

__all__ = ["compiled", "search", "search_python"]

_INT31 = 1 << 31
_INT62 = 1 << 62
_compiled: list[Any] = []  # [the module] once loaded; [None] when numba is missing or disabled


def compiled() -> Any:
    """The module :mod:`._dfs_compiled` (its kernels compiled, or read from numba's cache, on
    the first call: see that module), or ``None`` when numba cannot be imported, cannot
    compile or cache the kernels, or the environment variable ``FUNCTIONAL_STRIDES_NO_NUMBA``
    is set to a non-empty value; then the searches run in Python."""
    if not _compiled:
        module = None
        if not os.environ.get("FUNCTIONAL_STRIDES_NO_NUMBA"):
            try:
                from . import _dfs_compiled as module

            except (ImportError, RuntimeError, OSError):  # no numba; or no usable cache location
                module = None
        _compiled.append(module)
    return _compiled[0]


def search(s: list[int], u: list[int], b: int, budget: int, avoid: list[int] | None = None, *,
           compiled_budget: int | None = None) -> list[int] | None | bool:
    """A solution ``x`` (list), ``None`` when there is none, or ``False`` when the step budget
    did not decide. ``avoid``: one solution not to return (then another is sought).

    Runs the compiled kernel, with ``compiled_budget`` steps (default ``budget``), when numba
    is available and the numbers fit its int64 arithmetic (coefficients below ``2**31``,
    ``|b| + sum s_k u_k`` below ``2**62``); else :func:`search_python` with ``budget`` steps.
    Both search the same tree in the same order: with equal budgets, equal answers."""
    module = _compiled[0] if _compiled else compiled()
    if module is None or max(s) >= _INT31 or abs(b) + sum(map(operator.mul, s, u)) >= _INT62:
        return search_python(s, u, b, budget, avoid)
    n = len(s)
    steps = budget if compiled_budget is None else compiled_budget
    packed = np.array([n, min(steps, _INT62), b, avoid is not None, *s, *u, *(avoid or (0,) * n), *(0,) * n],
                      np.int64)
    status = module.kernel(packed)
    if status == 1:
        return packed[4 + 3 * n:].tolist()
    return None if status == 0 else False


class _OutOfSteps(Exception):
    pass


def search_python(s: list[int], u: list[int], b: int, budget: int, avoid: list[int] | None = None
                  ) -> list[int] | None | bool:
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

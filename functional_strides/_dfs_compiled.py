"""The depth-first search of :mod:`._dfs`, compiled with numba (imported only when numba is).

No ``jax`` import. Same search, same order of candidates, same step count and so the same
answers as the pure-Python :func:`._dfs.search_python`, run as machine code: about 10-20 ns
a step instead of about 0.7 us. Loaded lazily by :mod:`._dfs` on the first search that
needs it; the kernel is compiled when this module is imported, from numba's on-disk cache
(``cache=True``: a ``__pycache__`` entry next to this file, or numba's user cache directory
when that is read-only) when one exists, else in about a second, once per environment.

The kernel works in int64: :mod:`._dfs` calls it only when every coefficient is below
``2**31`` and ``|b| + sum s_k u_k`` below ``2**62``, so no product or sum can overflow.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["kernel"]


@numba.njit("int64(int64, int64)", cache=True, nogil=True)
def _inverse(a: int, m: int) -> int:  # pragma: no cover - compiled
    """``a**-1 mod m`` for ``gcd(a, m) == 1``, ``m > 1`` (extended Euclid)."""
    r0, r1, t0, t1 = m, a % m, 0, 1
    while r1:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        t0, t1 = t1, t0 - q * t1
    return t0 % m


@numba.njit("int64(int64, int64)", cache=True, nogil=True)
def _gcd(a: int, b: int) -> int:  # pragma: no cover - compiled
    while b:
        a, b = b, a % b
    return a


@numba.njit("int64(int64[:])", cache=True, nogil=True)
def kernel(packed: np.ndarray) -> int:  # pragma: no cover - compiled
    """``packed = [n, budget, b, has_avoid, s_0..s_{n-1}, u_0..u_{n-1}, avoid_0..avoid_{n-1},
    x_0..x_{n-1}]`` (``s`` positive, ``u >= 0``, ``n >= 1``; the ``x`` slots are output).
    Returns 1 with a solution written to the ``x`` slots, 0 when there is none, -1 when
    ``budget`` steps did not decide."""
    n, budget, b, has_avoid = packed[0], packed[1], packed[2], packed[3]
    if b < 0:
        return 0
    work = np.empty(11 * n, np.int64)  # one allocation for every per-level array
    order, ss, uu, av = work[:n], work[n:2 * n], work[2 * n:3 * n], work[3 * n:4 * n]
    gcds, reach, periods = work[4 * n:5 * n], work[5 * n:6 * n], work[6 * n:7 * n]
    firsts, targets, inverses = work[7 * n:8 * n], work[8 * n:9 * n], work[9 * n:10 * n]
    spans = work[10 * n:]  # spans[j] = g_j * Y_j, the most the first j + 1 unknowns reach
    x = packed[4 + 3 * n:4 + 4 * n]
    for i in range(n):  # stable insertion sort by decreasing coefficient: the Python search's order
        k = i
        while k > 0 and packed[4 + order[k - 1]] < packed[4 + i]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = i
    for i in range(n):
        k = order[i]
        ss[i] = packed[4 + k]
        uu[i] = min(packed[4 + n + k], b // ss[i])
        av[i] = packed[4 + 2 * n + k]
    gcds[0], reach[0], periods[0], inverses[0] = ss[0], uu[0], 1, 0
    for j in range(1, n):
        g = _gcd(gcds[j - 1], ss[j])
        reach[j] = (reach[j - 1] * gcds[j - 1] + ss[j] * uu[j]) // g
        periods[j] = gcds[j - 1] // g
        inverses[j] = _inverse(ss[j] // g, periods[j]) if periods[j] > 1 else 0
        gcds[j] = g
    for j in range(n):
        spans[j] = gcds[j] * reach[j]
    steps = budget
    j, cur = n - 1, b
    while True:
        # enter level j with right-hand side cur; descend while a candidate exists
        steps -= 1
        if steps < 0:
            return -1
        descended = False
        if j == 0:
            q = cur // ss[0]
            if cur - q * ss[0] == 0 and q <= uu[0]:
                x[0] = q
                ok = True
                if has_avoid:
                    ok = False
                    for i in range(n):
                        if x[i] != av[i]:
                            ok = True
                            break
                if ok:
                    for i in range(n):  # back to the caller's order, through the work space
                        firsts[order[i]] = x[i]
                    for i in range(n):
                        x[i] = firsts[i]
                    return 1
        elif gcds[j] == 1 or cur % gcds[j] == 0:  # (divisions dominate a step: skip the trivial ones)
            sj, period, below = ss[j], periods[j], spans[j - 1]
            xj = min(uu[j], cur // sj)
            if period > 1:
                residue = ((cur // gcds[j]) % period) * inverses[j] % period
                xj -= (xj - residue) % period
            first = 0 if cur <= below else (cur - below + sj - 1) // sj
            if xj >= first:
                x[j], firsts[j], targets[j] = xj, first, cur
                cur -= sj * xj
                j -= 1
                descended = True
        if descended:
            continue
        # backtrack: the next candidate of the nearest level above that has one
        while True:
            j += 1
            if j == n:
                return 0
            xj = x[j] - periods[j]
            if xj >= firsts[j]:
                x[j] = xj
                cur = targets[j] - ss[j] * xj
                j -= 1
                break

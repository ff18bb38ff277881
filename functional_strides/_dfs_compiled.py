"""The depth-first search of :mod:`._dfs`, compiled with numba (imported only when numba is).

No ``jax`` import. Same search, same order of candidates, same step count and so the same
answers as the pure-Python :func:`._dfs.search_python`, run as machine code: 10-70 ns a step
instead of about 0.7 us. :func:`pair` and :func:`internal` also run the fast paths around
the search of :mod:`.overlap`, so that a query is one call (about 0.2 us of dispatch).
Loaded lazily by :mod:`._dfs` on the first query that needs it; the kernels are compiled
when this module is imported, from numba's on-disk cache (``cache=True``: a ``__pycache__``
entry next to this file, or numba's user cache directory when that is read-only; about
0.35 s) when one exists, else once per environment (about 3 s).

The kernels work in int64: :func:`kernel` is called only when every coefficient is below
``2**31`` and ``|b| + sum s_k u_k`` below ``2**62``, and :func:`pair` and :func:`internal`
check the same bounds themselves (in floating point, before any integer product) and answer
-2, leaving the query to Python integers, when they do not hold: no product or sum overflows.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["internal", "kernel", "pair"]

_INT31 = 1 << 31
_INT62 = 1 << 62


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


@numba.njit("int64(int64[:], int64[:], int64[:], int64[:], int64, int64, boolean)", cache=True, nogil=True)
def _search(s_in: np.ndarray, u_in: np.ndarray, av_in: np.ndarray, x: np.ndarray, b: int, budget: int,
            has_avoid: bool) -> int:  # pragma: no cover - compiled
    """:func:`._dfs.search_python` on arrays of ``n >= 1`` unknowns (``s_in > 0``, ``u_in >= 0``):
    1 with a solution written to ``x``, 0 when there is none, -1 when ``budget`` steps did
    not decide. ``av_in``: the solution to avoid when ``has_avoid``."""
    n = len(s_in)
    if b < 0:
        return 0
    work = np.empty(11 * n, np.int64)  # one allocation for every per-level array
    order, ss, uu, av = work[:n], work[n:2 * n], work[2 * n:3 * n], work[3 * n:4 * n]
    gcds, reach, periods = work[4 * n:5 * n], work[5 * n:6 * n], work[6 * n:7 * n]
    firsts, targets, inverses = work[7 * n:8 * n], work[8 * n:9 * n], work[9 * n:10 * n]
    spans = work[10 * n:]  # spans[j] = g_j * Y_j, the most the first j + 1 unknowns reach
    for i in range(n):  # stable insertion sort by decreasing coefficient: the Python search's order
        k = i
        while k > 0 and s_in[order[k - 1]] < s_in[i]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = i
    for i in range(n):
        k = order[i]
        ss[i] = s_in[k]
        uu[i] = min(u_in[k], b // ss[i])
        av[i] = av_in[k]
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


@numba.njit("int64(int64[:])", cache=True, nogil=True)
def kernel(packed: np.ndarray) -> int:  # pragma: no cover - compiled
    """``packed = [n, budget, b, has_avoid, s_0..s_{n-1}, u_0..u_{n-1}, avoid_0..avoid_{n-1},
    x_0..x_{n-1}]`` (``s`` positive, ``u >= 0``, ``n >= 1``; the ``x`` slots are output).
    Returns 1 with a solution written to the ``x`` slots, 0 when there is none, -1 when
    ``budget`` steps did not decide."""
    n = packed[0]
    return _search(packed[4:4 + n], packed[4 + n:4 + 2 * n], packed[4 + 2 * n:4 + 3 * n],
                   packed[4 + 3 * n:4 + 4 * n], packed[2], packed[1], packed[3] != 0)


@numba.njit("int64(int64[:])", cache=True, nogil=True)
def pair(packed: np.ndarray) -> int:  # pragma: no cover - compiled
    """Do layouts ``a``, ``b`` share a storage index: the fast paths and the bounded search of
    :func:`.overlap._quick_pair_python`, in one call.

    ``packed = [na, nb, a.offset, b.offset, budget, a.shape, a.strides, b.shape, b.strides,
    out (na + nb slots)]``. Returns 1 with a coordinate of ``a`` and one of ``b`` written to
    ``out``, 0 when none is shared, -1 when ``budget`` steps did not decide, -2 when a value
    is too large for int64 arithmetic (a stride of ``2**31`` or more, or a span near ``2**62``;
    the caller then uses Python integers)."""
    na, nb, budget = packed[0], packed[1], packed[4]
    m = na + nb
    out = packed[5 + 2 * m:5 + 3 * m]
    coef = np.empty(3 * m, np.int64)
    bound, dims = coef[m:2 * m], coef[2 * m:]
    rhs = packed[3] - packed[2]
    if abs(rhs) >= _INT62:
        return -2
    total = 0
    span = 0.0  # the same sum in floating point: guards the int64 arithmetic against overflow
    k = 0
    for d in range(m):
        if d < na:
            n, s = packed[5 + d], packed[5 + na + d]
        else:
            n, s = packed[5 + 2 * na + d - na], -packed[5 + 2 * na + nb + d - na]
        out[d] = 0
        if n == 0:
            return 0
        if n > 1 and s != 0:
            span += abs(float(s)) * float(n - 1)
            if s >= _INT31 or s <= -_INT31 or span >= 2.0 ** 61:
                return -2  # checked before any int64 product that could overflow
            if s < 0:
                rhs -= s * (n - 1)
                s = -s
                dims[k] = -1 - d
            else:
                dims[k] = d
            coef[k], bound[k] = s, n - 1
            total += s * (n - 1)
            k += 1
    if rhs < 0 or rhs > total:
        return 0
    if k == 0:
        return 1 if rhs == 0 else 0
    if na == nb and packed[2] == packed[3]:  # equal layouts: the first element (out is zeros)
        same = True
        for d in range(2 * na):
            if packed[5 + d] != packed[5 + 2 * na + d]:
                same = False
                break
        if same:
            return 1
    mirror = total - rhs < rhs
    x = np.zeros(k, np.int64)
    status = _search(coef[:k], bound[:k], x, x, total - rhs if mirror else rhs, budget, False)
    if status == 1:
        for i in range(k):
            v = bound[i] - x[i] if mirror else x[i]
            if dims[i] < 0:
                out[-1 - dims[i]] = bound[i] - v
            else:
                out[dims[i]] = v
    return status


@numba.njit("int64(int64[:])", cache=True, nogil=True)
def internal(packed: np.ndarray) -> int:  # pragma: no cover - compiled
    """Does one layout address a storage index twice: the fast paths and the bounded search of
    :func:`.overlap._internal_witness`, in one call.

    ``packed = [n, budget, shape, strides, out (n slots)]``. Returns 1 with a nonzero
    ``c`` (``|c_d| < shape[d]``, ``sum c_d strides[d] == 0``) written to ``out``, 0 when
    every element has its own index, -1 when ``budget`` steps did not decide, -2 when a
    value is too large for int64 arithmetic (as in :func:`pair`)."""
    n, budget = packed[0], packed[1]
    shape, strides, out = packed[2:2 + n], packed[2 + n:2 + 2 * n], packed[2 + 2 * n:2 + 3 * n]
    live = np.empty(4 * n, np.int64)
    coef, bound, centre = live[n:2 * n], live[2 * n:3 * n], live[3 * n:]
    k = 0
    span = 0.0
    for d in range(n):
        out[d] = 0
        if shape[d] == 0:
            return 0  # empty: checked on every dim before any answer
    for d in range(n):
        if shape[d] > 1:
            if strides[d] == 0:
                out[d] = 1
                return 1
            span += 2.0 * abs(float(strides[d])) * float(shape[d] - 1)
            if strides[d] >= _INT31 or strides[d] <= -_INT31 or span >= 2.0 ** 61:
                return -2
            live[k] = d
            k += 1
    for i in range(k):  # sorted by |stride| (insertion sort): nested strides cannot collide
        d = live[i]
        j = i
        while j > 0 and abs(strides[coef[j - 1]]) > abs(strides[d]):
            coef[j] = coef[j - 1]
            j -= 1
        coef[j] = d
    reach = 0
    nested = True
    for i in range(k):
        s = abs(strides[coef[i]])
        if s <= reach:
            nested = False
            break
        reach += (shape[coef[i]] - 1) * s
    if nested:
        return 0
    target = 0
    for i in range(k):  # sum |s| x == sum |s| (n - 1), 0 <= x <= 2 (n - 1), x != n - 1
        d = live[i]
        coef[i], centre[i] = abs(strides[d]), shape[d] - 1
        bound[i] = 2 * centre[i]
        target += coef[i] * centre[i]
    x = np.zeros(k, np.int64)
    status = _search(coef[:k], bound[:k], centre[:k], x, target, budget, True)
    if status == 1:
        for i in range(k):
            d = live[i]
            out[d] = x[i] - centre[i] if strides[d] > 0 else centre[i] - x[i]
    return status

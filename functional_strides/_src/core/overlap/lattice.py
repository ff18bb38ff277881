"""Integer points of a box on a hyperplane, by lattice reduction and branching.

Pure Python and NumPy, no ``jax`` import. Used by :mod:`functional_strides._src.core.overlap.overlap` for the
equations its reductions leave and whose enumeration would be large.

Problem: integers ``z_k`` with ``lo_k <= z_k <= hi_k`` and ``sum_k s_k z_k == T`` (``s_k > 0``,
``n >= 2`` unknowns), optionally with ``z != 0``. The solutions of the equation alone form an
affine lattice ``z = z0 + K @ lam`` (``lam`` in ``Z^(n-1)``): ``K`` is a basis of the integer
kernel of ``s``, read off a unimodular matrix built by extended Euclid, and ``z0`` a
particular solution. The basis is LLL-reduced in the norm that scales each unknown by its
range, so that the box looks like a cube. Then the box is searched by branching on the
coefficient of the last basis vector (the longest Gram-Schmidt vector, so the fewest
values), the range of that coefficient being the exact range over the real polytope
``lo <= z0 + K @ lam <= hi`` (the polytope's vertices, enumerated), widened by a rounding
margin; with one coefficient left, its range is solved in integers. This is the
reformulation of Aardal, Hurkens and Lenstra ("Solving a system of linear Diophantine
equations with lower and upper bounds on the variables", 2000): on knapsacks whose
coefficients share a hidden structure (``s = M p + r`` with small ``p``, ``r``), which
defeat branching on the unknowns themselves, the long basis vector takes at most one or
two values and infeasibility shows at the first branch.

Exactness: every branch step keeps ``z`` on the lattice, the basis changes (size reduction,
swaps) are unimodular, leaves are checked in integers, and the polytope ranges (computed in
floating point) are widened by a margin far above their rounding error before rounding to
integers, so no solution is pruned. Rounding only decides how well the basis is reduced,
which affects speed, never answers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import cast

import numpy as np

__all__ = ["solve"]

_LLL_DELTA = 0.99
_REL_MARGIN = 1e-6


def _free(units: int) -> None:
    pass


def solve(s: list[int], lo: list[int], hi: list[int], target: int, nonzero: bool,
          spend: Callable[[int], None] = _free) -> list[int] | None:
    """``z`` with ``lo <= z <= hi`` and ``sum s*z == target`` (and ``z != 0`` when ``nonzero``),
    or ``None`` when there is none. ``s`` positive, ``lo <= hi``, ``2 <= len(s) <= 12``; the
    caller keeps ``|target| + sum |z_k| s_k`` below ``2**52`` so that the floating-point
    bounds stay far inside their margin. ``spend(1)`` is called at every node of the
    branching (the caller's work budget: it may raise to stop the search). Memory: the
    basis, and the polytope's candidate vertices of one node (``C(n, f) * 2**f`` of them,
    ``f < n <= 12``), whatever the number of nodes."""
    scale = np.array([1.0 / (h - lo_k + 1) for lo_k, h in zip(lo, hi, strict=True)])
    g, z0, kernel = _kernel(s, scale)
    if target % g:
        return None
    z0 = [target // g * c for c in z0]
    z0 = _closest(z0, kernel, [(lo_k + h) / 2 for lo_k, h in zip(lo, hi, strict=True)], scale)
    if all(a <= x <= b for a, x, b in zip(lo, z0, hi, strict=True)) and not (nonzero and not any(z0)):
        return z0  # the lattice point nearest the box's centre is in the box (common when solutions abound)
    return _branch(z0, kernel, len(kernel), lo, hi, nonzero, spend)


def _xgcd(a: int, b: int) -> tuple[int, int, int]:
    """``(g, p, q)`` with ``p*a + q*b == g == gcd(a, b)``."""
    p0, q0, p1, q1 = 1, 0, 0, 1
    while b:
        k, r = divmod(a, b)
        a, b = b, r
        p0, p1 = p1, p0 - k * p1
        q0, q1 = q1, q0 - k * q1
    return a, p0, q0


def _kernel(s: list[int], scale: np.ndarray) -> tuple[int, list[int], list[list[int]]]:
    """``(g, u, K)``: ``g = gcd(s)``, ``s . u == g`` and ``K`` an LLL-reduced basis (rows) of
    the integers ``k`` with ``s . k == 0``.

    One unknown at a time: with ``u`` solving ``s[:k] . u == c`` (``c = gcd(s[:k])``),
    extended Euclid on ``(c, s[k])`` gives ``p*c + q*s[k] == g``; then ``p*u + q*e_k`` solves
    the next prefix and ``(s[k]/g)*u - (c/g)*e_k`` is a new kernel vector (the two steps form
    a unimodular change of basis). The basis is reduced and ``u`` shortened against it after
    every step, so the entries stay small (a plain Euclid chain grows them like a product of
    the coefficients, beyond what floating-point reduction can handle)."""
    n = len(s)
    u = [1] + [0] * (n - 1)
    c = s[0]
    basis: list[list[int]] = []
    for k in range(1, n):
        g, p, q = _xgcd(c, s[k])
        new = [s[k] // g * x for x in u]
        new[k] = -(c // g)
        u = [p * x for x in u]
        u[k] = q
        c = g
        basis = _lll(basis + [new], scale, start=len(basis))
        u = _closest(u, basis, [0.0] * n, scale)
    return c, u, basis


def _gso(basis: list[list[int]], scale: np.ndarray) -> np.ndarray:
    """R of the QR factorisation of the scaled basis (as columns): ``R[j, i] = <b_i, q_j>``."""
    m = np.array([[float(x) for x in b] for b in basis]) * scale
    return cast(np.ndarray, np.linalg.qr(m.T, mode="r"))  # mode "r": R alone


def _lll(basis: list[list[int]], scale: np.ndarray, start: int = 1) -> list[list[int]]:
    """LLL reduction (integer basis changes, floating-point Gram-Schmidt) in the scaled norm;
    ``basis[:start]`` is already reduced."""
    basis = [list(b) for b in basis]
    d = len(basis)
    k, steps = max(start, 1), 0
    while k < d and steps < 200 * d * d + 1000:
        steps += 1
        r = _gso(basis[:k + 1], scale)
        for j in range(k - 1, -1, -1):
            if r[j, j] == 0:
                continue
            q = round(r[j, k] / r[j, j])
            if q:
                basis[k] = [x - q * y for x, y in zip(basis[k], basis[j], strict=True)]
                r[:, k] -= q * r[:, j]
        mu = r[k - 1, k] / r[k - 1, k - 1] if r[k - 1, k - 1] else 0.0
        if r[k, k] ** 2 >= (_LLL_DELTA - mu * mu) * r[k - 1, k - 1] ** 2:
            k += 1
        else:
            basis[k - 1], basis[k] = basis[k], basis[k - 1]
            k = max(k - 1, 1)
    return basis


def _closest(z0: list[int], basis: list[list[int]], centre: list[float], scale: np.ndarray) -> list[int]:
    """``z0`` moved by a lattice vector towards ``centre`` (least squares, rounded, repeated
    while it moves: each round removes most of the rounding error of the previous one)."""
    a = np.array([[float(x) for x in b] for b in basis]).T * scale[:, None]
    for _ in range(16):
        gap = (np.array(centre) - np.array([float(x) for x in z0])) * scale
        lam = np.linalg.lstsq(a, gap, rcond=None)[0]
        steps = [round(x) for x in lam]
        if not any(steps):
            break
        z0 = [x + sum(q * b[i] for q, b in zip(steps, basis, strict=True)) for i, x in enumerate(z0)]
    return z0


def _branch(z: list[int], basis: list[list[int]], f: int, lo: list[int], hi: list[int],
            nonzero: bool, spend: Callable[[int], None]) -> list[int] | None:
    """A point of ``z + basis[:f] @ lam`` in the box (and ``!= 0`` when ``nonzero``), or ``None``."""
    spend(1)
    if f == 1:
        return _last(z, basis[0], lo, hi, nonzero)
    span = _coefficient_range(z, basis[:f], lo, hi)
    if span is None:
        return None
    first, last = span
    v = basis[f - 1]
    for t in _middle_out(first, last):
        found = _branch([x + t * y for x, y in zip(z, v, strict=True)], basis, f - 1, lo, hi, nonzero, spend)
        if found is not None:
            return found
    return None


def _middle_out(first: int, last: int):
    mid = (first + last) // 2
    yield from (x for pair in itertools.zip_longest(range(mid, last + 1), range(mid - 1, first - 1, -1))
                for x in pair if x is not None)


def _last(z: list[int], v: list[int], lo: list[int], hi: list[int], nonzero: bool) -> list[int] | None:
    """Exact: the integers ``t`` with ``lo <= z + t*v <= hi`` form an interval; pick one."""
    t_lo, t_hi = -math.inf, math.inf
    for x, c, a, b in zip(z, v, lo, hi, strict=True):
        if c > 0:
            t_lo, t_hi = max(t_lo, -((x - a) // c)), min(t_hi, (b - x) // c)
        elif c < 0:
            t_lo, t_hi = max(t_lo, -((b - x) // -c)), min(t_hi, (x - a) // -c)
        elif not a <= x <= b:
            return None
    if t_lo > t_hi:
        return None
    t = 0 if t_lo <= 0 <= t_hi else int(t_lo) if t_lo > 0 else int(t_hi)  # finite: some c != 0
    if nonzero and not any(x + t * c for x, c in zip(z, v, strict=True)):  # the excluded z == 0
        if t + 1 <= t_hi:
            t += 1
        elif t - 1 >= t_lo:
            t -= 1
        else:
            return None
    return [x + t * c for x, c in zip(z, v, strict=True)]


def _coefficient_range(z: list[int], basis: list[list[int]], lo: list[int], hi: list[int]
                       ) -> tuple[int, int] | None:
    """Integer range (widened) of the last coefficient over the real polytope
    ``lo <= z + basis^T lam <= hi``; ``None`` when the polytope is empty."""
    f = len(basis)
    a = np.array([[float(x) for x in b] for b in basis]).T  # (n, f)
    lower = np.array([float(p - x) for p, x in zip(lo, z, strict=True)])
    upper = np.array([float(q - x) for q, x in zip(hi, z, strict=True)])
    size = max(1.0, float(np.abs(lower).max()), float(np.abs(upper).max()))
    found = _vertex_range(a, lower, upper, f, size)
    if found is None:
        return None
    low, high = found
    margin = _REL_MARGIN * (size + abs(low) + abs(high)) + 1e-6
    first, last = math.ceil(low - margin), math.floor(high + margin)
    return None if first > last else (first, last)


def _vertex_range(a: np.ndarray, lower: np.ndarray, upper: np.ndarray, f: int, size: float
                  ) -> tuple[float, float] | None:
    """Min and max of the last coordinate over the vertices of ``lower <= a @ lam <= upper``."""
    rows = np.array(list(itertools.combinations(range(a.shape[0]), f)))  # (C, f)
    sub = a[rows]  # (C, f, f)
    det = np.linalg.det(sub)
    keep = np.abs(det) > 0.5  # integer matrices: a nonzero determinant is at least 1
    rows, sub = rows[keep], sub[keep]
    if not len(rows):
        return None
    signs = np.array(list(itertools.product((0, 1), repeat=f)), dtype=bool)  # (P, f)
    rhs = np.where(signs[None, :, :], upper[rows][:, None, :], lower[rows][:, None, :])  # (C, P, f)
    lam = np.linalg.solve(sub[:, None, :, :], rhs[..., None])[..., 0]  # (C, P, f)
    vals = lam @ a.T  # (C, P, n)
    tol = _REL_MARGIN * (size + np.abs(lam).max(axis=-1, keepdims=True) * np.abs(a).sum(axis=1).max()) + 1e-6
    ok = np.all((vals >= lower - tol) & (vals <= upper + tol), axis=-1)
    if not ok.any():
        return None
    last = lam[..., -1][ok]
    return float(last.min()), float(last.max())

"""Cache-tiled transposes: the permute at the end of a structured read, as a loop over tiles.

XLA:CPU emits a large ``transpose`` as one loop nest over the output that reads the input
along its large stride, a cache line per element, several times slower than a plain copy of
its bytes (``benchmarks/lowering_choices.py``, table "permutes").
Read as a loop over tiles -- ``P_TILE`` rows of the input (a 64-byte cache line of output per
row of the tile) by up to ``Q_TILE_MAX`` columns, each tile ``dynamic_slice``-d, transposed in
cache and ``dynamic_update_slice``-d into the output -- the same permute takes a fraction of
the native op's time. The loop updates the output in place (no temporary beyond the loop counter)
and emits no gather.

The tiled form applies to every permute that, after leading dims kept in place (a batch),
swaps two blocks of dims and moves the innermost dim of the input: the array is then a batch
of ``(P, Q)`` matrices to transpose (a 2-D transpose, NCHW->NHWC, NDHWC->NCDHW, ...).
Permutes that keep the innermost dim innermost move whole rows, and matrices of few rows
whose pitch does not alias cache sets (NCHW->NHWC) read well with XLA's op: it is kept there.

The loop reads its input through a function called inside its body (the structured read:
reshapes of the storage and one slice), so each step reads just its tile; an input that
would have to exist first (a slice or pad of the storage before the reshapes) would become
a temporary the size of the output, and XLA's op, fused with that read, is kept instead.
Reversed dims of the view (negative strides) are reversed tile by tile, each tile placed at
its mirrored position, where each reversed axis is a whole block of the plan; a ``rev`` over
the loop's output would cost another pass and a temporary.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from collections.abc import Callable, Iterator

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["ALIASING_PITCH_BYTES", "P_TILE_BYTES", "Q_TILE_MAX", "TILED_MIN_ELEMENTS", "TILED_MIN_ROWS",
           "TiledPlan", "blocks", "loops", "tiled_plan", "transpose"]

# Tiles of a cache line of output rows by up to 1024 columns beat the other tile shapes and loops
# over output stripes; a loop wins on square-ish matrices whatever their pitch and where the
# input's rows alias cache sets, and loses on matrices of few rows with an unaliased pitch
# (benchmarks/lowering_choices.py, table "permutes").
#: Matrices of at least this many rows (p) are read tile by tile ...
TILED_MIN_ROWS = 256
#: ... and so are those whose input rows are a multiple of this many bytes apart (a pitch that
#: maps a column's elements to the same few cache sets).
ALIASING_PITCH_BYTES = 4096
#: Rows of a tile, in bytes of one output row of the tile (one 64-byte cache line).
P_TILE_BYTES = 64
#: Largest number of columns of a tile.
Q_TILE_MAX = 1024
#: Permutes of fewer elements keep XLA's transpose (the loop's per-step cost dominates there;
#: the crossing point of the size sweep in lowering_choices.py).
TILED_MIN_ELEMENTS = 2**16

_LOOPS: contextvars.ContextVar[bool] = contextvars.ContextVar("tile_loops", default=True)


@contextlib.contextmanager
def loops(enabled: bool) -> Iterator[None]:
    """Whether :func:`transpose` may read tile by tile while the block runs: the primitives
    lower with it off for every platform but the CPU, whose caches the tiles are for (on a GPU
    or TPU each step of the loop would be a kernel of its own, and XLA's transpose emitter is
    the fast one there)."""
    token = _LOOPS.set(enabled)
    try:
        yield
    finally:
        _LOOPS.reset(token)


@dataclasses.dataclass(frozen=True, slots=True)
class TiledPlan:
    """A permute as a batch of matrix transposes read tile by tile.

    The input, of ``batch * p * q`` elements, is read as ``(batch, p, q)``; the output is
    ``(batch, q, p)``. Tiles are ``p_tile`` by ``q_tile``; the rows past the last whole tile
    (``p % p_tile``, ``q % q_tile``) are transposed as two edge pieces after the loop.
    """

    batch: int
    p: int
    q: int
    p_tile: int
    q_tile: int

    @property
    def steps(self) -> int:
        """Iterations of the tile loop."""
        return self.batch * (self.p // self.p_tile) * (self.q // self.q_tile)


def blocks(shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[int, int, int] | None:
    """``(batch, p, q)`` when ``transpose(x, perm)`` of an array of ``shape`` is a batch of
    ``(p, q)`` transposes (leading dims kept, then two blocks of dims swapped), else None."""
    rank = len(perm)
    lead = 0
    while lead < rank and perm[lead] == lead:
        lead += 1
    if lead == rank or perm[-1] == rank - 1:  # identity, or the innermost dim stays innermost
        return None
    rest = perm[lead:]
    split = rest[0]  # the first output dim after the batch: where the second block starts
    if rest != (*range(split, rank), *range(lead, split)):
        return None
    return math.prod(shape[:lead]), math.prod(shape[lead:split]), math.prod(shape[split:])


def _tile(extent: int, bound: int) -> int:
    """The largest divisor of ``extent`` that is at most ``bound`` when it is at least half of
    ``min(extent, bound)``, else ``min(extent, bound)`` (the rest is an edge piece)."""
    cap = min(extent, bound)
    for d in range(cap, (cap + 1) // 2 - 1, -1):
        if extent % d == 0:
            return d
    return cap


def tiled_plan(shape: tuple[int, ...], perm: tuple[int, ...], itemsize: int) -> TiledPlan | None:
    """How ``transpose`` reads ``lax.transpose(x, perm)`` of an array of ``shape``: a
    ``TiledPlan``, or None when XLA's ``transpose`` is kept.

    Args:
      shape: the input's shape (static ints, elements).
      perm: the permutation, as ``lax.transpose`` takes it (output dim ``i`` is input dim
        ``perm[i]``).
      itemsize: bytes per element (the tile's rows are one cache line of output).
    Returns:
      A plan when the permute is a batch of matrix transposes of at least
      ``TILED_MIN_ELEMENTS`` elements whose matrices have at least two tiles of rows, and
      either ``TILED_MIN_ROWS`` rows or rows ``ALIASING_PITCH_BYTES`` apart; else None.
    Example:
      >>> tiled_plan((4096, 4096), (1, 0), 4)
      TiledPlan(batch=1, p=4096, q=4096, p_tile=16, q_tile=1024)
      >>> tiled_plan((16, 1024, 16, 64), (0, 2, 1, 3), 4) is None   # whole rows of 64 move
      True
    """
    found = blocks(tuple(shape), tuple(perm))
    if found is None or math.prod(shape) < TILED_MIN_ELEMENTS:
        return None
    batch, p, q = found
    if p < TILED_MIN_ROWS and (q * itemsize) % ALIASING_PITCH_BYTES:
        return None
    p_tile = max(1, P_TILE_BYTES // max(1, itemsize))
    if p < 2 * p_tile or q < p_tile:
        return None
    return TiledPlan(batch, p, q, p_tile, _tile(q, Q_TILE_MAX))


def _tiles(read: Callable[[], jax.Array], plan: TiledPlan,
           rev: tuple[bool, bool, bool] = (False, False, False)) -> jax.Array:
    """``(batch, p, q)`` -> ``(batch, q, p)``: the edge pieces, then the whole tiles in a loop;
    the output axes marked in ``rev`` (batch, q, p) reversed, each piece reversed in cache and
    placed at its mirrored position (no pass over the output after the loop).

    ``read()`` builds the ``(batch, p, q)`` input; it is called inside the loop's body, so
    that XLA fuses its slices and reshapes into the read of each tile instead of materialising
    the input before the loop (a temporary the size of the output)."""
    pt, qt = plan.p_tile, plan.q_tile
    p_main, q_main = plan.p - plan.p % pt, plan.q - plan.q % qt
    rows, cols = p_main // pt, q_main // qt
    flipped = tuple(a for a, r in enumerate(rev) if r)
    extents = (plan.batch, plan.q, plan.p)

    def turned(piece: jax.Array) -> jax.Array:  # (b, p', q') -> (b, q', p'), reversed where asked
        piece = lax.transpose(piece, (0, 2, 1))
        return lax.rev(piece, flipped) if flipped else piece

    def at(starts: tuple, piece: jax.Array) -> tuple:
        """Where a piece starting at ``starts`` lands: ``[s, s + n)`` of a reversed axis of
        extent ``e`` is ``[e - s - n, e - s)``."""
        return tuple(e - s - n if r else s
                     for s, n, e, r in zip(starts, piece.shape, extents, rev, strict=True))

    def step(k, out):
        b, r = k // (rows * cols), k % (rows * cols)
        i, j = r // cols * pt, r % cols * qt
        tile = turned(lax.dynamic_slice(read(), (b, i, j), (1, pt, qt)))
        return lax.dynamic_update_slice(out, tile, at((b, j, i), tile))

    # The edges first, into the fresh output, which the loop then updates in place (written
    # into the loop's result afterwards, they would cost a copy of it).
    x = read()  # for the edges (its slices fuse into their reads) and the dtype
    out = jnp.empty(extents, x.dtype)
    # Inside jax.shard_map the tiles vary over the manual mesh axes the input varies over, and a
    # loop's carry must keep its type: the fresh output is made to vary over them too.
    varying = tuple(sorted(_varying(x) - _varying(out), key=str))
    if varying:
        out = lax.pcast(out, varying, to="varying") if hasattr(lax, "pcast") else lax.pvary(out, varying)  # pyright: ignore[reportAttributeAccessIssue] - older jax
    if p_main < plan.p:  # the last rows of the input: the last columns of the output
        edge = turned(x[:, p_main:, :])
        out = lax.dynamic_update_slice(out, edge, at((0, 0, p_main), edge))
    if q_main < plan.q:  # the last columns of the input (whole tiles of rows only)
        edge = turned(x[:, :p_main, q_main:])
        out = lax.dynamic_update_slice(out, edge, at((0, q_main, 0), edge))
    return lax.fori_loop(0, plan.steps, step, out)


def _varying(x: jax.Array) -> frozenset:
    """The manual mesh axes ``x`` varies over inside ``jax.shard_map`` (empty outside): its
    type's ``mat.varying`` (``vma`` before jax 0.10)."""
    aval = jax.typeof(x)
    mat = getattr(aval, "mat", None)
    return frozenset(mat.varying if mat is not None else getattr(aval, "vma", ()))


def transpose(x: jax.Array, perm: tuple[int, ...], rev: tuple[int, ...] = (),
              read: Callable[[], jax.Array] | None = None) -> jax.Array:
    """``lax.rev(lax.transpose(x, perm), rev)``, read tile by tile where :func:`tiled_plan` says so.

    Args:
      x: any array.
      perm: a permutation of ``range(x.ndim)``.
      rev: axes of the result to reverse. The tile loop reverses each tile in cache where every
        reversed axis is a whole block of the plan (the batch, or either side of the matrices);
        otherwise XLA's ``transpose`` and ``rev`` (one fused loop) are kept.
      read: a function of no arguments that computes ``x`` from the arrays it closes over
        (reshapes and a slice of a storage, or ``lambda: x`` for an argument); the tile loop
        calls it inside its body, so that each step reads just its tile and ``x`` is never
        materialised. Without it XLA's ``transpose`` is kept (fused with however ``x`` is
        computed): a tile loop would first materialise ``x``, a temporary the size of the
        output.
    Returns:
      The array of shape ``tuple(x.shape[d] for d in perm)``, equal to
      ``lax.rev(lax.transpose(x, perm), rev)``.
    Example:
      >>> import numpy as np
      >>> a = jnp.arange(2 * 64 * 2048.0).reshape(2, 64, 2048)
      >>> want = np.transpose(np.asarray(a), (0, 2, 1))
      >>> bool((transpose(a, (0, 2, 1), read=lambda: a) == want).all())
      True
      >>> bool((transpose(a, (0, 2, 1), (1,), read=lambda: a) == want[:, ::-1]).all())
      True

    Semantics: ``jax.lax.transpose`` then ``jax.lax.rev`` (NumPy's ``np.flip(np.transpose(...))``),
    same values and shape.
    """
    perm, rev = tuple(perm), tuple(rev)
    plan = tiled_plan(x.shape, perm, x.dtype.itemsize) if read is not None and _LOOPS.get() else None
    reversed_blocks = None if plan is None else _block_axes(perm, rev)
    if reversed_blocks is None:
        out = lax.transpose(x, perm)
        return lax.rev(out, rev) if rev else out
    assert plan is not None and read is not None
    tiles = plan
    out = _tiles(lambda: read().reshape(tiles.batch, tiles.p, tiles.q), tiles, reversed_blocks)
    return out.reshape(tuple(x.shape[d] for d in perm))


def _block_axes(perm: tuple[int, ...], rev: tuple[int, ...]) -> tuple[bool, bool, bool] | None:
    """Which of the output blocks (batch, q side, p side) of a tiled ``perm`` are reversed, when
    every axis in ``rev`` is a whole block; else None. A block of several axes counts as
    reversed only when all of them are (reversing a row-major block reverses each of its axes)."""
    rank = len(perm)
    lead = 0
    while lead < rank and perm[lead] == lead:
        lead += 1
    q_axes = rank - perm[lead]  # output axes lead .. lead + q_axes - 1 are the q side
    spans = ((0, lead), (lead, lead + q_axes), (lead + q_axes, rank))
    marks = []
    for lo, hi in spans:
        inside = [a in rev for a in range(lo, hi)]
        if any(inside) and not all(inside):
            return None
        marks.append(bool(inside) and all(inside))
    return marks[0], marks[1], marks[2]

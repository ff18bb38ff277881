"""CuTe's divides and products of layouts (pure Python, no ``jax``).

``logical_divide`` splits a layout into tiles and the rest, ``logical_product`` repeats one;
the zipped, tiled and flat forms regroup their modes, ``blocked_product`` and
``raked_product`` interleave them per mode. Names and conventions of CUTLASS's ``pycute``
(and CuTe C++ for ``flat_divide``, ``blocked_product``, ``raked_product``). Public through
:mod:`functional_strides.cute`.
"""

from __future__ import annotations

from typing import Any

from .int_tuple import is_int, is_tuple
from .layout import (
    Layout,
    _as_layout,
    _check_rank,
    _tiled,
    _trusted,
    coalesce,
    complement,
    composition,
    cosize,
    make_layout,
    size,
)

__all__ = [
    "blocked_product",
    "flat_divide",
    "hier_unzip",
    "logical_divide",
    "logical_product",
    "raked_product",
    "tiled_divide",
    "tiled_product",
    "zipped_divide",
    "zipped_product",
]


def logical_divide(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """Split ``A`` into tiles of ``B``: ``A o (B, complement(B, size(A)))``, rank 2 ``(tile, rest)``.

    A tuple ``B`` divides mode by mode (mode ``i`` becomes ``(tile_i, rest_i)``); ``None``
    keeps a mode; an int ``n`` is the tile ``n:1``.

    Raises:
      LayoutError: from :func:`complement` or :func:`composition` (the tile does not divide A).
    Example:
      >>> logical_divide(Layout(16), Layout(4, 2))
      Layout((4, (2, 2)),(2, (1, 8)))
      >>> logical_divide(Layout((6, 8), (8, 1)), (2, 4))
      Layout(((2, 3), (4, 2)),((8, 16), (1, 4)))

    Semantics: ``pycute.logical_divide``, CuTe ``logical_divide``."""
    if layoutB is None:
        return layoutA
    if is_int(layoutB):
        layoutB = Layout(layoutB)
    if is_tuple(layoutB):
        return _tiled("logical_divide", logical_divide, layoutA, layoutB)
    layoutA = _as_layout(layoutA, "logical_divide", "layoutA")
    return composition(layoutA, make_layout(layoutB, complement(layoutB, size(layoutA))))


def logical_product(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """Repeat ``A`` by ``B``: ``(A, complement(A, size(A) * cosize(B)) o B)``, rank 2 ``(block, tiler)``.

    Mode 0 of the result is ``A`` itself; mode 1 places ``size(B)`` copies of it in the
    gaps of ``A`` (strides in elements), in the order ``B`` gives. A tuple ``B`` multiplies
    mode by mode (mode ``i`` becomes ``(A_i, repeat_i)``; later modes of ``A`` are kept);
    ``None`` returns ``A``; an int ``n`` is ``n:1``.

    Args:
      layoutA: the block, a Layout (or an int/tuple shape, compact column-major);
      layoutB: the tiler, a Layout, an int, a tuple of them, or ``None``.
    Returns:
      A Layout; ``size(result) == size(A) * size(B)``.
    Raises:
      LayoutError: ``A`` is not a Layout, int or tuple; a tuple ``B`` has more modes than
        ``A``; ``A`` (or a mode of it) has a negative stride or overlaps itself (from
        :func:`complement`); ``B`` does not split over the complement's modes (from
        :func:`composition`, e.g. ``logical_product(Layout(2, 2), 3)``).
    Example:
      >>> logical_product(Layout((2, 2), (1, 2)), Layout(3))
      Layout(((2, 2), 3),((1, 2), 4))
      >>> logical_product(Layout(2, 3), 2)
      Layout((2, 2),(3, 1))

    Semantics: pycute ``logical_product`` / CuTe ``logical_product``. Released pycute treats an
    int ``B`` as ``logical_divide`` (a bug); here it is the product."""
    if layoutB is None:
        return layoutA
    if is_int(layoutB):
        layoutB = Layout(layoutB)
    if is_tuple(layoutB):
        return _tiled("logical_product", logical_product, layoutA, layoutB)
    layoutA = _as_layout(layoutA, "logical_product", "layoutA")
    return make_layout(layoutA, composition(complement(layoutA, size(layoutA) * cosize(layoutB)), layoutB))


def hier_unzip(splitter: Any, layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """Apply a rank-2 ``splitter`` mode by mode and gather ``((first parts...), (second parts..., rest))``.

    For a tuple ``layoutB`` of rank ``r``, ``splitter(A[i], B[i])`` gives ``(x_i, y_i)`` for
    ``i < r`` and the result is ``((x_0, ..., x_{r-1}), (y_0, ..., y_{r-1}, A[r], ...))``; a
    ``None`` entry of ``B`` splits ``A[i]`` into ``(1:0, A[i])``. A Layout or int ``B`` is
    handed to ``splitter`` whole. This is how :func:`zipped_divide` and
    :func:`zipped_product` gather their modes.

    Args:
      splitter: ``f(layout, tile) -> Layout`` of rank 2 (``logical_divide`` or
        ``logical_product``).
      layoutA: a Layout (or int/tuple shape).
      layoutB: a Layout, an
        int, ``None``, or a tuple of them with at most ``rank(layoutA)`` entries.
    Returns:
      A rank-2 Layout (whatever ``splitter`` returns for a non-tuple ``B``).
    Raises:
      LayoutError: a tuple ``layoutB`` has more modes than ``layoutA`` (the message names
        ``hier_unzip`` and the tiler), ``layoutA`` is not a Layout, int or tuple, or what
        ``splitter`` raises.
    Example:
      >>> hier_unzip(logical_divide, Layout((6, 8), (8, 1)), (2, None))
      Layout(((2, 1), (3, 8)),((8, 0), (16, 1)))

    Semantics: pycute ``hier_unzip`` (CuTe's ``zipped_divide`` and ``zipped_product`` do it
    inline)."""
    if layoutB is None:
        return make_layout(_trusted(1, 0), layoutA)
    if is_tuple(layoutB):
        layoutA = _as_layout(layoutA, "hier_unzip", "layoutA")
        _check_rank("hier_unzip", layoutA, layoutB, "tiler")
        split = [hier_unzip(splitter, layoutA[i], layoutB[i]) for i in range(len(layoutB))]
        return make_layout(make_layout(s[0] for s in split),
                           make_layout(*(s[1] for s in split),
                                       *(layoutA[i] for i in range(len(layoutB), len(layoutA)))))
    return splitter(layoutA, layoutB)


def zipped_divide(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`logical_divide` gathered as ``((tiles...), (rests...))``.

    Mode 0 of the result indexes inside one tile, mode 1 picks the tile (and any modes of
    ``A`` past the tiler); ``result((i, j))`` is element ``i`` of tile ``j``, both
    colexicographic. A tile that does not divide its mode is not refused: the rest is
    rounded up and reaches past ``size(A)`` (``A``'s last mode is unbounded, as in CuTe).

    Args:
      layoutA: a Layout (or an int/tuple shape).
      layoutB: the tiler, a Layout, an int (``n:1``)
        or a tuple of them / ``None`` with at most ``rank(layoutA)`` entries.
    Returns:
      A rank-2 Layout ``(tile, rest)``.
    Raises:
      LayoutError: a tuple tiler has more modes than ``A`` (named ``hier_unzip`` in the
        message); ``A`` is not a Layout, int or tuple; the errors of :func:`logical_divide`
        (a tile with a negative stride or overlapping itself, stride or shape divisibility).
    Example:
      >>> zipped_divide(Layout((6, 8), (8, 1)), (2, 4))
      Layout(((2, 4), (3, 2)),((8, 1), (16, 4)))

    Semantics: pycute ``zipped_divide`` / CuTe ``zipped_divide``."""
    return hier_unzip(logical_divide, layoutA, layoutB)


def tiled_divide(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`zipped_divide` with the rest modes unpacked: ``((tiles...), rest_0, rest_1, ...)``.

    Mode 0 indexes inside one tile; modes ``1..`` index the tiles along each mode of ``A``
    (and the modes of ``A`` past the tiler), so ``result(i, a, b)`` is element ``i`` of tile
    ``(a, b)``.

    Args:
      layoutA: a Layout (or an int/tuple shape).
      layoutB: the tiler, as :func:`zipped_divide`.
    Returns:
      A Layout of rank ``1 + rank(rest)``.
    Raises:
      LayoutError: as :func:`zipped_divide`. A tile that does not divide its mode is not
        refused (the rest is rounded up past ``size(A)``).
    Example:
      >>> tiled_divide(Layout((6, 8), (8, 1)), (2, 4))
      Layout(((2, 4), 3, 2),((8, 1), 16, 4))

    Semantics: pycute ``tiled_divide`` / CuTe ``tiled_divide``."""
    result = zipped_divide(layoutA, layoutB)
    return make_layout(result[0], *result[1])


def flat_divide(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`zipped_divide` with both halves unpacked: ``(tile_0, tile_1, ..., rest_0, rest_1, ...)``.

    For a tuple tiler of rank ``r`` the first ``r`` modes index inside a tile, the rest pick
    the tile (then the modes of ``A`` past the tiler). For a Layout or int tiler the modes of
    the tile and of the rest are unpacked one level.

    Args:
      layoutA: a Layout (or an int/tuple shape).
      layoutB: the tiler, as :func:`zipped_divide`.
    Returns:
      A Layout whose modes are those of ``zipped_divide(A, B)[0]`` then ``[1]``.
    Raises:
      LayoutError: as :func:`zipped_divide`. A tile that does not divide its mode is not
        refused: ``flat_divide(Layout(6), 4)`` is ``(4, 2):(1, 4)``, 8 elements.
    Example:
      >>> flat_divide(Layout((6, 8), (8, 1)), (2, 4))
      Layout((2, 4, 3, 2),(8, 1, 16, 4))

    Semantics: CuTe ``flat_divide`` (not in pycute)."""
    result = zipped_divide(layoutA, layoutB)
    return make_layout(*result[0], *result[1])


def zipped_product(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`logical_product` gathered as ``((blocks...), (tilers...))``.

    Mode 0 of the result is the block (mode ``i`` of ``A`` for each tiler entry), mode 1 the
    repetitions (then the modes of ``A`` past the tiler): ``result((i, j))`` is element ``i``
    of copy ``j``.

    Args:
      layoutA: the block, a Layout (or an int/tuple shape).
      layoutB: the tiler, a Layout, an
        int (``n:1``), or a tuple of them / ``None`` with at most ``rank(layoutA)`` entries.
    Returns:
      A rank-2 Layout ``(block, repeat)``; ``size == size(A) * size(B)``.
    Raises:
      LayoutError: a tuple tiler has more modes than ``A`` (named ``hier_unzip`` in the
        message), or the errors of :func:`logical_product` (a block mode with a negative
        stride or overlapping itself; a tiler mode that does not split over the complement:
        ``zipped_product(Layout((2, 2), (1, 2)), (2, 3))`` raises, as mode ``2:2`` times 3
        is not a layout).
    Example:
      >>> zipped_product(Layout((2, 2), (1, 2)), (3, 1))
      Layout(((2, 2), (3, 1)),((1, 2), (2, 1)))

    Semantics: pycute ``zipped_product`` / CuTe ``zipped_product``."""
    return hier_unzip(logical_product, layoutA, layoutB)


def tiled_product(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`zipped_product` with the tiler modes unpacked: ``((blocks...), tiler_0, tiler_1, ...)``.

    Mode 0 is the block; modes ``1..`` count its copies along each tiler mode, so
    ``result(i, a, b)`` is element ``i`` of copy ``(a, b)``.

    Args:
      layoutA: the block.
      layoutB: the tiler, as :func:`zipped_product`.
    Returns:
      A Layout of rank ``1 + rank(zipped_product(A, B)[1])``.
    Raises:
      LayoutError: as :func:`zipped_product`.
    Example:
      >>> tiled_product(Layout((2, 2), (1, 2)), (3, 1))
      Layout(((2, 2), 3, 1),((1, 2), 2, 1))

    Semantics: pycute ``tiled_product`` / CuTe ``tiled_product``."""
    result = zipped_product(layoutA, layoutB)
    return make_layout(result[0], *result[1])


def _append(layout: Layout, r: int) -> Layout:
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    return make_layout(*modes, *([_trusted(1, 0)] * (r - len(modes))))


def _interleaved_product(block: Any, tiler: Any, op: str, block_first: bool) -> Layout:
    block = _as_layout(block, op, "block")
    tiler = _as_layout(tiler, op, "tiler")
    r = max(len(block), len(tiler))
    result = logical_product(_append(block, r), _append(tiler, r))
    a, b = result[0], result[1]
    pairs = [make_layout(a[i], b[i]) if block_first else make_layout(b[i], a[i]) for i in range(r)]
    return coalesce(make_layout(*pairs), (1,) * r)


def blocked_product(block: Any, tiler: Any) -> Layout:
    """Tile ``block`` over ``tiler`` mode by mode, each result mode ``(block_i, tiler_i)`` coalesced:
    the blocks are placed whole, side by side.

    Both are padded with ``1:0`` modes to the larger rank ``r``; mode ``i`` of the result
    indexes element ``block_i`` inside a block first (fastest, colexicographic) and then block
    ``tiler_i``, so a rank-2 result reads as a matrix of whole blocks.

    Args:
      block: a Layout (or an int/tuple shape, compact column-major).
      tiler: a Layout (or an
        int/tuple shape), e.g. ``Layout((2, 3))`` for 2 x 3 copies in column-major order.
    Returns:
      A Layout of rank ``r``, each mode coalesced; ``size == size(block) * size(tiler)``.
    Raises:
      LayoutError: ``block`` or ``tiler`` is not a Layout, int or tuple (the message names
        which); ``block`` has a negative stride or overlaps itself (from :func:`complement`);
        the tiler does not split over the complement (from :func:`composition`).
    Example:
      >>> blocked_product(Layout((2, 2), (1, 2)), Layout((2, 3)))
      Layout(((2, 2), (2, 3)),((1, 4), (2, 8)))

    Semantics: CuTe ``blocked_product`` (not in pycute)."""
    return _interleaved_product(block, tiler, "blocked_product", block_first=True)


def raked_product(block: Any, tiler: Any) -> Layout:
    """Like :func:`blocked_product` with each mode ``(tiler_i, block_i)``: the blocks are interleaved
    (raked) across the result.

    Mode ``i`` indexes the copy ``tiler_i`` first (fastest) and the element ``block_i`` inside
    it second, so neighbouring coordinates belong to different copies of the block (a cyclic
    distribution).

    Args:
      block: a Layout (or an int/tuple shape, compact column-major).
      tiler: a Layout (or an
        int/tuple shape).
    Returns:
      A Layout of rank ``max(rank(block), rank(tiler))``, each mode coalesced;
      ``size == size(block) * size(tiler)``.
    Raises:
      LayoutError: as :func:`blocked_product` (a non-layout argument; a negative or
        self-overlapping block; a tiler that does not split over the complement).
    Example:
      >>> raked_product(Layout((2, 2), (1, 2)), Layout((2, 3)))
      Layout(((2, 2), (3, 2)),((4, 1), (8, 2)))

    Semantics: CuTe ``raked_product`` (not in pycute)."""
    return _interleaved_product(block, tiler, "raked_product", block_first=False)

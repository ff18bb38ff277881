"""CuTe's divides and products of layouts (pure Python, no ``jax``).

``logical_divide`` splits a layout into tiles and the rest, ``logical_product`` repeats one;
the zipped, tiled and flat forms regroup their modes, ``blocked_product`` and
``raked_product`` interleave them per mode. Names and conventions of CUTLASS's ``pycute``
(and CuTe C++ for ``flat_divide``, ``blocked_product``, ``raked_product``). Public through
:mod:`functional_strides.cute`.
"""

from __future__ import annotations

from typing import Any

from ._cute_int_tuple import is_int, is_tuple
from ._cute_layout import (
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

    A tuple ``B`` multiplies mode by mode; an int ``n`` is ``n:1``.

    Example:
      >>> logical_product(Layout((2, 2), (1, 2)), Layout(3))
      Layout(((2, 2), 3),((1, 2), 4))

    Semantics: ``pycute.logical_product``, CuTe ``logical_product``. Released pycute treats an
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

    Semantics: ``pycute.hier_unzip``."""
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

    Example:
      >>> zipped_divide(Layout((6, 8), (8, 1)), (2, 4))
      Layout(((2, 4), (3, 2)),((8, 1), (16, 4)))

    Semantics: ``pycute.zipped_divide``, CuTe ``zipped_divide``."""
    return hier_unzip(logical_divide, layoutA, layoutB)


def tiled_divide(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`zipped_divide` with the rest modes unpacked: ``((tiles...), rest_0, rest_1, ...)``.

    Example:
      >>> tiled_divide(Layout((6, 8), (8, 1)), (2, 4))
      Layout(((2, 4), 3, 2),((8, 1), 16, 4))

    Semantics: ``pycute.tiled_divide``, CuTe ``tiled_divide``."""
    result = zipped_divide(layoutA, layoutB)
    return make_layout(result[0], *result[1])


def flat_divide(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`zipped_divide` with both halves unpacked: ``(tile_0, tile_1, ..., rest_0, rest_1, ...)``.

    Example:
      >>> flat_divide(Layout((6, 8), (8, 1)), (2, 4))
      Layout((2, 4, 3, 2),(8, 1, 16, 4))

    Semantics: CuTe ``flat_divide`` (not in pycute)."""
    result = zipped_divide(layoutA, layoutB)
    return make_layout(*result[0], *result[1])


def zipped_product(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`logical_product` gathered as ``((blocks...), (tilers...))``.

    Semantics: ``pycute.zipped_product``, CuTe ``zipped_product``."""
    return hier_unzip(logical_product, layoutA, layoutB)


def tiled_product(layoutA: Any, layoutB: Any) -> Layout:  # noqa: N803
    """:func:`zipped_product` with the tiler modes unpacked: ``((blocks...), tiler_0, tiler_1, ...)``.

    Semantics: ``pycute.tiled_product``, CuTe ``tiled_product``."""
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

    Example:
      >>> blocked_product(Layout((2, 2), (1, 2)), Layout((2, 3)))
      Layout(((2, 2), (2, 3)),((1, 4), (2, 8)))

    Semantics: CuTe ``blocked_product`` (not in pycute)."""
    return _interleaved_product(block, tiler, "blocked_product", block_first=True)


def raked_product(block: Any, tiler: Any) -> Layout:
    """Like :func:`blocked_product` with each mode ``(tiler_i, block_i)``: the blocks are interleaved
    (raked) across the result.

    Example:
      >>> raked_product(Layout((2, 2), (1, 2)), Layout((2, 3)))
      Layout(((2, 2), (3, 2)),((4, 1), (8, 2)))

    Semantics: CuTe ``raked_product`` (not in pycute)."""
    return _interleaved_product(block, tiler, "raked_product", block_first=False)

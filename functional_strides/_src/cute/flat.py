"""Conversions between CuTe layouts and the flat :class:`functional_strides.Layout` (no ``jax``)."""

from __future__ import annotations

from typing import Any

from ..core.errors import LayoutError
from ..core.layout import Layout as FlatLayout
from .int_tuple import flatten, is_tuple
from .layout import Layout, is_layout, size

__all__ = ["from_layout", "layout_table", "to_layout"]


def to_layout(layout: Layout, offset: Any = 0) -> FlatLayout:
    """The flat :class:`functional_strides.Layout` of a CuTe layout: its leaf modes as dims, in order.

    Dim ``k`` of the result is leaf mode ``k`` of ``flatten(layout)`` (extent and stride
    unchanged), so the element at coordinate ``(i_0, i_1, ...)`` is the same in both; the
    nesting is dropped. A rank-1 int-shaped layout gives a 1-D layout.

    Args:
      layout: a CuTe :class:`Layout` (strides of any sign, as CuTe's).
      offset: storage
        index of coordinate 0, in elements (CuTe keeps it in the pointer).
    Returns:
      ``functional_strides.Layout(flatten(shape), flatten(stride), offset)``.
    Raises:
      LayoutError: a ComposedLayout.
      StorageError: negative strides reach below index 0
        from ``offset`` (the lowest index, ``offset + sum((n-1)*s for s < 0)``, must be >= 0).
    Example:
      >>> str(to_layout(Layout((2, (3, 4)), (12, (4, 1))), offset=5))
      '(2,3,4):(12,4,1)+5'

    Semantics: CuTe ``make_tensor(ptr + offset, layout)`` read with PyTorch's row-major coordinates.
    """
    if not isinstance(layout, Layout):
        raise LayoutError(f"to_layout: layout must be a cute.Layout (got {type(layout).__name__}); a "
                          "ComposedLayout (swizzle) is not a strided layout.")
    return FlatLayout(flatten(layout.shape), flatten(layout.stride), offset)


def from_layout(flat: FlatLayout) -> Layout:
    """The CuTe layout of a flat :class:`functional_strides.Layout`: one mode per dim, in order.

    The offset is not part of a CuTe layout; ``to_layout(from_layout(f), f.offset) == f``.

    Args:
      flat: a ``functional_strides.Layout`` (or anything with ``shape`` and ``strides``).
    Returns:
      ``Layout(tuple(flat.shape), tuple(flat.strides))`` (rank 0 gives ``():()``); extents
      and strides in elements, as given (no reordering: mode 0 is dim 0).
    Raises:
      LayoutError: ``flat`` has no ``shape`` or no ``strides`` attribute (a tuple, a
        ``jax.Array`` or a cute Layout, whose attribute is ``stride``); or a stride is not an
        integer (from :class:`Layout`).
    Example:
      >>> from functional_strides import Layout as FlatLayout
      >>> L = from_layout(FlatLayout((3, 4), (4, 1)))
      >>> L, L(1), L((0, 1))        # 1-D index 1 is coordinate (1, 0): colexicographic
      (Layout((3, 4),(4, 1)), 4, 1)
      >>> to_layout(L, 7) == FlatLayout((3, 4), (4, 1), 7)
      True

    Semantics: CuTe ``make_layout(shape, stride)`` of a ``torch.Tensor``'s ``size()``/``stride()``.
    """
    if not hasattr(flat, "shape") or not hasattr(flat, "strides"):
        raise LayoutError("from_layout: flat must be a functional_strides.Layout "
                          f"(got {type(flat).__name__}).")
    return Layout(tuple(flat.shape), tuple(flat.strides))


def layout_table(layout: Any) -> str:
    """A text table of a rank-1 or rank-2 layout: row ``i``, column ``j`` holds ``layout(i, j)``.

    Rows index mode 0 and columns mode 1 (each by its 1-D colexicographic index), as CuTe's
    ``print_layout``; a rank-1 layout is one column.

    Args:
      layout: a Layout or ComposedLayout of rank 1 or 2.
    Returns:
      The table as a string (one line per row, a header of column indices).
    Raises:
      LayoutError: rank above 2.
    Example:
      >>> print(layout_table(Layout((2, 3), (3, 1))))
      (2, 3):(3, 1)
           0 1 2
         +------
       0 | 0 1 2
       1 | 3 4 5

    Semantics: CuTe ``print_layout``."""
    if not is_layout(layout):
        raise LayoutError(f"layout_table: layout must be a cute.Layout (got {type(layout).__name__}).")
    if len(layout) > 2:
        raise LayoutError(f"layout_table: layout {layout} has rank {len(layout)}; tables show rank 1 or 2 "
                          "(slice it, or group modes with make_layout first).")
    rows = size(layout[0]) if len(layout) == 2 or is_tuple(getattr(layout, "shape", None)) else size(layout)
    cols = size(layout[1]) if len(layout) == 2 else 1
    cell = [[layout((i, j)) if len(layout) == 2 else layout(i) for j in range(cols)] for i in range(rows)]
    width = max(len(str(v)) for row in cell for v in row) + 1
    lw = len(str(rows - 1)) + 1
    lines = [str(layout),
             " " * (lw + 2) + "".join(f"{j:>{width}}" for j in range(cols)),
             " " * lw + " +" + "-" * (width * cols)]
    lines += [f"{i:>{lw}} |" + "".join(f"{v:>{width}}" for v in row) for i, row in enumerate(cell)]
    return "\n".join(lines)

"""CuTe's layout algebra with ``pycute``'s names, and tiled views of ``StridedArray``\\ s.

``from functional_strides.cute import *`` gives the names of CUTLASS's ``pycute``
(``Layout``, ``composition``, ``complement``, ``logical_divide``, ``idx2crd``, ...) over
immutable, hashable layouts; see ``docs/cute.md``. Three functions connect the algebra
to arrays:

* :func:`to_layout` / :func:`from_layout` convert between a CuTe :class:`Layout` and the
  flat, row-major :class:`functional_strides.Layout`. Mode ``k`` of the CuTe layout is dim
  ``k`` of the flat one, so ``x[i, j]`` is element ``L((i, j))``; only the 1-D order
  differs: CuTe's ``L(k)`` counts colexicographically (mode 0 fastest), PyTorch's
  ``x.reshape(-1)[k]`` row-major (the last dim fastest).
* :func:`tile` and :func:`logical_divide` (given a ``StridedArray``) return views whose
  layout the algebra computed; they materialise through the normal lowering.
"""

from __future__ import annotations

from typing import Any

from . import _cute_divide as _divide
from . import _cute_int_tuple as _int_tuple
from . import _cute_layout as _algebra
from . import _cute_swizzle as _swizzle
from ._cute_divide import blocked_product as blocked_product
from ._cute_divide import flat_divide as flat_divide
from ._cute_divide import hier_unzip as hier_unzip
from ._cute_divide import logical_product as logical_product
from ._cute_divide import raked_product as raked_product
from ._cute_divide import tiled_divide as tiled_divide
from ._cute_divide import tiled_product as tiled_product
from ._cute_divide import zipped_divide as zipped_divide
from ._cute_divide import zipped_product as zipped_product
from ._cute_int_tuple import Integer as Integer
from ._cute_int_tuple import crd2crd as crd2crd
from ._cute_int_tuple import crd2idx as crd2idx
from ._cute_int_tuple import elem_scale as elem_scale
from ._cute_int_tuple import flatten as flatten
from ._cute_int_tuple import has_none as has_none
from ._cute_int_tuple import idx2crd as idx2crd
from ._cute_int_tuple import inner_product as inner_product
from ._cute_int_tuple import is_int as is_int
from ._cute_int_tuple import is_tuple as is_tuple
from ._cute_int_tuple import prefix_product as prefix_product
from ._cute_int_tuple import product as product
from ._cute_int_tuple import shape_div as shape_div
from ._cute_int_tuple import signum as signum
from ._cute_int_tuple import slice_ as slice_
from ._cute_int_tuple import tuple_max as tuple_max
from ._cute_layout import Layout as Layout
from ._cute_layout import LayoutBase as LayoutBase
from ._cute_layout import coalesce as coalesce
from ._cute_layout import complement as complement
from ._cute_layout import composition as composition
from ._cute_layout import cosize as cosize
from ._cute_layout import depth as depth
from ._cute_layout import filter as filter
from ._cute_layout import is_layout as is_layout
from ._cute_layout import left_inverse as left_inverse
from ._cute_layout import make_layout as make_layout
from ._cute_layout import rank as rank
from ._cute_layout import right_inverse as right_inverse
from ._cute_layout import size as size
from ._cute_layout import slice_and_offset as slice_and_offset
from ._cute_swizzle import ComposedLayout as ComposedLayout
from ._cute_swizzle import Swizzle as Swizzle
from ._errors import LayoutError
from ._layout import Layout as FlatLayout
from ._strided import StridedArray

__all__ = sorted([
    *_int_tuple.__all__,
    *_algebra.__all__,
    *_divide.__all__,
    *_swizzle.__all__,
    "from_layout",
    "layout_table",
    "tile",
    "to_layout",
])
__all__.remove("coalesce_modes")


def to_layout(layout: Layout, offset: Any = 0) -> FlatLayout:
    """The flat :class:`functional_strides.Layout` of a CuTe layout: its leaf modes as dims, in order.

    Dim ``k`` of the result is leaf mode ``k`` of ``flatten(layout)`` (extent and stride
    unchanged), so the element at coordinate ``(i_0, i_1, ...)`` is the same in both; the
    nesting is dropped. A rank-1 int-shaped layout gives a 1-D layout.

    Args:
      layout: a CuTe :class:`Layout` (strides of any sign, as CuTe's); offset: storage
        index of coordinate 0, in elements (CuTe keeps it in the pointer).
    Returns:
      ``functional_strides.Layout(flatten(shape), flatten(stride), offset)``.
    Raises:
      LayoutError: a ComposedLayout. StorageError: negative strides reach below index 0
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


def _divided(x: Any, tiler: Any, op: str) -> tuple[StridedArray, Layout]:
    if not isinstance(x, StridedArray):
        raise LayoutError(f"{op}: x must be a StridedArray (got {type(x).__name__}); use "
                          "functional_strides.from_array(x) first.")
    if x.layout.is_empty:
        raise LayoutError(f"{op}: array of shape {x.shape} is empty; there is nothing to tile.")
    if is_int(tiler) or isinstance(tiler, Layout):
        tiler = (tiler,)
    if isinstance(tiler, list):
        tiler = tuple(tiler)
    if not is_tuple(tiler) or len(tiler) > x.ndim or len(tiler) == 0:
        raise LayoutError(f"{op}: tiler must give one tile (an int or a cute.Layout) for each of the first "
                          f"1..{x.ndim} dims (got tiler={tiler!r} for shape {x.shape}).")
    modes = from_layout(x.layout)
    divided = _divide.logical_divide(modes, tiler)
    for d, t in enumerate(tiler):
        if size(divided[d]) != x.shape[d]:
            raise LayoutError(
                f"{op}: tile {t!r} does not divide dim {d} of extent {x.shape[d]} (layout {x.layout}); the "
                f"tiles would cover {size(divided[d])} elements. Pick tiles whose size divides the extent, "
                "or narrow()/pad the array first.")
    return x, divided


def logical_divide(x: Any, tiler: Any) -> Any:
    """CuTe's ``logical_divide``: of two layouts, the algebra; of a ``StridedArray``, a tiled view.

    For a ``StridedArray`` ``x`` and a tiler with one entry per leading dim (an int ``t``
    meaning the tile ``t:1``, or a CuTe Layout), dim ``d`` becomes the dims ``(tile_d,
    rest_d)`` (each flattened): for int tiles, ``y[a, i, b, j] == x[i*t0 + a, j*t1 + b]``.
    Dims past the tiler are kept.

    Args:
      x: a ``StridedArray`` (or a CuTe Layout; then ``tiler`` is ``layoutB``).
      tiler: an int, a Layout, or a tuple of them (one per leading dim / mode).
    Returns:
      A view sharing ``x``'s storage and offset (a Layout for Layout input).
    Raises:
      LayoutError: the tile does not divide the dim (message gives extent and tile), an
        empty array, a tiler longer than the rank, or the algebra's errors.
    Example:
      >>> import numpy as np, functional_strides as fs
      >>> x = fs.from_array(np.arange(24).reshape(4, 6))
      >>> y = logical_divide(x, (2, 3))
      >>> y.shape, y.stride(), int(np.asarray(y)[1, 1, 2, 1])   # x[1*2 + 1, 1*3 + 2]
      ((2, 2, 3, 2), (6, 12, 1, 3), 23)

    Semantics: CuTe ``logical_divide(tensor, tiler)``; ``pycute.logical_divide`` for layouts."""
    if not isinstance(x, StridedArray):
        return _divide.logical_divide(x, tiler)
    x, divided = _divided(x, tiler, "logical_divide")
    return x._view(to_layout(divided, x.layout.offset))


def tile(x: StridedArray, tiler: Any) -> StridedArray:
    """Blocked view of ``x``: the tile index dims first, then the dims inside one tile.

    With int tiles ``(t0, t1)`` on an ``(M, N)`` array the view has shape
    ``(M // t0, N // t1, t0, t1)`` and ``y[i, j]`` is the ``(i, j)``-th block
    ``x[i*t0:(i+1)*t0, j*t1:(j+1)*t1]``. CuTe Layout tiles give strided or permuted tiles.
    Dims past the tiler join the tile-index dims.

    Args:
      x: a ``StridedArray``; tiler: an int, a CuTe Layout or a tuple of them, one per
        leading dim.
    Returns:
      A view (no copy) of rank ``rest dims + tile dims``: CuTe's ``zipped_divide`` with its two
      halves swapped, flattened.
    Raises:
      LayoutError: as :func:`logical_divide`.
    Example:
      >>> import numpy as np, functional_strides as fs
      >>> x = fs.from_array(np.arange(16).reshape(4, 4))
      >>> np.asarray(tile(x, (2, 2))[1, 0]).tolist()
      [[8, 9], [12, 13]]

    Semantics: CuTe ``zipped_divide(tensor, tiler)``; ``tile(x, t)[i, j] == local_tile(x, t, (i, j))``."""
    x, divided = _divided(x, tiler, "tile")
    r = len(_as_tuple(tiler))
    tiles = [divided[d][0] for d in range(r)]
    rests = [divided[d][1] for d in range(r)]
    kept = [divided[d] for d in range(r, len(divided))]
    return x._view(to_layout(make_layout(*rests, *kept, *tiles), x.layout.offset))


def _as_tuple(tiler: Any) -> tuple[Any, ...]:
    if is_int(tiler) or isinstance(tiler, Layout):
        return (tiler,)
    return tuple(tiler)

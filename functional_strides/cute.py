r"""CuTe's layout algebra with ``pycute``'s names, and tiled views of ``StridedArray``\ s.

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

from ._src.array.cute_views import logical_divide as logical_divide
from ._src.array.cute_views import tile as tile
from ._src.cute.divide import blocked_product as blocked_product
from ._src.cute.divide import flat_divide as flat_divide
from ._src.cute.divide import hier_unzip as hier_unzip
from ._src.cute.divide import logical_product as logical_product
from ._src.cute.divide import raked_product as raked_product
from ._src.cute.divide import tiled_divide as tiled_divide
from ._src.cute.divide import tiled_product as tiled_product
from ._src.cute.divide import zipped_divide as zipped_divide
from ._src.cute.divide import zipped_product as zipped_product
from ._src.cute.flat import from_layout as from_layout
from ._src.cute.flat import layout_table as layout_table
from ._src.cute.flat import to_layout as to_layout
from ._src.cute.int_tuple import Integer as Integer
from ._src.cute.int_tuple import crd2crd as crd2crd
from ._src.cute.int_tuple import crd2idx as crd2idx
from ._src.cute.int_tuple import elem_scale as elem_scale
from ._src.cute.int_tuple import flatten as flatten
from ._src.cute.int_tuple import has_none as has_none
from ._src.cute.int_tuple import idx2crd as idx2crd
from ._src.cute.int_tuple import inner_product as inner_product
from ._src.cute.int_tuple import is_int as is_int
from ._src.cute.int_tuple import is_tuple as is_tuple
from ._src.cute.int_tuple import prefix_product as prefix_product
from ._src.cute.int_tuple import product as product
from ._src.cute.int_tuple import shape_div as shape_div
from ._src.cute.int_tuple import signum as signum
from ._src.cute.int_tuple import slice_ as slice_
from ._src.cute.int_tuple import tuple_max as tuple_max
from ._src.cute.layout import Layout as Layout
from ._src.cute.layout import LayoutBase as LayoutBase
from ._src.cute.layout import coalesce as coalesce
from ._src.cute.layout import complement as complement
from ._src.cute.layout import composition as composition
from ._src.cute.layout import cosize as cosize
from ._src.cute.layout import depth as depth
from ._src.cute.layout import filter as filter
from ._src.cute.layout import is_layout as is_layout
from ._src.cute.layout import left_inverse as left_inverse
from ._src.cute.layout import make_layout as make_layout
from ._src.cute.layout import rank as rank
from ._src.cute.layout import right_inverse as right_inverse
from ._src.cute.layout import size as size
from ._src.cute.layout import slice_and_offset as slice_and_offset
from ._src.cute.swizzle import ComposedLayout as ComposedLayout
from ._src.cute.swizzle import Swizzle as Swizzle

__all__ = [
    "ComposedLayout",
    "Integer",
    "Layout",
    "LayoutBase",
    "Swizzle",
    "blocked_product",
    "coalesce",
    "complement",
    "composition",
    "cosize",
    "crd2crd",
    "crd2idx",
    "depth",
    "elem_scale",
    "filter",
    "flat_divide",
    "flatten",
    "from_layout",
    "has_none",
    "hier_unzip",
    "idx2crd",
    "inner_product",
    "is_int",
    "is_layout",
    "is_tuple",
    "layout_table",
    "left_inverse",
    "logical_divide",
    "logical_product",
    "make_layout",
    "prefix_product",
    "product",
    "raked_product",
    "rank",
    "right_inverse",
    "shape_div",
    "signum",
    "size",
    "slice_",
    "slice_and_offset",
    "tile",
    "tiled_divide",
    "tiled_product",
    "to_layout",
    "tuple_max",
    "zipped_divide",
    "zipped_product",
]

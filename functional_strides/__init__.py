"""functional_strides: PyTorch-style strided views (shape, strides, offset) for JAX.

A ``StridedArray`` is a flat 1-D JAX storage plus a :class:`Layout`; view ops change only
the layout, ``contiguous()`` materialises it with in-graph index arithmetic.
"""

from __future__ import annotations

from . import _pytree as _pytree  # registers Layout as a pytree
from . import _traced as _traced  # offset arithmetic on traced values, for the view algebra
from . import ascend as ascend
from . import cute as cute
from . import numpy as numpy
from . import oracle as oracle
from . import sharded as sharded
from . import views as views
from ._caches import clear_caches as clear_caches
from ._dtype_views import view_as_complex as view_as_complex
from ._dtype_views import view_as_real as view_as_real
from ._errors import IndexTypeError as IndexTypeError
from ._errors import LayoutError as LayoutError
from ._errors import LayoutTypeError as LayoutTypeError
from ._errors import OutOfRangeError as OutOfRangeError
from ._errors import OverlapError as OverlapError
from ._errors import StorageError as StorageError
from ._errors import ViewError as ViewError
from ._explain import Explanation as Explanation
from ._explain import explain as explain
from ._interop import from_dlpack as from_dlpack
from ._interop import from_numpy as from_numpy
from ._interop import from_torch as from_torch
from ._interop import to_torch as to_torch
from ._layout import Layout as Layout
from ._layout import contiguous_strides as contiguous_strides
from ._lowering import METHODS as READ_METHODS
from ._lowering import index_dtype as index_dtype
from ._lowering import materialize as materialize
from ._lowering import read_plan as read_plan
from ._lowering import storage_indices as storage_indices
from ._memory_format import MemoryFormat as MemoryFormat
from ._memory_format import channels_last as channels_last
from ._memory_format import channels_last_3d as channels_last_3d
from ._memory_format import contiguous_format as contiguous_format
from ._memory_format import preserve_format as preserve_format
from ._ops import T as T
from ._ops import as_strided_scatter as as_strided_scatter
from ._ops import broadcast_to as broadcast_to
from ._ops import chunk as chunk
from ._ops import clone as clone
from ._ops import contiguous as contiguous
from ._ops import diagonal as diagonal
from ._ops import diagonal_scatter as diagonal_scatter
from ._ops import expand as expand
from ._ops import expand_as as expand_as
from ._ops import flatten as flatten
from ._ops import flip as flip
from ._ops import fliplr as fliplr
from ._ops import flipud as flipud
from ._ops import movedim as movedim
from ._ops import mT as mT
from ._ops import narrow as narrow
from ._ops import permute as permute
from ._ops import reshape as reshape
from ._ops import select as select
from ._ops import select_scatter as select_scatter
from ._ops import slice_scatter as slice_scatter
from ._ops import split as split
from ._ops import squeeze as squeeze
from ._ops import t as t
from ._ops import transpose as transpose
from ._ops import unbind as unbind
from ._ops import unflatten as unflatten
from ._ops import unfold as unfold
from ._ops import unsqueeze as unsqueeze
from ._ops import view as view
from ._overlap import has_internal_overlap as has_internal_overlap
from ._overlap import internal_overlap_witness as internal_overlap_witness
from ._overlap import overlap_witness as overlap_witness
from ._scatter import METHODS as WRITE_METHODS
from ._scatter import write as write
from ._scatter import write_plan as write_plan
from ._strided import StridedArray as StridedArray
from ._strided import as_strided as as_strided
from ._strided import from_array as from_array
from ._strided import overlaps as overlaps
from ._strided import shares_storage as shares_storage

__version__ = "0.1.0"

__all__ = [
    "Explanation",
    "IndexTypeError",
    "Layout",
    "LayoutError",
    "LayoutTypeError",
    "MemoryFormat",
    "OutOfRangeError",
    "OverlapError",
    "READ_METHODS",
    "StorageError",
    "StridedArray",
    "T",
    "ViewError",
    "WRITE_METHODS",
    "as_strided",
    "as_strided_scatter",
    "ascend",
    "broadcast_to",
    "channels_last",
    "channels_last_3d",
    "chunk",
    "clear_caches",
    "clone",
    "contiguous",
    "contiguous_format",
    "contiguous_strides",
    "cute",
    "diagonal",
    "diagonal_scatter",
    "expand",
    "expand_as",
    "explain",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "from_array",
    "from_dlpack",
    "from_numpy",
    "from_torch",
    "has_internal_overlap",
    "index_dtype",
    "internal_overlap_witness",
    "mT",
    "materialize",
    "movedim",
    "narrow",
    "numpy",
    "oracle",
    "overlap_witness",
    "overlaps",
    "permute",
    "preserve_format",
    "read_plan",
    "reshape",
    "select",
    "select_scatter",
    "sharded",
    "shares_storage",
    "slice_scatter",
    "split",
    "squeeze",
    "storage_indices",
    "t",
    "to_torch",
    "transpose",
    "unbind",
    "unflatten",
    "unfold",
    "unsqueeze",
    "view",
    "view_as_complex",
    "view_as_real",
    "views",
    "write",
    "write_plan",
]

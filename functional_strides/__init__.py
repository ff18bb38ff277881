"""functional_strides: PyTorch-style strided views (shape, strides, offset) for JAX.

A ``StridedArray`` is a flat 1-D JAX storage plus a :class:`Layout`; view ops change only
the layout, ``contiguous()`` materialises it with in-graph index arithmetic.
"""

from __future__ import annotations

from . import _pytree as _pytree  # registers Layout as a pytree
from . import _traced as _traced  # offset arithmetic on traced values, for the view algebra
from . import ascend as ascend
from . import cute as cute
from . import dtype_views as dtype_views
from . import interop as interop
from . import memory_format as memory_format
from . import numpy as numpy
from . import oracle as oracle
from . import overlap as overlap
from . import scatter as scatter
from . import sharded as sharded
from . import views as views
from .dtype_views import view_as_complex as view_as_complex
from .dtype_views import view_as_real as view_as_real
from .errors import IndexTypeError as IndexTypeError
from .errors import LayoutError as LayoutError
from .errors import LayoutTypeError as LayoutTypeError
from .errors import OutOfRangeError as OutOfRangeError
from .errors import OverlapError as OverlapError
from .errors import StorageError as StorageError
from .errors import ViewError as ViewError
from .explain import Explanation as Explanation
from .explain import explain as explain
from .interop import from_dlpack as from_dlpack
from .interop import from_numpy as from_numpy
from .interop import from_torch as from_torch
from .interop import to_torch as to_torch
from .layout import Layout as Layout
from .layout import contiguous_strides as contiguous_strides
from .lowering import METHODS as METHODS
from .lowering import materialize as materialize
from .lowering import read_plan as read_plan
from .memory_format import MemoryFormat as MemoryFormat
from .memory_format import channels_last as channels_last
from .memory_format import channels_last_3d as channels_last_3d
from .memory_format import contiguous_format as contiguous_format
from .memory_format import preserve_format as preserve_format
from .ops import T as T
from .ops import as_strided_scatter as as_strided_scatter
from .ops import broadcast_to as broadcast_to
from .ops import chunk as chunk
from .ops import clone as clone
from .ops import contiguous as contiguous
from .ops import diagonal as diagonal
from .ops import diagonal_scatter as diagonal_scatter
from .ops import expand as expand
from .ops import expand_as as expand_as
from .ops import flatten as flatten
from .ops import flip as flip
from .ops import fliplr as fliplr
from .ops import flipud as flipud
from .ops import movedim as movedim
from .ops import mT as mT
from .ops import narrow as narrow
from .ops import permute as permute
from .ops import reshape as reshape
from .ops import select as select
from .ops import select_scatter as select_scatter
from .ops import slice_scatter as slice_scatter
from .ops import split as split
from .ops import squeeze as squeeze
from .ops import t as t
from .ops import transpose as transpose
from .ops import unbind as unbind
from .ops import unflatten as unflatten
from .ops import unfold as unfold
from .ops import unsqueeze as unsqueeze
from .ops import view as view
from .scatter import write_plan as write_plan
from .strided import StridedArray as StridedArray
from .strided import as_strided as as_strided
from .strided import from_array as from_array
from .strided import overlaps as overlaps
from .strided import shares_storage as shares_storage

__version__ = "0.1.0"

__all__ = [
    "Explanation",
    "IndexTypeError",
    "Layout",
    "LayoutError",
    "LayoutTypeError",
    "METHODS",
    "MemoryFormat",
    "OutOfRangeError",
    "OverlapError",
    "StorageError",
    "StridedArray",
    "T",
    "ViewError",
    "as_strided",
    "as_strided_scatter",
    "ascend",
    "broadcast_to",
    "channels_last",
    "channels_last_3d",
    "chunk",
    "clone",
    "contiguous",
    "contiguous_format",
    "contiguous_strides",
    "cute",
    "diagonal",
    "diagonal_scatter",
    "dtype_views",
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
    "interop",
    "mT",
    "materialize",
    "memory_format",
    "movedim",
    "narrow",
    "numpy",
    "oracle",
    "overlap",
    "overlaps",
    "permute",
    "preserve_format",
    "read_plan",
    "reshape",
    "scatter",
    "select",
    "select_scatter",
    "shares_storage",
    "sharded",
    "slice_scatter",
    "split",
    "squeeze",
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
    "write_plan",
]

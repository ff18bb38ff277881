"""functional_strides: PyTorch-style strided views (shape, strides, offset) for JAX.

A ``StridedArray`` is a flat 1-D JAX storage plus a :class:`Layout`; view ops change only
the layout, ``contiguous()`` materialises it with in-graph index arithmetic.
"""

from __future__ import annotations

from . import ascend as ascend
from . import cute as cute
from . import numpy as numpy
from . import oracle as oracle
from . import sharded as sharded
from . import views as views
from ._src.array import pytree as _pytree  # noqa: F401 - registers Layout as a pytree
from ._src.array import traced as _traced  # noqa: F401 - offset arithmetic on traced values, for the view algebra
from ._src.array.interop import from_dlpack as from_dlpack
from ._src.array.interop import from_numpy as from_numpy
from ._src.array.interop import from_torch as from_torch
from ._src.array.interop import to_torch as to_torch
from ._src.array.ops import T as T
from ._src.array.ops import as_strided_scatter as as_strided_scatter
from ._src.array.ops import broadcast_to as broadcast_to
from ._src.array.ops import chunk as chunk
from ._src.array.ops import clone as clone
from ._src.array.ops import contiguous as contiguous
from ._src.array.ops import diagonal as diagonal
from ._src.array.ops import diagonal_scatter as diagonal_scatter
from ._src.array.ops import expand as expand
from ._src.array.ops import expand_as as expand_as
from ._src.array.ops import flatten as flatten
from ._src.array.ops import flip as flip
from ._src.array.ops import fliplr as fliplr
from ._src.array.ops import flipud as flipud
from ._src.array.ops import movedim as movedim
from ._src.array.ops import mT as mT
from ._src.array.ops import narrow as narrow
from ._src.array.ops import permute as permute
from ._src.array.ops import reshape as reshape
from ._src.array.ops import select as select
from ._src.array.ops import select_scatter as select_scatter
from ._src.array.ops import slice_scatter as slice_scatter
from ._src.array.ops import split as split
from ._src.array.ops import squeeze as squeeze
from ._src.array.ops import t as t
from ._src.array.ops import transpose as transpose
from ._src.array.ops import unbind as unbind
from ._src.array.ops import unflatten as unflatten
from ._src.array.ops import unfold as unfold
from ._src.array.ops import unsqueeze as unsqueeze
from ._src.array.ops import view as view
from ._src.array.ops import view_as_complex as view_as_complex
from ._src.array.ops import view_as_real as view_as_real
from ._src.array.strided import StridedArray as StridedArray
from ._src.array.strided import as_strided as as_strided
from ._src.array.strided import from_array as from_array
from ._src.array.strided import from_ref as from_ref
from ._src.array.strided import overlaps as overlaps
from ._src.array.strided import shares_storage as shares_storage
from ._src.caches import clear_caches as clear_caches
from ._src.core.builds import StaleBuildWarning as StaleBuildWarning
from ._src.core.config import config as config
from ._src.core.errors import ForkError as ForkError
from ._src.core.errors import IndexTypeError as IndexTypeError
from ._src.core.errors import LayoutError as LayoutError
from ._src.core.errors import LayoutTypeError as LayoutTypeError
from ._src.core.errors import OutOfRangeError as OutOfRangeError
from ._src.core.errors import OverlapError as OverlapError
from ._src.core.errors import StorageError as StorageError
from ._src.core.errors import TooHardError as TooHardError
from ._src.core.errors import ViewError as ViewError
from ._src.core.layout import Layout as Layout
from ._src.core.layout import contiguous_strides as contiguous_strides
from ._src.core.memory_format import MemoryFormat as MemoryFormat
from ._src.core.memory_format import channels_last as channels_last
from ._src.core.memory_format import channels_last_3d as channels_last_3d
from ._src.core.memory_format import contiguous_format as contiguous_format
from ._src.core.memory_format import preserve_format as preserve_format
from ._src.core.overlap.overlap import has_internal_overlap as has_internal_overlap
from ._src.core.overlap.overlap import internal_overlap_witness as internal_overlap_witness
from ._src.core.overlap.overlap import overlap_witness as overlap_witness
from ._src.core.strategies import Plan as Plan
from ._src.explain.explain import Explanation as Explanation
from ._src.explain.explain import explain as explain
from ._src.lowering.reads import METHODS as READ_METHODS
from ._src.lowering.reads import index_dtype as index_dtype
from ._src.lowering.reads import read_plan as read_plan
from ._src.lowering.reads import storage_indices as storage_indices
from ._src.lowering.writes import METHODS as WRITE_METHODS
from ._src.lowering.writes import write_plan as write_plan
from ._src.sharding.dispatch import materialize as materialize
from ._src.sharding.dispatch import write as write

__version__ = "0.1.0"

__all__ = [
    "Explanation",
    "ForkError",
    "IndexTypeError",
    "Layout",
    "LayoutError",
    "LayoutTypeError",
    "MemoryFormat",
    "OutOfRangeError",
    "OverlapError",
    "Plan",
    "READ_METHODS",
    "StaleBuildWarning",
    "StorageError",
    "StridedArray",
    "T",
    "TooHardError",
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
    "config",
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
    "from_ref",
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

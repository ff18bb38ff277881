"""PyTorch's view rules as pure functions ``Layout -> Layout`` (no ``jax``), one file per kind
of op; :mod:`functional_strides.views` is their public face (its module docstring is the
overview, and each function holds its op's one full docstring). See ``README.md`` here."""

from __future__ import annotations

# private helpers other modules of the library use
from .common import _dims_tuple as _dims_tuple
from .common import _index as _index
from .common import canonical_dim as canonical_dim
from .common import infer_size as infer_size
from .dims import expand as expand
from .dims import flip as flip
from .dims import fliplr as fliplr
from .dims import flipud as flipud
from .dims import movedim as movedim
from .dims import mT as mT
from .dims import permute as permute
from .dims import reverse_dims as reverse_dims
from .dims import squeeze as squeeze
from .dims import t as t
from .dims import transpose as transpose
from .dims import unsqueeze as unsqueeze
from .indexing import chunk as chunk
from .indexing import diagonal as diagonal
from .indexing import getitem as getitem
from .indexing import narrow as narrow
from .indexing import select as select
from .indexing import split as split
from .indexing import unbind as unbind
from .indexing import unfold as unfold
from .reshape import _chunks as _chunks
from .reshape import as_strided as as_strided
from .reshape import flatten_shape as flatten_shape
from .reshape import unflatten_shape as unflatten_shape
from .reshape import view as view
from .reshape import view_strides as view_strides

__all__ = [
    "as_strided",
    "canonical_dim",
    "chunk",
    "diagonal",
    "expand",
    "flatten_shape",
    "flip",
    "fliplr",
    "flipud",
    "getitem",
    "infer_size",
    "movedim",
    "mT",
    "narrow",
    "permute",
    "reverse_dims",
    "select",
    "split",
    "squeeze",
    "t",
    "transpose",
    "unbind",
    "unflatten_shape",
    "unfold",
    "unsqueeze",
    "view",
    "view_strides",
]

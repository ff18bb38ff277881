"""View algebra: PyTorch's view ops as pure functions ``Layout -> Layout``.

One place where view semantics live. Every function here returns a new :class:`~functional_strides.Layout`
(or a tuple of them) and never touches storage; ``StridedArray`` methods re-wrap the result
over the same storage. Results (shape, strides, offset, and which inputs are refused) equal
PyTorch's for the same arguments. Strides and offsets are in elements.
"""

from ._src.core.views import as_strided as as_strided
from ._src.core.views import canonical_dim as canonical_dim
from ._src.core.views import chunk as chunk
from ._src.core.views import diagonal as diagonal
from ._src.core.views import expand as expand
from ._src.core.views import flatten_shape as flatten_shape
from ._src.core.views import flip as flip
from ._src.core.views import fliplr as fliplr
from ._src.core.views import flipud as flipud
from ._src.core.views import getitem as getitem
from ._src.core.views import infer_size as infer_size
from ._src.core.views import movedim as movedim
from ._src.core.views import mT as mT
from ._src.core.views import narrow as narrow
from ._src.core.views import permute as permute
from ._src.core.views import reverse_dims as reverse_dims
from ._src.core.views import select as select
from ._src.core.views import split as split
from ._src.core.views import squeeze as squeeze
from ._src.core.views import t as t
from ._src.core.views import transpose as transpose
from ._src.core.views import unbind as unbind
from ._src.core.views import unflatten_shape as unflatten_shape
from ._src.core.views import unfold as unfold
from ._src.core.views import unsqueeze as unsqueeze
from ._src.core.views import view as view
from ._src.core.views import view_strides as view_strides

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
    "mT",
    "movedim",
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

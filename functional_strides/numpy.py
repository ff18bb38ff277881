"""NumPy's view functions with NumPy's names, arguments and semantics, on ``StridedArray``.

``import functional_strides.numpy as fnp``: each function takes a ``StridedArray``, a NumPy
array (imported with its own strides by :func:`functional_strides.from_numpy`) or a JAX array
(wrapped as a contiguous one by :func:`functional_strides.from_array`) and returns a
``StridedArray``. Where NumPy returns a view, so does this module: a new layout over
the same storage, with the shape, element strides (``a.strides // a.itemsize``), offset (the
data pointer's distance from the buffer start, in elements) and values NumPy's view has,
negative strides included. Where NumPy copies (``reshape`` and ``ravel`` of layouts that no
view reads in the requested order), the result is a ``StridedArray`` over a fresh dense
storage, laid out as NumPy lays out its copy. ``StridedArray.strides`` gives strides in bytes,
as ``ndarray.strides``.

Differences from NumPy: :func:`as_strided` checks bounds at both ends (NumPy reads past its
buffer); views are read-only and writes are functional (``x.at[idx].set(v)``), so NumPy's
``writeable`` and ``subok`` arguments do not exist here; basic indexing is the function
:func:`getitem` (``x[key]`` follows PyTorch and refuses negative steps).

Example:
  >>> import numpy as np, jax.numpy as jnp
  >>> import functional_strides.numpy as fnp
  >>> x = fnp.getitem(jnp.arange(12.0).reshape(3, 4), np.s_[::-1, 1:])
  >>> x.shape, x.strides, x.storage_offset()
  ((3, 3), (-16, 4), 9)
  >>> fnp.ravel(x).tolist()                    # NumPy copies here too
  [9.0, 10.0, 11.0, 5.0, 6.0, 7.0, 1.0, 2.0, 3.0]
"""

from ._src.array.numpy_functions import as_strided as as_strided
from ._src.array.numpy_functions import broadcast_to as broadcast_to
from ._src.array.numpy_functions import diagonal as diagonal
from ._src.array.numpy_functions import expand_dims as expand_dims
from ._src.array.numpy_functions import flip as flip
from ._src.array.numpy_functions import getitem as getitem
from ._src.array.numpy_functions import may_share_memory as may_share_memory
from ._src.array.numpy_functions import moveaxis as moveaxis
from ._src.array.numpy_functions import ravel as ravel
from ._src.array.numpy_functions import reshape as reshape
from ._src.array.numpy_functions import rot90 as rot90
from ._src.array.numpy_functions import shares_memory as shares_memory
from ._src.array.numpy_functions import sliding_window_view as sliding_window_view
from ._src.array.numpy_functions import squeeze as squeeze
from ._src.array.numpy_functions import swapaxes as swapaxes
from ._src.array.numpy_functions import transpose as transpose

__all__ = [
    "as_strided",
    "broadcast_to",
    "diagonal",
    "expand_dims",
    "flip",
    "getitem",
    "may_share_memory",
    "moveaxis",
    "ravel",
    "reshape",
    "rot90",
    "shares_memory",
    "sliding_window_view",
    "squeeze",
    "swapaxes",
    "transpose",
]

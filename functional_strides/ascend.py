"""The Ascend vocabulary: CANN's ``aclTensor`` view records, ATB ``AsStrided`` and Ascend C ``Layout``.

Thin names over the core, as the Ascend documents spell them:

* :class:`AclTensor` -- view shape, strides and offset over a storage shape (opbase's
  ``aclTensor``), with ``with_view_shape`` (``SetViewShape``), ``numel`` and ``is_empty``;
  at most :data:`MAX_DIM_NUM` dims.
* :func:`as_strided` -- ATB ``AsStridedOperation``: ``y[i, j, ...] = x.flat[offset + sum
  i_k * stride_k]`` with ATB's limits (<= 8 dims, sizes > 0, strides >= 0, one offset >= 0,
  float16/int64 inputs).
* :func:`make_shape`, :func:`make_stride`, :func:`make_layout`, :func:`get_shape`,
  :func:`get_stride` -- Ascend C's ``MakeShape``/``MakeStride``/``MakeLayout``/``GetShape``/
  ``GetStride`` over :class:`functional_strides.cute.Layout`; call a layout with a
  coordinate to get its offset (``layout(coord)``).

Strides and offsets are counted in elements.
"""

from ._src.array.ascend import AS_STRIDED_DTYPES as AS_STRIDED_DTYPES
from ._src.array.ascend import AS_STRIDED_MAX_DIMS as AS_STRIDED_MAX_DIMS
from ._src.array.ascend import MAX_DIM_NUM as MAX_DIM_NUM
from ._src.array.ascend import AclTensor as AclTensor
from ._src.array.ascend import as_strided as as_strided
from ._src.array.ascend import get_shape as get_shape
from ._src.array.ascend import get_stride as get_stride
from ._src.array.ascend import make_layout as make_layout
from ._src.array.ascend import make_shape as make_shape
from ._src.array.ascend import make_stride as make_stride
from ._src.array.ascend import to_contiguous_strides as to_contiguous_strides

__all__ = [
    "AS_STRIDED_DTYPES",
    "AS_STRIDED_MAX_DIMS",
    "AclTensor",
    "MAX_DIM_NUM",
    "as_strided",
    "get_shape",
    "get_stride",
    "make_layout",
    "make_shape",
    "make_stride",
    "to_contiguous_strides",
]

"""The implementation of :mod:`functional_strides.ascend` (its public names are documented there)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import LayoutError
from ..core.layout import Layout as FlatLayout
from ..core.layout import boxed
from ..cute import layout as cute
from ..cute.int_tuple import normalize
from .strided import StridedArray, from_array

__all__ = [
    "AS_STRIDED_DTYPES",
    "AS_STRIDED_MAX_DIMS",
    "MAX_DIM_NUM",
    "AclTensor",
    "as_strided",
    "get_shape",
    "get_stride",
    "make_layout",
    "make_shape",
    "make_stride",
    "to_contiguous_strides",
]

#: Most dims an opbase ``op::Shape`` holds (``common_types.h``).
MAX_DIM_NUM = 25
#: Most dims of ATB ``AsStridedParam.size``.
AS_STRIDED_MAX_DIMS = 8
#: Input dtypes ATB ``AsStridedOperation`` accepts.
AS_STRIDED_DTYPES = ("float16", "int64")


def _dims(op: str, name: str, values: Any, *, limit: int = MAX_DIM_NUM) -> tuple[int, ...]:
    values = boxed(values)
    try:
        dims = FlatLayout(tuple(values), (0,) * len(tuple(values))).shape
    except (LayoutError, TypeError):
        raise LayoutError(
            f"{op}: {name} must be a sequence of non-negative ints (got {name}={values!r}).") from None
    if len(dims) > limit:
        raise LayoutError(
            f"{op}: {name} has {len(dims)} dims (got {name}={dims}); at most {limit} are allowed.")
    return dims


def to_contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides of ``shape`` as opbase's ``op::ToContiguousStrides`` computes them.

    ``strides[-1] = 1`` and ``strides[i] = shape[i + 1] * strides[i + 1]``; unlike PyTorch,
    a size-0 dim zeroes the strides to its left (``(1, 0, 1) -> (0, 1, 1)``; PyTorch gives
    ``(1, 1, 1)``). Either addresses no element of an empty view.

    Args:
      shape: extents, at most :data:`MAX_DIM_NUM`.
    Raises:
      LayoutError: too many dims, or a negative or non-integer extent.
    Example:
      >>> to_contiguous_strides((2, 5, 20)), to_contiguous_strides((1, 0, 1))
      ((100, 20, 1), (0, 1, 1))

    Semantics: ``op::ToContiguousStrides`` (``shape_utils.cpp``)."""
    shape = _dims("to_contiguous_strides", "shape", shape)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    return tuple(strides)


@dataclasses.dataclass(frozen=True, slots=True)
class AclTensor:
    """An ``aclTensor``'s view metadata: ``view_shape``/``strides``/``offset`` over ``storage_shape``.

    Immutable: setters return a new record. Element ``(i_0, ...)`` of the view is storage
    element ``offset + sum i_k * strides[k]`` of the flat storage of ``prod(storage_shape)``
    elements (strides and offset in elements).

    Args:
      view_shape: the logical (view) shape, at most :data:`MAX_DIM_NUM` dims.
      strides: one stride per view dim, >= 0; default ``to_contiguous_strides(view_shape)``.
      offset: storage offset of the first element, >= 0.
      storage_shape: shape of the storage; default ``view_shape``.
    Raises:
      LayoutError: more than :data:`MAX_DIM_NUM` dims, a negative entry, ranks that differ, or
        a non-empty view that addresses past the storage.
    Example:
      >>> t = AclTensor((10, 20))
      >>> v = t.with_view_shape((2, 5, 20))
      >>> v.view_shape, v.strides, v.storage_shape, v.numel(), v.with_view_shape((1, 0, 1)).is_empty()
      ((2, 5, 20), (100, 20, 1), (10, 20), 200, True)

    Semantics: CANN opbase ``aclTensor`` (``GetViewShape``, ``GetViewStrides``, ``GetViewOffset``,
    ``GetStorageShape``) as created by ``aclCreateTensor``."""

    view_shape: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    offset: int = 0
    storage_shape: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        view = _dims("AclTensor", "view_shape", self.view_shape)
        strides = (to_contiguous_strides(view) if self.strides is None
                   else _dims("AclTensor", "strides", self.strides))
        storage = (view if self.storage_shape is None
                   else _dims("AclTensor", "storage_shape", self.storage_shape))
        if len(strides) != len(view):
            raise LayoutError(f"AclTensor: view_shape {view} has {len(view)} dims but strides {strides} has "
                              f"{len(strides)}; give one stride per view dim.")
        layout = FlatLayout(view, strides, self.offset)   # validates the offset
        if layout.numel and layout.required_storage_size > math.prod(storage):
            raise LayoutError(
                f"AclTensor: view {layout} addresses {layout.required_storage_size} storage elements but "
                f"storage_shape {storage} holds {math.prod(storage)}; shrink the view or enlarge the "
                "storage.")
        object.__setattr__(self, "view_shape", view)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "offset", layout.offset)
        object.__setattr__(self, "storage_shape", storage)

    @property
    def layout(self) -> FlatLayout:
        """The view as a :class:`functional_strides.Layout` (view shape, strides, offset)."""
        assert self.strides is not None  # set by __post_init__
        return FlatLayout(self.view_shape, self.strides, self.offset)

    def with_view_shape(self, shape: Sequence[int]) -> AclTensor:
        """``SetViewShape``: the view shape becomes ``shape`` and the strides its contiguous strides.

        Offset and storage shape are kept. Raises LayoutError as the constructor.

        Semantics: ``aclTensor::SetViewShape`` (``viewShape_ = shape;
        ToContiguousStrides(viewShape_, viewStrides_)``)."""
        shape = _dims("with_view_shape", "shape", shape)
        return AclTensor(shape, to_contiguous_strides(shape), self.offset, self.storage_shape)

    def numel(self) -> int:
        """Number of elements of the view shape (not the storage). Semantics: ``aclTensor::Numel``."""
        return math.prod(self.view_shape)

    def is_empty(self) -> bool:
        """True when a view extent is 0. Semantics: ``aclTensor::IsEmpty``."""
        return 0 in self.view_shape

    def view(self, storage: Any) -> StridedArray:
        """The view over ``storage`` (flattened row-major) as a ``StridedArray``.

        Raises:
          LayoutError: ``storage`` does not hold ``prod(storage_shape)`` elements.
        """
        arr = from_array(storage).contiguous()
        assert self.storage_shape is not None  # set by __post_init__
        if arr.numel() != math.prod(self.storage_shape):
            raise LayoutError(f"AclTensor.view: storage holds {arr.numel()} elements but storage_shape "
                              f"{self.storage_shape} needs {math.prod(self.storage_shape)}.")
        return StridedArray(arr.storage, self.layout)


def _ints(op: str, name: str, values: Any) -> tuple[int, ...]:
    values = boxed(values)
    try:
        items = tuple(values)
    except TypeError:
        raise LayoutError(f"{op}: {name} must be a sequence of ints (got {name}={values!r}).") from None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        raise LayoutError(f"{op}: {name} must hold ints (got {name}={items!r}).")
    return tuple(int(v) for v in items)


def as_strided(x: Any, size: Sequence[int], stride: Sequence[int], offset: Any) -> StridedArray:
    """ATB ``AsStridedOperation``: ``y[i_0, ...] = x.flat[offset[0] + sum_k i_k * stride[k]]``.

    Args:
      x: a float16 or int64 array (JAX, NumPy or ``StridedArray``), read in row-major order.
        Under JAX's default 32-bit mode an int64 NumPy input is stored as int32 (JAX's rule).
      size: output shape, 1 to 8 dims, each > 0.
      stride: one stride per dim, each >= 0, in elements.
      offset: the element offset, an int or a one-element sequence (ATB's ``SVector``), >= 0.
    Returns:
      A ``StridedArray`` view of ``x``'s elements (no copy).
    Raises:
      LayoutError: more than 8 dims or none, an extent <= 0, a negative stride, ranks that
        differ, not exactly one offset, a negative offset, a dtype other than float16/int64,
        or a view past the end of ``x`` (StorageError).
    Example:
      >>> import numpy as np
      >>> x = np.arange(1, 10, dtype=np.float16).reshape(3, 3)
      >>> np.asarray(as_strided(x, [2, 2], [2, 3], [2])).tolist()
      [[3.0, 6.0], [5.0, 8.0]]

    Semantics: ATB ``atb::infer::AsStridedParam`` / ``AsStridedOperation``; the core's
    ``functional_strides.as_strided`` (``torch.as_strided``)."""
    op = "as_strided"
    dtype = np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype
    if dtype.name not in AS_STRIDED_DTYPES:
        raise LayoutError(f"{op}: x has dtype {dtype.name}; AsStridedOperation takes float16 or int64 "
                          "inputs. Cast x first (e.g. x.astype('float16')).")
    size, stride = _ints(op, "size", size), _ints(op, "stride", stride)
    offsets = _ints(op, "offset", offset)
    problems = []
    if not 1 <= len(size) <= AS_STRIDED_MAX_DIMS:
        problems.append(f"size has {len(size)} dims (1 to {AS_STRIDED_MAX_DIMS} allowed)")
    if any(n <= 0 for n in size):
        problems.append(f"size entries must be > 0 (got size={list(size)})")
    if len(stride) != len(size):
        problems.append(f"stride has {len(stride)} entries for {len(size)} dims of size")
    if any(s < 0 for s in stride):
        problems.append(f"stride entries must be >= 0 (got stride={list(stride)})")
    if len(offsets) != 1:
        problems.append(f"offset must hold exactly one value (got offset={list(offsets)})")
    elif offsets[0] < 0:
        problems.append(f"offset must be >= 0 (got offset={list(offsets)})")
    if problems:
        raise LayoutError(f"{op}: " + "; ".join(problems) + ".")
    return from_array(x).contiguous().as_strided(size, stride, offsets[0])


def make_shape(*extents: Any) -> tuple[Any, ...]:
    """Ascend C ``MakeShape(t...)``: a (nested) shape tuple.

    Args:
      *extents: ints >= 0, or nested tuples of them (one mode each).
    Returns:
      The tuple of the extents as Python ints, nesting kept (``()`` for no argument).
    Raises:
      LayoutError: an entry that is not an int or a nested tuple of ints (a float, a bool,
        a string, ``None``), or a negative extent.
    Example:
      >>> make_shape(4, 2), make_shape(4, (2, 3))
      ((4, 2), (4, (2, 3)))
      >>> make_shape(4, -1)
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: make_shape: shape entry -1 is below 0 (got shape=-1).

    Semantics: Ascend C ``MakeShape``; CuTe ``make_shape``."""
    return normalize("shape", extents, op="make_shape", minimum=0)


def make_stride(*strides: Any) -> tuple[Any, ...]:
    """Ascend C ``MakeStride(t...)``: a (nested) stride tuple, in elements.

    Args:
      *strides: ints (any sign), or nested tuples of them, in elements.
    Returns:
      The tuple of the strides as Python ints, nesting kept (``()`` for no argument).
    Raises:
      LayoutError: an entry that is not an int or a nested tuple of ints (a float, a bool,
        a string, ``None``).
    Example:
      >>> make_stride(4, 1), make_stride(1, (4, 8))
      ((4, 1), (1, (4, 8)))
      >>> make_stride(1.5)
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: make_stride: stride must be an int ... (got float 1.5).

    Semantics: Ascend C ``MakeStride``; CuTe ``make_stride``."""
    return normalize("stride", strides, op="make_stride")


def make_layout(shape: Any, stride: Any) -> cute.Layout:
    """Ascend C ``MakeLayout(shape, stride)``: the layout ``coord -> sum coord_k * stride_k``.

    Call it with a coordinate tuple for the offset of that element (``layout((i, j))``).

    Args:
      shape: the shape, an int tuple (``make_shape``).
      stride: the strides, an int tuple nesting as ``shape`` (``make_stride``).
    Raises:
      LayoutError: ``shape`` and ``stride`` do not nest alike.
    Example:
      >>> L = make_layout(make_shape(4, 2), make_stride(4, 1))   # a 4x2 matrix, rows 4 apart
      >>> [L((i, j)) for i in range(4) for j in range(2)]
      [0, 1, 4, 5, 8, 9, 12, 13]

    Semantics: Ascend C ``MakeLayout``/``Layout<Shape, Stride>``; CuTe ``make_layout``."""
    return cute.Layout(shape, stride)


def get_shape(layout: cute.Layout) -> Any:
    """Ascend C ``Layout::GetShape()``: the (nested) shape of a layout.

    Args:
      layout: a :class:`functional_strides.cute.Layout` (as :func:`make_layout` builds).
    Returns:
      Its shape: an int or a nested tuple of ints (extents).
    Raises:
      Nothing of its own: it reads ``layout.shape``; an object without one raises
      ``AttributeError``.
    Example:
      >>> get_shape(make_layout(make_shape(4, (2, 3)), make_stride(1, (4, 8))))
      (4, (2, 3))

    Semantics: Ascend C ``Layout::GetShape``; CuTe ``shape(layout)``."""
    return layout.shape


def get_stride(layout: cute.Layout) -> Any:
    """Ascend C ``Layout::GetStride()``: the (nested) strides of a layout, in elements.

    Args:
      layout: a :class:`functional_strides.cute.Layout` (as :func:`make_layout` builds).
    Returns:
      Its stride: an int or a nested tuple of ints, nested as its shape.
    Raises:
      Nothing of its own: it reads ``layout.stride``; an object without one raises
      ``AttributeError`` (a flat :class:`functional_strides.Layout` names its
      ``strides``).
    Example:
      >>> get_stride(make_layout(make_shape(4, (2, 3)), make_stride(1, (4, 8))))
      (1, (4, 8))

    Semantics: Ascend C ``Layout::GetStride``; CuTe ``stride(layout)``."""
    return layout.stride

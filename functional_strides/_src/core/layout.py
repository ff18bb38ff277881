"""The ``Layout`` record: shape, strides and offset of a strided view, in elements.

A layout is the function ``(i_0, ..., i_{k-1}) -> offset + sum_d i_d * strides[d]`` from
coordinates of a ``shape``-shaped array to indices of a flat storage. This module is pure
Python (no ``jax`` import): the record, its validation and its queries. The view ops that
transform layouts live in :mod:`functional_strides.views`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

from .errors import LayoutError, LayoutTypeError, OutOfRangeError, StorageError
from .overlap import overlap as _overlap
from .pytypes import Offset, Shape, Strides

__all__ = [
    "Layout",
    "address_range",
    "check_in_storage",
    "check_offset",
    "contiguous_strides",
    "dense_strides_like",
    "format_layout",
    "is_static_offset",
    "is_traced",
    "leaf_kind",
]


#: The classes of traced values (JAX's ``Tracer``). The pure core never imports jax: the array
#: layer registers the class when it is imported (:mod:`functional_strides._src.array.traced`); until
#: then no value can be traced.
_TRACER_TYPES: tuple[type, ...] = ()


def is_traced(value: Any) -> bool:
    """True when ``value`` is traced (a JAX tracer inside ``jit``/``vmap``/``grad``): its value
    is unknown now. The one traced predicate of the package."""
    return isinstance(value, _TRACER_TYPES)


def is_static_offset(offset: Any) -> bool:
    """True when ``offset`` is a Python/NumPy integer (known at trace time), not an array."""
    return isinstance(offset, (int, np.integer)) and not isinstance(offset, (bool, np.bool_))


def _plain_int(value: Any) -> Any:
    """``value`` as a Python int when it is a non-bool integer (so that a message reads the
    same for ``-1``, ``np.int64(-1)`` and a concrete 0-d integer array), else unchanged."""
    if isinstance(value, (bool, np.bool_)):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def boxed(values: Any) -> Any:
    """``(values,)`` for one integer (not a bool), else ``values`` (a sequence, or whatever it is)."""
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        return (values,)
    return values


def _int_tuple(name: str, values: Any, *, allow_negative: bool = False) -> tuple[int, ...]:
    """Normalise ``values`` to a tuple of Python ints, refusing floats, bools and (unless
    ``allow_negative``) negatives."""
    if type(values) is tuple and all(type(v) is int and (allow_negative or v >= 0) for v in values):
        return values  # the common case: already clean (view ops build these)
    values = boxed(values)
    try:
        items = tuple(values)
    except TypeError:
        raise LayoutTypeError(
            f"Layout: {name} must be a sequence of integers (got {name}={values!r} of type "
            f"{type(values).__name__}); pass a tuple of ints."
        ) from None
    out = []
    for i, v in enumerate(items):
        if isinstance(v, (bool, np.bool_)):
            raise LayoutTypeError(
                f"Layout: {name}[{i}] is a bool (got {name}={items!r}); pass integers."
            )
        try:
            v = operator.index(v)
        except TypeError:
            raise LayoutTypeError(
                f"Layout: {name}[{i}]={v!r} is a {type(v).__name__}, not an integer (got {name}={items!r}); "
                f"{name} are counted in elements and must be ints."
            ) from None
        if v < 0 and not allow_negative:
            shown = tuple(_plain_int(x) for x in items)
            raise LayoutError(
                f"Layout: {name}[{i}]={v} is negative (got {name}={shown!r}); "
                f"{name} must be >= 0."
            )
        out.append(v)
    return tuple(out)


def contiguous_strides(shape: Shape, order: str = "C") -> Strides:
    """Dense strides of ``shape``, in elements, as PyTorch computes them.

    Size-0 dims count as 1 so they never zero the other strides
    (``contiguous_strides((1, 0, 1)) == (1, 1, 1)``), as ``make_contiguous_strides_for``.

    Args:
      shape: extents, each >= 0.
      order: ``"C"`` (row-major, PyTorch/NumPy default) or ``"F"`` (column-major, CuTe's
        compact "left" layout).
    Returns:
      A tuple of len(shape) strides.
    Raises:
      LayoutError: ``order`` is neither ``"C"`` nor ``"F"``.
    Example:
      >>> contiguous_strides((2, 3, 4))
      (12, 4, 1)
      >>> contiguous_strides((2, 3, 4), order="F")
      (1, 2, 6)
    """
    if order not in ("C", "F"):
        raise LayoutError(f"contiguous_strides: order must be 'C' or 'F' (got order={order!r}).")
    return _contiguous_strides(tuple(shape), order)


@functools.lru_cache(maxsize=4096)
def _contiguous_strides(shape: Shape, order: str) -> Strides:
    dims = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    strides = [0] * len(shape)
    running = 1
    for d in dims:
        strides[d] = running
        running *= max(shape[d], 1)
    return tuple(strides)


def dense_strides_like(shape: Shape, strides: Strides) -> Strides:
    """Dense strides for ``shape`` that keep the order of ``strides`` (innermost = smallest
    stride; ties and stride-0 dims keep their place), in elements.

    What a copy with ``memory_format=torch.preserve_format`` gets when the source is not
    non-overlapping-and-dense.

    Example:
      >>> dense_strides_like((3, 3), (1, 6)), dense_strides_like((1, 3), (1, 7))
      ((1, 3), (1, 1))

    Semantics: ATen ``infer_dense_strides`` (the insertion sort of TensorIterator's
    ``reorder_dimensions``)."""
    nd = len(shape)
    perm = list(range(nd - 1, -1, -1))

    def order(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0  # ambiguous: keep the current order
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = order(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * nd
    running = 1
    for d in perm:
        out[d] = running
        running *= max(shape[d], 1)
    return tuple(out)


def address_range(shape: Shape, strides: Strides, offset: int) -> tuple[int, int]:
    """Lowest and highest storage index a non-empty layout addresses, in elements.

    ``lowest = offset + sum((n-1)*s for s < 0)`` and ``highest = offset + sum((n-1)*s for
    s > 0)``: a negative stride reaches below the offset, a positive one above it.

    Args:
      shape: extents, each >= 1 (an empty layout addresses nothing: do not ask).
      strides: one stride per dim, any sign; offset: the index of element ``(0, ..., 0)``.
    Returns:
      ``(lowest, highest)``; a valid view over a storage of ``N`` elements has
      ``0 <= lowest`` and ``highest < N``.
    Example:
      >>> address_range((3, 4), (-4, 1), 8), address_range((5,), (-2,), 9)
      ((0, 11), (1, 9))

    Semantics: NumPy's ``np.lib.array_utils.byte_bounds`` in elements (relative to the
    storage start); PyTorch's ``compute_required_storage_length`` is ``highest + 1`` for
    non-negative strides."""
    low = high = offset
    for n, s in zip(shape, strides, strict=True):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return low, high


def format_layout(shape: Iterable[int], strides: Iterable[int], offset: Offset) -> str:
    """``"(2,3):(3,1)+0"``: the pycute-style notation ``(shape):(strides)+offset`` used in
    messages and reprs (strides and offset in elements; a rank-1 tuple keeps its comma).

    A negative offset (only ever in a message refusing it) prints as ``-2``, never ``+-2``;
    an offset that is a JAX array (dynamic) prints as ``+<traced>``.

    Example:
      >>> format_layout((2, 3), (3, 1), 4), format_layout((3,), (1,), -2)
      ('(2,3):(3,1)+4', '(3,):(1,)-2')
    """
    shape, strides = tuple(shape), tuple(strides)

    def tup(t: tuple[int, ...]) -> str:
        return "(" + ",".join(str(v) for v in t) + ("," if len(t) == 1 else "") + ")"

    off = _format_offset(offset)
    return f"{tup(shape)}:{tup(strides)}{'' if off.startswith('-') else '+'}{off}"


def _format_offset(offset: Offset) -> str:
    """An offset for messages: its value when known (int, NumPy or concrete JAX scalar),
    ``<traced>`` under a trace, ``<4 offsets>`` for the per-item offsets of a batched array,
    and the kind of a placeholder a pytree transform left as the leaf (``jax.eval_shape``'s
    ``<ShapeDtypeStruct int32[]>``, the ``<float0[]>`` cotangent of ``jax.grad(...,
    allow_int=True)``, the ``<None>`` of ``eqx.filter_grad`` or ``eqx.partition``, ``<object>``)."""
    if is_static_offset(offset):
        return str(int(offset))
    if is_traced(offset):
        return "<traced>"
    kind = getattr(getattr(offset, "dtype", None), "kind", "")
    integer = hasattr(offset, "__array__") and kind in ("i", "u")
    if integer and getattr(offset, "ndim", 0) != 0:
        return f"<{'x'.join(map(str, offset.shape))} offsets>"
    try:
        return str(operator.index(offset)) if integer else f"<{leaf_kind(offset)}>"
    except TypeError:
        return f"<{leaf_kind(offset)}>"


def leaf_kind(value: Any) -> str:
    """What a pytree leaf is, for reprs that must not read it: ``None``, the type's name,
    with ``dtype[shape]`` for what has both (``Array(int32[])``, ``ShapeDtypeStruct(float32[12])``,
    ``ndarray(float0[])``), JAX's own repr for a tracer (it shows the abstract value).

    Example:
      >>> leaf_kind(None), leaf_kind(np.zeros((2, 3), np.int8)), leaf_kind(object())
      ('None', 'ndarray(int8[2,3])', 'object')
    """
    if value is None:
        return "None"
    if is_traced(value):
        return repr(value)
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    # NumPy's subclasses (JAX's float0 values among them) as ndarray, JAX's array class as Array
    name = "ndarray" if isinstance(value, np.ndarray) else type(value).__name__
    name = "Array" if name == "ArrayImpl" else name
    if dtype is None or shape is None:
        return name
    try:
        dtype = np.dtype(dtype)
        dtype_name = "float0" if dtype.names == ("float0",) else dtype.name
    except TypeError:
        dtype_name = str(dtype)
    return f"{name}({dtype_name}[{','.join(map(str, shape))}])"


@dataclasses.dataclass(frozen=True, slots=True)
class Layout:
    """Shape, strides and storage offset of a strided view; strides and offset in elements.

    ``Layout(shape, strides, offset=0)`` maps coordinate ``(i_0, ..., i_{k-1})`` with
    ``0 <= i_d < shape[d]`` to storage index ``offset + sum_d i_d * strides[d]``. It is
    frozen and hashable (when the offset is a Python int) and registered as a JAX pytree:
    shape and strides live in the treedef, the offset is the leaf, so ``jax.jit`` compiles
    once per shape and strides and moving a window never retraces (see ``docs/design.md``).

    Args:
      shape: extents, non-negative ints (rank 0 allowed).
      strides: one int per dim, any sign: a negative stride walks the storage backwards,
        as NumPy's ``a[::-1]`` (PyTorch-semantics entry points such as ``as_strided`` and
        ``x[::-1]`` still refuse them, as PyTorch does; ``fs.flip`` and
        ``functional_strides.numpy`` make them).
      offset: storage index of element ``(0, ..., 0)``; a non-negative int, an integer
        JAX scalar, or an integer array holding one offset per item of a batched
        ``StridedArray`` (shape ``batch_shape``).
    Raises:
      LayoutError: lengths of ``shape`` and ``strides`` differ; an extent is negative; the
        offset is a negative int.
      StorageError: an int offset and negative strides reach below storage index 0 (the
        lowest index ``offset + sum((n-1)*s for s < 0)`` must be >= 0; the highest is
        checked against the storage when one is attached).
      LayoutTypeError: an entry or the offset is a bool or not an integer (a float, a
        string); also a ``TypeError``.
    Example:
      >>> lay = Layout((2, 3), (3, 1), 1)
      >>> str(lay), lay(1, 2), lay.numel, lay.required_storage_size
      ('(2,3):(3,1)+1', 6, 6, 7)
      >>> rev = Layout((2, 3), (-3, 1), 3)             # rows in reverse order
      >>> rev(0, 0), rev(1, 0), rev.is_contiguous(), rev.required_storage_size
      (3, 0, False, 6)

    Semantics: ``torch.Tensor.size()/stride()/storage_offset()``; NumPy's ``shape`` and
    ``strides // itemsize`` with the offset of the data pointer in its buffer (negative
    strides as NumPy's); ``aclCreateTensor`` view shape/strides/offset; CuTe
    ``Layout(shape, stride)`` plus an offset.
    """

    shape: Shape
    strides: Strides
    offset: Offset = 0
    # Set by pytree unflattening where the treedef holds the offset as a leaf: the layout then
    # flattens to that treedef again whatever was put in the leaf (an int axis spec, a filter
    # flag). Not part of the value: equality, hashing and repr ignore it.
    _offset_leaf: bool = dataclasses.field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        shape = _int_tuple("shape", self.shape)
        strides = _int_tuple("strides", self.strides, allow_negative=True)
        if len(shape) != len(strides):
            raise LayoutError(
                f"Layout: shape {shape} has rank {len(shape)} but strides {strides} has rank "
                f"{len(strides)}; give one stride per dim."
            )
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", strides)
        offset = self.offset
        if type(offset) is int and offset >= 0:
            if any(s < 0 for s in strides):
                check_in_storage("Layout", shape, strides, offset)
            return
        if isinstance(offset, (bool, np.bool_)):
            raise LayoutTypeError(f"Layout: offset is a bool (got offset={offset!r}); pass an int.")
        if is_static_offset(offset):
            offset = int(offset)
            check_in_storage("Layout", shape, strides, offset)
            object.__setattr__(self, "offset", offset)
        else:
            offset = self.offset  # an integer array, concrete or traced
            dtype = getattr(offset, "dtype", None)
            if dtype is None or np.dtype(dtype).kind not in "iu" or not hasattr(offset, "ndim"):
                raise LayoutTypeError(
                    f"Layout: offset {offset!r} is not an integer (got type {type(offset).__name__}"
                    f"{', dtype ' + str(dtype) if dtype is not None else ''}); pass an int, an integer "
                    "JAX scalar for a dynamic offset, or an integer array of one offset per item of a "
                    "batched StridedArray."
                )
            if not is_traced(offset):  # a concrete array (not an abstract one): its values are known
                values = np.asarray(offset)
                if values.size and values.dtype.kind in "iu":
                    check_in_storage("Layout", shape, strides, int(values.min()))
            if np.dtype(dtype).itemsize < 4:
                # offset + k*stride must not wrap in a narrow integer type
                object.__setattr__(self, "offset", offset.astype(np.int32))
            elif np.dtype(dtype).kind == "u":
                # nor past the signed type of its width: an offset beyond it clamps (to the end of
                # the storage, as every read and write clamps a traced offset), never wraps below 0
                wide = np.int32 if np.dtype(dtype).itemsize == 4 else np.int64
                object.__setattr__(self, "offset", offset.clip(max=np.iinfo(wide).max).astype(wide))

    # -- constructors -------------------------------------------------------------------
    @staticmethod
    def contiguous(shape: Iterable[int], order: str = "C", offset: Offset = 0) -> Layout:
        """Dense layout of ``shape``: row-major (``order="C"``) or column-major (``"F"``).

        Example:
          >>> str(Layout.contiguous((1, 0, 1)))
          '(1,0,1):(1,1,1)+0'

        Semantics: the strides of ``torch.empty(shape)``; ``order="F"`` is CuTe's default
        compact (left, colexicographic) layout.
        """
        shape = _int_tuple("shape", shape)
        return Layout(shape, contiguous_strides(shape, order), offset)

    # -- queries --------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Rank (number of dims)."""
        return len(self.shape)

    @property
    def numel(self) -> int:
        """Number of elements, ``prod(shape)`` (1 for rank 0)."""
        return math.prod(self.shape)

    @property
    def is_empty(self) -> bool:
        """True when some extent is 0 (the layout addresses no storage)."""
        return 0 in self.shape

    @property
    def has_static_offset(self) -> bool:
        """True when the offset is a Python int (not a traced/array scalar)."""
        return is_static_offset(self.offset)

    @property
    def span(self) -> int:
        """``sum_d (shape[d]-1)*|strides[d]|``: distance from the lowest to the highest index
        addressed (0 for an empty layout)."""
        if self.is_empty:
            return 0
        return sum((n - 1) * abs(s) for n, s in zip(self.shape, self.strides, strict=False))

    @property
    def low_reach(self) -> int:
        """``sum((n-1)*s for s < 0)`` (<= 0): how far below the offset the lowest index lies
        (0 without negative strides or when empty)."""
        if self.is_empty:
            return 0
        return sum((n - 1) * s for n, s in zip(self.shape, self.strides, strict=False) if s < 0)

    def offset_bounds(self, storage_size: int) -> tuple[int, int]:
        """``(lowest, highest)``: the offsets (in elements, inclusive) at which the view lies
        in a storage of ``storage_size`` elements, ``-low_reach`` to ``storage_size - span - 1
        - low_reach``; the one rule by which a traced offset is clamped, as
        ``lax.dynamic_slice`` clamps its start (reads, writes, refs, the strided copy's
        operand and sharded reads all clamp by it). ``lowest > highest`` where no offset fits.

        Example:
          >>> Layout((3,), (-2,), 4).offset_bounds(10)
          (4, 9)
        """
        below = self.low_reach
        return -below, storage_size - self.span - 1 - below

    @property
    def required_storage_size(self) -> Any:
        """Smallest storage length that holds every index, the highest index + 1, that is
        ``offset + sum((n-1)*s for s > 0) + 1``, or 0 when empty. Semantics:
        ``torch._prims_common.compute_required_storage_length`` (non-negative strides)."""
        if self.is_empty:
            return 0
        return self.offset + self.low_reach + self.span + 1

    def is_contiguous(self) -> bool:
        """PyTorch's C-contiguity: strides of size-1 dims are ignored, layouts with fewer
        than 2 elements are contiguous; the offset does not matter. A negative stride on a
        dim of extent >= 2 is never contiguous (NumPy's ``flags.c_contiguous`` agrees).

        Example:
          >>> Layout((2, 1, 3), (3, 99, 1)).is_contiguous(), Layout((3, 2), (1, 3)).is_contiguous()
          (True, False)

        Semantics: ``torch.Tensor.is_contiguous()`` (``compute_contiguous`` in TensorImpl)."""
        if self.numel < 2:
            return True
        return _check_dense(self.shape, self.strides)

    def is_non_overlapping_and_dense(self) -> bool:
        """True when some permutation of the dims is contiguous (no gaps, no overlap). A
        negative stride on a dim of extent >= 2 makes it False (PyTorch's rule reads
        strides as they are; a reversed dim is not dense in its order).

        Example:
          >>> Layout((3, 2), (1, 3)).is_non_overlapping_and_dense()
          True

        Semantics: ``torch._prims_common.is_non_overlapping_and_dense_or_false``."""
        if self.numel < 2:
            return True
        if self.ndim == 1:
            return self.strides[0] == 1
        pairs = sorted(zip(self.strides, self.shape, strict=False), reverse=True)
        return _check_dense(tuple(n for _, n in pairs), tuple(s for s, _ in pairs))

    def has_internal_overlap(self, *, max_work: Any = _overlap.CONFIGURED) -> bool:
        """True when two elements address the same storage index. Exact for every layout.

        ``max_work`` as in ``numpy.shares_memory`` (default: ``fs.config.overlap_max_work``,
        ``10**6`` units): ``-1`` or ``None``: exact, whatever it costs; ``0``: the bounds
        only; ``n > 0``: at most about ``n`` units of work. The search's
        memory stays under 256 MiB whatever the layout
        (:func:`functional_strides.has_internal_overlap` gives the details).

        Raises:
          TooHardError: ``max_work`` did not suffice (the message names
            ``fs.config.overlap_max_work``), or the
            process could not allocate the memory the search keeps under its cap.
          LayoutError: ``max_work`` is not -1, 0, a positive integer or ``None``.
        Example:
          >>> Layout((4, 3), (1, 1)).has_internal_overlap(), Layout((3, 4), (4, 1)).has_internal_overlap()
          (True, False)

        Semantics: ``torch._debug_has_internal_overlap`` without its "too hard" answer;
        ``max_work`` as in ``numpy.shares_memory``;
        :func:`functional_strides.internal_overlap_witness` names a colliding pair."""
        return _overlap.has_internal_overlap(self, max_work=max_work)

    def overlaps(self, other: Layout, *, max_work: Any = _overlap.CONFIGURED) -> bool:
        """True when this layout and ``other`` (over the same storage) share a storage index.

        ``max_work`` as in ``numpy.shares_memory`` (see :meth:`has_internal_overlap`).

        Raises:
          LayoutError: an offset is traced (overlap needs int offsets), or ``max_work`` is
            not -1, 0, a positive integer or ``None``.
          TooHardError: ``max_work`` did not suffice (the message names
            ``fs.config.overlap_max_work``), or the
            process could not allocate the memory the search keeps under its cap.
        Example:
          >>> Layout((4,), (1,), 0).overlaps(Layout((4,), (1,), 3))
          True

        Semantics: ``numpy.shares_memory(a, b, max_work)`` for two views of one buffer
        (within ``fs.config.overlap_max_work`` by default)."""
        return _overlap.overlaps(self, other, max_work=max_work)

    def __call__(self, *coords: int) -> Any:
        """Storage index of the element at ``coords`` (one int per dim, ``0 <= i < n``).

        Raises:
          OutOfRangeError: wrong number of coordinates, or one outside its extent.
          LayoutTypeError: a coordinate is not an integer.
        """
        if len(coords) != self.ndim:
            raise OutOfRangeError(
                f"Layout{self}: expected {self.ndim} coordinates, got {len(coords)} {coords}."
            )
        index = self.offset
        for d, (i, n, s) in enumerate(zip(coords, self.shape, self.strides, strict=False)):
            if isinstance(i, (bool, np.bool_)) or not hasattr(i, "__index__"):
                raise LayoutTypeError(f"Layout{self}: coordinate {i!r} of dim {d} is a {type(i).__name__}, "
                                      "not an integer; pass ints.")
            i = operator.index(i)
            if not 0 <= i < n:
                raise OutOfRangeError(
                    f"Layout{self}: coordinate {i} of dim {d} is out of range [0, {n})."
                )
            index = index + i * s
        return index

    def indices(self) -> np.ndarray:
        """NumPy int64 array of shape ``shape``: the storage index of every element.

        Requires a static offset. Example:
          >>> Layout((2, 2), (1, 2), 1).indices().tolist()
          [[1, 3], [2, 4]]
        """
        if not self.has_static_offset:
            raise LayoutError(
                f"Layout.indices: the offset of layout {self} is traced; indices() needs an int offset."
            )
        out = np.full(self.shape, self.offset, dtype=np.int64)
        for d, (n, s) in enumerate(zip(self.shape, self.strides, strict=False)):
            view = [1] * self.ndim
            view[d] = n
            out += (np.arange(n, dtype=np.int64) * s).reshape(view)
        return out

    def __str__(self) -> str:
        return format_layout(self.shape, self.strides, self.offset)

    def __hash__(self) -> int:
        """By value: a Python int offset, a concrete integer scalar (a NumPy one, or the JAX
        array a ``Layout`` returned from ``jit`` holds) hashes as that int, as it compares equal
        to it; a placeholder leaf (``None``, a ``ShapeDtypeStruct``) as itself.

        Raises:
          TypeError: the offset is traced (its value is unknown), holds one offset per item
            of a batched array, or is an array that is not an integer (a float0 cotangent),
            naming which; use ``Layout(shape, strides, int(offset))`` for a key."""
        offset = self.offset
        try:
            return hash((self.shape, self.strides, offset))
        except TypeError:
            pass
        why = None
        if is_traced(offset):
            why = "its offset is traced (its value is unknown until the program runs)"
        elif getattr(offset, "ndim", 0) != 0:
            why = (f"its offset holds {'x'.join(map(str, offset.shape))} offsets (one per item of a "
                   "batched array)")
        else:
            try:
                offset = operator.index(offset)
            except TypeError:
                why = f"its offset is a {leaf_kind(offset)}, not an integer"
        if why is not None:
            raise TypeError(f"Layout {self} is unhashable: {why}; hash Layout(shape, strides, int(offset)) "
                            "of a concrete offset instead.") from None
        return hash((self.shape, self.strides, offset))


def _trusted(shape: Shape, strides: Strides, offset: Offset, offset_leaf: bool = False) -> Layout:
    """A ``Layout`` from fields already known valid (tuples of ints of equal length, the
    extents non-negative, the lowest index addressed >= 0): view ops build their results
    from validated inputs, and pytree unflattening may pass tracers or placeholders as the
    offset (``offset_leaf``: it came from a treedef's leaf). Skips ``__post_init__``."""
    obj = object.__new__(Layout)
    object.__setattr__(obj, "shape", shape)
    object.__setattr__(obj, "strides", strides)
    object.__setattr__(obj, "offset", offset)
    object.__setattr__(obj, "_offset_leaf", offset_leaf)
    return obj


def check_offset(op: str, offset: int, shape: Shape, strides: Strides) -> None:
    """A known storage offset must be >= 0: ``StorageError`` otherwise, with one message
    whatever the offset's Python type (pass it as a Python int).

    Semantics: PyTorch's ``invalid storage offset`` check of ``as_strided``."""
    if offset < 0:
        raise StorageError(
            f"{op}: invalid storage offset {offset} (layout {format_layout(shape, strides, offset)}); the "
            "offset counts elements from the storage start and must be >= 0.")


def check_static_storage_shape(op: str, storage_shape: Any, layout: Any) -> None:
    """A storage's shape must be known ints: a symbolic dimension (``jax.export`` with
    ``jax.export.symbolic_shape``, shape polymorphism) leaves the bounds of a view and the
    lowering's plan undecidable.

    Raises:
      LayoutTypeError: naming the dimension and the way out."""
    for d in storage_shape:
        if not isinstance(d, (int, np.integer)):
            raise LayoutTypeError(
                f"{op}: the storage has shape {tuple(storage_shape)}, with the symbolic dimension {d} (a "
                f"shape-polymorphic jax.export; layout {layout}). A view's bounds and its lowering depend "
                "on the storage's size, so views need concrete storage shapes: export once per size "
                "(concrete jax.ShapeDtypeStruct shapes), or take the views outside the exported function.")


def check_in_storage(op: str, shape: Shape, strides: Strides, offset: int, size: int | None = None) -> None:
    """The storage bounds of a view with a known offset, at both ends: the one bounds check.

    The offset must be >= 0; the lowest index a non-empty view addresses,
    ``offset + sum((n-1)*s for s < 0)``, must be >= 0 and (when the storage's ``size`` is
    known) the highest, ``offset + sum((n-1)*s for s > 0)``, below ``size``.

    Raises:
      StorageError: naming ``op``, the layout, the indices it reaches and the fix.
    Example:
      >>> check_in_storage("as_strided", (2, 3), (3, 1), 1, 6)
      Traceback (most recent call last):
      ...
      functional_strides.StorageError: as_strided: size [2, 3], stride [3, 1] and storage
      offset 1 require a storage of 7 elements ...

    Semantics: PyTorch's ``checkInBoundsForStorage`` (the upper end) and NumPy's
    ``byte_bounds`` (both ends)."""
    check_offset(op, offset, shape, strides)
    if 0 in shape:
        return
    low, high = address_range(shape, strides, offset)
    if low < 0:
        raise StorageError(
            f"{op}: layout {format_layout(shape, strides, offset)} addresses storage indices {low} to "
            f"{high}: the lowest, offset + sum((size-1)*stride for negative strides) = {low}, is below 0. "
            f"Raise the offset to at least {offset - low} (element (0, ..., 0) of a reversed dim sits at "
            "its end), or make the strides non-negative.")
    if size is not None and high >= size:
        raise StorageError(
            f"{op}: size {list(shape)}, stride {list(strides)} and storage offset {offset} require a "
            f"storage of {high + 1} elements (offset + sum((size-1)*stride) + 1), but the storage has "
            f"{size} elements. Shrink the sizes, strides or offset, or use a larger storage.")


def _check_dense(shape: Shape, strides: Strides) -> bool:
    """Row-major contiguity walk (innermost first), skipping size-1 dims."""
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides), strict=False):
        if n == 1:
            continue
        if s != expected:
            return False
        expected *= n
    return True


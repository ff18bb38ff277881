"""``StridedArray``: a 1-D JAX storage plus a :class:`Layout`, with PyTorch's view methods.

View methods return a new ``StridedArray`` over the *same* storage object (metadata only,
no device work); ``contiguous()``, ``jnp.asarray(x)`` and ``np.asarray(x)`` materialise.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import Any, cast, overload

import jax
import jax.numpy as jnp
import numpy as np

from ..core import memory_format as memory_format_module
from ..core import views
from ..core.docs import shares_doc as _shares_doc
from ..core.errors import LayoutError, LayoutTypeError, OutOfRangeError, StorageError
from ..core.layout import (
    Layout,
    check_in_storage,
    check_static_storage_shape,
    is_static_offset,
    is_traced,
    leaf_kind,
)
from ..core.overlap import overlap as _overlap
from ..lowering import programs as _programs
from ..lowering import refs as _refs
from ..lowering.reads import PLACEHOLDER_HINT, check_operands, materialize
from ..lowering.writes import check_src, write
from ..sharding import dispatch
from . import tensor_names as _tensor_names
from .at import _IndexUpdateHelper
from .dtype_views import as_dtype, bitcast_storage, check_jax_dtype, view_dtype_layout
from .refs import InPlaceMethods

__all__ = ["StridedArray", "as_strided", "from_array", "from_ref", "overlaps", "shares_storage"]


def _shape_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Accept ``f(2, 3)`` and ``f((2, 3))`` as PyTorch does."""
    if len(args) != 1 or type(args[0]) is int:
        return args
    if isinstance(args[0], Sequence) and not isinstance(args[0], str):
        return tuple(args[0])
    return args


_ALL_DIMS = object()  # squeeze(): no dim given (None is refused, as in PyTorch)


def _over_batch(fn: Any, batch_ndim: int) -> Any:
    """``fn`` mapped (``jax.vmap``) over ``batch_ndim`` leading axes of all its arguments."""
    for _ in range(batch_ndim):
        fn = jax.vmap(fn)
    return fn


def _check_storage_rank(storage: Any, layout: Layout) -> None:
    if (isinstance(storage, (jax.Array, np.ndarray)) or _refs.is_ref(storage)) and storage.ndim == 0:
        raise StorageError(
            f"StridedArray: the storage is a scalar, not a 1-D array (layout {layout}). This happens "
            "when jax.vmap maps over a StridedArray whose storage is 1-D: vmap then splits the storage "
            "itself element by element. To map over a batch, give a storage of shape (B, N) with "
            "batched=True, or vmap over the raw arrays and build the StridedArray inside."
        )


def _per_item(layout: Layout, batch_ndim: int) -> bool:
    """True when a batched array's offset holds one offset per item (shape ``batch_shape``)."""
    return batch_ndim > 0 and jnp.ndim(layout.offset) > 0


def _map_items(fn: Any, storage: jax.Array, layout: Layout, *args: Any) -> Any:
    """``fn(storage_item, layout_item, *arg_items)`` mapped over the batch axes of ``storage``
    (and of a per-item offset); ``fn(storage, layout, *args)`` for a 1-D storage."""
    nb = storage.ndim - 1
    if _per_item(layout, nb):
        return _over_batch(lambda s, o, *a: fn(s, Layout(layout.shape, layout.strides, o), *a), nb)(
            storage, jnp.broadcast_to(layout.offset, storage.shape[:-1]), *args)
    return _over_batch(lambda s, *a: fn(s, layout, *a), nb)(storage, *args)


def _materialize(storage: jax.Array, layout: Layout) -> jax.Array:
    """``(*batch, *layout.shape)`` values of a possibly batched ``(*batch, N)`` storage."""
    _check_storage_rank(storage, layout)
    if _refs.is_ref(storage):  # the ref's current value, read without copying the storage
        return dispatch.read_ref(storage, layout)
    check_operands("materialize", storage, layout, batch=True)
    if storage.ndim == 1:  # sharded across devices or not: the one dispatch decides
        return dispatch.materialize(storage, layout)
    return _map_items(materialize, storage, layout)  # a batch: each item where it lies


def _is_dtype(value: Any) -> bool:
    try:
        np.dtype(value)
    except TypeError:
        return False
    return True


def _is_dtype_request(value: Any) -> bool:
    """True when ``view(value)`` asks for a dtype (``view(jnp.int8)``, ``view("float16")``),
    not a size (an int, a NumPy or JAX integer, a tuple of them)."""
    if isinstance(value, (int, tuple, list, type(None), np.generic)):
        return False
    if type(value).__name__ == "dtype" and type(value).__module__.startswith("torch"):
        return True
    if not isinstance(value, type) and hasattr(value, "__index__"):
        return False
    return _is_dtype(value)


def _check_fits(storage: Any, layout: Layout, op: str) -> None:
    """Bounds of a view made with concrete values (a traced offset is clamped when read:
    see ``lowering.dynamic_window``); per-item offsets of a batched array are all checked,
    by :func:`functional_strides._src.core.layout.check_in_storage` at the lowest and the highest."""
    check_static_storage_shape(op, storage.shape, layout)
    size = storage.shape[-1]
    offset = layout.offset
    if is_static_offset(offset):
        check_in_storage(op, layout.shape, layout.strides, int(offset), size)
        return
    if is_traced(offset):
        return
    values = np.asarray(offset)
    if values.size:
        check_in_storage(op, layout.shape, layout.strides, int(values.min()), size)
        check_in_storage(op, layout.shape, layout.strides, int(values.max()), size)


#: Python operators of ``torch.Tensor`` (and ``jax.Array``) that ``StridedArray`` supports,
#: each computed by the ``jax.Array`` operator of the same name on ``jnp.asarray(x)``.
_OPERATORS = tuple(f"__{op}__" for op in """
    add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow matmul rmatmul
    divmod rdivmod and rand or ror xor rxor lshift rlshift rshift rrshift eq ne lt le gt ge
    neg pos abs invert
""".split())


def _operand(value: Any) -> Any:
    return value.__jax_array__() if isinstance(value, StridedArray) else value


def _operator(name: str) -> Any:
    """``StridedArray.<name>``: ``jnp.asarray(self).<name>(*others)``, a ``jax.Array`` (or
    ``NotImplemented`` for an operand jax does not know, so that Python tries the other side)."""

    def method(self: StridedArray, *others: Any) -> Any:
        return getattr(self.__jax_array__(), name)(*map(_operand, others))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"``jnp.asarray(x).{name}(...)``: materialises and returns a ``jax.Array``, as "
                      f"``torch.Tensor.{name}`` returns a tensor.")
    return method


def _is_concrete_array(value: Any) -> bool:
    return isinstance(value, (jax.Array, np.ndarray)) and not is_traced(value)


def _holds_values(storage: Any, offset: Any) -> bool:
    """Whether the leaves can be read: a concrete array storage of a real dtype (not the
    float0 of a cotangent) or a concrete ``jax.Ref`` (its current value is read), and an
    integer offset that is an int or a concrete array."""
    if _refs.is_ref(storage) and not is_traced(storage):
        return is_static_offset(offset) or (
            _is_concrete_array(offset) and np.dtype(offset.dtype).kind in "iu")
    if not _is_concrete_array(storage) or np.dtype(storage.dtype).names is not None:
        return False
    if is_static_offset(offset):
        return True
    return _is_concrete_array(offset) and np.dtype(offset.dtype).kind in ("i", "u")


def _placeholder_meta(storage: Any, layout: Layout) -> str:
    """The repr of a ``StridedArray`` whose leaves are not all concrete arrays: the static
    layout, the batch shape and dtype where the storage has them, and each leaf that is not
    a plain int by its kind (a tracer by JAX's repr, which shows its abstract value)."""
    parts = [f"layout={layout}"]
    shape, dtype = getattr(storage, "shape", None), getattr(storage, "dtype", None)
    if isinstance(shape, tuple) and len(shape) > 1:
        parts.append(f"batch_shape={shape[:-1]}")
    try:
        if dtype is not None and np.dtype(dtype).names is None:
            parts.append(f"dtype={np.dtype(dtype).name}")
    except TypeError:
        pass
    parts.append(f"storage={leaf_kind(storage)}")
    if not is_static_offset(layout.offset):
        parts.append(f"offset={leaf_kind(layout.offset)}")
    return ", ".join(parts)


def _short_aval(dtype: Any, shape: tuple[int, ...]) -> str:
    """``f32[16,8]``: a dtype and shape as JAX's short form of an abstract array prints them."""
    name = np.dtype(dtype).name
    if name != "bfloat16":
        for long, short in (("float", "f"), ("uint", "u"), ("int", "i"), ("complex", "c")):
            name = name.replace(long, short)
    else:
        name = "bf16"
    return f"{name}[{','.join(map(str, shape))}]"


def _rebuild(storage: Any, layout: Layout) -> StridedArray:
    """Unpickling and ``copy``: the array over ``storage`` with ``layout``."""
    return StridedArray._wrap(storage, layout)


class StridedArray(InPlaceMethods):
    """A strided view: ``storage`` (1-D ``jax.Array``) read through ``layout``.

    Element ``x[i_0, ..., i_k]`` is ``storage[layout.offset + sum_d i_d * layout.strides[d]]``
    (strides and offset in elements). A JAX pytree whose leaves are the storage (and the
    offset, when it is a JAX scalar): it passes through ``jit``, ``vmap`` and ``grad``. The
    gradient of a loss through a view lives on its storage:
    ``jax.grad(lambda s: loss(x.with_storage(s)))(x.storage)``; ``jax.grad(loss,
    allow_int=True)(x)`` gives the same storage in a cotangent whose offset is float0 (a
    plain ``jax.grad(loss)(x)`` is refused by JAX: the offset is an integer). See
    docs/gradients.md, and docs/export.md for ``jax.export``.

    Args:
      storage: 1-D JAX or NumPy array of any dtype, or a 1-D ``jax.Ref`` (see :func:`from_ref`:
        the array then takes PyTorch's in-place methods); with ``batched=True``, an array of shape
        ``(*batch, N)``: a batch of storages sharing one layout (what ``jax.vmap`` makes of
        a ``StridedArray`` outside the mapped function).
      layout: a :class:`Layout` that fits in the storage (in its last axis).
      batched: allow leading batch axes. Metadata (``shape``, ``stride()``, view ops) then
        describe one item; materialisation and writes map over ``batch_shape``, so
        ``jnp.asarray(x).shape == (*x.batch_shape, *x.shape)``. With the batch axes sharded
        across devices, every item stays on its device.
    Raises:
      StorageError: storage not 1-D (nor batched), or the layout addresses past its end (the
        message gives the required and actual storage sizes).
    Example:
      >>> import jax.numpy as jnp
      >>> x = StridedArray(jnp.arange(6), Layout((2, 3), (3, 1)))
      >>> x.t().stride(), x.t().is_contiguous()
      ((1, 3), False)

    A ``torch.Tensor`` name either does what PyTorch's does or is absent. View ops and view
    metadata are methods; operators (``+ - * / // % ** @``, comparisons, ``- + abs ~``)
    materialise and return a ``jax.Array``, as ``jnp`` does, whichever side the other operand
    (a scalar, a NumPy or JAX array, another ``StridedArray``) is on; ``==`` is elementwise,
    so a ``StridedArray`` is unhashable. Every other ``torch.Tensor`` method (``sum``,
    ``float``, ``to``, ``add_``, ...) raises ``AttributeError`` naming the JAX way, but for
    PyTorch's in-place methods over a ``jax.Ref`` (:func:`from_ref`: ``copy_``, ``fill_``,
    ``zero_``, ``add_``, ``sub_``, ``mul_``, ``div_``, ``clamp_``, ``x[idx] = v`` and ``+= -= *=
    /= //=``), which write in place.

    Example:
      >>> x = StridedArray(jnp.arange(6.0), Layout((2, 2), (1, 3)))
      >>> (2 * x + 1).tolist()
      [[1.0, 7.0], [3.0, 9.0]]
      >>> x.sum()
      Traceback (most recent call last):
      ...
      AttributeError: StridedArray has no method 'sum' (torch.Tensor.sum is not a view op). Materialise ...

    Semantics: ``torch.Tensor`` with its storage (``untyped_storage()``) and view metadata.
    """

    __slots__ = ("storage", "layout")
    storage: jax.Array
    layout: Layout

    def __init__(self, storage: Any, layout: Layout, *, batched: bool = False) -> None:
        if not isinstance(layout, Layout):
            raise LayoutTypeError(f"StridedArray: layout must be a functional_strides.Layout, not "
                                  f"{type(layout).__name__} (got layout={layout!r}); build one with "
                                  "Layout(shape, strides, offset).")
        if _refs.is_ref(storage):
            _check_ref(storage, "StridedArray", batched)
        elif not isinstance(storage, jax.Array):
            try:
                storage = jnp.asarray(storage)
            except (TypeError, ValueError):
                raise LayoutTypeError(
                    f"StridedArray: storage must be a 1-D JAX or NumPy array, not {leaf_kind(storage)} "
                    f"(layout {layout}). A 1-D jax.Ref is a storage too (fs.from_ref). "
                    f"{PLACEHOLDER_HINT}") from None
        if storage.ndim != 1 and not (batched and storage.ndim >= 1):
            raise StorageError(
                f"StridedArray: storage must be 1-D (got shape {tuple(storage.shape)}); pass "
                "x.reshape(-1), use from_array(x) for a contiguous view of an array, or "
                "batched=True for a batch of storages of shape (*batch, N)."
            )
        if jnp.ndim(layout.offset) > 0 and not (batched and jnp.shape(layout.offset) == storage.shape[:-1]):
            raise StorageError(
                f"StridedArray: the layout holds {jnp.shape(layout.offset)} offsets (one per item) but the "
                f"storage of shape {tuple(storage.shape)} has batch_shape {tuple(storage.shape[:-1])}; give "
                "one offset per item of a batched storage (batched=True), or an int offset.")
        _check_fits(storage, layout, "StridedArray")
        object.__setattr__(self, "storage", storage)
        object.__setattr__(self, "layout", layout)

    @classmethod
    def _wrap(cls, storage: Any, layout: Layout) -> StridedArray:
        obj = object.__new__(cls)
        object.__setattr__(obj, "storage", storage)
        object.__setattr__(obj, "layout", layout)
        return obj

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"StridedArray is immutable; cannot set {name!r}. Use x.at[idx].set(v) "
                             "for functional writes or with_storage() for another storage.")

    def _view(self, layout: Layout) -> StridedArray:
        return StridedArray._wrap(self.storage, layout)

    # -- torch.Tensor metadata -----------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """Extents, a tuple of ints (``torch.Tensor.shape``)."""
        return self.layout.shape

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading batch axes of the storage (``()`` for a plain 1-D storage)."""
        return tuple(self.storage.shape[:-1])

    @property
    def ndim(self) -> int:
        """Rank."""
        return self.layout.ndim

    @property
    def dtype(self) -> Any:
        """Element dtype of the storage."""
        return self.storage.dtype

    @property
    def itemsize(self) -> int:
        """Bytes per element (``ndarray.itemsize``, ``torch.Tensor.itemsize``)."""
        return self.storage.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in **bytes**, any sign: ``stride()`` times ``itemsize``.

        Example:
          >>> import jax.numpy as jnp
          >>> x = from_array(jnp.zeros((2, 3), jnp.float32)).flip(1)
          >>> x.strides, x.stride()
          ((12, -4), (3, -1))

        Semantics: ``numpy.ndarray.strides``; PyTorch's ``stride()`` counts elements."""
        item = self.storage.dtype.itemsize
        return tuple(s * item for s in self.layout.strides)

    @property
    def nbytes(self) -> int:
        """Bytes the elements of the view take, ``numel * itemsize`` (elements shared through
        overlap or stride 0 counted each time). Semantics: ``numpy.ndarray.nbytes``,
        ``torch.Tensor.nbytes``."""
        return self.layout.numel * self.storage.dtype.itemsize

    def dim(self) -> int:
        """Rank (``torch.Tensor.dim``)."""
        return self.layout.ndim

    def numel(self) -> int:
        """Number of elements (``torch.Tensor.numel``)."""
        return self.layout.numel

    @overload
    def size(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def size(self, dim: int) -> int: ...

    def size(self, dim: Any = None) -> Any:
        """All extents, or the extent of ``dim`` (``torch.Tensor.size``).

        Args:
          dim: a dim (negative counts from the end), or ``None`` for all.
        Raises:
          OutOfRangeError: ``dim`` out of range (or any ``dim`` on rank 0).
          LayoutTypeError: ``dim`` is not an int."""
        if dim is None:
            return self.layout.shape
        dim = views._index("size", "dim", dim)
        if self.ndim == 0:
            raise OutOfRangeError(f"size: dimension specified as {dim} but tensor has no dimensions.")
        return self.layout.shape[views.canonical_dim(dim, self.ndim, op="size")]

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...

    def stride(self, dim: Any = None) -> Any:
        """All strides, or that of ``dim``, in elements (``torch.Tensor.stride``).

        Args:
          dim: a dim (negative counts from the end), or ``None`` for all.
        Raises:
          OutOfRangeError: ``dim`` out of range (or any ``dim`` on rank 0).
          LayoutTypeError: ``dim`` is not an int."""
        if dim is None:
            return self.layout.strides
        dim = views._index("stride", "dim", dim)
        if self.ndim == 0:
            raise OutOfRangeError(f"stride: dimension specified as {dim} but tensor has no dimensions.")
        return self.layout.strides[views.canonical_dim(dim, self.ndim, op="stride")]

    def storage_offset(self) -> Any:
        """Storage index of the first element, in elements (``torch.Tensor.storage_offset``).

        A Python int, except under a trace (a traced integer scalar) and for a batched array
        whose items have their own offsets (an integer array of shape ``batch_shape``)."""
        offset = self.layout.offset
        if not is_static_offset(offset) and not is_traced(offset) and jnp.ndim(offset) == 0:
            return int(offset)  # a concrete scalar, e.g. returned by a jitted function
        return offset

    def is_contiguous(self, memory_format: Any = memory_format_module.contiguous_format) -> bool:
        """PyTorch's contiguity of the layout in ``memory_format`` (default: C-contiguity).

        Args:
          memory_format: ``fs.contiguous_format`` (or ``fs.preserve_format``, the same answer),
            ``fs.channels_last`` (rank 4, NHWC order), ``fs.channels_last_3d`` (rank 5); PyTorch's
            own ``torch.channels_last`` etc. are accepted. A channels-last format on another
            rank answers False, as in PyTorch.
        Raises:
          LayoutTypeError: ``memory_format`` is not a memory format.
        Example:
          >>> import jax.numpy as jnp, functional_strides as fs
          >>> x = fs.from_array(jnp.zeros((2, 4, 5, 3))).permute(0, 3, 1, 2)    # NHWC data, NCHW dims
          >>> x.stride(), x.is_contiguous(), x.is_contiguous(memory_format=fs.channels_last)
          ((60, 1, 15, 3), False, True)

        Semantics: ``torch.Tensor.is_contiguous(memory_format=...)``, size-1 and size-0 dims
        included."""
        fmt = memory_format_module.as_memory_format(memory_format, "is_contiguous")
        return memory_format_module.is_contiguous_as(self.layout, fmt)

    def tolist(self) -> Any:
        """Values as nested Python lists (``torch.Tensor.tolist``)."""
        return np.asarray(self).tolist()

    def numpy(self) -> np.ndarray:
        """Values as a dense NumPy array (``torch.Tensor.numpy``; a copy)."""
        return np.asarray(self)

    def item(self) -> Any:
        """The value of a one-element array as a Python scalar (``torch.Tensor.item``).

        Raises:
          LayoutError: the array has more or fewer than one element."""
        if self.numel() != 1 or self.batch_shape:
            raise LayoutError(f"item: only one-element arrays can be converted to Python scalars "
                              f"(layout {self.layout}, batch_shape {self.batch_shape}).")
        return np.asarray(self).reshape(()).item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1 or self.batch_shape:
            raise LayoutError(f"bool: the truth value of an array with more than one element is "
                              f"ambiguous (layout {self.layout}); use jnp.any/jnp.all on jnp.asarray(x).")
        return bool(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise LayoutTypeError(f"len() of a 0-d StridedArray (layout {self.layout}); a rank-0 array "
                                  "has no length: use x.numel() or x.item().")
        return self.layout.shape[0]

    def __iter__(self) -> Iterator[StridedArray]:
        """Views of ``x[0], x[1], ...`` (``torch.Tensor.__iter__``, which yields views too).

        Raises:
          LayoutTypeError: rank 0 (also a ``TypeError``, as PyTorch's)."""
        if self.ndim == 0:
            raise LayoutTypeError(f"iteration over a 0-d StridedArray (layout {self.layout}); use x.item().")
        return iter(self.unbind(0))

    def __index__(self) -> int:
        return operator.index(self.__jax_array__())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __repr__(self) -> str:
        """The short form: dtype and shape as JAX prints an abstract array, then the layout in
        the ``(shape):(strides)+offset`` notation (elements), and the batch shape when
        batched. It holds no values, so a container of views (a list, a dict, a model's
        fields) prints in one line per view, as ``equinox`` prints arrays (``f32[16,8]``).
        ``print(x)`` (``str``) prints the values. A leaf that is not a concrete array (what
        ``jax.eval_shape``, ``jax.tree_util`` or ``equinox``'s filters leave in a pytree: a
        ``ShapeDtypeStruct``, ``None``, a float0 cotangent, any object; a tracer) is shown by
        its kind, never read.

        Example:
          >>> import jax.numpy as jnp
          >>> x = from_array(jnp.arange(6.0).reshape(2, 3))[:, :2].t()
          >>> x
          StridedArray(f32[2,2], (2,2):(1,3)+0)
          >>> [x, x[0]]
          [StridedArray(f32[2,2], (2,2):(1,3)+0), StridedArray(f32[2], (2,):(3,)+0)]
          >>> jax.eval_shape(lambda v: v[1:], x)
          StridedArray(layout=(1,2):(1,3)+1, dtype=float32, storage=ShapeDtypeStruct(float32[6]))
          >>> jax.tree_util.tree_map(lambda _: None, x)
          StridedArray(layout=(2,2):(1,3)+0, storage=None)

        Semantics: the short form of ``repr(jax.Array)`` in ``equinox.tree_pformat``, plus
        the layout; ``str`` is ``repr(torch.Tensor)`` plus the layout."""
        storage, offset = self.storage, self.layout.offset
        if not _holds_values(storage, offset):
            return f"StridedArray({_placeholder_meta(storage, self.layout)})"
        batch = f", batch_shape={self.batch_shape}" if self.batch_shape else ""
        return f"StridedArray({_short_aval(self.dtype, self.shape)}, {self.layout}{batch})"

    def __str__(self) -> str:
        """The values (materialised, printed as ``jnp`` prints arrays), the layout in the
        ``(shape):(strides)+offset`` notation (elements), the batch shape when batched, and
        the dtype; what ``print(x)`` shows. Under a trace nothing is materialised: it is the
        short form (``repr``).

        Example:
          >>> import jax.numpy as jnp
          >>> print(from_array(jnp.arange(6.0).reshape(2, 3))[:, :2].t())
          StridedArray([[0., 3.], [1., 4.]], layout=(2,2):(1,3)+0, dtype=float32)

        Semantics: ``str(torch.Tensor)`` / ``str(jax.Array)`` plus the layout."""
        prefix = "StridedArray("
        storage, offset = self.storage, self.layout.offset
        if not _holds_values(storage, offset):
            return f"{prefix}{_placeholder_meta(storage, self.layout)})"
        batch = f", batch_shape={self.batch_shape}" if self.batch_shape else ""
        meta = f"layout={self.layout}{batch}, dtype={np.dtype(self.dtype).name}"
        try:
            values = np.asarray(self)
        except LayoutError as e:  # e.g. a scalar storage (vmap over a 1-D storage): say why
            return f"{prefix}{meta}, storage={self.storage!r}, error={type(e).__name__})"
        if values.size == 0:
            body = f"[], shape={values.shape}"
        else:
            body = np.array2string(values, prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=np.get_printoptions()["linewidth"])
        return f"{prefix}{body}, {meta})"

    def __pdoc__(self, **kwargs: Any) -> Any:
        """``equinox.tree_pformat``'s (wadler_lindig's) hook: the short form (``repr``), or
        the values with ``short_arrays=False``."""
        import wadler_lindig

        return wadler_lindig.TextDoc(repr(self) if kwargs.get("short_arrays", True) else str(self))

    def __treescope_repr__(self, path: str | None, subtree_renderer: Any) -> Any:
        """treescope's hook (flax NNX's display): the short form (``repr``), one line."""
        from treescope import rendering_parts

        return rendering_parts.build_one_line_tree_node(rendering_parts.text(repr(self)), path)

    # -- operators: materialise and compute with jnp ----------------------------------------
    # x + y, 2 * x, x @ y, x == y, ... are jax.Array operators on jnp.asarray(x): the result is
    # a jax.Array, with jnp's promotion and broadcasting rules. __array_priority__ makes NumPy
    # defer (np_array + x calls x.__radd__), as it does for jax.Array; jax.Array's own
    # operators accept objects with __jax_array__.
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]  # == is elementwise, as for jax.Array

    def __getattr__(self, name: str) -> Any:
        """Only reached for names ``StridedArray`` does not have: ``torch.Tensor`` methods
        that are not view ops raise ``AttributeError`` naming the ``jnp`` way (the table in
        ``functional_strides/_tensor_names.py``); other names a plain ``AttributeError``."""
        message = _tensor_names.message(name)
        if message is None:
            raise AttributeError(f"'StridedArray' object has no attribute {name!r}", name=name)
        raise AttributeError(message, name=name)

    def __reduce__(self) -> tuple[Any, tuple[Any, Layout]]:
        # pickle and copy: rebuild from (storage, layout); __setattr__ refuses slot state
        return _rebuild, (self.storage, self.layout)

    # -- DLPack: export the materialised values ----------------------------------------------
    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """A DLPack capsule of ``jnp.asarray(x)`` (dense, row-major, ``x.dtype``), so that
        ``torch.from_dlpack(x)``, ``np.from_dlpack(x)`` and ``torch.as_tensor(x)`` see the
        view's values. Arguments as ``jax.Array.__dlpack__``.

        Semantics: the Python array API ``__dlpack__`` protocol."""
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        return self.__jax_array__().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        """``(device_type, device_id)`` of the storage (where the materialised values live)."""
        return cast(Any, self.storage).__dlpack_device__()  # jax.Array's, absent from its stubs

    locals().update({name: _operator(name) for name in _OPERATORS})

    # -- materialisation ------------------------------------------------------------------
    def contiguous(self, memory_format: Any = memory_format_module.contiguous_format, *,
                   out_sharding: Any = None) -> StridedArray:
        """The input itself when already contiguous in ``memory_format`` (whatever its offset)
        and no ``out_sharding`` is asked for, else a copy over fresh storage of ``numel``
        elements, offset 0, with that format's strides.

        Forms: ``x.contiguous(memory_format=fs.contiguous_format, *, out_sharding=None)``,
        ``fs.contiguous(x, ...)``. The copy compiles to XLA with index arithmetic generated in
        the graph (see :func:`functional_strides.materialize` and
        :func:`functional_strides.read_plan` for the program chosen); batched arrays copy every
        item. A 1-D storage sharded across devices (a ``NamedSharding`` over its only axis;
        inside ``jit``, on an explicit mesh, whose types hold it) is read so that each device
        receives only the elements its part of the output needs (see docs/sharding.md): the
        new storage is the values flattened, in blocks of the storage's mesh axis. Where dim 0
        does not split into equal parts (JAX shards evenly) that storage holds
        ``ceil(rows / devices) * devices`` rows, the padding at its end: it is then longer
        than ``numel``, and the layout covers the view's rows.

        Args:
          memory_format: ``fs.contiguous_format`` (row-major, the default), ``fs.channels_last``
            (rank 4: NCHW stored as NHWC) or ``fs.channels_last_3d`` (rank 5: NDHWC); PyTorch's
            ``torch.channels_last`` etc. are accepted. ``fs.preserve_format`` returns the input
            when C-contiguous and is refused otherwise, as in PyTorch.
          out_sharding: a ``jax.sharding.NamedSharding`` for the values (shape ``x.shape``):
            the new storage holds them flattened, sharded in blocks when ``out_sharding``
            shards dim 0. Inside ``jit`` on a mesh of ``Auto`` axes it names the mesh axis the
            storage is sharded over (an explicit mesh's types say it). Row-major only.
        Returns:
          A ``StridedArray`` with ``is_contiguous(memory_format=memory_format)`` true, of the
          input's dtype.
        Raises:
          LayoutError: a channels-last format on the wrong rank ("required rank 4 tensor");
            ``preserve_format`` on a non-contiguous array; ``out_sharding`` with another
            format than ``contiguous_format``, or on a batched array (shard the batch axis).
          LayoutTypeError: ``memory_format`` is not a memory format, or ``out_sharding`` is
            not a ``NamedSharding``.
          StorageError: storage indices exceed int32 while ``jax_enable_x64`` is off.
        Example:
          >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3)).t()
          >>> y = x.contiguous()
          >>> y.stride(), y.storage.tolist()
          ((2, 1), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0])
          >>> images = fs.from_array(jnp.arange(24.0).reshape(1, 2, 3, 4))
          >>> z = images.contiguous(memory_format=fs.channels_last)
          >>> z.stride(), z.storage[:4].tolist(), z.tolist() == images.tolist()
          ((24, 1, 8, 2), [0.0, 12.0, 1.0, 13.0], True)
          >>> from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
          >>> mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
          >>> x.contiguous(out_sharding=NamedSharding(mesh, P("x"))).tolist()
          [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]

        Semantics: ``torch.Tensor.contiguous(memory_format=...)``; ``out_sharding`` as in
        ``jax.jit``."""
        fmt = memory_format_module.as_memory_format(memory_format, "contiguous")
        if out_sharding is not None:
            if fmt is not memory_format_module.contiguous_format:
                raise LayoutError(f"contiguous: out_sharding gives row-major values, not {fmt} (layout "
                                  f"{self.layout}); call contiguous(out_sharding=...) and then "
                                  f"contiguous(memory_format={fmt}).")
            return self._contiguous_sharded(out_sharding)
        if memory_format_module.is_contiguous_as(self.layout, fmt):
            return self
        if fmt is memory_format_module.preserve_format:
            raise LayoutError(f"contiguous: preserve memory format is unsupported by the contiguous "
                              f"operator (layout {self.layout} is not contiguous); use clone("
                              "memory_format=fs.preserve_format) to copy with this layout's dim order.")
        if fmt is memory_format_module.contiguous_format and dispatch.is_sharded(self.storage):
            return self._contiguous_sharded(None)
        return self._copy_with_strides(memory_format_module.format_strides(self.shape, fmt, op="contiguous"))

    def _contiguous_sharded(self, out_sharding: Any) -> StridedArray:
        if self.batch_shape:
            raise LayoutError(f"contiguous: out_sharding applies to a 1-D storage, not a batch of "
                              f"storages (batch_shape {self.batch_shape}, layout {self.layout}); shard the "
                              "batch axis of the storage instead (docs/sharding.md).")
        result = dispatch.contiguous(self.storage, self.layout, out_sharding)
        assert result is not None  # a sharded storage, or out_sharding given: never declined
        return StridedArray._wrap(*result)

    def __jax_array__(self) -> jax.Array:
        return _materialize(self.storage, self.layout)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.asarray(_materialize(self.storage, self.layout))
        return out if dtype is None else out.astype(dtype)

    def clone(self, memory_format: Any = memory_format_module.preserve_format) -> StridedArray:
        """A copy over fresh storage of ``numel`` elements, offset 0, with the strides of
        ``memory_format``. The default ``preserve_format`` keeps the strides when the layout is
        empty or non-overlapping and dense, else gives dense strides in the order of the
        input's strides (ATen's ``infer_dense_strides``).

        Forms: ``x.clone(memory_format=fs.preserve_format)``, ``fs.clone(x, memory_format)``.

        Args:
          memory_format: ``fs.preserve_format`` (default), ``fs.contiguous_format``,
            ``fs.channels_last`` (rank 4) or ``fs.channels_last_3d`` (rank 5); PyTorch's own
            objects are accepted.
        Returns:
          A ``StridedArray`` over a new storage, of the input's dtype.
        Raises:
          LayoutError: a channels-last format on the wrong rank.
          LayoutTypeError: ``memory_format`` is not a memory format.
          StorageError: storage indices exceed int32 while ``jax_enable_x64`` is off.
        Example:
          >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3)).t()
          >>> y = x.clone()
          >>> y.stride(), y.storage_offset(), y.storage.tolist()
          ((1, 3), 0, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
          >>> x.clone(memory_format=fs.contiguous_format).stride()
          (2, 1)

        Semantics: ``torch.Tensor.clone(memory_format=...)``."""
        fmt = memory_format_module.as_memory_format(memory_format, "clone")
        return self._copy_with_strides(memory_format_module.copy_strides(self.layout, fmt, op="clone"))

    def _copy_with_strides(self, strides: tuple[int, ...]) -> StridedArray:
        """The values of this array over fresh storage of ``numel`` elements laid out with
        ``strides`` (a dense permutation for this shape), offset 0."""
        lay = self.layout
        out = Layout(lay.shape, strides, 0)
        order = sorted(range(lay.ndim), key=lambda d: (-out.strides[d], d))
        dense = _materialize(self.storage, views.permute(lay, order))
        return StridedArray._wrap(_programs.reshape(dense, (*self.batch_shape, lay.numel)), out)

    # -- functional writes ----------------------------------------------------------------
    def with_storage(self, storage: Any) -> StridedArray:
        """The same layout over another storage, e.g. ``base.with_storage(w.storage)`` to see
        a write made through another view ``w`` of the same storage (``w = x.at[...].add(v)``).

        Args:
          storage: the new storage, a 1-D array (``(*batch, N)`` for a batched array).
        Raises:
          StorageError: ``storage`` is not 1-D (for a batched array: has no batch axes) or
            is shorter than the layout's ``required_storage_size``."""
        if self.batch_shape and jnp.ndim(storage) < 2:
            raise StorageError(
                f"with_storage: this array is batched (batch_shape {self.batch_shape}, layout "
                f"{self.layout}) but the new storage has shape {tuple(jnp.shape(storage))}; give a "
                "storage of shape (*batch, N).")
        return StridedArray(storage, self.layout, batched=bool(self.batch_shape))

    @property
    def at(self) -> _IndexUpdateHelper:
        """Functional writes through a view of this array, spelled as ``jnp``'s ``.at[]``.

        ``x.at[idx].set(v)`` returns ``x`` (its layout) over a new storage in which the
        elements of the view ``x[idx]`` are replaced by ``v``; ``.add``, ``.multiply``,
        ``.min``, ``.max`` combine instead, ``.get()`` reads. ``idx`` is any basic index
        (``int``, traced int, slices with steps, ``None``, ``...``, tuples of these);
        ``x.at[...]`` writes through the whole view, which may overlap itself (an
        ``unfold``, ``diagonal``, ``expand`` or ``as_strided`` view: overlap-add is
        ``frames.at[...].add(v)``). Other views of the old storage see the write when rebuilt
        with ``view.with_storage(result.storage)``.

        Example:
          >>> import jax.numpy as jnp
          >>> x = from_array(jnp.zeros((2, 3)))
          >>> x.at[:, 1].set(7.0).tolist()
          [[0.0, 7.0, 0.0], [0.0, 7.0, 0.0]]
          >>> frames = from_array(jnp.zeros(6)).unfold(0, 4, 2)     # two overlapping windows
          >>> frames.at[...].add(1.0).storage.tolist()               # shared slots accumulate
          [1.0, 1.0, 2.0, 2.0, 1.0, 1.0]

        Semantics: ``jax.Array.at``; PyTorch's in-place writes through a view
        (``x[:, 1] = v``, ``view.copy_(v)``, ``view.add_(v)``), functionalized."""
        return _IndexUpdateHelper(self)

    def _read(self, layout: Layout) -> jax.Array:
        """The values of ``layout`` (a view of this array's storage, with this array's batch
        axes), materialised."""
        return _materialize(self.storage, layout)

    def _write(self, layout: Layout, src: Any, mode: str, overlap: str, op: str) -> StridedArray:
        """This array over the storage left by writing ``src`` through ``layout`` (a view of
        this array's storage, with this array's batch axes)."""
        if _refs.is_ref(self.storage):  # functional: a new jax.Array from the ref's value; the ref is kept
            whole = dispatch.read_ref(self.storage, Layout.contiguous(self.storage.shape))
            new = write(whole, layout, src, mode=mode, overlap=overlap, op=op)
            return StridedArray._wrap(new, self.layout)
        _check_storage_rank(self.storage, layout)
        check_operands(op, self.storage, layout, batch=True)
        nb = len(self.batch_shape)
        if nb:
            src = check_src(src, layout.shape, self.dtype, op=op, layout=layout, batch_shape=self.batch_shape)
            src = dispatch.placed_like_batch(src, self.storage, nb)
            new = _map_items(lambda s, lay, v: write(s, lay, v, mode=mode, overlap=overlap, op=op),
                             self.storage, layout, src)
            new = dispatch.placed_as(new, self.storage)
        else:  # sharded across devices or not: the one dispatch decides
            new = dispatch.write(self.storage, layout, src, mode=mode, overlap=overlap, op=op)
        return StridedArray._wrap(new, self.layout)

    # -- view ops (metadata only) ---------------------------------------------------------
    @_shares_doc(views.as_strided)
    def as_strided(self, size: Any, stride: Any, storage_offset: Any = None) -> StridedArray:
        layout = views.as_strided(self.layout, size, stride, storage_offset)
        _check_fits(self.storage, layout, "as_strided")
        return self._view(layout)

    @_shares_doc(views.view)
    def view(self, *shape: Any) -> StridedArray:
        if len(shape) == 1 and _is_dtype_request(shape[0]):
            return view_dtype(self, shape[0])
        return self._view(views.view(self.layout, _shape_args(shape)))

    def reshape(self, *shape: Any) -> StridedArray:
        """A view with ``shape`` (one ``-1`` inferred) when ``view`` would succeed, else a copy
        with ``shape`` over fresh row-major storage.

        Forms: ``x.reshape(*shape)``, ``fs.reshape(x, shape)``.

        Args:
          shape: target extents, ints (one may be -1); ``prod(shape) == numel``.
        Returns:
          A ``StridedArray``: the view's strides (elements) are PyTorch's ``computeStride``; a
          copy is contiguous with offset 0.
        Raises:
          LayoutError: two -1, an extent below -1, or a product other than numel.
          LayoutTypeError: an extent that is not an int.
        Example:
          >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
          >>> x.reshape(3, 2).stride(), x.t().reshape(6).tolist()
          ((2, 1), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0])

        Semantics: ``torch.reshape``."""
        new_shape = views.infer_size(_shape_args(shape), self.numel(), op="reshape")
        strides = views.view_strides(self.shape, self.layout.strides, new_shape)
        if strides is not None:
            return self._view(Layout(new_shape, strides, self.layout.offset))
        return self.contiguous().view(new_shape)

    def flatten(self, start_dim: Any = 0, end_dim: Any = -1) -> StridedArray:
        """Merge dims ``start_dim`` to ``end_dim`` (inclusive) into one: a view when ``view``
        would succeed, else a copy (rank 0 becomes shape ``(1,)``; ``start_dim == end_dim``
        returns the input).

        Forms: ``x.flatten(start_dim=0, end_dim=-1)``, ``fs.flatten(x, start_dim=0, end_dim=-1)``.

        Args:
          start_dim: the first dim merged (negative counts from the end).
          end_dim: the last dim merged (negative counts from the end).
        Returns:
          A ``StridedArray`` of rank ``ndim - (end_dim - start_dim)``.
        Raises:
          LayoutError: ``start_dim`` after ``end_dim``.
          OutOfRangeError: a dim is out of range.
        Example:
          >>> x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
          >>> x.flatten(1).shape, x.flatten(1).stride(), x.permute(2, 0, 1).flatten(1).stride()
          ((2, 12), (12, 1), (1, 4))

        Semantics: ``torch.flatten``."""
        target = views.flatten_shape(self.layout, start_dim, end_dim)
        return self if target is None else self.reshape(target)

    def unflatten(self, dim: Any, sizes: Sequence[Any]) -> StridedArray:
        """Split ``dim`` into ``sizes`` (one ``-1`` inferred); always a view.

        Forms: ``x.unflatten(dim, sizes)``, ``fs.unflatten(x, dim, sizes)``.

        Args:
          dim: the dim to split.
          sizes: a non-empty sequence of ints multiplying to its extent.
        Returns:
          A ``StridedArray`` of rank ``ndim + len(sizes) - 1`` over the same storage.
        Raises:
          LayoutError: ``sizes`` empty, with two -1 or an entry below -1, or multiplying to
            another extent than that of ``dim``.
          LayoutTypeError: ``sizes`` is not a sequence of ints.
          OutOfRangeError: rank 0, or ``dim`` out of range.
        Example:
          >>> x = fs.from_array(jnp.arange(12.0).reshape(2, 6))
          >>> y = x.unflatten(1, (3, -1))
          >>> y.shape, y.stride()
          ((2, 3, 2), (6, 2, 1))

        Semantics: ``torch.unflatten``."""
        return self.view(views.unflatten_shape(self.layout, dim, sizes))

    @_shares_doc(views.permute)
    def permute(self, *dims: Any) -> StridedArray:
        return self._view(views.permute(self.layout, _shape_args(dims)))

    @_shares_doc(views.transpose)
    def transpose(self, dim0: Any, dim1: Any) -> StridedArray:
        return self._view(views.transpose(self.layout, dim0, dim1))

    @_shares_doc(views.t)
    def t(self) -> StridedArray:
        return self._view(views.t(self.layout))

    @property
    @_shares_doc(views.reverse_dims)
    def T(self) -> StridedArray:  # noqa: N802 - PyTorch's name
        return self._view(views.reverse_dims(self.layout))

    @property
    @_shares_doc(views.mT)
    def mT(self) -> StridedArray:  # noqa: N802 - PyTorch's name
        return self._view(views.mT(self.layout))

    @_shares_doc(views.movedim)
    def movedim(self, source: Any, destination: Any) -> StridedArray:
        return self._view(views.movedim(self.layout, source, destination))

    @_shares_doc(views.flip)
    def flip(self, *dims: Any) -> StridedArray:
        return self._view(views.flip(self.layout, _shape_args(dims)))

    @_shares_doc(views.fliplr)
    def fliplr(self) -> StridedArray:
        return self._view(views.fliplr(self.layout))

    @_shares_doc(views.flipud)
    def flipud(self) -> StridedArray:
        return self._view(views.flipud(self.layout))

    @_shares_doc(views.squeeze)
    def squeeze(self, dim: Any = _ALL_DIMS) -> StridedArray:
        if dim is None:
            raise LayoutTypeError(f"squeeze: dim must be an int or a tuple of ints, not None (layout "
                                  f"{self.layout}); call squeeze() without dim to drop every size-1 dim.")
        return self._view(views.squeeze(self.layout, None if dim is _ALL_DIMS else dim))

    @_shares_doc(views.unsqueeze)
    def unsqueeze(self, dim: Any) -> StridedArray:
        return self._view(views.unsqueeze(self.layout, dim))

    @_shares_doc(views.expand)
    def expand(self, *shape: Any) -> StridedArray:
        return self._view(views.expand(self.layout, _shape_args(shape)))

    def expand_as(self, other: Any) -> StridedArray:
        """``expand(other.shape)``: broadcast to the shape of another array (a view).

        Forms: ``x.expand_as(other)``, ``fs.expand_as(x, other)``.

        Args:
          other: any array with a ``shape`` (``StridedArray``, ``jax.Array``, ``np.ndarray``).
        Returns:
          As ``expand``: broadcast dims have stride 0 (elements).
        Raises:
          LayoutTypeError: ``other`` has no ``shape``.
          LayoutError: the shapes do not broadcast (see ``expand``).
        Example:
          >>> x = fs.from_array(jnp.arange(3.0))
          >>> x.expand_as(jnp.zeros((2, 3))).stride()
          (0, 1)

        Semantics: ``torch.Tensor.expand_as``."""
        shape = getattr(other, "shape", None)
        if shape is None:
            raise LayoutTypeError(f"expand_as: other must be an array with a shape, not "
                                  f"{type(other).__name__} (got other={other!r}, layout {self.layout}); "
                                  "use expand(sizes) for sizes.")
        return self.expand(tuple(shape))

    def broadcast_to(self, shape: Sequence[Any]) -> StridedArray:
        """``expand(shape)``; an int ``n`` is the shape ``(n,)`` (a view).

        Forms: ``x.broadcast_to(shape)``, ``fs.broadcast_to(x, shape)``.

        Args:
          shape: target extents (an int or a sequence of ints; ``-1`` keeps an extent).
        Returns:
          As ``expand``: broadcast dims have stride 0 (elements).
        Raises:
          LayoutTypeError: ``shape`` is not an int or a sequence of ints.
          LayoutError: the shapes do not broadcast (see ``expand``).
        Example:
          >>> x = fs.from_array(jnp.arange(3.0))
          >>> x.broadcast_to((2, 3)).shape, x.broadcast_to((2, 3)).stride()
          ((2, 3), (0, 1))

        Semantics: ``torch.broadcast_to``."""
        return self.expand(_shape_args((shape,)))

    @_shares_doc(views.narrow)
    def narrow(self, dim: Any, start: Any, length: Any) -> StridedArray:
        return self._view(views.narrow(self.layout, dim, start, length))

    @_shares_doc(views.select)
    def select(self, dim: Any, index: Any) -> StridedArray:
        return self._view(views.select(self.layout, dim, index))

    @_shares_doc(views.unfold)
    def unfold(self, dimension: Any, size: Any, step: Any) -> StridedArray:
        return self._view(views.unfold(self.layout, dimension, size, step))

    @_shares_doc(views.diagonal)
    def diagonal(self, offset: Any = 0, dim1: Any = 0, dim2: Any = 1) -> StridedArray:
        return self._view(views.diagonal(self.layout, offset, dim1, dim2))

    @_shares_doc(views.split)
    def split(self, split_size_or_sections: Any, dim: Any = 0) -> tuple[StridedArray, ...]:
        return tuple(self._view(lay) for lay in views.split(self.layout, split_size_or_sections, dim))

    @_shares_doc(views.chunk)
    def chunk(self, chunks: Any, dim: Any = 0) -> tuple[StridedArray, ...]:
        return tuple(self._view(lay) for lay in views.chunk(self.layout, chunks, dim))

    @_shares_doc(views.unbind)
    def unbind(self, dim: Any = 0) -> tuple[StridedArray, ...]:
        return tuple(self._view(lay) for lay in views.unbind(self.layout, dim))

    @_shares_doc(views.getitem)
    def __getitem__(self, key: Any) -> StridedArray:
        if isinstance(key, (bool, np.bool_)):
            return self._bool_index(bool(key))
        return self._view(views.getitem(self.layout, key))

    def _bool_index(self, key: bool) -> StridedArray:
        """``x[True]`` / ``x[False]``: a copy of ``x`` (``clone()``'s strides) with a new
        leading dim of extent 1 / 0, as PyTorch and NumPy index by a bool scalar (advanced
        indexing: a copy, not a view). The new dim's stride is PyTorch's, the product of the
        other extents (an extent 0 counted as 1)."""
        copy = self.clone()
        outer = int(np.prod([max(n, 1) for n in copy.shape], dtype=np.int64))
        layout = Layout((1 if key else 0, *copy.shape), (outer, *copy.stride()), copy.layout.offset)
        return StridedArray._wrap(copy.storage, layout)


def from_array(x: Any) -> StridedArray:
    """Contiguous view over ``x.reshape(-1)``: shape ``x.shape``, row-major strides, offset 0.

    Args:
      x: a JAX or NumPy array (any dtype, any rank), or a ``StridedArray`` (returned as is).
        Its values are copied dense (row-major): :func:`from_numpy` keeps a NumPy array's
        strides instead.
    Returns:
      A ``StridedArray`` of ``x``'s shape and dtype over the 1-D storage ``x.reshape(-1)``.
    Raises:
      TypeError: ``x`` is not an array of a numeric type JAX supports (``jnp.asarray``'s
        error, unchanged).
    Example:
      >>> import numpy as np
      >>> from_array(np.zeros((2, 3))).stride()
      (3, 1)

    Semantics: ``torch.from_numpy`` / ``torch.as_tensor`` of a C-contiguous array."""
    if isinstance(x, StridedArray):
        return x
    if x is None:
        raise _none_input("from_array")
    if not isinstance(x, jax.Array):
        refuse_wrapping_import("from_array", x)
    arr = x if isinstance(x, jax.Array) else jnp.asarray(x)
    return StridedArray._wrap(_programs.reshape(arr, (arr.size,)), Layout.contiguous(arr.shape))


def _none_input(op: str) -> LayoutTypeError:
    return LayoutTypeError(f"{op}: x is None; pass a JAX or NumPy array (or a nested list of numbers), "
                           f"e.g. {op}(jnp.zeros(4), ...), or a StridedArray.")


def refuse_wrapping_import(op: str, x: Any) -> None:
    """Without ``jax_enable_x64`` JAX stores 64-bit integers as 32-bit ones, wrapping values
    out of the 32-bit range (``2**40 + 5`` becomes 5): a host array (NumPy, or what converts
    to one) holding such a value is refused instead.

    Raises:
      LayoutError: ``x`` has dtype int64 or uint64, x64 is off, and a value does not fit the
        32-bit type; the message names the value, the dtype and ``jax_enable_x64``."""
    if jax.config.read("jax_enable_x64") or isinstance(x, jax.Array):
        return
    dtype = getattr(x, "dtype", None)
    if dtype is None or not isinstance(x, (np.ndarray, np.generic)):
        return
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.int64), np.dtype(np.uint64)) or np.size(x) == 0:
        return
    narrow = np.iinfo(np.int32 if dtype == np.int64 else np.uint32)
    low, high = np.min(x), np.max(x)
    if low < narrow.min or high > narrow.max:
        value = int(low) if low < narrow.min else int(high)
        wrapped = int(np.asarray(value).astype(narrow.dtype))
        raise LayoutError(
            f"{op}: the {dtype.name} array holds {value}, which JAX stores as {narrow.dtype.name} without "
            f"64-bit types (jax_enable_x64 is off): it would wrap to {wrapped}. "
            "Enable them first (jax.config.update('jax_enable_x64', True)), or pass values in "
            f"[{narrow.min}, {narrow.max}].")


def _check_ref(ref: Any, op: str, batched: bool = False) -> None:
    if ref.ndim != 1 or batched:
        raise StorageError(
            f"{op}: a jax.Ref storage must be 1-D and not batched (got shape {tuple(ref.shape)}"
            f"{', batched=True' if batched else ''}); create it flat, jax.new_ref(x.reshape(-1)), and view "
            "it with .view(shape); to map over refs, jax.vmap over the 1-D refs and build the view inside.")


def from_ref(ref: Any) -> StridedArray:
    """Contiguous view over a 1-D ``jax.Ref``: shape ``(N,)``, stride 1, offset 0, whose
    writes (PyTorch's in-place methods) update the ref in place.

    Every view op then applies, as for :func:`from_array` (``from_ref(r).view(4, 4).t()``),
    and every view of the ref sees every write through any other. Reads (``contiguous()``,
    ``jnp.asarray``, ``np.asarray``) give the ref's current value.

    Args:
      ref: a 1-D ``jax.Ref`` (``jax.new_ref(x.reshape(-1))``) of any dtype, concrete or
        traced (an argument of a jitted function, of a ``vmap``-ped one).
    Returns:
      A ``StridedArray`` over ``ref`` (its ``storage``).
    Raises:
      LayoutTypeError: ``ref`` is not a ``jax.Ref`` (a ``jax.Array``: use ``from_array``, or
        ``jax.new_ref(x)`` for a mutable copy).
      StorageError: the ref is not 1-D.
    Example:
      >>> r = jax.new_ref(jnp.zeros(6))
      >>> x = fs.from_ref(r).view(2, 3)
      >>> x.t()[1].copy_(jnp.array([7.0, 8.0])).shape
      (2,)
      >>> r[...].tolist(), x[1].tolist()
      ([0.0, 7.0, 0.0, 0.0, 8.0, 0.0], [0.0, 8.0, 0.0])

    Semantics: ``torch.Tensor`` over a mutable storage (``torch.as_tensor`` of a buffer);
    JAX's refs (``jax.new_ref``) write through slices only, views of every kind here."""
    if not _refs.is_ref(ref):
        raise LayoutTypeError(f"from_ref: expects a jax.Ref, not {type(ref).__name__}; make one with "
                              "jax.new_ref(x.reshape(-1)), or view an immutable array with fs.from_array(x).")
    _check_ref(ref, "from_ref")
    return StridedArray._wrap(ref, Layout.contiguous(ref.shape))


@_shares_doc(views.as_strided)
def as_strided(x: Any, size: Any, stride: Any, storage_offset: Any = None) -> StridedArray:
    if x is None:
        raise _none_input("as_strided")
    return from_array(x).as_strided(size, stride, storage_offset)


def shares_storage(a: StridedArray, b: StridedArray) -> bool:
    """True when ``a`` and ``b`` are views of one storage object (the same ``jax.Array``).

    Args:
      a: a ``StridedArray``.
      b: another ``StridedArray``.
    Returns:
      A Python bool; ``False`` when either is not a ``StridedArray``.
    Raises:
      Nothing.
    Example:
      >>> x = fs.from_array(jnp.arange(6.0))
      >>> fs.shares_storage(x, x[::2]), fs.shares_storage(x, x.t().contiguous().clone())
      (True, False)

    Semantics: comparing ``untyped_storage().data_ptr()`` of two torch tensors."""
    return isinstance(a, StridedArray) and isinstance(b, StridedArray) and a.storage is b.storage


def overlaps(a: Any, b: Any, *, max_work: Any = _overlap.CONFIGURED) -> bool:
    """True when ``a`` and ``b`` share a storage element.

    ``a`` and ``b`` are two ``StridedArray`` (False unless they share one storage object) or
    two :class:`Layout` over one storage. Exact, for any layouts (the search of
    :func:`overlap_witness`), with the search's memory under 256 MiB whatever the layouts.

    Args:
      a: a ``StridedArray``, or a :class:`Layout`.
      b: another of the same kind (a layout over the same storage).
      max_work: as in ``numpy.shares_memory`` (default: ``fs.config.overlap_max_work``,
        ``10**6`` units): ``-1`` or ``None``: exact; ``0``: the bounds only (disjoint index
        ranges, else ``TooHardError``); ``n > 0``: at most about ``n`` units of work (steps of
        the depth-first search, candidates of the enumeration).
    Raises:
      LayoutError: an offset is traced, or ``max_work`` is below -1.
      LayoutTypeError: ``a`` and ``b`` are not two ``StridedArray`` or two ``Layout``, or
        ``max_work`` is not an integer (or ``None``).
      TooHardError: ``max_work`` did not suffice (the message names
        ``fs.config.overlap_max_work``), or the process could not allocate the memory the
        search keeps under its cap.
    Example:
      >>> import jax.numpy as jnp
      >>> frames = from_array(jnp.arange(10.0)).unfold(0, 4, 2)
      >>> overlaps(frames[0], frames[1]), overlaps(frames[0], frames[2])
      (True, False)

    Semantics: ``numpy.shares_memory(a, b, max_work)``; PyTorch's ``get_overlap_status``
    without "too hard"."""
    if isinstance(a, Layout) and isinstance(b, Layout):
        return _overlap.overlaps(a, b, max_work=max_work)
    if isinstance(a, StridedArray) and isinstance(b, StridedArray):
        if not shares_storage(a, b):
            _overlap.check_max_work("overlaps", _overlap._resolve(max_work))
            return False
        return _overlap.overlaps(a.layout, b.layout, max_work=max_work)
    raise LayoutTypeError(f"overlaps: expects two StridedArray or two Layout (got {type(a).__name__} "
                          f"and {type(b).__name__}).")


def view_dtype(x: Any, dtype: Any) -> StridedArray:
    """``x.view(dtype)``: the same bytes read as ``dtype``, with PyTorch's shape, strides and
    offset (elements of ``dtype``; see the module docstring for the rules).

    Args:
      x: a ``StridedArray`` (or a JAX/NumPy array, viewed with ``from_array``) of any dtype.
      dtype: a NumPy/JAX dtype, a dtype name or a ``torch.dtype``.
    Returns:
      ``x`` itself viewed with its storage when ``dtype`` is ``x.dtype``; else a
      ``StridedArray`` over a new storage of ``dtype`` (the bitcast storage, no shared memory).
    Raises:
      ViewError: PyTorch's refusals (see :func:`view_dtype_layout`).
      LayoutTypeError: ``dtype`` is not a dtype, or a 64-bit dtype without ``jax_enable_x64``.
    Example:
      >>> x = from_array(jnp.array([1.0, 2.0], jnp.float32))
      >>> view_dtype(x, jnp.uint8).shape, view_dtype(x, "int32").tolist()
      ((8,), [1065353216, 1073741824])

    Semantics: ``torch.Tensor.view(dtype)``."""
    x = from_array(x)
    new = as_dtype(dtype)
    old = np.dtype(x.dtype)
    if _refs.is_ref(x.storage) and new != old:
        raise LayoutError(f"view: a dtype view of a jax.Ref (dtype {old}, layout {x.layout}) cannot share "
                          f"its memory: a ref has one dtype. Read it first, e.g. x.contiguous().view("
                          f"{new.name}) (a copy), or keep a ref of the other dtype.")
    if new == old:
        return x._view(x.layout)
    check_jax_dtype(new, "view")
    layout = view_dtype_layout(x.layout, old, new)
    return StridedArray._wrap(bitcast_storage(x.storage, new), layout)

"""In-place writes through any view of a ``jax.Ref``: PyTorch's in-place methods on ``StridedArray``.

A ``StridedArray`` whose storage is a 1-D ``jax.Ref`` (``fs.from_ref(jax.new_ref(x))``) takes
every view op as any ``StridedArray`` does (metadata only), reads its ref's current value
(``contiguous()``, ``jnp.asarray``, ``np.asarray``), and writes in place through any view with
PyTorch's in-place methods: ``copy_``, ``fill_``, ``zero_``, ``add_``, ``sub_``, ``mul_``,
``div_``, ``clamp_``, ``x[idx] = value`` and the augmented operators ``+= -= *= /= //=``. Every
other view of the ref sees the write. The values follow PyTorch's rules (broadcasting of the
operand to the written view, the result type and its cast to the view's dtype,
:mod:`functional_strides._src.array.torch_dtypes`), and the write lowers to an in-place update of
the ref (:mod:`functional_strides._src.lowering.refs`): inside ``jit``, ``lax.fori_loop`` or
``lax.scan`` only the view's slots are touched, and outside them a program compiled once per
view shape and strides updates the ref without copying it.

Refused, with the reason and a fix: a write through a view whose elements share a storage slot
(exactly: every such view, where PyTorch detects only stride-0 dims), and an operand that is
another view of the same ref sharing a slot with the written view (PyTorch's "partial
overlap"; the view itself, ``x.add_(x)``, is fine). On a ``StridedArray`` over a ``jax.Array``
these methods are absent: ``AttributeError`` names the functional ``x.at[idx]`` spelling and
``fs.from_ref``.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..core.errors import LayoutError, LayoutTypeError, OverlapError
from ..core.layout import Layout, is_static_offset, is_traced
from ..core.overlap import overlap as _overlap
from ..lowering import refs as _refs
from ..sharding import dispatch as _dispatch
from . import torch_dtypes as td

__all__ = ["InPlaceMethods", "ref_only"]

_NUMBER = (bool, int, float, complex)
_ROUNDING = (None, "trunc", "floor")


def ref_only(method: Callable[..., Any]) -> Any:
    """``method`` as an attribute of ref-backed arrays only: on a ``StridedArray`` over a
    ``jax.Array`` reading it raises ``AttributeError``, and the class's ``__getattr__`` then
    answers with the functional spelling (``x.at[idx]``) and ``fs.from_ref``."""
    return _RefOnly(method)


def _atomic(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` run holding its ref's lock when called eagerly
    (:func:`functional_strides._src.lowering.refs.eager_lock`): an in-place method's reads of
    operands that are views of the same ref and its write happen together, whichever threads
    call methods on the ref at the same time."""

    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _refs.eager_lock(self.storage):
            return method(self, *args, **kwargs)

    return locked


class _RefOnly:
    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method
        self.name = method.__name__
        self.__doc__ = method.__doc__
        self.__wrapped__ = method

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return self.method
        if not _refs.is_ref(obj.storage):
            raise AttributeError(self.name)
        return self.method.__get__(obj, cls)


# -- operands -------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Arg:
    """An operand of an in-place op: its PyTorch dtype and promotion group (0: an array of rank
    >= 1, 1: rank 0, 2: a Python number), its shape, and the ``StridedArray`` it is, if one."""

    value: Any
    dtype: np.dtype
    group: int
    shape: tuple[int, ...]
    view: Any = None

    @property
    def is_number(self) -> bool:
        return self.group == 2


def _arg(op: str, name: str, x: Any) -> _Arg:
    if isinstance(x, np.generic) and np.dtype(x.dtype).kind in "biufc":
        x = x.item()  # a NumPy scalar is a number, as PyTorch's argument parser takes it
    if isinstance(x, _NUMBER):
        return _Arg(x, td.WRAPPED[type(x) if type(x) in td.WRAPPED else _number_type(x)], 2, ())
    if isinstance(x, InPlaceMethods):
        return _Arg(x, np.dtype(x.dtype), 0 if x.ndim else 1, tuple(x.shape), x)
    if _refs.is_ref(x):
        raise LayoutTypeError(f"{op}: {name} is a jax.Ref; view it first: fs.from_ref({name}).")
    if isinstance(x, (jax.Array, np.ndarray, np.generic)):
        shape = tuple(np.shape(x))
        return _Arg(x, np.dtype(x.dtype), 0 if shape else 1, shape)
    raise LayoutTypeError(f"{op}: {name} must be a number or an array (NumPy, JAX or StridedArray), not "
                          f"{type(x).__name__} (got {name}={x!r}); wrap it with jnp.asarray({name}).")


def _number_type(x: Any) -> type:
    for t in (bool, int, float, complex):  # subclasses: np.float64 is a float
        if isinstance(x, t):
            return t
    raise AssertionError(type(x))


def _convert(x: Any, dtype: np.dtype) -> jax.Array:
    """``x`` (an operand's values) as ``dtype``, as PyTorch casts (``c10::static_cast``): into
    bool ``x != 0``; a complex value into a real dtype keeps its real part; a float into
    uint8 goes through int64 (negative values wrap: -1.0 -> 255)."""
    x = jnp.asarray(x)
    if td.category(dtype) == 0:
        return x != 0
    if td.category(x.dtype) == 3 and td.category(dtype) != 3:
        x = jnp.real(x)
    if td.category(x.dtype) == 2 and np.dtype(dtype) == np.uint8:
        x = x.astype(_canonical(np.int64))
    return x.astype(dtype)


def _warn_complex(arg: _Arg, dtype: Any) -> None:
    if td.category(arg.dtype) == 3 and td.category(dtype) not in (0, 3):
        warnings.warn("Casting complex values to real discards the imaginary part (as PyTorch's copy_).",
                      UserWarning, stacklevel=4)


def _operand_values(arg: _Arg, dtype: np.dtype, op: str) -> Any:
    """What the update program receives for ``arg``, computed in ``dtype``: a Python number as
    a rank-0 array cast as PyTorch casts numbers in arithmetic, an array as it is (cast inside),
    a ``StridedArray`` read."""
    if arg.is_number:
        return td.wrapped_scalar(op, arg.value, dtype)
    if arg.view is not None:
        return jnp.asarray(arg.view)
    return arg.value


def _canonical(dtype: Any) -> np.dtype:
    """The dtype JAX computes in for ``dtype`` (64-bit types need ``jax_enable_x64``)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(dtype))


# -- checks --------------------------------------------------------------------------------------

def _static_offset(layout: Layout) -> int | None:
    offset = layout.offset
    if is_static_offset(offset):
        return int(offset)
    if not is_traced(offset) and np.ndim(offset) == 0:
        return int(np.asarray(offset))
    return None


def _index_text(layout: Layout, coords: tuple[int, ...]) -> str:
    step = sum(i * s for i, s in zip(coords, layout.strides, strict=True))
    offset = _static_offset(layout)
    return str(offset + step) if offset is not None else f"offset + {step}"


def _check_written(x: Any, op: str) -> None:
    """Refuse a write through a view whose elements share a storage slot (exact)."""
    witness = _overlap.write_check(x.layout)  # undecided within the bound: PyTorch's "too hard", allowed
    if isinstance(witness, tuple):
        a, b = witness
        raise OverlapError(
            f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
            f"memory location (the view {x.layout}: coordinates {a} and {b} both address storage index "
            f"{_index_text(x.layout, a)}; fs.internal_overlap_witness finds such a pair). PyTorch refuses "
            "this for expanded (stride-0) views; here every overlapping view is refused, and the ref is "
            "left as it was. Write through a view without overlap, or compute the values first "
            "(e.g. jnp.asarray(view)) and write them through one.")


def _check_sources(x: Any, op: str, args: list[tuple[str, _Arg]]) -> None:
    """Refuse an operand that is another view of the written ref sharing a slot with the
    written view (PyTorch's partial overlap); the view itself (full overlap) is fine."""
    dst = _static_offset(x.layout)
    for name, arg in args:
        src = arg.view
        if src is None or src.storage is not x.storage:
            continue
        offset = _static_offset(src.layout)
        if dst is None or offset is None:
            continue  # undecidable at trace time: the source is read before the write, as a clone
        a = Layout(x.layout.shape, x.layout.strides, dst)
        b = Layout(src.layout.shape, src.layout.strides, offset)
        if a == b:
            continue
        witness = _overlap.pair_check(b, a)  # undecided: the source is read before the write, as a clone
        if isinstance(witness, tuple):
            i, j = witness
            raise OverlapError(
                f"{op}: unsupported operation: some elements of the input tensor and the written-to tensor "
                f"refer to a single memory location ({name} {b} at coordinates {i} and the written view "
                f"{a} at {j} both address storage index {_index_text(b, i)}). PyTorch refuses this too; "
                f"read the input into a new storage first: {name}.clone() (or {name}.contiguous()).")


def _check_broadcast(op: str, name: str, shape: tuple[int, ...], arg: _Arg) -> None:
    """PyTorch's rule for an in-place op's operand: it broadcasts to the written view's shape."""
    try:
        out = np.broadcast_shapes(shape, arg.shape)
    except ValueError:
        out = None
    if out is None:
        a, b = shape[::-1], arg.shape[::-1]
        dim = next(k for k in range(min(len(a), len(b))) if a[k] != b[k] and 1 not in (a[k], b[k]))
        raise LayoutError(
            f"{op}: the size of the written view ({a[dim]}) must match the size of {name} ({b[dim]}) at "
            f"non-singleton dimension {max(len(a), len(b)) - 1 - dim} (view shape {shape}, {name} shape "
            f"{arg.shape}). Give {name} a shape that broadcasts to the view's.")
    if tuple(out) != tuple(shape):
        raise LayoutError(
            f"{op}: output with shape {list(shape)} doesn't match the broadcast shape {list(out)} ({name} "
            f"shape {arg.shape}); an in-place op writes the view's shape, so {name} must broadcast to it.")


def _self_group(x: Any) -> int:
    return 0 if x.ndim else 1


# -- the update programs ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Update:
    """``fn(old, *operands)`` of an in-place op, computed in dtype ``compute``: hashable by value,
    so that the eager program compiled for one op serves every call of it."""

    kind: str
    compute: str
    extra: tuple[Any, ...] = ()

    def __call__(self, old: jax.Array | None, *args: Any) -> jax.Array:
        ct = np.dtype(self.compute)
        if self.kind == "set":
            return _convert(args[0], ct)
        assert old is not None  # every mode but "set" reads the old values
        a = old.astype(ct)
        args = tuple(jnp.broadcast_to(_convert(v, ct), a.shape) for v in args)
        boolean = td.category(ct) == 0
        if self.kind in ("add", "sub"):
            other = args[0]
            if len(args) > 1:  # alpha
                other = other & args[1] if boolean else other * args[1]
            if boolean:
                return a | other
            return a + other if self.kind == "add" else a - other
        if self.kind == "mul":
            return a & args[0] if boolean else a * args[0]
        if self.kind == "div":
            return _divide(a, args[0], self.extra[0])
        if self.kind == "clamp":
            return _clamp(a, args, *self.extra)
        raise AssertionError(self.kind)


def _divide(a: jax.Array, b: jax.Array, rounding_mode: str | None) -> jax.Array:
    integral = td.category(a.dtype) == 1
    if not integral:  # XLA rewrites x / broadcast(y) as x * (1 / y), one rounding more than PyTorch
        b = lax.optimization_barrier(b)
    if rounding_mode is None:
        return a / b
    if rounding_mode == "trunc":
        return lax.div(a, b) if integral else jnp.trunc(a / b)
    if integral:
        return jnp.floor_divide(a, b)
    # c10::div_floor_floating: Python's float floor division (IEEE's result for b == 0)
    mod = lax.rem(a, b)
    div = (a - mod) / b
    div = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = jnp.floor(div)
    floor = jnp.where(div - floor > 0.5, floor + 1, floor)
    out = jnp.where(div != 0, floor, jnp.copysign(jnp.zeros_like(div), a / b))
    return jnp.where(b == 0, a / b, out)


def _clamp(a: jax.Array, bounds: tuple[jax.Array, ...], has_min: bool, has_max: bool) -> jax.Array:
    lo = bounds[0] if has_min else None
    hi = bounds[-1] if has_max else None
    out = a
    if lo is not None:
        out = jnp.maximum(out, lo)
    if hi is not None:
        out = jnp.minimum(out, hi)
    if td.category(a.dtype) == 2:  # a NaN bound gives NaN, as PyTorch's clamp kernels do
        nan = jnp.zeros(a.shape, bool)
        for bound in (lo, hi):
            if bound is not None:
                nan = nan | jnp.isnan(bound)
        out = jnp.where(nan, jnp.nan, out)
    return out


_JAX_REF_ERRORS = (
    ("vmapped value on an unbatched array reference",
     "writes a value mapped by jax.vmap into a jax.Ref that jax.vmap does not map (the view {layout}). "
     "JAX takes mapped writes only into a ref that is an argument of the mapped function: pass the ref "
     "in (mapped, with in_axes) or create it inside the function."),
    ("differentiated value on a non-differentiated array reference",
     "writes a value that jax.grad or jax.jvp differentiates into a jax.Ref created outside the "
     "differentiated function (the view {layout}). JAX differentiates through refs created inside it: "
     "create the ref inside (jax.new_ref(...)), or write jax.lax.stop_gradient(value)."),
)


def _varying(value: Any) -> frozenset:
    """The manual mesh axes ``value`` varies over inside ``jax.shard_map`` (empty elsewhere)."""
    try:
        aval = jax.typeof(value)
    except TypeError:  # a Python number
        return frozenset()
    aval = getattr(aval, "inner_aval", aval)  # a ref's value
    return frozenset(getattr(getattr(aval, "mat", None), "varying", ()))


def _check_varying(op: str, x: Any, operands: tuple[Any, ...]) -> None:
    """Inside ``jax.shard_map`` a ref holds one value per device only if its type says that it
    varies over the manual axes (it was created from a varying value): a write of a value that
    varies over an axis the ref does not is refused here, with the fix (JAX's own refusal names
    a ``pvary`` the caller never wrote)."""
    have = _varying(x.storage)
    extra = frozenset().union(*(_varying(v) for v in jax.tree_util.tree_leaves(operands))) - have
    if extra:
        axes = tuple(sorted(extra, key=str))
        raise LayoutError(
            f"{op}: the value written varies over the manual mesh axes {axes} of jax.shard_map, but the "
            f"jax.Ref (shape {tuple(x.storage.shape)}, view {x.layout}) does not vary over them (it was "
            f"created from a value the same on every device, such as jnp.zeros): one ref cannot hold a "
            f"value per device. Create the ref from a varying value, jax.new_ref(jax.lax.pcast(value, "
            f"{axes!r}, to='varying')), or write a value that does not vary.")


def _run(x: Any, op: str, update: _Update, operands: tuple[Any, ...], *, reads_old: bool = True) -> Any:
    """Apply ``update`` through ``x`` in place; JAX's refusals of a write into a ref under
    ``vmap`` or ``grad`` come back as ``LayoutError`` naming the view and the fix."""
    _check_varying(op, x, operands)
    try:
        _dispatch.update_ref(x.storage, x.layout, update, operands, reads_old=reads_old)
    except LayoutError:
        raise
    except Exception as err:
        for needle, text in _JAX_REF_ERRORS:
            if needle in str(err):
                raise LayoutError(f"{op}: " + text.format(layout=x.layout)) from err
        raise
    return x


def _checked_number(op: str, x: Any, value: Any, *, item: bool = False) -> np.ndarray:
    return td.checked_scalar(op, value, np.dtype(x.dtype), item=item)


def _copy_number(op: str, value: Any, dtype: np.dtype) -> np.ndarray:
    """A Python number cast into ``dtype`` as PyTorch's ``copy_`` casts a number: integers wrap,
    floats into an integer dtype truncate toward zero (into uint8 through int64, so -1.5 ->
    255; out of another integer dtype's range: saturated, as XLA's conversion does, where
    PyTorch's C++ cast is undefined), a complex number keeps its real part (with PyTorch's
    warning), bool is ``value != 0``."""
    if td.category(dtype) == 0:
        return np.asarray(value != 0)
    if isinstance(value, complex) and td.category(dtype) != 3:
        warnings.warn("Casting complex values to real discards the imaginary part (as PyTorch's copy_).",
                      UserWarning, stacklevel=4)
        value = value.real
    if np.dtype(dtype) == np.uint8 and isinstance(value, float) and abs(value) < 2.0**63:
        return td.wrapped_scalar(op, int(value), dtype)  # through int64, as PyTorch casts to uint8
    if td.category(dtype) == 1 and isinstance(value, float):
        low, high = (int(v) for v in (np.iinfo(dtype).min, np.iinfo(dtype).max))
        if value != value:
            return np.asarray(0, dtype)
        value = min(max(value, low), high) if abs(value) != float("inf") else (high if value > 0 else low)
        return np.asarray(int(value), dtype)
    return td.wrapped_scalar(op, value, dtype)


# -- the methods ---------------------------------------------------------------------------------------

class InPlaceMethods:
    """PyTorch's in-place methods, for a ``StridedArray`` whose storage is a ``jax.Ref``.

    A mixin of ``StridedArray`` (which provides ``storage``, ``layout``, ``shape``, ``dtype``,
    ``ndim`` and indexing): on arrays over a ``jax.Array`` the methods are absent."""

    __slots__ = ()
    if TYPE_CHECKING:  # what StridedArray provides, as the type checker sees it
        storage: Any
        layout: Layout
        shape: tuple[int, ...]
        dtype: Any
        ndim: int

        def __getitem__(self, key: Any) -> Any: ...

    # -- set ------------------------------------------------------------------------------
    @ref_only
    @_atomic
    def copy_(self, src: Any) -> Any:
        """Write ``src`` into this view of a ``jax.Ref``, in place; returns ``self``.

        Args:
          src: a number or an array (NumPy, JAX, ``StridedArray``; another view of the same
            ref too) of any dtype, broadcastable to ``self.shape``.
        Returns:
          ``self``; the ref (and every view of it) holds the new values.
        Raises:
          OverlapError: the view overlaps itself, or ``src`` is another view of the same ref
            sharing a slot with it (the ref is left as it was).
          LayoutError: ``src`` does not broadcast to the view.
          LayoutTypeError: ``src`` is not a number or an array.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.zeros(6)))
          >>> x.view(2, 3)[:, 1].copy_(jnp.array([1.0, 2.0])) is not None
          True
          >>> x.tolist()
          [0.0, 1.0, 0.0, 0.0, 2.0, 0.0]

        Values are cast to the view's dtype as PyTorch's ``copy_`` casts (floats into integers
        truncate toward zero, integers wrap, complex keeps the real part, with a warning).

        Semantics: ``torch.Tensor.copy_``."""
        op = "copy_"
        _check_written(self, op)
        arg = _arg(op, "src", src)
        if (arg.view is not None and arg.view.storage is self.storage and arg.dtype == np.dtype(self.dtype)
                and _same_layout(arg.view.layout, self.layout)):
            return self  # the view itself: nothing changes (PyTorch returns early too)
        _check_sources(self, op, [("src", arg)])
        _check_broadcast(op, "src", self.shape, arg)
        dtype = np.dtype(self.dtype)
        if arg.is_number:
            values: Any = _copy_number(op, arg.value, dtype)
        else:
            _warn_complex(arg, dtype)
            values = _operand_values(arg, dtype, op)
        return _run(self, op, _Update("set", dtype.name), (values,), reads_old=False)

    @ref_only
    def fill_(self, value: Any) -> Any:
        """Set every element of this view of a ``jax.Ref`` to ``value``, in place; returns ``self``.

        Args:
          value: a Python number, checked against the dtype's range as PyTorch checks it, or a
            rank-0 array (cast as ``copy_`` casts).
        Returns:
          ``self``.
        Raises:
          OverlapError: the view overlaps itself (PyTorch lets ``fill_`` through an expanded
            view; here every overlapping view is refused).
          LayoutError: a number out of the dtype's range ("value cannot be converted to type
            int8_t without overflow"), or an array of rank >= 1.
          LayoutTypeError: ``value`` is not a number or an array.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.zeros(6, jnp.int32)))
          >>> _ = x[::2].fill_(2.7)
          >>> x.tolist()
          [2, 0, 2, 0, 2, 0]

        Semantics: ``torch.Tensor.fill_``."""
        return self._fill("fill_", value)

    @_atomic
    def _fill(self, op: str, value: Any) -> Any:
        _check_written(self, op)
        arg = _arg(op, "value", value)
        if arg.shape:
            raise LayoutError(f"{op}: fill_ only supports 0-dimension value tensor but got tensor with "
                              f"{len(arg.shape)} dimensions (value shape {arg.shape}); use copy_ to write an "
                              "array.")
        dtype = np.dtype(self.dtype)
        if arg.is_number:
            values: Any = _checked_number(op, self, arg.value)
        else:
            _warn_complex(arg, dtype)
            values = _operand_values(arg, dtype, op)
        return _run(self, op, _Update("set", dtype.name), (values,), reads_old=False)

    @ref_only
    def zero_(self) -> Any:
        """Set every element of this view of a ``jax.Ref`` to 0, in place; returns ``self``.

        Raises:
          OverlapError: the view overlaps itself (PyTorch lets ``zero_`` through an expanded
            view; here every overlapping view is refused).
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.ones(4)))
          >>> x[1:3].zero_().shape, x.tolist()
          ((2,), [1.0, 0.0, 0.0, 1.0])

        Semantics: ``torch.Tensor.zero_``."""
        return self._fill("zero_", 0)

    @_atomic
    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value``: write ``value`` through the view ``x[key]`` of a ``jax.Ref``, in place.

        Args:
          key: any basic index (ints, slices with steps, ``None``, ``...``, tuples of them).
          value: a Python number (checked as ``fill_`` checks it) or an array whose shape, with
            its leading size-1 dims dropped, broadcasts to the view's (cast as ``copy_`` casts).
        Raises:
          TypeError: the array is not ref-backed (arrays over a ``jax.Array`` are immutable).
          OverlapError / LayoutError: as ``copy_``; the index errors of ``x[key]``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.zeros((2, 3)).reshape(-1))).view(2, 3)
          >>> x[:, 1] = 5.0
          >>> x[1] = jnp.array([[1.0, 2.0, 3.0]])   # a leading size-1 dim is dropped
          >>> x.tolist()
          [[0.0, 5.0, 0.0], [1.0, 2.0, 3.0]]

        Semantics: ``torch.Tensor.__setitem__`` with a basic index."""
        if not _refs.is_ref(self.storage):
            raise TypeError("StridedArray is immutable and does not support item assignment; write "
                            "functionally, as with jax arrays: x = x.at[key].set(value), or in place through "
                            "a view of a jax.Ref: fs.from_ref(jax.new_ref(storage))[key] = value.")
        op = "setitem"
        view = self if key is Ellipsis else self[key]
        arg = _arg(op, "value", value)
        if (arg.view is not None and arg.view.storage is view.storage and arg.dtype == np.dtype(view.dtype)
                and _same_layout(arg.view.layout, view.layout)):
            return  # x[k] = x[k] (also what x[k] += v ends with): nothing changes
        _check_written(view, op)
        _check_sources(view, op, [("value", arg)])
        dtype = np.dtype(view.dtype)
        if arg.is_number:
            values: Any = _checked_number(op, view, arg.value, item=True)
        else:
            shape = arg.shape
            while shape and shape[0] == 1 and len(shape) > len(view.shape):
                shape = shape[1:]
            if len(shape) > len(view.shape) or any(
                    a not in (1, b) for a, b in zip(shape[::-1], view.shape[::-1], strict=False)):
                raise LayoutError(f"{op}: value of shape {arg.shape} cannot be written to the view of "
                                  f"shape {view.shape} (layout {view.layout}): its shape without leading "
                                  "size-1 dims must broadcast to the view's.")
            _warn_complex(arg, dtype)
            raw = _operand_values(arg, dtype, op)
            values = jnp.reshape(raw, shape) if shape != arg.shape else raw
        _run(view, op, _Update("set", dtype.name), (values,), reads_old=False)

    # -- arithmetic ----------------------------------------------------------------------------
    @ref_only
    def add_(self, other: Any, *, alpha: Any = 1) -> Any:
        """Add ``alpha * other`` to this view of a ``jax.Ref``, in place; returns ``self``.

        Args:
          other: a number or an array broadcastable to ``self.shape``.
          alpha: a Python number (an int for integer results, a bool for bool ones).
        Returns:
          ``self``.
        Raises:
          OverlapError: as ``copy_``.
          LayoutError: ``other`` does not broadcast to the view; the result type (PyTorch's
            promotion of the view's dtype and ``other``) cannot be cast to the view's dtype
            ("result type Float can't be cast to the desired output type Long"); PyTorch's
            refusals of ``alpha``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.zeros(4)))
          >>> _ = x[::2].add_(jnp.array([1.0, 2.0]), alpha=10)
          >>> x.tolist()
          [10.0, 0.0, 20.0, 0.0]

        On a bool view, ``add_`` is a logical or. Integers wrap.

        Semantics: ``torch.Tensor.add_``."""
        return self._arith("add_", "add", other, alpha)

    @ref_only
    def sub_(self, other: Any, *, alpha: Any = 1) -> Any:
        """Subtract ``alpha * other`` from this view of a ``jax.Ref``, in place; returns ``self``.

        Args:
          other: a number or an array broadcastable to ``self.shape``.
          alpha: a Python number (an int for integer results), as ``add_``'s.
        Returns:
          ``self``.
        Raises:
          OverlapError / LayoutError: as ``add_``; also a bool view or a bool ``other`` (PyTorch
            refuses subtraction with bool tensors).
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.arange(4)))
          >>> x.sub_(1, alpha=2).tolist()
          [-2, -1, 0, 1]

        Semantics: ``torch.Tensor.sub_``."""
        arg = _arg("sub_", "other", other)
        if np.dtype(self.dtype) == np.bool_ and arg.dtype == np.bool_:
            raise LayoutError("sub_: Subtraction, the `-` operator, with two bool tensors is not supported. "
                              "Use the `^` or `logical_xor()` operator instead.")
        if np.dtype(self.dtype) == np.bool_ or arg.dtype == np.bool_:
            raise LayoutError("sub_: Subtraction, the `-` operator, with a bool tensor is not supported. "
                              "If you are trying to invert a mask, use the `~` or `logical_not()` operator "
                              "instead.")
        return self._arith("sub_", "sub", other, alpha)

    @ref_only
    def mul_(self, other: Any) -> Any:
        """Multiply this view of a ``jax.Ref`` by ``other``, in place; returns ``self``.

        Args:
          other: a number or an array broadcastable to ``self.shape``.
        Returns:
          ``self``.
        Raises:
          OverlapError / LayoutError: as ``add_``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.arange(4.0)))
          >>> _ = x.view(2, 2).t()[0].mul_(10.0)
          >>> x.tolist()
          [0.0, 1.0, 20.0, 3.0]

        On a bool view, ``mul_`` is a logical and.

        Semantics: ``torch.Tensor.mul_``."""
        return self._arith("mul_", "mul", other, None)

    @ref_only
    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        """Divide this view of a ``jax.Ref`` by ``other``, in place; returns ``self``.

        Args:
          other: a number or an array broadcastable to ``self.shape``.
          rounding_mode: ``None`` (true division, computed in a floating type: an integer view
            is refused), ``"trunc"`` (toward zero) or ``"floor"`` (toward minus infinity).
        Returns:
          ``self``.
        Raises:
          OverlapError / LayoutError: as ``add_``; also a bad ``rounding_mode``, a rounding mode
            on a bool or complex view, and an integer division by zero that is known outside a
            trace (PyTorch's ``ZeroDivisionError``; under ``jit`` it is undefined, XLA's).
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.array([-7, 7, 8])))
          >>> x.div_(2, rounding_mode="floor").tolist()
          [-4, 3, 4]

        Semantics: ``torch.Tensor.div_``."""
        op = "div_"
        if rounding_mode not in _ROUNDING:
            raise LayoutError(f"{op}: div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                              f"found {rounding_mode!r}.")
        return self._arith(op, "div", other, None, rounding_mode=rounding_mode)

    @ref_only
    @_atomic
    def clamp_(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - PyTorch's names
        """Clamp this view of a ``jax.Ref`` into ``[min, max]``, in place; returns ``self``.

        Args:
          min: the lower bound: a Python number (checked against the view's dtype, which it must
            not promote), or an array broadcastable to ``self.shape`` (whose result type must cast
            to the view's dtype); ``None`` for none. A NaN bound gives NaN.
          max: the upper bound, as ``min``; at least one of the two is given. ``min > max`` gives
            ``max``.
        Returns:
          ``self``.
        Raises:
          OverlapError: as ``copy_``.
          LayoutError: no bound; a complex view; PyTorch's dtype refusals.
          LayoutTypeError: one bound a number and the other an array of rank >= 1.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.arange(6.0)))
          >>> x[1:].clamp_(2, 4).shape, x.tolist()
          ((5,), [0.0, 2.0, 2.0, 3.0, 4.0, 4.0])

        Semantics: ``torch.Tensor.clamp_``."""
        op = "clamp_"
        if min is None and max is None:
            raise LayoutError(f"{op}: torch.clamp: At least one of 'min' or 'max' must not be None.")
        dtype = np.dtype(self.dtype)
        if td.category(dtype) == 3:
            raise LayoutError(f"{op}: clamp is not supported for complex types (the view's dtype {dtype}).")
        _check_written(self, op)
        given = [(name, b) for name, b in (("min", min), ("max", max)) if b is not None]
        args = [(name, _arg(op, name, b)) for name, b in given]
        numbers = [a for _, a in args if a.is_number]
        arrays = [a for _, a in args if not a.is_number]
        if numbers and arrays:
            if any(a.shape or is_traced(a.value) for a in arrays):
                kinds = ", ".join(f"{n}={type(b).__name__}" for n, b in given)
                raise LayoutTypeError(f"{op}: min and max must both be numbers or both be arrays (got "
                                      f"{kinds}), as PyTorch's clamp_ takes Tensor bounds or Scalar bounds.")
            args = [(n, _arg(op, n, np.asarray(a.value).item()) if not a.is_number else a) for n, a in args]
            arrays = []
        extra = (min is not None, max is not None)
        if not arrays:  # PyTorch's Scalar overload
            if td.category(dtype) != 2:
                ct = td.result_type([(dtype, _self_group(self))] + [(a.dtype, 2) for _, a in args])
                if ct != dtype:
                    raise td.cast_error(op, ct, dtype, "type_meta")
                if dtype == np.bool_:
                    kernel = {(True, False): "clamp_min_scalar_cpu", (False, True): "clamp_max_scalar_cpu"}
                    raise LayoutError(f'{op}: "{kernel.get(extra, "clamp_scalar_cpu")}" not implemented '
                                      "for 'Bool' (PyTorch clamps bool tensors by bool tensors only); pass "
                                      "the bounds as arrays.")
            values = tuple(td.checked_scalar(op, a.value, dtype) for _, a in args)
            return _run(self, op, _Update("clamp", dtype.name, extra), values)
        _check_sources(self, op, args)
        for name, a in args:
            _check_broadcast(op, name, self.shape, a)
        ct = td.result_type([(dtype, _self_group(self))] + [(a.dtype, a.group) for _, a in args])
        if not td.can_cast(ct, dtype):
            raise td.cast_error(op, ct, dtype)
        ct = _canonical(ct)
        values = tuple(_operand_values(a, ct, op) for _, a in args)
        return _run(self, op, _Update("clamp", ct.name, extra), values)

    @_atomic
    def _arith(self, op: str, kind: str, other: Any, alpha: Any, *, rounding_mode: str | None = None) -> Any:
        _check_written(self, op)
        arg = _arg(op, "other", other)
        _check_sources(self, op, [("other", arg)])
        _check_broadcast(op, "other", self.shape, arg)
        dtype = np.dtype(self.dtype)
        ct = td.result_type([(dtype, _self_group(self)), (arg.dtype, arg.group)])
        if kind == "div" and rounding_mode is None and td.category(ct) <= 1:
            ct = np.dtype(np.float32)  # true division of integers: the default dtype
        if not td.can_cast(ct, dtype):
            raise td.cast_error(op, ct, dtype)
        if kind == "div" and rounding_mode is not None:
            _check_rounding(op, ct, rounding_mode, arg)
        extra: tuple[Any, ...] = (rounding_mode,) if kind == "div" else ()
        ct = _canonical(ct)
        operands: tuple[Any, ...] = (_operand_values(arg, ct, op),)
        if alpha is not None:
            alpha = _check_alpha(op, ct, alpha)
            if not (alpha == 1 and not isinstance(alpha, complex)):
                operands += (td.wrapped_scalar(op, alpha, ct),)
        return _run(self, op, _Update(kind, ct.name, extra), operands)

    # -- augmented operators: in place on ref-backed arrays, else the binary operator -------------
    def __iadd__(self, other: Any) -> Any:
        """``x += other``: ``x.add_(other)`` on a view of a ``jax.Ref`` (``x`` stays the view).

        Args:
          other: as ``add_``'s.
        Returns:
          ``self``, written in place; on an array over a ``jax.Array``, ``NotImplemented``:
          Python then binds ``x`` to ``x + other``, a new ``jax.Array``, as for a ``jax.Array``.
        Raises:
          OverlapError / LayoutError: as ``add_``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.zeros(4)))
          >>> v = x[1::2]
          >>> v += 1.0
          >>> v.shape, x.tolist()
          ((2,), [0.0, 1.0, 0.0, 1.0])

        ``%= **= &= |= ^= <<= >>= @=`` on a view of a ref raise ``LayoutError`` (compute the
        values and ``copy_`` them); on other arrays they compute a new ``jax.Array``.

        Semantics: ``torch.Tensor.__iadd__``."""
        return self.add_(other) if _refs.is_ref(self.storage) else NotImplemented

    def __isub__(self, other: Any) -> Any:
        """``x -= other``: ``x.sub_(other)`` on a view of a ``jax.Ref``; otherwise as ``+=``
        (:meth:`__iadd__`).

        Args:
          other: as ``sub_``'s.
        Returns:
          ``self``, written in place (or ``NotImplemented``, as for ``+=``).
        Raises:
          OverlapError / LayoutError: as ``sub_``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.ones(3)))
          >>> x -= jnp.array([1.0, 2.0, 3.0])
          >>> x.tolist()
          [0.0, -1.0, -2.0]

        Semantics: ``torch.Tensor.__isub__``."""
        return self.sub_(other) if _refs.is_ref(self.storage) else NotImplemented

    def __imul__(self, other: Any) -> Any:
        """``x *= other``: ``x.mul_(other)`` on a view of a ``jax.Ref``; otherwise as ``+=``
        (:meth:`__iadd__`).

        Args:
          other: as ``mul_``'s.
        Returns:
          ``self``, written in place (or ``NotImplemented``, as for ``+=``).
        Raises:
          OverlapError / LayoutError: as ``mul_``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.arange(4.0)))
          >>> x *= 2
          >>> x.tolist()
          [0.0, 2.0, 4.0, 6.0]

        Semantics: ``torch.Tensor.__imul__``."""
        return self.mul_(other) if _refs.is_ref(self.storage) else NotImplemented

    def __itruediv__(self, other: Any) -> Any:
        """``x /= other``: ``x.div_(other)`` on a view of a ``jax.Ref`` (true division: an
        integer view is refused, as PyTorch refuses it); otherwise as ``+=`` (:meth:`__iadd__`).

        Args:
          other: as ``div_``'s.
        Returns:
          ``self``, written in place (or ``NotImplemented``, as for ``+=``).
        Raises:
          OverlapError / LayoutError: as ``div_``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.arange(3.0)))
          >>> x /= 2
          >>> x.tolist()
          [0.0, 0.5, 1.0]

        Semantics: ``torch.Tensor.__itruediv__``."""
        return self.div_(other) if _refs.is_ref(self.storage) else NotImplemented

    def __ifloordiv__(self, other: Any) -> Any:
        """``x //= other``: ``x.div_(other, rounding_mode="floor")`` on a view of a
        ``jax.Ref``; otherwise as ``+=`` (:meth:`__iadd__`).

        Args:
          other: as ``div_``'s.
        Returns:
          ``self``, written in place (or ``NotImplemented``, as for ``+=``).
        Raises:
          OverlapError / LayoutError: as ``div_``.
        Example:
          >>> x = fs.from_ref(jax.new_ref(jnp.array([-7, 7])))
          >>> x //= 2
          >>> x.tolist()
          [-4, 3]

        Semantics: ``torch.Tensor.__ifloordiv__``."""
        return self.div_(other, rounding_mode="floor") if _refs.is_ref(self.storage) else NotImplemented


def _unsupported(symbol: str, name: str) -> Callable[..., Any]:
    def method(self: Any, other: Any) -> Any:
        if not _refs.is_ref(self.storage):
            return NotImplemented  # the binary operator: a new jax.Array, as for jax.Array
        raise LayoutError(f"x {symbol}= y on a view of a jax.Ref: PyTorch's in-place {name} is not provided "
                          f"here (layout {self.layout}); compute it and write it back: "
                          f"x.copy_(jnp.asarray(x) {symbol} y).")

    method.__name__ = method.__qualname__ = f"__i{name.rstrip('_')}__"
    return method


for _symbol, _name in (("%", "mod"), ("**", "pow"), ("&", "and"), ("|", "or"), ("^", "xor"),
                       ("<<", "lshift"), (">>", "rshift"), ("@", "matmul")):
    setattr(InPlaceMethods, f"__i{_name}__", _unsupported(_symbol, _name))
del _symbol, _name


def _same_layout(a: Layout, b: Layout) -> bool:
    """Equal shape, strides and offset (offsets compared only when both are known)."""
    if (a.shape, a.strides) != (b.shape, b.strides):
        return False
    oa, ob = _static_offset(a), _static_offset(b)
    if oa is None or ob is None:
        return a.offset is b.offset
    return oa == ob


def _check_alpha(op: str, ct: np.dtype, alpha: Any) -> Any:
    """PyTorch's ``alpha_check`` on the result type ``ct``."""
    if isinstance(alpha, np.generic):
        alpha = alpha.item()
    if not isinstance(alpha, _NUMBER):
        raise LayoutTypeError(f"{op}: alpha must be a Python number, not {type(alpha).__name__} (got "
                              f"alpha={alpha!r}).")
    if isinstance(alpha, bool) and ct != np.bool_:
        raise LayoutError(f"{op}: Boolean alpha only supported for Boolean results (result type "
                          f"{td.torch_name(ct)}).")
    if td.category(ct) <= 1 and isinstance(alpha, (float, complex)):
        raise LayoutError(f"{op}: For integral input tensors, argument alpha must not be a floating point "
                          f"number (got alpha={alpha!r}, result type {td.torch_name(ct)}).")
    if td.category(ct) != 3 and isinstance(alpha, complex):
        raise LayoutError(f"{op}: For non-complex input tensors, argument alpha must not be a complex number "
                          f"(got alpha={alpha!r}).")
    return alpha


def _check_rounding(op: str, ct: np.dtype, rounding_mode: str, arg: _Arg) -> None:
    if td.category(ct) in (0, 3):
        raise LayoutError(f'{op}: "div_{rounding_mode}_cpu" not implemented for \'{td.torch_name(ct)}\' '
                          f"(rounding_mode={rounding_mode!r} needs a real, non-bool result type).")
    if td.category(ct) != 1:
        return
    value = arg.value if arg.view is None else None
    if value is None or is_traced(value):
        return  # known only when the program runs: XLA's integer division by zero, undefined
    if np.any(np.asarray(value) == 0):
        raise LayoutError(f"{op}: integer division by zero (rounding_mode={rounding_mode!r}; PyTorch raises "
                          "ZeroDivisionError). Divide by a non-zero divisor.")


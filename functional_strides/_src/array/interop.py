"""Imports and exports that keep the layout: NumPy arrays, PyTorch tensors and DLPack
producers become ``StridedArray`` objects with the same strides (in elements), and back.

What is copied: JAX owns its buffers, so an import copies, once, the part of the producer's
buffer that the array reaches (for NumPy, the bytes from its lowest to its highest element;
for PyTorch, its untyped storage from the start up to its highest element, so that
``storage_offset()`` is kept), gaps between elements included. What is not: the layout is
metadata, kept as is; no element is reordered, and nothing is densified. An export
(:func:`to_torch`) copies the whole storage once and applies ``as_strided``. Afterwards the
two sides share no memory: a write on one side is not seen by the other.

Dtypes follow JAX's: without ``jax_enable_x64`` a 64-bit array is imported as its 32-bit
counterpart, as ``jnp.asarray`` does.

Example:
  >>> import numpy as np, functional_strides as fs
  >>> a = np.arange(12.0, dtype=np.float32).reshape(3, 4)[:, 1::2].T   # a transposed, sliced view
  >>> x = fs.from_numpy(a)
  >>> x.shape, x.stride(), x.storage_offset(), x.storage.shape
  ((2, 3), (2, 4), 0, (11,))
  >>> (x.tolist() == a.tolist(), x.stride() == tuple(s // a.itemsize for s in a.strides))
  (True, True)
"""

from __future__ import annotations

import importlib
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from ..core.errors import LayoutError, LayoutTypeError
from ..core.layout import Layout, is_traced
from ..lowering import refs as _refs
from ..native.process import check_not_forked
from .strided import StridedArray, from_array, refuse_wrapping_import

__all__ = ["from_dlpack", "from_numpy", "from_torch", "to_torch"]

# dtypes NumPy knows only through ml_dtypes, and the same-size unsigned type that carries their
# bits through torch.from_numpy / Tensor.numpy (neither accepts them directly)
_BITS_OF: dict[np.dtype, np.dtype] = {np.dtype(ml_dtypes.bfloat16): np.dtype(np.uint16)}
_BITS_OF.update({np.dtype(getattr(ml_dtypes, name)): np.dtype(np.uint8) for name in (
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")})


def _import_torch(op: str) -> Any:
    try:
        return importlib.import_module("torch")
    except ImportError:
        raise ImportError(f"{op}: PyTorch is not installed; install it (python -m pip install torch) to "
                          "exchange tensors with it.") from None


def _jax_dtype(dtype: np.dtype, op: str) -> None:
    if not (jnp.issubdtype(dtype, np.number) or dtype == np.bool_):
        raise LayoutTypeError(f"{op}: JAX has no dtype {dtype} (NumPy kind {dtype.kind!r}); convert the "
                              "array to a numeric or bool dtype first.")


def _copy_to_jax(flat: np.ndarray, op: str = "from_numpy") -> jax.Array:
    """One copy of the 1-D NumPy buffer ``flat`` into a JAX array (never an alias of it);
    a non-native byte order (``>f4`` on a little-endian machine) is swapped on the way."""
    check_not_forked(op)
    refuse_wrapping_import(op, flat)
    if not flat.dtype.isnative:
        flat = flat.astype(flat.dtype.newbyteorder("="))
    return jnp.array(flat, copy=True)


def from_numpy(a: Any, /) -> StridedArray:
    """A ``StridedArray`` with the layout of the NumPy array ``a``: the same shape, element
    strides ``a.strides // a.itemsize`` (negative ones included), values equal.

    The storage is a copy of the span of ``a``'s buffer that ``a`` reaches (from its lowest to
    its highest element, the bytes between included): ``1 + sum((n-1)*|s|)`` elements, not
    its whole base. The offset is the position of ``a[0, ..., 0]`` in it: 0 unless a stride is
    negative. A zero-size array gets an empty storage (its strides kept); a 0-d array a
    storage of one element.

    Args:
      a: a ``numpy.ndarray`` (transposed, sliced, broadcast, a view into a larger base) or a
        NumPy scalar, of a dtype JAX has.
    Returns:
      A ``StridedArray`` whose storage shares no memory with ``a``.
    Raises:
      LayoutError: a byte stride of ``a`` is not a multiple of its itemsize (a view into a
        structured or packed buffer); the message names the dims. A stride that addresses
        nothing (of a dim of extent 1, or of an empty array) is never refused: it becomes 0
        where it is no whole number of elements (DLPack allows it; ``np.from_dlpack`` too).
      LayoutTypeError: ``a`` is not a NumPy array, or its dtype is not one JAX has.
    Example:
      >>> import numpy as np
      >>> base = np.arange(20, dtype=np.int32).reshape(4, 5)
      >>> x = from_numpy(base[1:, ::2])                 # a view into a larger base
      >>> x.stride(), x.storage.tolist()[:3], x.tolist() == base[1:, ::2].tolist()
      ((5, 2), [5, 6, 7], True)

    Semantics: ``torch.from_numpy`` (the same element strides), except that the storage is
    a copy of the reached span and negative strides are accepted (NumPy's)."""
    if isinstance(a, np.generic):
        a = np.asarray(a)
    if not isinstance(a, np.ndarray):
        raise LayoutTypeError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}; use "
                              "from_array(x) for a JAX array or a nested list (a dense import).")
    _jax_dtype(a.dtype, "from_numpy")
    item = a.itemsize
    # a stride that addresses nothing (a dim of extent 1, any dim of an empty array) need not
    # be a whole number of elements, as DLPack and np.from_dlpack allow: it becomes 0
    unused = [n == 1 or a.size == 0 for n in a.shape]
    bad = [(d, s) for d, s in enumerate(a.strides) if s % item and not unused[d]]
    if bad:
        raise LayoutError(
            f"from_numpy: byte strides {a.strides} of the array of shape {a.shape} and dtype {a.dtype} "
            f"are not all multiples of its itemsize {item} (dims {[d for d, _ in bad]}: strides "
            f"{[s for _, s in bad]} bytes), so they are no whole number of elements. Copy the array "
            "first: from_numpy(np.ascontiguousarray(a)).")
    strides = tuple(0 if s % item else s // item for s in a.strides)
    if a.size == 0:
        return StridedArray._wrap(_copy_to_jax(np.zeros(0, a.dtype)), Layout(a.shape, strides, 0))
    low = sum((n - 1) * s for n, s in zip(a.shape, strides, strict=True) if s < 0)
    high = sum((n - 1) * s for n, s in zip(a.shape, strides, strict=True) if s > 0)
    # a one-element view at the lowest address a reaches, then the span from there, byte by element
    corner = a[None] if a.ndim == 0 else a[tuple(slice(n - 1, n) if s < 0 else slice(0, 1)
                                                 for n, s in zip(a.shape, strides, strict=True))]
    flat = np.lib.stride_tricks.as_strided(corner, shape=(high - low + 1,), strides=(item,), writeable=False)
    return StridedArray._wrap(_copy_to_jax(flat), Layout(a.shape, strides, -low))


def _torch_flat_to_numpy(flat: Any, torch: Any, op: str) -> np.ndarray:
    """A contiguous 1-D CPU tensor as a NumPy array of the matching dtype (bfloat16 and the
    float8 types through their bits)."""
    name = str(flat.dtype).removeprefix("torch.")
    target = getattr(ml_dtypes, name, None) if name.startswith(("bfloat16", "float8")) else None
    if target is not None:
        bits = _BITS_OF[np.dtype(target)]
        return flat.view(getattr(torch, bits.name)).numpy().view(target)
    try:
        return flat.numpy()
    except (TypeError, RuntimeError) as e:
        raise LayoutTypeError(f"{op}: dtype {flat.dtype} has no NumPy/JAX counterpart ({e}); convert the "
                              "tensor first, e.g. t.float().") from None


def from_torch(t: Any, /) -> StridedArray:
    """A ``StridedArray`` with ``t.size()``, ``t.stride()`` and ``t.storage_offset()``, over a
    copy of the elements ``0`` to ``storage_offset() + sum((n-1)*stride)`` of ``t``'s storage
    (the span of the untyped storage that ``t`` reaches, from its start; an empty tensor
    gets an empty storage, its offset kept).

    Args:
      t: a strided ``torch.Tensor`` on any device (read through ``.cpu()``), of a dtype JAX
        has: bool, (u)int8/16/32/64, float16/32/64, bfloat16, float8, complex64/128.
        ``requires_grad`` is dropped (``detach``).
    Returns:
      A ``StridedArray`` whose storage shares no memory with ``t``.
    Raises:
      LayoutTypeError: ``t`` is not a tensor, or its dtype has no JAX counterpart
        (``complex32``, quantized types).
      LayoutError: a sparse or other non-strided tensor; a tensor with the conjugate or
        negative bit set (call ``t.resolve_conj()`` / ``t.resolve_neg()`` first, as
        ``t.numpy()`` asks).
      ImportError: PyTorch is not installed.
    Example:
      >>> import torch
      >>> t = torch.arange(12.0).reshape(3, 4)[1:, ::2].t()
      >>> x = from_torch(t)
      >>> (x.shape, x.stride(), x.storage_offset()) == (tuple(t.shape), t.stride(), t.storage_offset())
      True
      >>> x.tolist() == t.tolist()
      True

    Semantics: keeps ``torch.Tensor.size()/stride()/storage_offset()``; the inverse of
    :func:`to_torch`."""
    torch = _import_torch("from_torch")
    if not isinstance(t, torch.Tensor):
        raise LayoutTypeError(f"from_torch: expected a torch.Tensor, got {type(t).__name__}; use "
                              "from_numpy or from_dlpack for other arrays.")
    if t.layout != torch.strided:
        raise LayoutError(f"from_torch: only strided tensors have strides (got layout {t.layout}); call "
                          "t.to_dense() first.")
    if t.is_quantized:
        raise LayoutTypeError(f"from_torch: quantized tensors (dtype {t.dtype}) have no JAX counterpart; "
                              "call t.dequantize() first.")
    if t.is_conj() or t.is_neg():
        raise LayoutError("from_torch: the tensor has its conjugate or negative bit set (its storage does "
                          "not hold its values); call t.resolve_conj().resolve_neg() first.")
    t = t.detach()
    layout = Layout(tuple(t.shape), tuple(t.stride()), t.storage_offset())
    need = layout.required_storage_size
    flat = torch.as_strided(t, (need,), (1,), 0).cpu()
    values = _copy_to_jax(_torch_flat_to_numpy(flat, torch, "from_torch"), "from_torch")
    return StridedArray._wrap(values, layout)


def to_torch(x: Any, /) -> Any:
    """A ``torch.Tensor`` with ``x``'s size, stride and storage offset over a CPU copy of
    ``x``'s whole storage: ``torch.as_strided(storage, x.shape, x.stride(), x.storage_offset())``.

    Args:
      x: a ``StridedArray`` (or a JAX/NumPy array, viewed with ``from_array``) with a static
        offset, not batched, of a dtype PyTorch has (bfloat16 and float8 included).
    Returns:
      A CPU ``torch.Tensor`` sharing no memory with ``x``; ``t.untyped_storage()`` holds the
      whole storage of ``x`` (``x.storage.size`` elements).
    Raises:
      LayoutError: a negative stride (PyTorch has none: export ``x.contiguous()``, or read
        the values with ``torch.from_dlpack(x)``); a batched array; a traced offset.
      LayoutTypeError: a dtype PyTorch lacks.
      ImportError: PyTorch is not installed.
    Example:
      >>> import jax.numpy as jnp
      >>> x = from_array(jnp.arange(12.0).reshape(3, 4))[1:, ::2].t()
      >>> t = to_torch(x)
      >>> tuple(t.shape), t.stride(), t.storage_offset(), t.tolist() == x.tolist()
      ((2, 2), (2, 4), 4, True)

    Semantics: ``torch.as_strided`` over ``torch.from_numpy`` of the storage; the inverse of
    :func:`from_torch`."""
    torch = _import_torch("to_torch")
    x = from_array(x)
    if x.batch_shape:
        raise LayoutError(f"to_torch: the array is batched (batch_shape {x.batch_shape}, layout {x.layout}); "
                          "export one item at a time.")
    if is_traced(x.layout.offset) or is_traced(x.storage):
        raise LayoutError(f"to_torch: the array is traced (layout {x.layout}); export outside jit.")
    if any(s < 0 for s in x.stride()):
        raise LayoutError(f"to_torch: PyTorch has no negative strides (layout {x.layout}); export "
                          "x.contiguous(), or read the values with torch.from_dlpack(x).")
    # a writable copy (torch.from_numpy refuses read-only arrays); of a jax.Ref, its value now
    if isinstance(x.storage, jax.Ref):
        with _refs.eager_lock(x.storage):  # not while another thread's eager write swaps its buffer
            storage = np.array(x.storage[...])
    else:
        storage = np.array(x.storage)
    bits = _BITS_OF.get(storage.dtype)
    if bits is not None:
        target = getattr(torch, storage.dtype.name, None)
        if target is None:
            raise LayoutTypeError(f"to_torch: PyTorch has no dtype {storage.dtype.name}.")
        base = torch.from_numpy(storage.view(bits)).view(target)
    else:
        try:
            base = torch.from_numpy(storage)
        except TypeError as e:
            raise LayoutTypeError(f"to_torch: PyTorch has no dtype {storage.dtype} ({e}).") from None
    return torch.as_strided(base, x.shape, x.stride(), x.storage_offset())


def _is_torch_tensor(obj: Any) -> bool:
    torch = importlib.import_module("torch") if "torch" in type(obj).__module__ else None
    return torch is not None and isinstance(obj, torch.Tensor)


def from_dlpack(obj: Any, /) -> StridedArray:
    """A ``StridedArray`` from any DLPack producer, with the producer's strides.

    A ``torch.Tensor`` goes through :func:`from_torch` (``storage_offset()`` kept), a NumPy
    array through :func:`from_numpy`, a ``StridedArray`` is returned as is, a ``jax.Array``
    (dense) through :func:`from_array`. Any other producer (an object with ``__dlpack__``,
    e.g. CuPy) is read with ``np.from_dlpack`` (CPU) and, failing that, ``torch.from_dlpack``
    (other devices, dtypes NumPy lacks), whose strides are then kept; a legacy DLPack capsule
    goes through ``torch.utils.dlpack.from_dlpack``. DLPack folds a producer's byte offset into
    the data pointer, so such producers arrive with offset 0 over the span they reach.

    Args:
      obj: a ``torch.Tensor``, a NumPy array, a ``StridedArray``, a ``jax.Array``, any object
        with ``__dlpack__``, or a legacy DLPack capsule.
    Raises:
      LayoutTypeError: ``obj`` is no DLPack producer, or neither NumPy nor PyTorch can read it.
      LayoutError: as :func:`from_numpy` / :func:`from_torch`.
    Example:
      >>> import torch
      >>> t = torch.arange(6.0).reshape(2, 3).t()      # strides (1, 3): not row-major
      >>> x = from_dlpack(t)
      >>> x.stride(), x.tolist() == t.tolist()
      ((1, 3), True)

    Semantics: ``torch.from_dlpack`` / ``np.from_dlpack``, keeping strides (unlike
    ``jax.dlpack.from_dlpack``, which needs row-major input: jax#17784)."""
    if isinstance(obj, StridedArray):
        return obj
    if isinstance(obj, jax.Array):
        return from_array(obj)
    if isinstance(obj, np.ndarray):
        return from_numpy(obj)
    if _is_torch_tensor(obj):
        return from_torch(obj)
    if not hasattr(obj, "__dlpack__"):
        if type(obj).__name__ == "PyCapsule":
            return from_torch(_import_torch("from_dlpack").utils.dlpack.from_dlpack(obj))
        raise LayoutTypeError(f"from_dlpack: {type(obj).__name__} is no DLPack producer (it has no "
                              "__dlpack__ method).")
    try:
        return from_numpy(np.from_dlpack(obj))
    except (BufferError, RuntimeError, TypeError, ValueError) as numpy_error:
        try:
            torch = importlib.import_module("torch")
        except ImportError:
            raise LayoutTypeError(f"from_dlpack: NumPy cannot read this {type(obj).__name__} "
                                  f"({numpy_error}) and PyTorch is not installed.") from None
        return from_torch(torch.from_dlpack(obj))


"""dtype views: ``x.view(dtype)``, ``view_as_real`` and ``view_as_complex`` with PyTorch's
rules, the bits reinterpreted by a bitcast of the storage.

PyTorch reinterprets the bytes of one storage in place. A JAX array has one dtype, so here
the storage itself is bitcast (``lax.bitcast_convert_type``): the result is a
``StridedArray`` over a *new* storage of the new dtype, holding the same bytes, with the
shape, strides and offset PyTorch gives (in elements of the new dtype). It shares no device
memory with ``x`` (``fs.shares_storage`` is False, except for a view to the same dtype,
which keeps ``x``'s storage); XLA fuses the bitcast into what reads it. A write through the
result does not reach ``x``: bitcast the written storage back with ``view(x.dtype)``.

The rules (PyTorch's ``view_dtype``): with the same itemsize any layout is kept. With a
smaller itemsize (ratio ``r``), the last dim must have stride 1; it grows ``r`` times, the
other strides and the offset are multiplied by ``r``. With a larger itemsize, the last dim
must have stride 1 and a size divisible by ``r``, the offset and every other stride must be
divisible by ``r``; they are divided by ``r``. Rank 0 is refused when itemsizes differ.
``bool`` storage bytes are 0 or 1; a byte other than 0 viewed as ``bool`` reads True.

Example:
  >>> import jax.numpy as jnp, functional_strides as fs
  >>> x = fs.from_array(jnp.array([[1.0, -2.0], [0.5, 4.0]], jnp.float32))
  >>> y = x.view(jnp.int16)                     # 2 int16 per float32
  >>> y.shape, y.stride(), y.storage_offset()
  ((2, 4), (4, 1), 0)
  >>> y.view(jnp.float32).tolist() == x.tolist()
  True
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..core.errors import LayoutError, LayoutTypeError, ViewError
from ..core.layout import Layout, is_static_offset, is_traced

__all__ = ["COMPLEX_OF", "as_dtype", "bitcast_storage", "check_jax_dtype", "view_as_complex_layout",
           "view_as_real_layout", "view_dtype_layout"]

COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def as_dtype(value: Any, op: str = "view") -> np.dtype:
    """``value`` (a NumPy/JAX dtype or scalar type, a dtype name, or a ``torch.dtype``) as a
    NumPy dtype (``ml_dtypes`` for ``bfloat16`` and the float8 types).

    Raises:
      LayoutTypeError: ``value`` names no dtype JAX has (e.g. ``torch.complex32``).
    Example:
      >>> as_dtype("bfloat16"), as_dtype(jnp.int8)
      (dtype(bfloat16), dtype('int8'))

    Semantics: the ``dtype`` argument of ``torch.Tensor.view``."""
    if type(value).__name__ == "dtype" and type(value).__module__.startswith("torch"):
        name = str(value).removeprefix("torch.")
        value = getattr(jnp, "bool_" if name == "bool" else name, None)
        if value is None:
            raise LayoutTypeError(f"{op}: torch.{name} has no JAX counterpart; pick another dtype.")
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise LayoutTypeError(f"{op}: {value!r} is not a dtype (got {type(value).__name__}); pass e.g. "
                              "jnp.int16, 'float16' or torch.int16.") from None
    if not (jnp.issubdtype(dtype, np.number) or dtype == np.bool_) or dtype.names is not None:
        raise LayoutTypeError(f"{op}: JAX has no arrays of dtype {dtype!r} (NumPy kind {dtype.kind!r}: "
                              "strings, objects, datetimes and records are not array dtypes there); pass a "
                              "numeric or bool dtype, e.g. jnp.int16, 'float16' or torch.int16.")
    return dtype


def _offset_divisible(offset: Any, r: int) -> tuple[bool, Any]:
    """(offset % r == 0 for every item, an offset to print)."""
    if is_static_offset(offset):
        return offset % r == 0, offset
    values = np.asarray(offset)
    bad = values[values % r != 0]
    return bad.size == 0, (int(bad.flat[0]) if bad.size else offset)


def view_dtype_layout(layout: Layout, old: Any, new: Any) -> Layout:
    """The layout of ``x.view(new)`` for ``x`` of dtype ``old`` with ``layout``; strides and
    offset in elements of each dtype.

    Raises:
      LayoutTypeError: either dtype is a sub-byte one (``int4``, ``uint4``, ``float4_e2m1fn``,
        ...), whose elements are not whole bytes.
      ViewError: the itemsizes differ and the rank is 0, the last stride is not 1, or
        (larger itemsize) the last size, the offset or another stride is not divisible by
        the ratio; the offset is traced (its divisibility cannot be checked).
    Example:
      >>> str(view_dtype_layout(Layout((2, 3), (4, 1), 1), np.float32, np.int16))
      '(2,6):(8,1)+2'
      >>> str(view_dtype_layout(Layout((2, 4), (6, 1), 2), np.float32, np.float64))
      '(2,2):(3,1)+1'

    Semantics: ``torch.Tensor.view(dtype)`` (ATen ``view_dtype``)."""
    old, new = np.dtype(old), np.dtype(new)
    for dtype in (old, new):
        bits = jax.dtypes.itemsize_bits(dtype)
        if bits < 8:
            raise LayoutTypeError(
                f"view: {dtype.name} is a sub-byte dtype ({bits} bits an element), and a dtype view "
                f"reads whole bytes (viewing {old.name} as {new.name}, layout {layout}); PyTorch has no "
                "such view either. Convert the values instead (jnp.asarray(x).astype(...)), or keep "
                "the storage's dtype.")
    a, b = old.itemsize, new.itemsize
    if a == b:
        return layout
    what = f"to view {old.name} as {new.name} (different element sizes)"
    at = f" (layout {layout})"
    if layout.ndim == 0:
        raise ViewError(f"view: self.dim() cannot be 0 {what}{at}; unsqueeze(0) first.")
    shape, strides, offset = list(layout.shape), list(layout.strides), layout.offset
    if strides[-1] != 1:
        raise ViewError(f"view: self.stride(-1) must be 1 {what}, but got {strides[-1]}{at}; call "
                        "contiguous() first.")
    if a > b:
        r = a // b
        shape[-1] *= r
        return Layout(tuple(shape), tuple(s * r for s in strides[:-1]) + (1,), offset * r)
    r = b // a
    if shape[-1] % r:
        raise ViewError(f"view: self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}{at}.")
    if is_traced(offset):
        raise ViewError(f"view: the storage offset is traced, so its divisibility by {r} cannot be checked "
                        f"{what}{at}; view the dtype outside jit, or pass the offset as a static int.")
    ok, shown = _offset_divisible(offset, r)
    if not ok:
        raise ViewError(f"view: self.storage_offset() must be divisible by {r} {what}, but got {shown}{at}.")
    for i, s in enumerate(strides[:-1]):
        if s % r:
            raise ViewError(f"view: self.stride({i}) must be divisible by {r} {what}, but got {s}{at}.")
    shape[-1] //= r
    return Layout(tuple(shape), tuple(s // r for s in strides[:-1]) + (1,), offset // r)


def view_as_real_layout(layout: Layout) -> Layout:
    """The layout of ``view_as_real(x)``: a trailing dim of size 2 (stride 1), the other
    strides and the offset doubled (counted in real elements).

    Example:
      >>> str(view_as_real_layout(Layout((2, 2), (1, 2), 1)))
      '(2,2,2):(2,4,1)+2'

    Semantics: ``torch.view_as_real``."""
    return Layout((*layout.shape, 2), (*(2 * s for s in layout.strides), 1), layout.offset * 2)


def view_as_complex_layout(layout: Layout) -> Layout:
    """The layout of ``view_as_complex(x)``: the last dim (size 2, stride 1) dropped, the
    other strides and the offset halved (counted in complex elements; a size-1 dim's stride is
    halved rounding down, as PyTorch does).

    Raises:
      LayoutError: rank 0; last dim not of size 2 or not of stride 1; a stride of a dim of
        size other than 1, or the offset, is odd (PyTorch's messages, in its order); the
        offset is traced (a view passed into ``jit`` has a traced offset, whose divisibility
        by 2 cannot be checked: make the view outside ``jit``, or pass the storage and build
        the view inside with a static offset), as ``view(dtype)`` refuses it.
    Example:
      >>> str(view_as_complex_layout(Layout((3, 2), (4, 1), 2)))
      '(3,):(2,)+1'

    Semantics: ``torch.view_as_complex``."""
    at = f" (layout {layout})"
    if layout.ndim == 0:
        raise LayoutError(f"view_as_complex: Input tensor must have one or more dimensions{at}.")
    if layout.shape[-1] != 2:
        raise LayoutError(f"view_as_complex: Tensor must have a last dimension of size 2, got "
                          f"{layout.shape[-1]}{at}.")
    if layout.strides[-1] != 1:
        raise LayoutError(f"view_as_complex: Tensor must have a last dimension with stride 1, got "
                          f"{layout.strides[-1]}{at}; call contiguous() first.")
    for n, s in zip(layout.shape[:-1], layout.strides[:-1], strict=True):
        if n != 1 and s % 2:
            raise LayoutError(f"view_as_complex: Tensor must have a stride divisible by 2 for all but last "
                              f"dimension, got {s}{at}; call contiguous() first.")
    if is_traced(layout.offset):
        raise LayoutError(f"view_as_complex: the storage offset is traced, so its divisibility by 2 cannot "
                          f"be checked{at}; make the view outside jit.")
    ok, shown = _offset_divisible(layout.offset, 2)
    if not ok:
        raise LayoutError(f"view_as_complex: Tensor must have a storage_offset divisible by 2, got "
                          f"{shown}{at}.")
    return Layout(layout.shape[:-1], tuple(s // 2 for s in layout.strides[:-1]), layout.offset // 2)


def check_jax_dtype(dtype: np.dtype, op: str) -> None:
    if jax.dtypes.canonicalize_dtype(dtype) != dtype:
        raise LayoutTypeError(f"{op}: JAX makes no {dtype.name} arrays unless jax_enable_x64 is set; call "
                              "jax.config.update('jax_enable_x64', True) first, or pick a 32-bit dtype.")


def _to_bits(storage: jax.Array) -> jax.Array:
    """``storage`` in a dtype that ``lax.bitcast_convert_type`` takes, bytes unchanged: bool
    as uint8 (0 or 1), complex as its (real, imag) pairs, interleaved."""
    if storage.dtype == jnp.bool_:
        return storage.astype(jnp.uint8)
    if jnp.issubdtype(storage.dtype, jnp.complexfloating):
        pairs = jnp.stack([jnp.real(storage), jnp.imag(storage)], axis=-1)
        return pairs.reshape(*storage.shape[:-1], 2 * storage.shape[-1])
    return storage


def bitcast_storage(storage: jax.Array, dtype: Any) -> jax.Array:
    """The bytes of ``storage`` (shape ``(*batch, N)``) read as ``dtype``: shape
    ``(*batch, N * old_itemsize // new_itemsize)``; trailing bytes that fill no whole element of
    the new dtype are dropped.

    Example:
      >>> bitcast_storage(jnp.array([1.0], jnp.float32), jnp.uint16).tolist()
      [0, 16256]

    Raises:
      LayoutError: ``storage`` is a ``jax.Ref`` (a ref has one dtype: its bytes cannot be
        shared as another's; read it first, ``x.contiguous()``).

    Semantics: reading a ``torch.UntypedStorage`` as another dtype."""
    new = np.dtype(dtype)
    if storage.dtype == new:
        return storage
    if isinstance(storage, jax.Ref):
        raise LayoutError(f"a dtype view ({storage.dtype} as {new}) of a jax.Ref cannot share its memory: "
                          "a ref has one dtype. Read the array first, e.g. x.contiguous() (a copy), and "
                          "view that.")
    bits = _to_bits(storage)
    complex_out = np.issubdtype(new, np.complexfloating)
    mid = new  # the dtype bitcast_convert_type makes: bool as uint8, complex as its real parts
    if new == np.bool_:
        mid = np.dtype(np.uint8)
    elif complex_out:
        mid = np.dtype(np.float32 if new == np.complex64 else np.float64)
    a, b = bits.dtype.itemsize, mid.itemsize
    batch, n = bits.shape[:-1], bits.shape[-1]
    if a > b:
        out = lax.bitcast_convert_type(bits, mid).reshape(*batch, n * (a // b))
    elif a < b:
        r = b // a
        out = lax.bitcast_convert_type(bits[..., : n // r * r].reshape(*batch, n // r, r), mid)
    else:
        out = lax.bitcast_convert_type(bits, mid)
    if new == np.bool_:
        return out != 0
    if complex_out:
        m = out.shape[-1] // 2
        pairs = out[..., : 2 * m].reshape(*batch, m, 2)
        return lax.complex(pairs[..., 0], pairs[..., 1])
    return out

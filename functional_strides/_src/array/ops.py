"""Module-level view ops: ``fs.permute(x, (1, 0))`` is ``x.permute(1, 0)``.

Each function accepts a ``StridedArray`` or a JAX/NumPy array (viewed with
:func:`from_array`) and returns views over the same storage. Each shows the docstring of
the ``StridedArray`` method of the same name (shapes, strides in elements, errors, an
example and the PyTorch function matched), which is also that of the rule in
:mod:`functional_strides.views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from ..core import memory_format as memory_format_module
from ..core import views
from ..core.docs import shares_doc as _shares_doc
from ..core.errors import LayoutError, LayoutTypeError
from ..lowering.writes import check_src
from .dtype_views import COMPLEX_OF, bitcast_storage, view_as_complex_layout, view_as_real_layout
from .strided import StridedArray, as_strided, from_array

__all__ = [
    "T", "as_strided", "as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_scatter",
    "broadcast_to", "chunk", "clone", "contiguous", "diagonal", "expand", "expand_as", "flatten", "flip",
    "fliplr", "flipud", "movedim", "view_as_complex", "view_as_real",
    "mT", "narrow", "permute", "reshape", "select", "split", "squeeze", "t", "transpose", "unbind",
    "unflatten", "unfold", "unsqueeze", "view",
]


def _int_sequence(op: str, name: str, value: Any) -> tuple[Any, ...]:
    """``value`` as a tuple; a bare int, a string or a non-sequence raises ``LayoutTypeError``
    (a ``TypeError``), as PyTorch's ``torch.reshape(x, 6)``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise LayoutTypeError(f"{op}: {name} must be a tuple of ints, not {type(value).__name__} (got "
                              f"{name}={value!r}); pass e.g. {name}=({value!r},).")
    return tuple(value)


@_shares_doc(StridedArray.view)
def view(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    return from_array(x).view(_int_sequence("view", "shape", shape))


@_shares_doc(StridedArray.reshape)
def reshape(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    return from_array(x).reshape(_int_sequence("reshape", "shape", shape))


@_shares_doc(StridedArray.flatten)
def flatten(x: Any, /, start_dim: int = 0, end_dim: int = -1) -> StridedArray:
    return from_array(x).flatten(start_dim, end_dim)


@_shares_doc(StridedArray.unflatten)
def unflatten(x: Any, /, dim: int, sizes: Sequence[Any]) -> StridedArray:
    return from_array(x).unflatten(dim, sizes)


@_shares_doc(StridedArray.permute)
def permute(x: Any, /, dims: Sequence[Any]) -> StridedArray:
    return from_array(x).permute(_int_sequence("permute", "dims", dims))


@_shares_doc(StridedArray.transpose)
def transpose(x: Any, /, dim0: int, dim1: int) -> StridedArray:
    return from_array(x).transpose(dim0, dim1)


@_shares_doc(StridedArray.t)
def t(x: Any, /) -> StridedArray:
    return from_array(x).t()


@_shares_doc(StridedArray.T.fget)
def T(x: Any, /) -> StridedArray:  # noqa: N802 - PyTorch's name
    return from_array(x).T


@_shares_doc(StridedArray.mT.fget)
def mT(x: Any, /) -> StridedArray:  # noqa: N802 - PyTorch's name
    return from_array(x).mT


@_shares_doc(StridedArray.movedim)
def movedim(x: Any, /, source: Any, destination: Any) -> StridedArray:
    return from_array(x).movedim(source, destination)


@_shares_doc(StridedArray.flip)
def flip(x: Any, /, dims: Sequence[Any]) -> StridedArray:
    return from_array(x).flip(_int_sequence("flip", "dims", dims))


@_shares_doc(StridedArray.fliplr)
def fliplr(x: Any, /) -> StridedArray:
    return from_array(x).fliplr()


@_shares_doc(StridedArray.flipud)
def flipud(x: Any, /) -> StridedArray:
    return from_array(x).flipud()


@_shares_doc(StridedArray.squeeze)
def squeeze(x: Any, /, dim: Any = None) -> StridedArray:
    return from_array(x).squeeze() if dim is None else from_array(x).squeeze(dim)


@_shares_doc(StridedArray.unsqueeze)
def unsqueeze(x: Any, /, dim: int) -> StridedArray:
    return from_array(x).unsqueeze(dim)


@_shares_doc(StridedArray.expand)
def expand(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    return from_array(x).expand(_int_sequence("expand", "shape", shape))


@_shares_doc(StridedArray.expand_as)
def expand_as(x: Any, /, other: Any) -> StridedArray:
    return from_array(x).expand_as(other)


@_shares_doc(StridedArray.broadcast_to)
def broadcast_to(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    return from_array(x).broadcast_to(shape)


@_shares_doc(StridedArray.narrow)
def narrow(x: Any, /, dim: int, start: int, length: int) -> StridedArray:
    return from_array(x).narrow(dim, start, length)


@_shares_doc(StridedArray.select)
def select(x: Any, /, dim: int, index: int) -> StridedArray:
    return from_array(x).select(dim, index)


@_shares_doc(StridedArray.unfold)
def unfold(x: Any, /, dimension: int, size: int, step: int) -> StridedArray:
    return from_array(x).unfold(dimension, size, step)


@_shares_doc(StridedArray.diagonal)
def diagonal(x: Any, /, offset: int = 0, dim1: int = 0, dim2: int = 1) -> StridedArray:
    return from_array(x).diagonal(offset, dim1, dim2)


@_shares_doc(StridedArray.split)
def split(x: Any, /, split_size_or_sections: Any, dim: int = 0) -> tuple[StridedArray, ...]:
    return from_array(x).split(split_size_or_sections, dim)


@_shares_doc(StridedArray.chunk)
def chunk(x: Any, /, chunks: int, dim: int = 0) -> tuple[StridedArray, ...]:
    return from_array(x).chunk(chunks, dim)


@_shares_doc(StridedArray.unbind)
def unbind(x: Any, /, dim: int = 0) -> tuple[StridedArray, ...]:
    return from_array(x).unbind(dim)


@_shares_doc(StridedArray.contiguous)
def contiguous(x: Any, /, memory_format: Any = memory_format_module.contiguous_format, *,
               out_sharding: Any = None) -> StridedArray:
    return from_array(x).contiguous(memory_format, out_sharding=out_sharding)


@_shares_doc(StridedArray.clone)
def clone(x: Any, /, memory_format: Any = memory_format_module.preserve_format) -> StridedArray:
    return from_array(x).clone(memory_format)


def _writable_base(x: StridedArray) -> StridedArray:
    """What PyTorch's ``*_scatter`` ops write into (``clone_preserve_strides``): ``x``'s own
    layout over its storage, or a ``clone()`` when an expanded (stride-0) dim makes
    elements share storage slots."""
    if any(n > 1 and s == 0 for n, s in zip(x.shape, x.stride(), strict=False)):
        return x.clone()
    return x


def _scatter_into(input: Any, src: Any, view_of, op: str) -> StridedArray:
    """Write ``src`` through ``view_of(base)`` (shapes must match exactly and ``src`` is cast
    to the input's dtype, as PyTorch's ``copy_`` does) and return ``base`` over the written
    storage, with ``input``'s shape, strides and offset."""
    base = _writable_base(from_array(input))
    target = view_of(base)
    values = check_src(src, target.shape, base.dtype, op=op, layout=target.layout, exact=True)
    return base.with_storage(target.at[...].set(values, overlap="last").storage)


def as_strided_scatter(input: Any, src: Any, size: Sequence[int], stride: Sequence[int],
                       storage_offset: int | None = None) -> StridedArray:
    """``input`` with the elements of ``input.as_strided(size, stride, storage_offset)``
    replaced by ``src`` (whose shape must equal ``size``; cast to ``input``'s dtype).

    ``size``/``stride``/``storage_offset`` address ``input``'s underlying storage (in
    elements; ``None`` is ``input``'s own offset), as ``as_strided`` does; the result has
    ``input``'s layout over the written storage, so slots the write reaches outside
    ``input``'s own elements are not visible in it. An ``input`` with an expanded
    (stride-0) dim is first copied with ``clone()``, as PyTorch does. Where several
    elements of ``src`` address one slot, the last in row-major order of ``src`` wins
    (PyTorch's CPU loop order for most layouts; PyTorch refuses stride-0 destinations,
    this function defines them too).

    Args:
      input: the array written into: a ``StridedArray`` or a JAX or NumPy array.
      src: the values written, of shape ``size``, cast to ``input``'s dtype.
      size: the extents of the view written (elements).
      stride: its strides (elements), one per extent.
      storage_offset: its offset in ``input``'s storage (elements); ``None`` is ``input``'s own.
    Raises:
      LayoutError: ``src`` shape differs from ``size``, bad size/stride/offset.
      StorageError: the view runs past the end of ``input``'s storage.
    Example:
      >>> import jax.numpy as jnp, numpy as np
      >>> np.asarray(as_strided_scatter(jnp.zeros((2, 2)), jnp.ones(2), (2,), (3,))).tolist()
      [[1.0, 0.0], [0.0, 1.0]]

    Semantics: ``torch.as_strided_scatter``."""
    return _scatter_into(input, src, lambda c: c.as_strided(size, stride, storage_offset),
                         "as_strided_scatter")


def slice_scatter(input: Any, src: Any, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> StridedArray:
    """``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by ``src``
    (cast to ``input``'s dtype); the result keeps ``input``'s shape, strides and offset.

    Args:
      input: the array written into: a ``StridedArray`` or a JAX or NumPy array.
      src: the values written, cast to ``input``'s dtype; its shape must be the view's.
      dim: the dim sliced.
      start: first index of the slice (``None``: 0).
      end: index past the last (``None``: the extent).
      step: the slice's step, >= 1.
    Raises:
      LayoutError: ``step < 1`` or ``src`` shape differs from the slice's.
      OutOfRangeError: ``dim`` out of range.
    Example:
      >>> slice_scatter(jnp.zeros((2, 4)), jnp.ones((2, 2)), dim=1, start=0, step=2).tolist()
      [[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]]

    Semantics: ``torch.slice_scatter``."""
    def view_of(c: StridedArray) -> StridedArray:
        d = views.canonical_dim(dim, c.ndim, op="slice_scatter")
        return c[(slice(None),) * d + (slice(start, end, step),)]

    return _scatter_into(input, src, view_of, "slice_scatter")


def select_scatter(input: Any, src: Any, dim: int, index: int) -> StridedArray:
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (cast to ``input``'s
    dtype); the result keeps ``input``'s shape, strides and offset.

    Args:
      input: the array written into: a ``StridedArray`` or a JAX or NumPy array.
      src: the values written, cast to ``input``'s dtype; its shape must be the view's.
      dim: the dim selected.
      index: the index selected along ``dim``.
    Raises:
      OutOfRangeError: ``dim``/``index`` out of range.
      LayoutError: ``src`` shape mismatch.
    Example:
      >>> select_scatter(jnp.zeros((2, 3)), jnp.arange(2.0), dim=1, index=-1).tolist()
      [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]

    Semantics: ``torch.select_scatter``."""
    return _scatter_into(input, src, lambda c: c.select(dim, index), "select_scatter")


def diagonal_scatter(input: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> StridedArray:
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src`` (cast to
    ``input``'s dtype); the result keeps ``input``'s shape, strides and offset.

    Args:
      input: the array written into: a ``StridedArray`` or a JAX or NumPy array.
      src: the values written, cast to ``input``'s dtype; its shape must be the view's.
      offset: 0 for the main diagonal, > 0 above it, < 0 below it.
      dim1: the first of the two dims the diagonal is taken over.
      dim2: the second, distinct from ``dim1``.
    Raises:
      OutOfRangeError: a dim out of range.
      LayoutError: ``dim1 == dim2`` or ``src`` shape mismatch.
    Example:
      >>> diagonal_scatter(jnp.zeros((2, 2)), jnp.ones(2)).tolist()
      [[1.0, 0.0], [0.0, 1.0]]

    Semantics: ``torch.diagonal_scatter``."""
    return _scatter_into(input, src, lambda c: c.diagonal(offset, dim1, dim2), "diagonal_scatter")


def view_as_real(x: Any, /) -> StridedArray:
    """A complex array as real pairs: shape ``(*x.shape, 2)`` (real, imaginary), strides
    doubled plus a last stride 1, offset doubled (elements of the real dtype).

    Args:
      x: a complex64 (or complex128, with x64) ``StridedArray`` or JAX/NumPy array.
    Returns:
      A ``StridedArray`` over the bitcast storage (float32 / float64; a new storage sharing no
      device memory with ``x``).
    Raises:
      LayoutError: ``x`` is not complex ("view_as_real is only supported for complex tensors").
    Example:
      >>> z = from_array(jnp.array([1 + 2j, 3 - 4j], jnp.complex64))
      >>> r = view_as_real(z)
      >>> r.shape, r.stride(), r.tolist()
      ((2, 2), (2, 1), [[1.0, 2.0], [3.0, -4.0]])

    Semantics: ``torch.view_as_real``."""
    x = from_array(x)
    if not jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise LayoutError(f"view_as_real: view_as_real is only supported for complex tensors (got dtype "
                          f"{np.dtype(x.dtype).name}, layout {x.layout}); use lax.complex to build one.")
    real = np.dtype(np.float32 if x.dtype == jnp.complex64 else np.float64)
    return StridedArray._wrap(bitcast_storage(x.storage, real), view_as_real_layout(x.layout))


def view_as_complex(x: Any, /) -> StridedArray:
    """Real pairs as a complex array: the last dim (size 2, stride 1) becomes the real and
    imaginary parts; the other strides and the offset are halved.

    Args:
      x: a float32 (or float64, with x64) ``StridedArray`` or JAX/NumPy array.
    Returns:
      A ``StridedArray`` of complex64 (complex128) over the bitcast storage (new, sharing no
      device memory with ``x``).
    Raises:
      LayoutError: PyTorch's refusals (see PyTorch's ``view_as_complex``); a dtype other than
        float16/32/64; float16, whose complex counterpart (``torch.complex32``) JAX lacks; a
        traced offset, as in a view passed into ``jit`` (its divisibility by 2 cannot be
        checked, as for ``x.view(dtype)``): make the view outside ``jit``, or pass the storage
        and build the view inside, with a static offset.
    Example:
      >>> r = from_array(jnp.array([[1.0, 2.0], [3.0, -4.0]]))
      >>> view_as_complex(r).tolist()
      [(1+2j), (3-4j)]

    Semantics: ``torch.view_as_complex``."""
    x = from_array(x)
    dtype = np.dtype(x.dtype)
    if dtype == np.float16:
        raise LayoutError(f"view_as_complex: float16 pairs would make complex32, which JAX has no dtype "
                          f"for (layout {x.layout}); convert to float32 first.")
    if dtype not in COMPLEX_OF:
        raise LayoutError(f"view_as_complex: view_as_complex is only supported for half, float and double "
                          f"tensors, but got a tensor of scalar type: {dtype.name} (layout {x.layout}).")
    layout = view_as_complex_layout(x.layout)
    return StridedArray._wrap(bitcast_storage(x.storage, COMPLEX_OF[dtype]), layout)

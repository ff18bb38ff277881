"""Module-level view ops: ``fs.permute(x, (1, 0))`` is ``x.permute(1, 0)``.

Each function accepts a ``StridedArray`` or a JAX/NumPy array (viewed with
:func:`from_array`) and returns views over the same storage; see the ``StridedArray``
method of the same name for semantics, errors and the PyTorch function matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from . import memory_format as memory_format_module
from . import views
from .errors import LayoutError, LayoutTypeError
from .strided import StridedArray, as_strided, from_array

__all__ = [
    "T", "as_strided", "as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_scatter",
    "broadcast_to", "chunk", "clone", "contiguous", "diagonal", "expand", "expand_as", "flatten", "flip",
    "fliplr", "flipud", "movedim",
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


def view(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    """``x.view(shape)``: a view or ``ViewError``. Semantics: ``torch.Tensor.view``."""
    return from_array(x).view(_int_sequence("view", "shape", shape))


def reshape(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    """``x.reshape(shape)``: a view if possible, else a copy. Semantics: ``torch.reshape``."""
    return from_array(x).reshape(_int_sequence("reshape", "shape", shape))


def flatten(x: Any, /, start_dim: int = 0, end_dim: int = -1) -> StridedArray:
    """``x.flatten(start_dim, end_dim)``. Semantics: ``torch.flatten``."""
    return from_array(x).flatten(start_dim, end_dim)


def unflatten(x: Any, /, dim: int, sizes: Sequence[Any]) -> StridedArray:
    """``x.unflatten(dim, sizes)``. Semantics: ``torch.unflatten``."""
    return from_array(x).unflatten(dim, sizes)


def permute(x: Any, /, dims: Sequence[Any]) -> StridedArray:
    """``x.permute(dims)``. Semantics: ``torch.permute``."""
    return from_array(x).permute(_int_sequence("permute", "dims", dims))


def transpose(x: Any, /, dim0: int, dim1: int) -> StridedArray:
    """``x.transpose(dim0, dim1)``. Semantics: ``torch.transpose``."""
    return from_array(x).transpose(dim0, dim1)


def t(x: Any, /) -> StridedArray:
    """``x.t()``. Semantics: ``torch.t``."""
    return from_array(x).t()


def T(x: Any, /) -> StridedArray:  # noqa: N802 - PyTorch's name
    """``x.T``. Semantics: ``torch.Tensor.T``."""
    return from_array(x).T


def mT(x: Any, /) -> StridedArray:  # noqa: N802 - PyTorch's name
    """``x.mT``. Semantics: ``torch.Tensor.mT``."""
    return from_array(x).mT


def movedim(x: Any, /, source: Any, destination: Any) -> StridedArray:
    """``x.movedim(source, destination)``. Semantics: ``torch.movedim``."""
    return from_array(x).movedim(source, destination)


def flip(x: Any, /, dims: Sequence[Any]) -> StridedArray:
    """Reverse the order of elements of ``x`` along ``dims`` (a tuple or list of ints).

    Args:
      x: a ``StridedArray`` or an array (wrapped as a contiguous one).
      dims: dims to reverse, each in ``[-ndim, ndim)`` and at most once; ``()`` changes nothing.
    Returns:
      A view over ``x``'s storage of the same shape and dtype: the strides of ``dims``
      negated, the offset moved to the last element along each (elements).
    Raises:
      LayoutTypeError: ``dims`` is an int or not a sequence of ints (as ``torch.flip``).
      OutOfRangeError: a dim out of range. LayoutError: a dim given twice.
    Example:
      >>> import jax.numpy as jnp
      >>> y = flip(jnp.arange(6).reshape(2, 3), (0,))
      >>> y.tolist(), y.stride(), y.storage_offset()
      ([[3, 4, 5], [0, 1, 2]], (-3, 1), 3)

    Semantics: ``torch.flip`` (values and shape); PyTorch copies into a contiguous tensor,
    this returns a view with negative strides, as ``np.flip``. Writes through it
    (``y.at[...].set(v)``) reach ``x``'s storage in mirrored order."""
    return from_array(x).flip(_int_sequence("flip", "dims", dims))


def fliplr(x: Any, /) -> StridedArray:
    """``flip(x, (1,))`` for ``x`` of rank >= 2: a view (PyTorch copies).

    Raises:
      LayoutError: rank < 2 (``Input must be >= 2-d``, as PyTorch).
    Example:
      >>> import jax.numpy as jnp
      >>> fliplr(jnp.arange(6).reshape(2, 3)).tolist()
      [[2, 1, 0], [5, 4, 3]]

    Semantics: ``torch.fliplr``."""
    return from_array(x).fliplr()


def flipud(x: Any, /) -> StridedArray:
    """``flip(x, (0,))`` for ``x`` of rank >= 1: a view (PyTorch copies).

    Raises:
      LayoutError: rank 0 (``Input must be >= 1-d``, as PyTorch).
    Example:
      >>> import jax.numpy as jnp
      >>> flipud(jnp.arange(6).reshape(2, 3)).tolist()
      [[3, 4, 5], [0, 1, 2]]

    Semantics: ``torch.flipud``."""
    return from_array(x).flipud()


def squeeze(x: Any, /, dim: Any = None) -> StridedArray:
    """``x.squeeze(dim)``; ``dim=None`` squeezes every size-1 dim. Semantics: ``torch.squeeze``."""
    return from_array(x).squeeze() if dim is None else from_array(x).squeeze(dim)


def unsqueeze(x: Any, /, dim: int) -> StridedArray:
    """``x.unsqueeze(dim)``. Semantics: ``torch.unsqueeze``."""
    return from_array(x).unsqueeze(dim)


def expand(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    """``x.expand(shape)``. Semantics: ``torch.Tensor.expand``."""
    return from_array(x).expand(_int_sequence("expand", "shape", shape))


def expand_as(x: Any, /, other: Any) -> StridedArray:
    """``x.expand_as(other)``. Semantics: ``torch.Tensor.expand_as``."""
    return from_array(x).expand_as(other)


def broadcast_to(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    """``x.broadcast_to(shape)``. Semantics: ``torch.broadcast_to``."""
    return from_array(x).broadcast_to(shape)


def narrow(x: Any, /, dim: int, start: int, length: int) -> StridedArray:
    """``x.narrow(dim, start, length)``. Semantics: ``torch.narrow``."""
    return from_array(x).narrow(dim, start, length)


def select(x: Any, /, dim: int, index: int) -> StridedArray:
    """``x.select(dim, index)``. Semantics: ``torch.select``."""
    return from_array(x).select(dim, index)


def unfold(x: Any, /, dimension: int, size: int, step: int) -> StridedArray:
    """``x.unfold(dimension, size, step)``. Semantics: ``torch.Tensor.unfold``."""
    return from_array(x).unfold(dimension, size, step)


def diagonal(x: Any, /, offset: int = 0, dim1: int = 0, dim2: int = 1) -> StridedArray:
    """``x.diagonal(offset, dim1, dim2)``. Semantics: ``torch.diagonal``."""
    return from_array(x).diagonal(offset, dim1, dim2)


def split(x: Any, /, split_size_or_sections: Any, dim: int = 0) -> tuple[StridedArray, ...]:
    """``x.split(split_size_or_sections, dim)``. Semantics: ``torch.split``."""
    return from_array(x).split(split_size_or_sections, dim)


def chunk(x: Any, /, chunks: int, dim: int = 0) -> tuple[StridedArray, ...]:
    """``x.chunk(chunks, dim)``. Semantics: ``torch.chunk``."""
    return from_array(x).chunk(chunks, dim)


def unbind(x: Any, /, dim: int = 0) -> tuple[StridedArray, ...]:
    """``x.unbind(dim)``. Semantics: ``torch.unbind``."""
    return from_array(x).unbind(dim)


def contiguous(x: Any, /, memory_format: Any = memory_format_module.contiguous_format) -> StridedArray:
    """``x.contiguous(memory_format=...)``. Semantics: ``torch.Tensor.contiguous``."""
    return from_array(x).contiguous(memory_format=memory_format)


def clone(x: Any, /, memory_format: Any = memory_format_module.preserve_format) -> StridedArray:
    """``x.clone(memory_format=...)``: a copy over fresh storage. Semantics: ``torch.clone``."""
    return from_array(x).clone(memory_format=memory_format)


def _check_src_shape(src: Any, target: StridedArray, op: str) -> None:
    src_shape = tuple(np.shape(src))
    if src_shape != target.shape:
        raise LayoutError(
            f"{op}: expected src to have a size equal to the slice of input: src shape {src_shape}, "
            f"slice shape {target.shape} (layout {target.layout}). Give src exactly that shape."
        )


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
    _check_src_shape(src, target, op)
    values = jnp.asarray(src).astype(base.dtype)
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

    Raises:
      LayoutError: ``src`` shape differs from ``size``, bad size/stride/offset;
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

    Raises:
      LayoutError: ``step < 1`` or ``src`` shape differs from the slice's;
      OutOfRangeError: ``dim`` out of range.

    Semantics: ``torch.slice_scatter``."""
    def view_of(c: StridedArray) -> StridedArray:
        d = views.canonical_dim(dim, c.ndim, op="slice_scatter")
        return c[(slice(None),) * d + (slice(start, end, step),)]

    return _scatter_into(input, src, view_of, "slice_scatter")


def select_scatter(input: Any, src: Any, dim: int, index: int) -> StridedArray:
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (cast to ``input``'s
    dtype); the result keeps ``input``'s shape, strides and offset.

    Raises:
      OutOfRangeError: ``dim``/``index`` out of range; LayoutError: ``src`` shape mismatch.

    Semantics: ``torch.select_scatter``."""
    return _scatter_into(input, src, lambda c: c.select(dim, index), "select_scatter")


def diagonal_scatter(input: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> StridedArray:
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src`` (cast to
    ``input``'s dtype); the result keeps ``input``'s shape, strides and offset.

    Raises:
      OutOfRangeError: a dim out of range; LayoutError: ``dim1 == dim2`` or ``src`` shape
      mismatch.

    Semantics: ``torch.diagonal_scatter``."""
    return _scatter_into(input, src, lambda c: c.diagonal(offset, dim1, dim2), "diagonal_scatter")

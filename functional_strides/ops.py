"""Module-level view ops: ``fs.permute(x, (1, 0))`` is ``x.permute(1, 0)``.

Each function accepts a ``StridedArray`` or a JAX/NumPy array (viewed with
:func:`from_array`) and returns views over the same storage; see the ``StridedArray``
method of the same name for semantics, errors and the PyTorch function matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .strided import StridedArray, as_strided, from_array

__all__ = [
    "T", "as_strided", "broadcast_to", "chunk", "contiguous", "diagonal", "expand",
    "expand_as", "flatten", "movedim", "mT", "narrow", "permute", "reshape", "select",
    "split", "squeeze", "t", "transpose", "unbind", "unflatten", "unfold", "unsqueeze", "view",
]


def view(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    """``x.view(shape)``: a view or ``ViewError``. Semantics: ``torch.Tensor.view``."""
    return from_array(x).view(tuple(shape))


def reshape(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    """``x.reshape(shape)``: a view if possible, else a copy. Semantics: ``torch.reshape``."""
    return from_array(x).reshape(tuple(shape))


def flatten(x: Any, /, start_dim: int = 0, end_dim: int = -1) -> StridedArray:
    """``x.flatten(start_dim, end_dim)``. Semantics: ``torch.flatten``."""
    return from_array(x).flatten(start_dim, end_dim)


def unflatten(x: Any, /, dim: int, sizes: Sequence[Any]) -> StridedArray:
    """``x.unflatten(dim, sizes)``. Semantics: ``torch.unflatten``."""
    return from_array(x).unflatten(dim, sizes)


def permute(x: Any, /, dims: Sequence[Any]) -> StridedArray:
    """``x.permute(dims)``. Semantics: ``torch.permute``."""
    return from_array(x).permute(tuple(dims))


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


def squeeze(x: Any, /, dim: Any = None) -> StridedArray:
    """``x.squeeze(dim)``. Semantics: ``torch.squeeze``."""
    return from_array(x).squeeze(dim)


def unsqueeze(x: Any, /, dim: int) -> StridedArray:
    """``x.unsqueeze(dim)``. Semantics: ``torch.unsqueeze``."""
    return from_array(x).unsqueeze(dim)


def expand(x: Any, /, shape: Sequence[Any]) -> StridedArray:
    """``x.expand(shape)``. Semantics: ``torch.Tensor.expand``."""
    return from_array(x).expand(tuple(shape))


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


def contiguous(x: Any, /) -> StridedArray:
    """``x.contiguous()``. Semantics: ``torch.Tensor.contiguous``."""
    return from_array(x).contiguous()

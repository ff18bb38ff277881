"""The pytree registrations of ``Layout`` and ``StridedArray`` (their one home).

Shape and strides are static (the treedef); the offset is a leaf, whatever its type (a
Python int, a NumPy or JAX integer scalar, a tracer): the one leaf of a ``Layout``, and with
the storage one of the two leaves of a ``StridedArray`` (for a batched storage, one offset
per item, so that ``jax.vmap`` maps it with the storage). A view passed into ``jax.jit``
therefore compiles once per (shape, strides, storage shape and dtype): moving a window
never recompiles. ``Layout`` stays hashable (with an int offset), so it can also be a
static argument, which keys the compile on the offset too.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..core.layout import Layout, _trusted, is_traced
from .strided import StridedArray


def _layout_flatten_with_keys(layout: Layout):
    return ((jax.tree_util.GetAttrKey("offset"), layout.offset),), (layout.shape, layout.strides)


def _layout_flatten(layout: Layout):
    return (layout.offset,), (layout.shape, layout.strides)


def _layout_unflatten(aux, children) -> Layout:
    shape, strides = aux
    (offset,) = children
    return _trusted(shape, strides, offset)  # may hold tracers, batched offsets or placeholders


jax.tree_util.register_pytree_with_keys(Layout, _layout_flatten_with_keys, _layout_unflatten, _layout_flatten)


def _offset_leaf(x: StridedArray) -> Any:
    """The offset as a pytree leaf: for a batched storage, one offset per item (shape
    ``batch_shape``), so that ``jax.vmap`` maps it with the storage."""
    offset = x.layout.offset
    batch = getattr(x.storage, "shape", (None,))[:-1]
    if batch and jnp.ndim(offset) == 0 and not is_traced(offset):
        return np.broadcast_to(np.asarray(offset), batch)
    if batch and jnp.ndim(offset) == 0:
        return jnp.broadcast_to(offset, batch)
    return offset


def _flatten_with_keys(x: StridedArray):
    return ((jax.tree_util.GetAttrKey("storage"), x.storage),
            (jax.tree_util.GetAttrKey("offset"), _offset_leaf(x))), (x.layout.shape, x.layout.strides)


def _flatten(x: StridedArray):
    return (x.storage, _offset_leaf(x)), (x.layout.shape, x.layout.strides)


def _unflatten(aux: tuple[Any, ...], children) -> StridedArray:
    storage, offset = children
    return StridedArray._wrap(storage, _trusted(*aux, offset))


jax.tree_util.register_pytree_with_keys(StridedArray, _flatten_with_keys, _unflatten, _flatten)

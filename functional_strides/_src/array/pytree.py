"""The pytree registrations of ``Layout`` and ``StridedArray`` (their one home).

Shape and strides are static (the treedef); the offset is a leaf, whatever its type (a
Python int, a NumPy or JAX integer scalar, a tracer): the one leaf of a ``Layout``, and with
the storage one of the two leaves of a ``StridedArray`` (for a batched storage, one offset
per item, so that ``jax.vmap`` maps it with the storage). A view passed into ``jax.jit``
therefore compiles once per (shape, strides, storage shape and dtype): moving a window
never recompiles. ``Layout`` stays hashable (with an int offset), so it can also be a
static argument, which keys the compile on the offset too.

Both are registered for ``jax.export``'s serialization of pytrees too, so that they can be
the arguments and results of a serialized export (docs/export.md).
"""

from __future__ import annotations

import json
from typing import Any

import jax
import jax.export
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


def _unflatten(aux: tuple[Any, Any], children) -> StridedArray:
    storage, offset = children
    return StridedArray._wrap(storage, _trusted(*aux, offset))


jax.tree_util.register_pytree_with_keys(StridedArray, _flatten_with_keys, _unflatten, _flatten)


# -- jax.export: the treedefs of exported functions' arguments and results --------------------
# An exported function's calling convention (its in_tree and out_tree) is serialized with the
# artifact; a node of another type than JAX's own needs a registration, looked up by name when
# the artifact is deserialized (with this library imported). The auxiliary data of both types
# is (shape, strides): tuples of ints, stored as JSON.

def _serialize_aux(aux: tuple[tuple[int, ...], tuple[int, ...]]) -> bytes:
    shape, strides = aux
    return json.dumps([list(shape), list(strides)]).encode()


def _deserialize_aux(data: bytes) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape, strides = json.loads(data)
    return tuple(shape), tuple(strides)


jax.export.register_pytree_node_serialization(
    Layout, serialized_name="functional_strides.Layout",
    serialize_auxdata=_serialize_aux, deserialize_auxdata=_deserialize_aux)
jax.export.register_pytree_node_serialization(
    StridedArray, serialized_name="functional_strides.StridedArray",
    serialize_auxdata=_serialize_aux, deserialize_auxdata=_deserialize_aux)

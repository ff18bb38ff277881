"""The pytree registrations of ``Layout`` and ``StridedArray`` (their one home).

Shape and strides are static (the treedef). So is an offset that is a Python int (or a
NumPy integer), the convention of equinox and flax for Python ints: a model holding a view
has only the storage as a leaf, so ``jax.grad``, ``jax.tree.map`` steps, optax and
``nnx.Param`` see float leaves only. An offset that is an array (a JAX or NumPy array, a
tracer) is a leaf: the one leaf of a ``Layout``, and with the storage one of the two leaves
of a ``StridedArray`` (for a batched storage, one offset per item, so that ``jax.vmap`` maps
it with the storage). A view passed into ``jax.jit`` therefore compiles once per (shape,
strides, storage shape and dtype) and int offset: a window moved by an array offset
(``jnp.asarray(i)``) never recompiles. ``Layout`` stays hashable (with an int offset), so it
can also be a static argument.

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

# The auxiliary data of both types is (shape, strides, offset): the offset when it is static
# (a Python int), ``_LEAF`` when it is a leaf.
_LEAF = "leaf"


def _static_offset(layout: Layout) -> int | None:
    """The offset as static metadata: an int for a Python or NumPy integer, else None (a
    leaf). A layout unflattened from a treedef that holds its offset as a leaf keeps it a
    leaf, whatever was put there (``jax.tree.map`` building an axis spec puts ints), so that
    the tree keeps its structure."""
    offset = layout.offset
    if isinstance(offset, (int, np.integer)) and not isinstance(offset, bool) and not layout._offset_leaf:
        return int(offset)
    return None


def _layout_flatten_with_keys(layout: Layout):
    static = _static_offset(layout)
    if static is not None:
        return (), (layout.shape, layout.strides, static)
    return ((jax.tree_util.GetAttrKey("offset"), layout.offset),), (layout.shape, layout.strides, _LEAF)


def _layout_flatten(layout: Layout):
    static = _static_offset(layout)
    if static is not None:
        return (), (layout.shape, layout.strides, static)
    return (layout.offset,), (layout.shape, layout.strides, _LEAF)


def _layout_unflatten(aux, children) -> Layout:
    shape, strides, static = aux
    if static == _LEAF:  # may hold tracers, batched offsets or placeholders
        return _trusted(shape, strides, children[0], offset_leaf=True)
    return _trusted(shape, strides, static)


jax.tree_util.register_pytree_with_keys(Layout, _layout_flatten_with_keys, _layout_unflatten, _layout_flatten)


def _offset_leaf(x: StridedArray) -> Any:
    """An array offset as a pytree leaf: for a batched storage, one offset per item (shape
    ``batch_shape``), so that ``jax.vmap`` maps it with the storage."""
    offset = x.layout.offset
    batch = getattr(x.storage, "shape", (None,))[:-1]
    if not batch or not isinstance(offset, (jax.Array, np.ndarray)) or np.ndim(offset) != 0 \
            or np.dtype(offset.dtype).kind not in "iu":
        return offset  # per item already, or what a transform put in the leaf (None, an axis spec)
    if is_traced(offset):
        return jnp.broadcast_to(offset, batch)
    return np.broadcast_to(np.asarray(offset), batch)


def _flatten_with_keys(x: StridedArray):
    static = _static_offset(x.layout)
    storage = (jax.tree_util.GetAttrKey("storage"), x.storage)
    if static is not None:
        return (storage,), (x.layout.shape, x.layout.strides, static)
    return (storage, (jax.tree_util.GetAttrKey("offset"), _offset_leaf(x))), (
        x.layout.shape, x.layout.strides, _LEAF)


def _flatten(x: StridedArray):
    static = _static_offset(x.layout)
    if static is not None:
        return (x.storage,), (x.layout.shape, x.layout.strides, static)
    return (x.storage, _offset_leaf(x)), (x.layout.shape, x.layout.strides, _LEAF)


def _unflatten(aux: tuple[Any, ...], children) -> StridedArray:
    shape, strides, static = aux
    if static == _LEAF:
        storage, offset = children
        return StridedArray._wrap(storage, _trusted(shape, strides, offset, offset_leaf=True))
    return StridedArray._wrap(children[0], _trusted(shape, strides, static))


jax.tree_util.register_pytree_with_keys(StridedArray, _flatten_with_keys, _unflatten, _flatten)


# -- jax.export: the treedefs of exported functions' arguments and results --------------------
# An exported function's calling convention (its in_tree and out_tree) is serialized with the
# artifact; a node of another type than JAX's own needs a registration, looked up by name when
# the artifact is deserialized (with this library imported). The auxiliary data of both types
# is (shape, strides, offset): tuples of ints and an int or "leaf", stored as JSON.

def _serialize_aux(aux: tuple[tuple[int, ...], tuple[int, ...], int | str]) -> bytes:
    shape, strides, offset = aux
    return json.dumps([list(shape), list(strides), offset]).encode()


def _deserialize_aux(data: bytes) -> tuple[tuple[int, ...], tuple[int, ...], int | str]:
    shape, strides, offset = json.loads(data)
    return tuple(shape), tuple(strides), offset


jax.export.register_pytree_node_serialization(
    Layout, serialized_name="functional_strides.Layout",
    serialize_auxdata=_serialize_aux, deserialize_auxdata=_deserialize_aux)
jax.export.register_pytree_node_serialization(
    StridedArray, serialized_name="functional_strides.StridedArray",
    serialize_auxdata=_serialize_aux, deserialize_auxdata=_deserialize_aux)

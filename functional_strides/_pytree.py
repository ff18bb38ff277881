"""The only place where ``Layout`` meets JAX: its pytree registration.

Shape and strides are static (the treedef); the offset is the one leaf, whatever its type
(a Python int, a NumPy or JAX integer scalar, a tracer). A view passed into ``jax.jit``
therefore compiles once per (shape, strides, storage shape and dtype): moving a window
never recompiles. ``Layout`` stays hashable (with an int offset), so it can also be a
static argument, which keys the compile on the offset too.
"""

from __future__ import annotations

import jax

from ._layout import Layout, _trusted


def _flatten_with_keys(layout: Layout):
    return ((jax.tree_util.GetAttrKey("offset"), layout.offset),), (layout.shape, layout.strides)


def _flatten(layout: Layout):
    return (layout.offset,), (layout.shape, layout.strides)


def _unflatten(aux, children) -> Layout:
    shape, strides = aux
    (offset,) = children
    return _trusted(shape, strides, offset)  # may hold tracers, batched offsets or placeholders


jax.tree_util.register_pytree_with_keys(Layout, _flatten_with_keys, _unflatten, _flatten)

"""The only place where ``Layout`` meets JAX: its pytree registration.

Shape and strides are always static (treedef). An integer offset is static too, so equal
layouts share one ``jit`` cache entry; an offset that is a JAX scalar is the one leaf, so a
window moved by a traced amount never retraces.
"""

from __future__ import annotations

import jax

from .layout import Layout, _trusted

_DYNAMIC = "<dynamic offset>"


def _flatten_with_keys(layout: Layout):
    if layout.has_static_offset:
        return (), (layout.shape, layout.strides, layout.offset)
    return ((jax.tree_util.GetAttrKey("offset"), layout.offset),), (layout.shape, layout.strides, _DYNAMIC)


def _flatten(layout: Layout):
    children, aux = _flatten_with_keys(layout)
    return tuple(v for _, v in children), aux


def _unflatten(aux, children) -> Layout:
    shape, strides, offset = aux
    if offset == _DYNAMIC:
        (offset,) = children
    return _trusted(shape, strides, offset)  # may hold tracers or placeholders


jax.tree_util.register_pytree_with_keys(Layout, _flatten_with_keys, _unflatten, _flatten)

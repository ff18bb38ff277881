"""A multiplying scatter that JAX can differentiate when several updates share a slot.

``lax.scatter_mul`` has a derivative with respect to its updates only when its indices are
unique; a write with ``mode="mul"`` through an overlapping view (``unfold`` windows, rows of
a row scatter that overlap) multiplies several contributions into one storage slot. This
module wraps such a scatter in a ``jax.custom_jvp`` whose rule is the product rule:

``out[s] = storage[s] * prod_{k -> s} v_k``, so
``d out[s] = d storage[s] * prod_{k -> s} v_k + storage[s] * sum_{k -> s} d v_k * prod_{j -> s, j != k} v_j``.

The exclusive products ``prod_{j != k}`` are computed without dividing by the product (a
slot with one zero contribution gets a nonzero derivative for that zero, two zeros give
zero): the contributions are sorted by slot, a segmented prefix product and a segmented
suffix product are taken (``lax.associative_scan``), and their product is scattered back.
Every step is an ordinary differentiable JAX op, so the rule works under ``jit``, ``vmap``,
forward and reverse mode and to any order; the forward pass stays one ``scatter_mul``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["ScatterSpec", "exclusive_products", "product_scatter"]


class ScatterSpec(NamedTuple):
    """Static parameters of the scatter: ``row`` is ``None`` for a scatter of single
    elements (``indices`` has the shape of the updates), else the length of the rows whose
    starts ``indices`` holds (updates of shape ``indices.shape + (row,)``)."""

    row: int | None
    mode: lax.GatherScatterMode
    indices_are_sorted: bool


def _dnums(spec: ScatterSpec, ndim: int) -> lax.ScatterDimensionNumbers:
    if spec.row is None:
        return lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))
    return lax.ScatterDimensionNumbers(update_window_dims=(ndim - 1,), inserted_window_dims=(),
                                       scatter_dims_to_operand_dims=(0,))


def _element_indices(spec: ScatterSpec, indices: jax.Array, shape) -> jax.Array:
    """The storage slot of every update element (shape ``shape``)."""
    if spec.row is None:
        return indices
    return indices[..., None] + lax.broadcasted_iota(indices.dtype, shape, len(shape) - 1)


def _segment_products(flags: jax.Array, values: jax.Array) -> jax.Array:
    """Inclusive products along the last axis, restarting wherever ``flags`` is True."""
    def combine(a, b):  # a precedes b
        fa, va = a
        fb, vb = b
        return fa | fb, jnp.where(fb, vb, va * vb)
    return lax.associative_scan(combine, (flags, values), axis=flags.ndim - 1)[1]


def exclusive_products(slots: jax.Array, values: jax.Array) -> jax.Array:
    """``out[k] = prod_{j != k, slots[j] == slots[k]} values[j]``, without division.

    Args:
      slots: integer array of any shape (the slot each value goes to).
      values: array of the same shape.
    Returns:
      Array of the shape and dtype of ``values``; 1 where a value is alone in its slot.
    Example:
      >>> exclusive_products(jnp.array([0, 1, 0, 0]), jnp.array([2.0, 3.0, 0.0, 5.0])).tolist()
      [0.0, 1.0, 10.0, 0.0]
    """
    shape = values.shape
    slots, values = slots.reshape(-1), values.reshape(-1)
    m = values.shape[0]
    if m == 0:
        return values.reshape(shape)
    # the order inside a slot does not matter (products commute): an unstable sort will do
    s, perm = lax.sort((slots, lax.broadcasted_iota(slots.dtype, (m,), 0)), num_keys=1, is_stable=False)
    v = values.at[perm].get(mode="promise_in_bounds", unique_indices=True)
    new = s[1:] != s[:-1]
    starts = jnp.concatenate([jnp.ones((1,), bool), new])
    ends = jnp.concatenate([new, jnp.ones((1,), bool)])
    # prefix products (row 0) and, on the reversed order, suffix products (row 1) in one scan
    scanned = _segment_products(jnp.stack([starts, ends[::-1]]), jnp.stack([v, v[::-1]]))
    one = jnp.ones((1,), values.dtype)
    before = jnp.where(starts, 1, jnp.concatenate([one, scanned[0, :-1]]))
    after = jnp.where(ends, 1, jnp.concatenate([scanned[1, ::-1][1:], one]))
    excl = jnp.zeros_like(values).at[perm].set(before * after, unique_indices=True)
    return excl.reshape(shape)


def _scatter_mul(storage, indices, updates, spec: ScatterSpec):
    return lax.scatter_mul(storage, indices[..., None], updates, _dnums(spec, updates.ndim),
                           indices_are_sorted=spec.indices_are_sorted, unique_indices=False,
                           mode=spec.mode)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def product_scatter(storage: jax.Array, indices: jax.Array, updates: jax.Array,
                    spec: ScatterSpec) -> jax.Array:
    """``lax.scatter_mul`` of ``updates`` into ``storage`` at ``indices`` (slots may repeat),
    differentiable in ``storage`` and ``updates`` (the product rule, computed exactly).

    Args:
      storage: 1-D array (inexact dtype).
      indices: integer array: one slot per update (``spec.row is None``) or one row start
        per row of ``spec.row`` elements.
      updates: ``indices.shape`` (or ``indices.shape + (spec.row,)``), dtype of ``storage``.
      spec: the static :class:`ScatterSpec`.
    Returns:
      The new storage: each slot times every update written to it (out-of-range updates
      follow ``spec.mode``).
    Example:
      >>> spec = ScatterSpec(None, lax.GatherScatterMode.PROMISE_IN_BOUNDS, False)
      >>> f = lambda v: product_scatter(jnp.ones(2), jnp.array([0, 0, 1]), v, spec).sum()
      >>> jax.grad(f)(jnp.array([2.0, 3.0, 4.0])).tolist()
      [3.0, 2.0, 1.0]

    Semantics: ``torch.scatter_reduce(storage, 0, index, src, "prod", include_self=True)``
    and its autograd."""
    return _scatter_mul(storage, indices, updates, spec)


@product_scatter.defjvp
def _product_scatter_jvp(spec, primals, tangents):
    storage, indices, updates = primals
    d_storage, _, d_updates = tangents
    out = product_scatter(storage, indices, updates, spec)
    per_slot = product_scatter(jnp.ones_like(storage), indices, updates, spec)
    slots = _element_indices(spec, indices, updates.shape)
    others = exclusive_products(slots, updates)
    spread = lax.scatter_add(jnp.zeros_like(storage), slots[..., None], others * d_updates,
                             _dnums(ScatterSpec(None, spec.mode, False), slots.ndim),
                             unique_indices=False, mode=spec.mode)
    return out, d_storage * per_slot + storage * spread

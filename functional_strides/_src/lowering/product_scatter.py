"""The exclusive products of a multiplying write's product rule, for elements that share a slot.

A write with ``mode="mul"`` through an overlapping view (``unfold`` windows, rows of a row
scatter that overlap, stride-0 dims) multiplies several contributions into one storage slot:
``out[s] = storage[s] * prod_{k -> s} v_k``, so ``d out[s] = d storage[s] * prod_{k -> s} v_k
+ storage[s] * sum_{k -> s} d v_k * prod_{j -> s, j != k} v_j``; ``lax.scatter_mul``
differentiates only unique indices. The ``strided_write`` primitive's JVP
(``primitives.py``) takes the rule, and the exclusive products ``prod_{j != k}`` come from
here, computed without dividing by the product (a slot with one zero contribution gets a
nonzero derivative for that zero, two zeros give zero): the contributions are sorted by slot,
a segmented prefix product and a segmented suffix product are taken
(``lax.associative_scan``), and their product is put back in the elements' order. Every step
is an ordinary differentiable JAX op, so the rule works under ``jit``, ``vmap``, forward and
reverse mode and to any order.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["exclusive_products"]


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

"""Lowering: materialise a ``Layout`` over a 1-D storage as a dense JAX array.

Storage indices are generated inside the XLA graph from ``lax.broadcasted_iota`` (never
baked in as constants). Two entry points share that arithmetic:

* static strides (inside a user's ``jit``/``vmap``/``grad``): the layout is part of the
  trace, contiguous layouts lower to ``slice`` + ``reshape``, others to one ``gather``
  with ``indices_are_sorted``/``unique_indices`` set when provably true;
* eager use (concrete storage): strides and offset are passed as traced int arrays to a
  function compiled once per (output shape, storage shape, dtype), so a new layout of a
  known shape costs no XLA compile.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .errors import StorageError
from .layout import Layout
from .overlap import is_monotone, is_non_overlapping_sufficient

__all__ = ["index_dtype", "is_traced", "materialize", "storage_indices"]

_INT32_MAX = int(np.iinfo(np.int32).max)


def is_traced(x: object) -> bool:
    """True when ``x`` is a JAX tracer (we are inside ``jit``/``vmap``/``grad``)."""
    return isinstance(x, jax.core.Tracer)


def index_dtype(layout: Layout, storage_size: int) -> np.dtype:
    """int32 when every index fits, else int64 (needs ``jax_enable_x64``).

    Raises:
      StorageError: indices exceed int32 and x64 is disabled."""
    bound = max(storage_size, layout.required_storage_size if layout.has_static_offset else 0)
    if bound - 1 <= _INT32_MAX:
        return np.dtype(np.int32)
    if jax.config.jax_enable_x64:
        return np.dtype(np.int64)
    raise StorageError(
        f"materialize: layout {layout} over a storage of {storage_size} elements needs storage "
        f"indices up to {bound - 1}, past int32's {_INT32_MAX}. Enable 64-bit indices with "
        "jax.config.update('jax_enable_x64', True)."
    )


def storage_indices(shape, strides, offset, dtype) -> jax.Array:
    """``offset + sum_d iota_d * strides[d]`` of shape ``shape``, built in the graph.

    ``strides`` may be Python ints (static) or a traced int array; ``offset`` an int or a
    traced scalar."""
    idx = jnp.zeros(shape, dtype)
    static = isinstance(strides, tuple)
    for d in range(len(shape)):
        if shape[d] <= 1 or (static and strides[d] == 0):
            continue
        step = strides[d] if static else strides[d].astype(dtype)
        idx = idx + lax.broadcasted_iota(dtype, shape, d) * step
    return idx + jnp.asarray(offset, dtype)


_DNUMS = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))


def _gather(storage, idx, *, sorted_: bool, unique: bool, mode) -> jax.Array:
    return lax.gather(storage, idx[..., None], _DNUMS, slice_sizes=(1,), mode=mode,
                      indices_are_sorted=sorted_, unique_indices=unique)


def _static_materialize(storage: jax.Array, layout: Layout) -> jax.Array:
    dtype = index_dtype(layout, storage.shape[0])
    if not layout.has_static_offset:
        idx = storage_indices(layout.shape, layout.strides, layout.offset, dtype)
        return _gather(storage, idx, sorted_=is_monotone(layout),
                       unique=is_non_overlapping_sufficient(layout),
                       mode=lax.GatherScatterMode.FILL_OR_DROP)
    if layout.is_empty:
        return jnp.zeros(layout.shape, storage.dtype)
    if layout.is_contiguous():
        flat = lax.slice(storage, (layout.offset,), (layout.offset + layout.numel,))
        return flat.reshape(layout.shape)
    idx = storage_indices(layout.shape, layout.strides, layout.offset, dtype)
    return _gather(storage, idx, sorted_=is_monotone(layout),
                   unique=is_non_overlapping_sufficient(layout),
                   mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


@functools.partial(jax.jit, static_argnames=("shape",))
def _eager_gather(storage, strides, offset, *, shape):
    idx = storage_indices(shape, strides, offset, strides.dtype)
    return _gather(storage, idx, sorted_=False, unique=False,
                   mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


@functools.partial(jax.jit, static_argnames=("shape",))
def _eager_slice(storage, offset, *, shape):
    flat = lax.dynamic_slice(storage, (offset,), (math.prod(shape),))
    return flat.reshape(shape)


def materialize(storage: jax.Array, layout: Layout) -> jax.Array:
    """Dense row-major array of shape ``layout.shape``: ``out[i] = storage[layout(*i)]``.

    Args:
      storage: 1-D array of any dtype holding at least ``layout.required_storage_size``
        elements (checked by ``StridedArray``).
      layout: the view to read; a traced offset reads out-of-range elements as the gather
        fill value (NaN for inexact dtypes, the extreme value for integers, True for bool).
    Returns:
      A ``jax.Array`` of shape ``layout.shape`` and ``storage.dtype``.
    Raises:
      StorageError: indices exceed int32 and ``jax_enable_x64`` is off."""
    if is_traced(storage) or is_traced(layout.offset):
        return _static_materialize(storage, layout)
    dtype = index_dtype(layout, storage.shape[0])
    if layout.is_empty:
        return jnp.zeros(layout.shape, storage.dtype)
    offset = np.asarray(layout.offset, dtype)
    if layout.is_contiguous():
        return _eager_slice(storage, offset, shape=layout.shape)
    strides = np.asarray(layout.strides, dtype).reshape(len(layout.shape))
    return _eager_gather(storage, strides, offset, shape=layout.shape)

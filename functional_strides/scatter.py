"""Functional writes through views: the new storage an in-place PyTorch write would leave.

``write(storage, layout, src, mode=...)`` returns a new 1-D storage in which the elements
addressed by ``layout`` are replaced by (``"set"``) or combined with (``"add"``, ``"mul"``,
``"min"``, ``"max"``) the matching element of ``src``. Indices are generated in the graph
from iota, as for materialisation, and the write is one XLA scatter.

Where several elements of a view address one storage slot (an overlapping view):
``"add"``/``"mul"``/``"min"``/``"max"`` combine every contribution (``"add"`` is
overlap-add); ``"set"`` with ``overlap="last"`` keeps the element that comes last in
row-major order of the view, computed deterministically (a max-scatter picks each slot's
winning position, then only winners are written), never left to scatter order.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .errors import LayoutError, OverlapError
from .layout import Layout
from .lowering import index_dtype, is_traced, storage_indices
from . import overlap as _overlap
from .overlap import is_monotone

__all__ = ["MODES", "check_src", "write"]

MODES = ("set", "add", "mul", "min", "max")

_DNUMS = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
_SCATTER = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul,
            "min": lax.scatter_min, "max": lax.scatter_max}


def check_src(src: Any, layout: Layout, dtype: Any, *, op: str) -> jax.Array:
    """``src`` as an array of the storage ``dtype`` broadcast to ``layout.shape``.

    Raises:
      LayoutError: ``src`` does not broadcast to the view's shape, or its dtype cannot be
        cast to ``dtype`` without loss (jnp's ``.at[]`` rule: ``result_type(src, dtype)``
        must be ``dtype``; Python scalars are weakly typed)."""
    arr = src if isinstance(src, jax.Array) else None
    if arr is None:
        arr = jnp.asarray(src) if not isinstance(src, (int, float, complex, bool)) else src
    if jnp.result_type(arr, dtype) != jnp.dtype(dtype):
        src_dtype = getattr(arr, "dtype", type(arr).__name__)
        raise LayoutError(
            f"{op}: cannot cast src of dtype {src_dtype} to the storage dtype {jnp.dtype(dtype)} "
            f"without loss (the rule of jnp's .at[]: result_type(src, storage) must be the storage "
            f"dtype). Cast src explicitly, e.g. src.astype({jnp.dtype(dtype).name})."
        )
    arr = jnp.asarray(arr, dtype)
    try:
        return jnp.broadcast_to(arr, layout.shape)
    except ValueError:
        raise LayoutError(
            f"{op}: src of shape {tuple(arr.shape)} is not broadcastable to the view's shape "
            f"{layout.shape} (layout {layout}). Give src that shape, or one that broadcasts to it."
        ) from None


def _scatter(storage, idx, values, *, mode: str, last_wins: bool, unique: bool, sorted_: bool,
             drop_out_of_range: bool):
    gmode = (lax.GatherScatterMode.FILL_OR_DROP if drop_out_of_range or last_wins
             else lax.GatherScatterMode.PROMISE_IN_BOUNDS)
    if last_wins:
        # Each slot's winner is the largest row-major position writing to it.
        pos = jnp.arange(values.size, dtype=idx.dtype).reshape(values.shape)
        winner = lax.scatter_max(jnp.full(storage.shape, -1, idx.dtype), idx[..., None], pos, _DNUMS,
                                 mode=gmode)
        won = jnp.take(winner, idx, mode="fill", fill_value=-1) == pos
        idx = jnp.where(won, idx, jnp.asarray(storage.shape[0], idx.dtype))
        unique = False
    return _SCATTER[mode](storage, idx[..., None], values, _DNUMS, indices_are_sorted=sorted_ and not last_wins,
                          unique_indices=unique, mode=gmode)


@functools.partial(jax.jit, static_argnames=("shape", "mode", "last_wins", "unique"))
def _eager_write(storage, values, strides, offset, *, shape, mode, last_wins, unique):
    idx = storage_indices(shape, strides, offset, strides.dtype)
    return _scatter(storage, idx, values, mode=mode, last_wins=last_wins, unique=unique, sorted_=False,
                    drop_out_of_range=False)


def write(storage: jax.Array, layout: Layout, src: Any, *, mode: str = "set",
          overlap: str = "error", op: str = "set") -> jax.Array:
    """New storage after writing ``src`` through ``layout``.

    Args:
      storage: 1-D array (any dtype) that holds ``layout``.
      layout: the view written through; strides/offset in elements.
      src: values broadcastable to ``layout.shape``, castable to ``storage.dtype``.
      mode: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"`` (as ``jnp``'s ``.at[]``).
      overlap: for ``mode="set"`` through an internally overlapping view: ``"error"``
        (default) or ``"last"`` (the last element in row-major order wins).
    Returns:
      A new 1-D storage of the same shape and dtype.
    Raises:
      OverlapError: ``mode="set"``, ``overlap="error"`` and two elements of the view share a
        storage slot (the message names one such pair of coordinates).
      LayoutError: bad ``mode``/``overlap``, or ``src`` of a wrong shape or dtype.

    A traced offset drops writes that fall outside the storage."""
    if mode not in MODES:
        raise LayoutError(f"{op}: mode must be one of {MODES} (got mode={mode!r}).")
    if overlap not in ("error", "last"):
        raise LayoutError(f"{op}: overlap must be 'error' or 'last' (got overlap={overlap!r}).")
    values = check_src(src, layout, storage.dtype, op=op)
    if layout.is_empty:
        return storage
    witness = _overlap.internal_overlap_witness(layout)
    if witness is not None and mode == "set" and overlap == "error":
        a, b = witness
        raise OverlapError(
            f"{op}: the view {layout} has elements that share a storage slot (coordinates {a} and "
            f"{b} both address index {layout(*a)}), so a write through it is ambiguous. PyTorch "
            "refuses such writes to expanded tensors; pass overlap='last' to keep the last element "
            "in row-major order, use add() to accumulate, or write through a contiguous() copy."
        )
    last_wins = witness is not None and mode == "set"
    dtype = index_dtype(layout, storage.shape[0])
    if is_traced(storage) or is_traced(values) or not layout.has_static_offset:
        idx = storage_indices(layout.shape, layout.strides, layout.offset, dtype)
        return _scatter(storage, idx, values, mode=mode, last_wins=last_wins, unique=witness is None,
                        sorted_=is_monotone(layout), drop_out_of_range=not layout.has_static_offset)
    strides = np.asarray(layout.strides, dtype).reshape(layout.ndim)
    return _eager_write(storage, values, strides, np.asarray(layout.offset, dtype), shape=layout.shape,
                        mode=mode, last_wins=last_wins, unique=witness is None)

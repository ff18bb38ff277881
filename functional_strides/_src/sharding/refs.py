"""Reads and in-place writes through a view of a ``jax.Ref`` whose value lies across devices on
an explicit mesh (``jax.new_ref`` of a storage sharded ``P(axis)``: the sharding is in the ref's
type, ``Ref{float32[n@x]}``).

The single-device ref paths (:mod:`functional_strides._src.lowering.refs`) index the ref's
value with gathers, scatters and ``dynamic_update_slice``\\ s that JAX refuses on an explicitly
sharded operand (it asks for an ``out_sharding``, or for the update to be sharded as the
storage). Here a read is the sharded read of the ref's value (:mod:`.reads`: the plan of a
``jax.Array`` storage, the output typed as its plan says) and a write is ``ref[...] =`` the
sharded set of the new values (:mod:`.writes`), which XLA runs in place on each device's block.
Outside a trace, a program compiled once per shape and strides, the offset its argument (the
plan is that of a traced offset, as for an unsharded ref).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..core.errors import StorageError
from ..core.layout import Layout, check_in_storage, is_traced
from ..lowering import refs as _refs
from . import reads as _reads
from . import writes as _writes
from .plans import partition

__all__ = ["is_sharded_ref", "read", "update"]


def is_sharded_ref(ref: Any) -> bool:
    """Whether ``ref`` is a 1-D ``jax.Ref`` whose value is sharded over an explicit mesh axis
    (concrete or traced; inside ``jax.shard_map`` a ref is one device's: ``False``)."""
    if not _refs.is_ref(ref):
        return False
    part = partition(ref)
    return part is not None and part.explicit


def _update_traced(ref: Any, layout: Layout, fn: Callable[..., jax.Array], reads_old: bool,
                   operands: tuple[Any, ...]) -> None:
    storage = ref[...]
    old = _reads.read(storage, layout) if reads_old else None
    values = jnp.broadcast_to(fn(old, *operands), layout.shape).astype(storage.dtype)
    # the caller checked that the view does not overlap itself: "last" skips a second check
    ref[...] = _writes.write(storage, layout, values, mode="set", overlap="last", op="update")


@functools.partial(jax.jit, static_argnames=("shape", "strides", "fn", "reads_old"))
def _eager_update(ref, offset, operands, *, shape, strides, fn, reads_old):
    _update_traced(ref, Layout(shape, strides, offset), fn, reads_old, operands)


@functools.partial(jax.jit, static_argnames=("shape", "strides"))
def _eager_read(ref, offset, *, shape, strides):
    return _reads.read(ref[...], Layout(shape, strides, offset))


def update(ref: Any, layout: Layout, fn: Callable[..., jax.Array], operands: tuple[Any, ...] = (), *,
           reads_old: bool = True) -> None:
    """``ref[layout] = fn(old, *operands)`` in place, for a ref of :func:`is_sharded_ref`:
    the sharded read of the old values, the sharded set of the new ones.

    Args:
      ref: a 1-D ``jax.Ref`` sharded over an explicit mesh axis (concrete or traced).
      layout: a view of the ref that does not overlap itself (checked by the caller).
      fn: ``fn(old, *operands)`` -> values broadcastable to ``layout.shape``, cast to the
        ref's dtype; hashable (it keys the eager program's cache).
      operands: arrays passed to ``fn``.
      reads_old: whether ``fn`` reads the old values.
    Returns:
      ``None``; the ref holds the new values, its sharding unchanged.
    Raises:
      StorageError: a static offset and the view runs past the ref's end, or the view spans
        more elements than the ref holds.
    Example:
      On one device no ref is sharded (``tests/sharding/test_explicit_inputs.py`` runs 8):

      >>> is_sharded_ref(jax.new_ref(jnp.zeros(6)))
      False

    Semantics: ``torch.as_strided(ref, ...).copy_(fn(...))`` in place, as
    :func:`functional_strides._src.lowering.refs.update`."""
    n = ref.shape[-1]
    if layout.is_empty:
        return
    if (is_traced(ref) or is_traced(layout.offset) or _refs.tracing()
            or any(is_traced(x) for x in jax.tree_util.tree_leaves(operands))):
        _update_traced(ref, layout, fn, reads_old, operands)
        return
    check_in_storage("update", layout.shape, layout.strides, int(np.asarray(layout.offset)), n)
    static = {"shape": layout.shape, "strides": layout.strides, "fn": fn, "reads_old": reads_old}
    _refs._call_compiled(_eager_update, (ref, _refs._offset_operand(layout, n), operands), static,
                         lambda: None)


def read(ref: Any, layout: Layout) -> jax.Array:
    """The values of ``layout`` in a ref of :func:`is_sharded_ref` now, sharded as the
    sharded read of a ``jax.Array`` storage places them (docs/sharding.md).

    Raises:
      StorageError: a static offset and the view runs past the ref's end.
    Example:
      >>> is_sharded_ref(jnp.zeros(6))   # an array, not a ref
      False

    Semantics: ``torch.as_strided(ref, ...).contiguous()``."""
    n = ref.shape[-1]
    if is_traced(ref) or is_traced(layout.offset) or _refs.tracing():
        return _reads.read(ref[...], layout)
    check_in_storage("read", layout.shape, layout.strides, int(np.asarray(layout.offset)), n)
    if layout.is_empty:  # no element is read: the ref's shape, dtype and sharding place the zeros
        return _reads.read(ref, layout)
    if not isinstance(layout.offset, int) and np.ndim(layout.offset):
        raise StorageError(f"read: one offset per view, not {np.shape(layout.offset)} (layout {layout}).")
    return _refs._call_compiled(_eager_read, (ref, _refs._offset_operand(layout, n)),
                                {"shape": layout.shape, "strides": layout.strides}, lambda: None)

"""Writes through a view of one 1-D storage sharded across devices: the programs of
:func:`.plans.write_plan`.

The parts of the view along its dim 0 are written where they lie: each device writes its
part into ``[left halo, block, right halo]`` (slots the part leaves alone hold the mode's
identity, :func:`functional_strides._src.lowering.modes.identity`) and sends the halos'
updates back to their owners, which combine them in row-major order of the view. An add or
multiply of inexact values through a view whose elements share slots must reach each slot
one contribution at a time, in the view's row-major order, from the stored value on (as one
device does): the halos' stored values are fetched first, each device writes its part onto
its right halo's stored values and sends them on, writes its part again onto its block (its
start as the left neighbour left it), and adds its part onto its left neighbour's finished
block end, which it sends back (:func:`_ordered_body`). A write
through a permute of the whole storage is the read of ``src`` through the inverse permute
(:mod:`.reads`), combined with the storage where both lie. Anything else is the
single-device write, partitioned by XLA (under ``jax.sharding.auto_axes`` on an explicit mesh).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ..core.checks import check_choice
from ..core.config import config as _config
from ..core.errors import LayoutError
from ..core.layout import Layout, is_traced
from ..core.overlap import overlap as _overlap
from ..lowering.modes import MODES, combine, has_exact_identity, identity, storage_mode
from ..lowering.programs import PROGRAMS
from ..lowering.writes import WRITES, check_src, xla_write_plan
from ..lowering.writes import write as _write
from ..native import copy_kernel as _copy_kernel
from .plans import Partition, ShardedRead, partition, write_plan
from .reads import (
    _clamped_offset,
    _in_auto_axes,
    _part_layout,
    _read_traced,
    _static,
    _to,
    _transfer,
    _window,
    check_bounds,
)

__all__ = ["write", "write_program"]


def _received(moves: list[tuple[int, int, int]], total: int, part: Partition, *, at_end: bool) -> jax.Array:
    """Per device, which of the ``total`` slots of its :func:`_transfer` buffer hold data."""
    counts = [0] * part.devices
    for _, dst, k in moves:
        counts[dst] = k
    k = jnp.asarray(counts)[lax.axis_index(part.axis)]
    slots = lax.iota(jnp.int32, total)
    return slots >= total - k if at_end else slots < k


def _valid_rows(plan: ShardedRead, part: Partition, rows: int) -> jax.Array:
    """Per device, which rows of its part lie in the view (the padding rows do not)."""
    shape = plan.detail.shape
    per = shape[0]
    left = jnp.clip(rows - lax.axis_index(part.axis) * per, 0, per)
    return lax.broadcasted_iota(jnp.int32, shape, 0) < left


def _write_body(plan: ShardedRead, part: Partition, mode: str, method: str, rows: int, offset: Any = None):
    left, right, block, devices = max(plan.left), max(plan.right), plan.block, part.devices

    def body(local: jax.Array, src: jax.Array, *traced: jax.Array) -> jax.Array:
        lay = _part_layout(plan, part, traced[0] if traced else offset)
        kind = storage_mode(mode, local.dtype)
        exact = has_exact_identity(kind, local.dtype)
        src = jnp.broadcast_to(src, lay.shape)
        if plan.padded and exact:  # the padding rows combine to no change
            src = jnp.where(_valid_rows(plan, part, rows), src, identity(kind, local.dtype))
        if not left and not right and (exact or not plan.padded):  # every part in its own block
            return _write(local, lay, src, mode=mode, overlap="last", op=mode, method=method)
        size = left + block + right
        upd = _write(jnp.full((size,), identity(kind, local.dtype), local.dtype), lay, src, mode=mode,
                     overlap="last", op=mode, method=method)
        if not exact:  # which slots were written travels with the values (a set's, a complex product's)
            written = _valid_rows(plan, part, rows) if plan.padded else True
            mask = _write(jnp.zeros((size,), bool), lay, written, mode="max", overlap="last", op=mode)
            sent = jnp.stack([upd, mask.astype(upd.dtype)], axis=1)
        else:  # slots left at the identity combine to no change: values alone suffice
            sent = upd

        def apply(x: jax.Array, got: jax.Array, where: Any = True) -> jax.Array:
            if not exact:
                where, got = where & (got[:, 1] != 0), got[:, 0]
            return jnp.where(where, combine(kind, x, got), x)

        out = local
        if right:  # updates of the left neighbour's right halo, which lies at my block start
            moves = [(d, d + 1, plan.right[d]) for d in range(devices - 1)]
            got = _transfer(lambda k: sent[left + block:left + block + k], moves, right, part, at_end=False,
                            like=sent)
            out = out.at[:right].set(apply(out[:right], got, _received(moves, right, part, at_end=False)))
        out = apply(out, sent[left:left + block])
        if left:  # updates of the right neighbour's left halo, which lies at my block end
            moves = [(d, d - 1, plan.left[d]) for d in range(1, devices)]
            got = _transfer(lambda k: sent[left - k:left], moves, left, part, at_end=True, like=sent)
            received = _received(moves, left, part, at_end=True)
            out = out.at[block - left:].set(apply(out[block - left:], got, received))
        return out

    return body


def _ordered(layout: Layout, plan: ShardedRead, mode: str, dtype: Any) -> bool:
    """Whether the write must reach each slot one contribution at a time across devices: an
    add or multiply of inexact values (not associative) through a view whose elements share
    slots, with parts that reach into their neighbours' blocks."""
    kind = storage_mode(mode, dtype)
    return (kind in ("add", "mul") and jnp.issubdtype(dtype, jnp.inexact)
            and bool(max(plan.left) or max(plan.right)) and _overlap.write_check(layout) is not None)


def _ordered_body(plan: ShardedRead, part: Partition, mode: str, method: str, rows: int,
                  offset: Any = None):
    """The halo write of :func:`_ordered`: every slot gets its contributions in the view's
    row-major order, from its stored value on, as on one device. Parts are rows of the view in
    device order, so a slot at the start of device ``d``'s block gets device ``d - 1``'s
    contributions first (its right halo), then ``d``'s, then ``d + 1``'s (its left halo). Each
    slot's result depends only on its own start value and contributions, so a write over a
    buffer is right on the slots whose start values were right, whatever the others hold."""
    left, right, block, devices = max(plan.left), max(plan.right), plan.block, part.devices

    def body(local: jax.Array, src: jax.Array, *traced: jax.Array) -> jax.Array:
        lay = _part_layout(plan, part, traced[0] if traced else offset)
        kind = storage_mode(mode, local.dtype)
        src = jnp.broadcast_to(src, lay.shape)
        if plan.padded:  # the padding rows combine to no change (an exact identity: see _write_traced)
            src = jnp.where(_valid_rows(plan, part, rows), src, identity(kind, local.dtype))

        def put(buf: jax.Array) -> jax.Array:
            return _write(buf, lay, src, mode=mode, overlap="last", op=mode, method=method)

        ext = _window(local, plan, part)  # the halos' stored values
        if right:  # my contributions onto my right neighbour's block start, handed to it
            moves = [(d, d + 1, plan.right[d]) for d in range(devices - 1)]
            first = put(ext)
            got = _transfer(lambda k: first[left + block:left + block + k], moves, right, part,
                            at_end=False, like=first)
            start = jnp.where(_received(moves, right, part, at_end=False), got, ext[left:left + right])
            ext = ext.at[left:left + right].set(start)
        out = put(ext)[left:left + block]
        if left:  # my contributions onto my left neighbour's finished block end, handed back
            moves = [(d - 1, d, plan.left[d]) for d in range(1, devices)]
            end = _transfer(lambda k: out[block - k:], moves, left, part, at_end=True, like=out)
            last = put(ext.at[:left].set(end))
            back = [(d, d - 1, plan.left[d]) for d in range(1, devices)]
            got = _transfer(lambda k: last[left - k:left], back, left, part, at_end=True, like=last)
            received = _received(back, left, part, at_end=True)
            out = out.at[block - left:].set(jnp.where(received, got, out[block - left:]))
        return out

    return body


def _broadcasts(src: Any, shape: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(np.shape(src), shape)
    except ValueError:
        return False
    return len(np.shape(src)) <= len(shape)


def _check_src(src: Any, layout: Layout, dtype: Any, op: str) -> None:
    """The one check of what may be written (:func:`functional_strides._src.lowering.writes.check_src`),
    made on the shape and dtype alone (no device work for a valid ``src``)."""
    try:
        fits = jnp.result_type(src, dtype) == jnp.dtype(dtype) and _broadcasts(src, layout.shape)
    except (TypeError, ValueError, OverflowError):
        fits = False
    if not fits:
        check_src(src, layout.shape, dtype, op=op, layout=layout)  # raises the error of one device


def _partitioned(storage: jax.Array, layout: Layout, src: Any, plan: ShardedRead, part: Partition, *,
                 mode: str, overlap: str, op: str, method: str) -> jax.Array:
    if method == "auto" and not layout.is_empty:  # XLA's own ops: a custom call would gather the storage
        method = xla_write_plan(layout, storage.shape[0], mode)

    def run(lay: Layout, s: jax.Array, v: Any) -> jax.Array:
        return _write(s, lay, v, mode=mode, overlap=overlap, op=op, method=method)

    if part.explicit:  # the axes turn Auto inside: the partitioner places the scatter
        return _in_auto_axes(run, layout, plan.out_sharding, storage, jnp.asarray(src))
    return lax.with_sharding_constraint(run(layout, storage, src), plan.out_sharding)


def _inverse_write(storage: jax.Array, layout: Layout, src: Any, plan: ShardedRead, part: Partition,
                   mode: str) -> jax.Array:
    """A write through a permute of the whole storage: ``src`` read back into storage order
    through the inverse permute (one all-to-all), then combined with the storage in place."""
    inverse, read = plan.detail
    values = jnp.asarray(src, storage.dtype)
    if values.size == 1:  # one value for every slot: nothing to permute
        values = values.reshape(())
        return jnp.full_like(storage, values) if mode == "set" else combine(
            storage_mode(mode, storage.dtype), storage, jnp.broadcast_to(values, storage.shape))
    values = jnp.broadcast_to(values, layout.shape)
    blocks = part.sharding(P(part.axis))
    flat = _to(values.reshape(-1), blocks, part)
    moved = _read_traced(flat, inverse, read, part)
    return moved if mode == "set" else combine(storage_mode(mode, storage.dtype), storage, moved)


def _write_traced(storage: jax.Array, layout: Layout, src: Any, plan: ShardedRead, part: Partition, *,
                  mode: str, overlap: str, op: str, method: str) -> jax.Array:
    if plan.strategy == "partitioner":
        return _partitioned(storage, layout, src, plan, part, mode=mode, overlap=overlap, op=op,
                            method=method)
    if isinstance(plan.detail, tuple):
        return _inverse_write(storage, layout, src, plan, part, mode)
    ordered = _ordered(layout, plan, mode, storage.dtype)
    if ordered and plan.padded and not has_exact_identity(storage_mode(mode, storage.dtype), storage.dtype):
        # padding rows that share slots with the view's own, and no value that leaves a slot
        # alone (a complex product): the partitioner's single-device write keeps the order
        return _partitioned(storage, layout, src, plan, part, mode=mode, overlap=overlap, op=op,
                            method=method)
    make_body = _ordered_body if ordered else _write_body
    blocks = P(part.axis)
    if not part.explicit:
        storage = lax.with_sharding_constraint(storage, NamedSharding(part.mesh, blocks))
    src = jnp.asarray(src, storage.dtype)
    if src.ndim == layout.ndim and src.shape[0] == layout.shape[0] > 1:  # rows: each device gets its own
        if plan.padded:
            fill = identity(storage_mode(mode, storage.dtype), storage.dtype)
            src = jnp.concatenate([src, jnp.broadcast_to(fill, (plan.padded, *src.shape[1:]))])
        spec = P(part.axis, *([None] * (layout.ndim - 1)))
    else:  # the same values for every row: each device broadcasts them itself
        spec = P()
    src = _to(src, part.sharding(spec), part)
    offset = _clamped_offset(layout, storage.shape[0])
    args, specs = (storage, src), (blocks, spec)
    if is_traced(offset):
        body = make_body(plan, part, mode, method, layout.shape[0])
        args, specs = (*args, offset), (*specs, P())
    else:
        body = make_body(plan, part, mode, method, layout.shape[0], offset)
    return jax.shard_map(body, mesh=part.mesh, in_specs=specs, out_specs=blocks, check_vma=False)(*args)


def _setup(storage: Any, layout: Layout, src: Any, mode: str, overlap: str, op: str, method: str):
    part = partition(storage)
    if part is None:
        raise LayoutError(f"sharded write: the storage (shape {tuple(jnp.shape(storage))}) is not a 1-D "
                          "array sharded over more than one device; pass one placed with "
                          "jax.device_put(storage, NamedSharding(mesh, PartitionSpec(axis))).")
    check_choice(op, "mode", mode, MODES)
    check_choice(op, "overlap", overlap, ("error", "last"))
    WRITES.check_method(method, op)
    layout = _static(layout)
    check_bounds(op, layout, storage.shape[0])
    plan = write_plan(layout, storage.shape[0], part, mode=mode, overlap=overlap, dtype=storage.dtype)
    return part, layout, plan


def write(storage: Any, layout: Layout, src: Any, *, mode: str, overlap: str, op: str,
          method: str = "auto") -> jax.Array:
    """Write ``src`` through ``layout`` into a storage sharded across devices.

    The plan is :func:`write_plan`'s (the parts of the view along its dim 0 written where
    they lie, a permute of the whole storage by one all-to-all of ``src``, or JAX's SPMD
    partitioner); the new storage keeps the storage's sharding. Inside a user's ``jit`` the
    storage may be traced on an explicit mesh (its sharding is in its type).

    Args:
      storage: a 1-D ``jax.Array`` with a ``NamedSharding`` over its only axis (or a traced
        one whose type says so).
      layout: the view written through (elements; a traced offset is clamped into the
        storage, as on one device).
      src: broadcastable to ``layout.shape``; cast to the storage dtype.
      mode: as :func:`functional_strides.write`.
      overlap: as :func:`functional_strides.write`.
      op: as :func:`functional_strides.write`.
      method: the single-device write each device (or the partitioner) runs: ``"auto"`` or
        one of ``functional_strides.WRITE_METHODS``.
    Returns:
      The new storage (same shape, dtype and sharding).
    Raises:
      LayoutError: ``storage`` is not sharded over several devices; and the errors of
        :func:`functional_strides.write` (``OverlapError`` for ``"set"`` through an
        overlapping view with ``overlap="error"``, ``LayoutError`` for ``src`` that does
        not broadcast or cast); ``LayoutError`` for an unknown ``mode``, ``overlap`` or
        ``method``; ``StorageError`` for a view reaching outside the storage (either end),
        on every strategy, as on one device.
    Example:
      >>> import jax.numpy as jnp
      >>> write(jnp.zeros(4), Layout((2,), (2,)), 1.0, mode="add", overlap="error", op="add")
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: sharded write: the storage (shape (4,)) is not a 1-D array ...

    Semantics: :func:`functional_strides.write` (``jnp``'s ``.at[]``), placed as the storage."""
    part, layout, plan = _setup(storage, layout, src, mode, overlap, op, method)
    _check_src(src, layout, storage.dtype, op)
    if is_traced(storage) or is_traced(layout.offset) or is_traced(src):
        return _write_traced(storage, layout, src, plan, part, mode=mode, overlap=overlap, op=op,
                             method=method)
    return _write_program(layout, mode, overlap, op, method, plan, part)(storage, src)


def write_program(storage: Any, layout: Layout, *, mode: str = "set", overlap: str = "error",
                  op: str = "set", method: str = "auto") -> Any:
    """The jitted write ``f(storage, src) -> new storage`` that :func:`write` runs
    (``write_program(...).lower(storage, src)`` gives its HLO).

    Args:
      storage: a 1-D ``jax.Array`` with a ``NamedSharding`` over its only axis, on more than
        one device.
      layout: the view written through (elements; a concrete offset).
      mode: as :func:`write`.
      overlap: as :func:`write`.
      op: as :func:`write`.
      method: as :func:`write`.
    Returns:
      A ``jax.jit``-wrapped function ``f(storage, src) -> new storage`` (same shape, dtype
      and sharding), cached per layout, options, plan and partition.
    Raises:
      LayoutError: ``storage`` is not a 1-D array sharded over more than one device, or
        an unknown ``mode``/``overlap``/``method``.
      StorageError: a view reaching outside the storage (either end).
      When the returned function runs: the other errors listed under :func:`write`.
    Example:
      >>> import jax.numpy as jnp
      >>> write_program(jnp.zeros(8), Layout((2, 2), (1, 2)), mode="add", op="add")
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: sharded write: the storage (shape (8,)) is not a 1-D array ...

    Semantics: ``jax.jit`` of the write :func:`write` performs (``jnp``'s ``.at[]`` through
    the view), placed as the storage."""
    if is_traced(storage):
        raise LayoutError("sharded write: write_program takes a concrete storage; inside jit call write().")
    part, layout, plan = _setup(storage, layout, None, mode, overlap, op, method)
    return _write_program(layout, mode, overlap, op, method, plan, part)


def _write_program(layout: Layout, mode: str, overlap: str, op: str, method: str, plan: ShardedRead,
                   part: Partition) -> Any:
    """The jitted write, held by the package's bounded program cache (``lowering/programs.py``)."""
    native = _copy_kernel.enabled()  # fs.config's native_copy as it stands: part of the key

    def build() -> Any:
        def run(storage: jax.Array, src: Any) -> jax.Array:
            _check_src(src, layout, storage.dtype, op)
            with _config.using(native_copy=native):
                return _write_traced(storage, layout, src, plan, part, mode=mode, overlap=overlap, op=op,
                                     method=method)

        if part.explicit:  # the types carry the storage's sharding
            return jax.jit(run)
        return jax.jit(run, out_shardings=plan.out_sharding)

    return PROGRAMS.get(("sharded write", layout, mode, overlap, op, method, plan, part, native), build)

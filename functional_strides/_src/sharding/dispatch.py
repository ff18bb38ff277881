"""The one dispatch of reads and writes of a 1-D storage: to the sharded plans when the storage
lies across devices, else to the single-device lowering. ``fs.materialize``, ``fs.write``
and ``StridedArray`` (``contiguous()``, ``jnp.asarray``, ``x.at[...]``) all call it, so the
same values get the same program whichever entry point asks.

A storage lies across devices when :func:`.plans.partition` says so: a concrete array with a
``NamedSharding`` over its only axis, or, inside a user's ``jit``, a traced one whose type
holds that sharding (an explicit mesh). Inside ``jit`` on a mesh of ``Auto`` axes the type
cannot say (:func:`.plans.unknown_mesh`): then an ``out_sharding`` names the mesh axis, or a
:class:`.plans.ShardingWarning` says once per mesh that the single-device program runs.
Inside ``jax.shard_map`` the storage is one device's block: the single-device paths apply.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ..core.errors import LayoutTypeError
from ..core.layout import Layout, is_traced
from ..lowering import reads as _reads
from ..lowering import refs as _refs
from ..lowering import writes as _writes
from ..lowering.reads import check_operands
from . import reads as _sharded_reads
from . import refs as _sharded_refs
from . import writes as _sharded_writes
from .plans import partition, unknown_mesh, warn_unknown

__all__ = ["contiguous", "is_sharded", "materialize", "placed_like_batch", "read_ref", "update_ref", "write"]


def is_sharded(storage: Any) -> bool:
    """True when ``storage`` is a 1-D storage that lies across several devices (the sharded
    plans read and write it)."""
    return partition(storage) is not None


def placed_like_batch(values: jax.Array, storage: jax.Array, batch_ndim: int) -> jax.Array:
    """``values`` of shape ``(*batch, *view)`` sharded along the batch axes as a batched
    ``storage`` is, where its mesh is explicit (``jax.vmap`` maps both over the batch only when
    their types shard the batch alike); unchanged elsewhere."""
    sharding = _explicit_sharding(storage)
    if sharding is None:
        return values
    spec = P(*tuple(sharding.spec)[:batch_ndim], *([None] * (values.ndim - batch_ndim)))
    placed = None if is_traced(values) or is_traced(storage) else storage.sharding
    if isinstance(placed, NamedSharding):  # eagerly, outside any jax.set_mesh as well
        return jax.device_put(values, NamedSharding(placed.mesh, spec))
    return jax.sharding.reshard(values, NamedSharding(sharding.mesh, spec))


def placed_as(new: jax.Array, storage: jax.Array) -> jax.Array:
    """``new``, the storage a write left (the shape of ``storage``), placed as ``storage`` is:
    a ``"set"`` through a view of every slot (a permutation) reads nothing of the storage, so
    its result would otherwise follow the values' placement (replicated, for a scalar). A
    concrete storage's sharding is put back with ``jax.device_put``, a traced one's on an
    explicit mesh with ``jax.sharding.reshard``; elsewhere (an automatic mesh inside ``jit``)
    the partitioner places it, as the user's ``out_shardings`` ask."""
    if not is_traced(storage):
        sharding = getattr(storage, "sharding", None)
        if sharding is None or is_traced(new) or new.sharding.is_equivalent_to(sharding, new.ndim):
            return new
        return jax.device_put(new, sharding)
    want = _explicit_sharding(storage)
    if want is None or tuple(jax.typeof(new).sharding.spec) == tuple(want.spec):
        return new
    return jax.sharding.reshard(new, want)


def _explicit_sharding(x: Any) -> NamedSharding | None:
    """The sharding ``x``'s type carries on an explicit mesh (outside ``shard_map``'s manual
    axes), or None."""
    try:
        sharding = jax.typeof(x).sharding
    except TypeError:
        return None
    if (not isinstance(sharding, NamedSharding) or sharding.mesh.empty or not sharding.mesh.explicit_axes
            or sharding.mesh.manual_axes):
        return None
    return sharding


def _check_out_sharding(out_sharding: Any, layout: Layout) -> NamedSharding | None:
    """``out_sharding`` as a ``NamedSharding``: a bare ``PartitionSpec`` names the axes of the
    mesh set by ``jax.set_mesh``, as JAX's ``out_sharding=`` arguments take it."""
    if out_sharding is None or isinstance(out_sharding, NamedSharding):
        return out_sharding
    if isinstance(out_sharding, P):
        mesh = jax.sharding.get_mesh()
        if mesh is not None and not mesh.empty:
            return NamedSharding(mesh, out_sharding)
        raise LayoutTypeError(f"contiguous: out_sharding={out_sharding!r} is a PartitionSpec but no mesh "
                              f"is set (layout {layout}); pass NamedSharding(mesh, {out_sharding!r}), or "
                              "call inside jax.set_mesh(mesh).")
    raise LayoutTypeError(f"contiguous: out_sharding must be a jax.sharding.NamedSharding (or a "
                          f"PartitionSpec under jax.set_mesh), not {type(out_sharding).__name__} (got "
                          f"out_sharding={out_sharding!r}, layout {layout}); build one with "
                          "NamedSharding(mesh, PartitionSpec(...)).")


def _placed(values: jax.Array, out_sharding: NamedSharding) -> jax.Array:
    """Values of a storage on one device (or replicated), placed as ``out_sharding`` says."""
    if not is_traced(values):
        return jax.device_put(values, out_sharding)
    mesh = jax.typeof(values).sharding.mesh
    if not mesh.empty and mesh.explicit_axes:
        return jax.sharding.reshard(values, out_sharding)
    return lax.with_sharding_constraint(values, out_sharding)


def materialize(storage: Any, layout: Layout, *, method: str = "auto", out_sharding: Any = None) -> jax.Array:
    """Dense row-major array of shape ``layout.shape``: ``out[i] = storage[layout(*i)]``.

    A 1-D storage sharded across devices (a ``NamedSharding`` over its only axis; inside a
    user's ``jit``, one whose type says so, on an explicit mesh) is read so that each device
    receives only the elements its part of the output needs
    (:func:`functional_strides.sharded.read`, docs/sharding.md); any other storage is read by
    the single-device lowering (:func:`functional_strides.read_plan` names its path).

    Args:
      storage: 1-D array of any dtype holding at least ``layout.required_storage_size``
        elements.
      layout: the view to read (strides and offset in elements). A traced offset cannot be
        checked at trace time: it is clamped into ``[0, storage size - span - 1]``, as
        ``lax.dynamic_slice`` clamps; shape and strides are still checked (a view longer than
        the storage raises).
      method: ``"auto"`` (default: the path :func:`functional_strides.read_plan` names), or
        one of ``"structured"``, ``"slices"``, ``"row_gather"``, ``"gather"``,
        ``"strided_copy"`` (CPU; other platforms read by XLA ops) to force a path (for a
        sharded storage, the path each device's part is read by). Outside ``jit``, ``"auto"``
        uses a program compiled once per output shape (no compile per layout), while a
        forced method compiles once per layout.
      out_sharding: a ``jax.sharding.NamedSharding`` for the output (default: for a sharded
        storage, along the view's outermost dim the device count divides; else where the
        storage is). Inside ``jit`` on a mesh of ``Auto`` axes it also names the mesh axis the
        storage is sharded over, which the storage's type does not say.
    Returns:
      A ``jax.Array`` of shape ``layout.shape`` and ``storage.dtype``, placed as
      ``out_sharding`` says (on an explicit mesh, its type carries that sharding).
    Raises:
      StorageError: the layout addresses past the storage end (static offset), or the
        storage's indices exceed int32 while ``jax_enable_x64`` is off (on every path, so
        that whether a program runs never depends on which lowering was picked).
      LayoutError: ``method`` is unknown or does not apply to the layout (``"strided_copy"``
        where the extension is not built, or for a packed sub-byte dtype such as ``int4``);
        an ``out_sharding`` along a dim of a sharded storage's view that the device count
        does not divide.
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding``.
    Warns:
      ShardingWarning: inside ``jit``, a 1-D storage on a mesh of ``Auto`` axes and no
        ``out_sharding`` (once per mesh): its sharding is not in its type, so the
        single-device program runs (XLA may all-gather the storage).
    Example:
      >>> import jax.numpy as jnp
      >>> fs.materialize(jnp.arange(6), fs.Layout((3, 2), (1, 3))).tolist()
      [[0, 3], [1, 4], [2, 5]]

    Semantics: ``torch.Tensor.contiguous()`` of ``torch.as_strided(storage, shape, strides,
    offset)``; NumPy's ``np.ascontiguousarray(as_strided(...))`` with element strides; placed
    as ``jax.jit(..., out_shardings=out_sharding)`` places it."""
    check_operands("materialize", storage, layout)
    out_sharding = _check_out_sharding(out_sharding, layout)
    if partition(storage) is not None:
        return _sharded_reads.read(storage, layout, out_sharding, method=method)
    mesh = unknown_mesh(storage)
    if out_sharding is not None:
        if mesh is not None:  # the storage taken to be sharded over out_sharding's mesh axis
            return _sharded_reads.read(storage, layout, out_sharding, method=method)
        return _placed(_reads.materialize(storage, layout, method=method), out_sharding)
    if mesh is not None:
        warn_unknown(mesh, "materialize")
    return _reads.materialize(storage, layout, method=method)


def contiguous(storage: Any, layout: Layout, out_sharding: Any = None) -> tuple[jax.Array, Layout] | None:
    """``(new storage, layout)`` of ``contiguous()`` for a sharded storage, or where
    ``out_sharding`` is given: the values flattened (in blocks of the storage's mesh axis; a
    dim 0 the device count does not divide padded to a multiple of it, the padding at the
    storage's end) and the view's row-major layout over them. ``None`` for any other storage
    (the single-device copy applies)."""
    out_sharding = _check_out_sharding(out_sharding, layout)
    if partition(storage) is not None or (out_sharding is not None and unknown_mesh(storage) is not None):
        return _sharded_reads.contiguous(storage, layout, out_sharding)
    if out_sharding is None:
        return None
    values = _placed(_reads.materialize(storage, layout), out_sharding)
    if is_traced(values) and jax.typeof(values).sharding.mesh.explicit_axes:
        flat = jnp.reshape(values, (-1,), out_sharding=NamedSharding(
            out_sharding.mesh, P(out_sharding.spec[0]) if len(out_sharding.spec) else P()))
    else:
        flat = values.reshape(-1)
    return flat, Layout.contiguous(layout.shape)


def write(storage: jax.Array, layout: Layout, src: Any, *, mode: str = "set",
          overlap: str = "error", op: str = "write", method: str = "auto") -> jax.Array:
    """New storage after writing ``src`` through ``layout``.

    A 1-D storage sharded across devices (a ``NamedSharding`` over its only axis; inside a
    user's ``jit``, one whose type says so, on an explicit mesh) is written where its parts
    lie (:func:`functional_strides.sharded.write`, docs/sharding.md) and keeps its sharding;
    any other storage is written by the single-device lowering
    (:func:`functional_strides.write_plan` names its path).

    Args:
      storage: 1-D array (any dtype) that holds ``layout``.
      layout: the view written through; strides/offset in elements.
      src: values broadcastable to ``layout.shape``, castable to ``storage.dtype``.
      mode: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"`` (as ``jnp``'s ``.at[]``;
        on a bool storage ``"add"`` is a logical or and ``"mul"`` a logical and, as in PyTorch).
      overlap: for ``mode="set"`` through an internally overlapping view: ``"error"``
        (default) or ``"last"`` (the last element in row-major order wins).
      op: the name used in error messages (``"write"``; the methods of ``StridedArray`` pass
        theirs, e.g. ``"at[].add"``).
      method: ``"auto"`` (default: the path :func:`functional_strides.write_plan` names), or
        one of ``"block"``, ``"structured"``, ``"row_scatter"``, ``"scatter"``,
        ``"strided_copy"`` (CPU, modes ``"set"`` and ``"add"``) to force a path (for a
        sharded storage, the path each device's part is written by). Outside ``jit``,
        ``"auto"`` uses a scatter (a ``dynamic_update_slice`` for a contiguous view)
        compiled once per view shape (no compile per layout), while a forced method
        compiles once per layout.
    Returns:
      A new 1-D storage of the same shape, dtype (and sharding).
    Raises:
      OverlapError: ``mode="set"``, ``overlap="error"`` and two elements of the view share a
        storage slot (the message names one such pair of coordinates).
      LayoutError: bad ``mode``/``overlap``/``method`` (or a method that does not apply),
        or ``src`` of a wrong shape or dtype (or no number, or out of the dtype's range).
      StorageError: a static offset and the view runs past the storage end, or the storage's
        indices exceed int32 while ``jax_enable_x64`` is off.
    Warns:
      ShardingWarning: inside ``jit``, a 1-D storage on a mesh of ``Auto`` axes (once per
        mesh): its sharding is not in its type, so the single-device write runs.
    Example:
      >>> import jax.numpy as jnp
      >>> fs.write(jnp.zeros(6), fs.Layout((2, 2), (1, 3)), jnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
      [1.0, 3.0, 0.0, 2.0, 4.0, 0.0]

    A traced offset cannot be checked at trace time: it is clamped into ``[0, storage size -
    span - 1]`` as ``lax.dynamic_update_slice`` clamps (reads clamp the same way), and the
    window of ``span + 1`` elements it starts is written with the static plan of the view at
    offset 0.

    Semantics: ``torch.as_strided(storage, ...).copy_(src)`` (``add_``, ``mul_``, ...)
    functionalized; ``storage.at[layout.indices()].set(src)`` (``add``, ``mul``, ``min``,
    ``max``) in jnp, with ``"set"`` made deterministic for overlapping views."""
    check_operands(op, storage, layout)
    if partition(storage) is not None:
        return _sharded_writes.write(storage, layout, src, mode=mode, overlap=overlap, op=op, method=method)
    mesh = unknown_mesh(storage)
    if mesh is not None:
        warn_unknown(mesh, op)
    return _writes.write(storage, layout, src, mode=mode, overlap=overlap, op=op, method=method)


def read_ref(ref: Any, layout: Layout) -> jax.Array:
    """The values of ``layout`` in the 1-D ``jax.Ref`` ``ref`` now: by the sharded read where
    its value lies across devices on an explicit mesh (:mod:`.refs`), else by the ref paths of
    one device (:func:`functional_strides._src.lowering.refs.read`)."""
    if _sharded_refs.is_sharded_ref(ref):
        return _sharded_refs.read(ref, layout)
    return _refs.read(ref, layout)


def update_ref(ref: Any, layout: Layout, fn: Any, operands: tuple[Any, ...] = (), *,
               reads_old: bool = True) -> None:
    """``ref[layout] = fn(old, *operands)`` in place: by the sharded read and write where the
    ref's value lies across devices on an explicit mesh (:mod:`.refs`), else by the ref paths
    of one device (:func:`functional_strides._src.lowering.refs.update`)."""
    if _sharded_refs.is_sharded_ref(ref):
        _sharded_refs.update(ref, layout, fn, operands, reads_old=reads_old)
    else:
        _refs.update(ref, layout, fn, operands, reads_old=reads_old)

"""Reads of one 1-D storage sharded across devices: the programs of the plans of :mod:`.plans`.

Every plan runs inside a trace: a user's ``jit`` (the storage a tracer, on an explicit mesh
its sharding in its type), or the library's own ``jit`` around a concrete storage. The
``shard_map`` programs take the storage's mesh (a ``Mesh`` or the type's ``AbstractMesh``);
their outputs are typed by their ``out_specs`` on an explicit mesh. On a mesh of ``Auto``
axes the storage and the output are pinned with ``lax.with_sharding_constraint``; on an
explicit one, which refuses it, the output is moved with ``jax.sharding.reshard`` and the
partitioner's fallback runs under ``jax.sharding.auto_axes`` (so that the single-device
lowering never sees an explicit type).
"""

from __future__ import annotations

import math
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ..core.config import config as _config
from ..core.errors import LayoutError
from ..core.layout import Layout, check_in_storage, is_traced
from ..lowering.programs import PROGRAMS
from ..lowering.reads import READS, _check_span, materialize, xla_read_plan
from ..native import copy_kernel as _copy_kernel
from .plans import (
    Exchange,
    Partition,
    Parts,
    ShardedRead,
    _axis_size,
    partition,
    read_plan,
)

__all__ = ["contiguous", "program", "read"]


# -- moving elements between neighbours --------------------------------------------------------

def _transfer(piece: Any, moves: list[tuple[int, int, int]], total: int, part: Partition, *,
              at_end: bool, like: jax.Array) -> jax.Array:
    """Per device, ``total`` elements holding what it receives: ``moves`` lists
    ``(source, target, k)``, the ``k`` elements ``piece(k)`` of device ``source`` go to device
    ``target``, placed at the end (``at_end``) or the start of its buffer (zeros elsewhere).
    One ``ppermute`` when every move has ``k == total``, else one per move, so that exactly
    ``k`` elements cross each boundary."""
    moves = [m for m in moves if m[2]]
    if not moves:  # only a part past the storage end reaches out there: it reads zeros
        return jnp.zeros((total, *like.shape[1:]), like.dtype)
    if all(k == total for _, _, k in moves):
        return lax.ppermute(piece(total), part.axis, [(src, dst) for src, dst, _ in moves])
    me = lax.axis_index(part.axis)
    acc = None
    for src, dst, k in moves:
        got = lax.ppermute(piece(k), part.axis, [(src, dst)])
        pad = [(total - k, 0)] if at_end else [(0, total - k)]
        got = jnp.pad(got, pad + [(0, 0)] * (got.ndim - 1))
        acc = jnp.zeros_like(got) if acc is None else acc
        acc = jnp.where(me == dst, got, acc)
    assert acc is not None  # moves is not empty
    return acc


def _window(local: jax.Array, plan: ShardedRead, part: Partition) -> jax.Array:
    """``[left halo, block, right halo]``: the last ``plan.left[d]`` elements of the left
    neighbour's block and the first ``plan.right[d]`` of the right one's around device
    ``d``'s block (zeros where a device needs less than the widest halo)."""
    block, devices = local.shape[0], part.devices
    left, right = max(plan.left), max(plan.right)
    pieces = [local]
    if left:
        moves = [(d - 1, d, plan.left[d]) for d in range(1, devices)]
        pieces.insert(0, _transfer(lambda k: local[block - k:], moves, left, part, at_end=True, like=local))
    if right:
        moves = [(d + 1, d, plan.right[d]) for d in range(devices - 1)]
        pieces.append(_transfer(lambda k: local[:k], moves, right, part, at_end=False, like=local))
    return jnp.concatenate(pieces) if len(pieces) > 1 else local


def _clamped_offset(layout: Layout, n: int) -> Any:
    """The view's offset, a traced one clamped into the storage as on one device (the lowest
    index in ``[0, n - span - 1]``; :func:`functional_strides._src.lowering.reads.dynamic_window`)."""
    if not is_traced(layout.offset):
        return int(np.asarray(layout.offset))
    return jnp.clip(jnp.asarray(layout.offset), *layout.offset_bounds(n))


def _part_layout(plan: ShardedRead, part: Partition, offset: Any) -> Layout:
    """Device ``d``'s part (inside ``shard_map``), its offset inside the window, which starts
    at storage index ``d*B - max(left)``."""
    parts: Parts = plan.detail
    block, devices = plan.block, part.devices
    local = offset + max(plan.left)
    shifts = np.asarray(parts.starts) - np.arange(devices) * block
    if shifts.any():
        step = parts.starts[1] - parts.starts[0] if devices > 1 else 0
        d = lax.axis_index(part.axis)
        if all(s == k * (step - block) for k, s in enumerate(shifts.tolist())):  # parts a fixed step apart
            local = local + d * (step - block)
        else:
            local = local + jnp.asarray(shifts, jnp.int32 if abs(shifts).max() < 2**31 else jnp.int64)[d]
    return Layout(parts.shape, parts.strides, local)


def _parts_spec(plan: ShardedRead, part: Partition) -> Any:
    if plan.flat:
        return P(part.axis)
    return P(*([None] * plan.detail.dim), part.axis)


def _halo_body(plan: ShardedRead, part: Partition, method: str, offset: Any = None):
    def body(local: jax.Array, *traced: jax.Array) -> jax.Array:
        at = traced[0] if traced else offset
        out = materialize(_window(local, plan, part), _part_layout(plan, part, at), method=method)
        return out.reshape(-1) if plan.flat else out

    return body


def _rounds(ex: Exchange, devices: int) -> list[tuple[list[int], list[int], list[int], list[bool]]]:
    """For an exchange between devices that share digits: per round, per device, which piece
    it sends (``send``), to whom (``to``), where the piece it receives goes (``place``) and
    whether it is its own (``own``)."""
    src_axes = list(range(ex.src))
    shared = [a for a in src_axes if a in ex.tgt]
    only = [a for a in src_axes if a not in ex.tgt]
    t_local = [t for t in ex.tgt if t >= ex.src]
    g = ex.rounds
    out = []
    for r in range(g):
        send, to, place, own = [0] * devices, [0] * devices, [0] * devices, [False] * devices
        for d in range(devices):
            digits = dict(zip(src_axes, np.unravel_index(d, ex.grid[:ex.src]), strict=True))
            i = int(np.ravel_multi_index([digits[a] for a in only], [ex.grid[a] for a in only])
                    if only else 0)
            j = (i + r) % g
            tdigits = dict(zip(t_local, np.unravel_index(j, [ex.grid[a] for a in t_local]), strict=True))
            c = int(np.ravel_multi_index([digits[a] if a in shared else tdigits[a] for a in ex.tgt],
                                         [ex.grid[a] for a in ex.tgt]))
            send[d], to[d] = j, c
            place[c], own[c] = i, c == d
        out.append((send, to, place, own))
    return out


def _exchange_body(plan: ShardedRead, part: Partition):
    ex: Exchange = plan.detail
    grid, src = ex.grid, ex.src
    t_local = [t for t in ex.tgt if t >= src]
    rest = [a for a in range(src, len(grid)) if a not in t_local]
    only = [a for a in range(src) if a not in ex.tgt]
    have = only + rest
    order = [a for axes in ex.out for a in axes if a not in ex.tgt]

    def body(local: jax.Array) -> jax.Array:
        x = local.reshape(grid[src:])
        x = jnp.transpose(x, [a - src for a in t_local + rest])
        x = x.reshape((math.prod(grid[a] for a in t_local), *(grid[a] for a in rest)))
        if not set(ex.tgt) & set(range(src)):  # every device holds a piece of every part
            y = lax.all_to_all(x, part.axis, 0, 0, tiled=True)
        else:
            me = lax.axis_index(part.axis)
            y = jnp.zeros_like(x)
            for send, to, place, own in _rounds(ex, part.devices):
                piece = lax.dynamic_index_in_dim(x, jnp.asarray(send, jnp.int32)[me], 0, keepdims=False)
                pairs = [(d, c) for d, c in enumerate(to) if d != c]
                got = lax.ppermute(piece, part.axis, pairs) if pairs else piece
                if pairs and any(own):
                    got = jnp.where(jnp.asarray(own)[me], piece, got)
                y = lax.dynamic_update_index_in_dim(y, got, jnp.asarray(place, jnp.int32)[me], 0)
        y = y.reshape([grid[a] for a in have])
        y = jnp.transpose(y, [have.index(a) for a in order]).reshape(ex.part_shape)
        return y.reshape(-1) if plan.flat else y

    return body


def _to(x: jax.Array, sharding: NamedSharding, part: Partition) -> jax.Array:
    """``x`` placed as ``sharding`` says: ``reshard`` on an explicit mesh (the type changes),
    a sharding constraint on an ``Auto`` one."""
    if part.explicit:
        return jax.sharding.reshard(x, sharding)
    return lax.with_sharding_constraint(x, sharding)


def _partitioned(storage: jax.Array, layout: Layout, plan: ShardedRead, part: Partition,
                 method: str) -> jax.Array:
    """The single-device read, partitioned by XLA, its output placed as ``plan`` says."""
    if method == "auto":
        # XLA partitions strided slices, reshapes and transposes but all-gathers the operand of
        # any gather, or of the strided copy's custom call: then one element gather holds the
        # least per device
        method = "auto" if layout.is_empty else (
            "structured" if xla_read_plan(layout) == "structured" else "gather")
    spec = plan.out_sharding.spec

    def run(lay: Layout, s: jax.Array) -> jax.Array:
        out = materialize(s, lay, method=method)
        out = out.reshape(-1) if plan.flat else out
        return lax.with_sharding_constraint(out, spec if part.explicit else plan.out_sharding)

    if part.explicit:  # the axes turn Auto inside: the partitioner places the output
        return _in_auto_axes(run, layout, plan.out_sharding, storage)
    return run(layout, storage)


def _in_auto_axes(run: Any, layout: Layout, out_sharding: NamedSharding, *args: Any) -> jax.Array:
    """``run(layout, *args)`` under ``jax.sharding.auto_axes`` (the mesh's axes Auto inside),
    its output typed ``out_sharding``. A traced offset goes in as an argument, so that it
    is cast to the Auto mesh with the others: captured from outside it keeps its explicit
    type, and the first op on it inside fails JAX's check that the meshes match."""
    wrap = cast(Any, jax.sharding.auto_axes)
    if not is_traced(layout.offset):
        return wrap(lambda *a: run(layout, *a), out_sharding=out_sharding)(*args)

    def inner(offset: jax.Array, *a: Any) -> jax.Array:
        return run(Layout(layout.shape, layout.strides, offset), *a)

    return wrap(inner, out_sharding=out_sharding)(jnp.asarray(layout.offset), *args)


def _read_traced(storage: jax.Array, layout: Layout, plan: ShardedRead, part: Partition,
                 method: str = "auto") -> jax.Array:
    """The read inside a trace (``storage`` may be a tracer); output placed as ``plan`` says."""
    if plan.strategy == "partitioner":
        return _partitioned(storage, layout, plan, part, method)
    rows = P(part.axis)
    if not part.explicit:
        storage = lax.with_sharding_constraint(storage, NamedSharding(part.mesh, rows))
    if isinstance(plan.detail, Exchange):
        return jax.shard_map(_exchange_body(plan, part), mesh=part.mesh, in_specs=rows,
                             out_specs=P(part.axis) if plan.flat else plan.out_sharding.spec,
                             check_vma=False)(storage)
    offset = _clamped_offset(layout, storage.shape[0])
    spec = _parts_spec(plan, part)
    if is_traced(offset):
        out = jax.shard_map(_halo_body(plan, part, method), mesh=part.mesh, in_specs=(rows, P()),
                            out_specs=spec, check_vma=False)(storage, offset)
    else:
        out = jax.shard_map(_halo_body(plan, part, method, offset), mesh=part.mesh, in_specs=rows,
                            out_specs=spec, check_vma=False)(storage)
    if plan.flat or (not plan.padded and spec == plan.out_sharding.spec):
        return out
    out = _to(out, plan.out_sharding, part)  # along the asked dim (one all-to-all), then the padding cut
    if plan.padded:
        out = out[: layout.shape[0]]
        out = out if part.explicit else lax.with_sharding_constraint(out, plan.out_sharding)
    return out


def _flatten(values: jax.Array, plan: ShardedRead, part: Partition) -> jax.Array:
    """Values sharded along an inner dim (or another axis), flattened: in blocks of the
    storage's mesh axis where the device count divides them (the values are re-blocked)."""
    if plan.flat:
        return values
    if not part.explicit:
        return values.reshape(-1)
    spec = P(part.axis) if values.size % part.devices == 0 and plan.out_sharding.spec != P() else P()
    return jnp.reshape(values, (-1,), out_sharding=NamedSharding(part.mesh, spec))


def _program(layout: Layout, plan: ShardedRead, part: Partition, method: str, flatten: bool) -> Any:
    """The jitted read, held by the package's bounded program cache (``lowering/programs.py``)."""
    native = _copy_kernel.enabled()  # fs.config's native_copy as it stands: part of the key

    def build() -> Any:
        def run(storage: jax.Array) -> jax.Array:
            with _config.using(native_copy=native):
                out = _read_traced(storage, layout, plan, part, method)
            return _flatten(out, plan, part) if flatten else out

        if part.explicit:  # the types carry the output's sharding
            return jax.jit(run)
        if flatten and not plan.flat:
            return jax.jit(run, out_shardings=plan.out_sharding if plan.out_sharding.spec == P() else None)
        return jax.jit(run, out_shardings=plan.out_sharding)

    return PROGRAMS.get(("sharded read", layout, plan, part, method, flatten, native), build)


def _static(layout: Layout) -> Layout:
    if is_traced(layout.offset) or isinstance(layout.offset, int):
        return layout
    return Layout(layout.shape, layout.strides, int(np.asarray(layout.offset)))


def check_bounds(op: str, layout: Layout, n: int) -> None:
    """The one bounds check (both ends) for a view with a known offset; a traced offset is
    clamped where it is read, as on one device (a view longer than the storage is refused)."""
    if not is_traced(layout.offset):
        check_in_storage(op, layout.shape, layout.strides, layout.offset, n)
    elif not layout.is_empty:
        _check_span(layout, n)


def _not_sharded(what: str, storage: Any) -> LayoutError:
    return LayoutError(f"sharded {what}: the storage (shape {tuple(jnp.shape(storage))}) is not a 1-D "
                       "array sharded over more than one device; pass one placed with "
                       "jax.device_put(storage, NamedSharding(mesh, PartitionSpec(axis))).")


def _traced_partition(storage: Any, layout: Layout, out_sharding: Any) -> Partition:
    """Inside ``jit`` on an ``Auto`` mesh: the storage taken to be sharded over the mesh axis
    ``out_sharding`` shards the output over."""
    spec = getattr(out_sharding, "spec", ())
    axes = [entry for entry in spec if entry is not None]
    if not isinstance(out_sharding, NamedSharding) or len(axes) != 1:
        raise LayoutError(
            f"contiguous: inside jit the storage's sharding is not known; pass out_sharding, a "
            f"NamedSharding that shards one dim of the output over one mesh axis (got "
            f"out_sharding={out_sharding!r}, layout {layout}), or put the storage on an explicit mesh "
            "(jax.make_mesh(..., axis_types=(AxisType.Explicit,))), whose sharding is in its type.")
    part = Partition(out_sharding.mesh, axes[0], _axis_size(out_sharding.mesh, axes[0]))
    if storage.shape[0] % part.devices:
        raise LayoutError(f"contiguous: a storage of {storage.shape[0]} elements does not split into "
                          f"{part.devices} equal blocks over mesh axis {axes[0]!r} (layout {layout}); "
                          "pad the storage to a multiple of the device count.")
    return part


def _setup(storage: Any, layout: Layout, out_sharding: Any, flat: bool, method: str):
    READS.check_method(method)
    part = partition(storage)
    if part is None:
        if not is_traced(storage):
            raise _not_sharded("read", storage)
        part = _traced_partition(storage, layout, out_sharding)
    layout = _static(layout)
    check_bounds("sharded read", layout, storage.shape[0])
    plan = read_plan(layout, storage.shape[0], part, out_sharding, flat=flat)
    if not plan.flat and plan.dim is not None and layout.shape[plan.dim] % part.devices:
        raise LayoutError(
            f"sharded read: the output of shape {layout.shape} cannot be sharded along dim {plan.dim} over "
            f"{part.devices} devices ({layout.shape[plan.dim]} does not split evenly, and JAX shards evenly; "
            f"out_sharding={out_sharding!r}). Shard another dim, or call contiguous(), whose storage "
            "keeps the rows padded to a multiple of the device count.")
    return part, layout, plan


def program(storage: Any, layout: Layout, out_sharding: Any = None, *, flat: bool = False,
            method: str = "auto") -> Any:
    """The jitted read of ``layout`` from the sharded ``storage`` (``program(...).lower(storage)``
    gives its HLO); ``flat=True`` returns the values flattened (``contiguous()``'s storage).

    Args:
      storage: a 1-D ``jax.Array`` of ``n`` elements with a ``NamedSharding`` over its only
        axis, on more than one device.
      layout: the view (elements; a concrete offset).
      out_sharding: the output's ``NamedSharding`` (default: :func:`default_out_sharding`;
        for ``flat``, blocks of the flattened values).
      flat: the program returns the values flattened to 1-D (a dim 0 the device count does
        not divide is padded to a multiple of it: see :func:`read`).
      method: the single-device lowering each device (or the partitioner) runs:
        ``"auto"`` or one of ``functional_strides.READ_METHODS``.
    Returns:
      A ``jax.jit``-wrapped function ``f(storage) -> values`` of ``layout.shape`` (or 1-D),
      cached per layout, plan and partition; the same program as :func:`read`.
    Raises:
      LayoutError: ``storage`` is not a 1-D array sharded over more than one device; an
        unknown ``method``; an ``out_sharding`` along a dim 0 the device count does not divide.
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding``.
      StorageError: a view with a concrete offset reaching outside the storage (either
        end, as on one device).
    Example:
      >>> import jax.numpy as jnp
      >>> program(jnp.zeros(8), Layout((2, 2), (1, 2)))       # one device: nothing to partition
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: sharded read: the storage (shape (8,)) is not a 1-D array ...

    Semantics: ``jax.jit`` of the read :func:`read` performs (``torch.as_strided`` values),
    placed as its plan says."""
    if is_traced(storage) or partition(storage) is None:
        raise _not_sharded("read", storage)
    part, layout, plan = _setup(storage, layout, out_sharding, flat, method)
    return _program(layout, plan, part, method, flat)


def read(storage: Any, layout: Layout, out_sharding: Any = None, *, flat: bool = False,
         method: str = "auto") -> jax.Array:
    """The values of ``layout`` over a storage sharded across devices, sharded as asked.

    Args:
      storage: a 1-D ``jax.Array`` of ``n`` elements with a ``NamedSharding`` over its only
        axis; inside ``jit``, a traced one on an explicit mesh (its sharding is in its type),
        or on a mesh of ``Auto`` axes with ``out_sharding`` given (the storage is then taken to
        be sharded over the mesh axis ``out_sharding`` uses).
      layout: the view (elements; a traced offset is clamped into the storage, as on one device).
      out_sharding: the output's ``NamedSharding``; default: along the view's outermost dim
        the device count divides (replicated when none does).
      flat: return the values flattened to 1-D, in blocks (as ``contiguous()`` stores them).
        A dim 0 the device count does not divide is then padded to a multiple of it (the
        last device's part is shorter in the view): the result holds those rows too, at its
        end (:meth:`StridedArray.contiguous <functional_strides.StridedArray.contiguous>` returns
        the view's layout over it).
      method: the single-device lowering each device (or the partitioner) runs:
        ``"auto"`` or one of ``functional_strides.READ_METHODS``.
    Returns:
      A ``jax.Array`` of ``layout.shape`` (1-D when ``flat``) and the storage dtype.
    Raises:
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding``.
      LayoutError: a concrete storage not sharded over more than one device; a traced
        storage whose sharding is not in its type, without an ``out_sharding`` that shards one
        dim over one mesh axis, or whose length that axis's device count does not divide; an
        ``out_sharding`` along a dim 0 the device count does not divide; an unknown ``method``.
      StorageError: a view with a concrete offset reaching outside the storage (either
        end, as on one device), or a traced one longer than the storage.
    Example:
      >>> import jax, jax.numpy as jnp, numpy as np
      >>> from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      >>> rows = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("x",)), P("x"))
      >>> jax.jit(lambda s: read(s, Layout((3, 4), (2, 1)), rows))(jnp.arange(8.0)).tolist()
      [[0.0, 1.0, 2.0, 3.0], [2.0, 3.0, 4.0, 5.0], [4.0, 5.0, 6.0, 7.0]]

    Semantics: the values of ``torch.as_strided(storage, layout.shape, layout.strides,
    layout.offset)`` (as :func:`functional_strides.materialize`), placed as
    ``jax.jit(..., out_shardings=out_sharding)`` places them."""
    part, layout, plan = _setup(storage, layout, out_sharding, flat, method)
    if is_traced(storage) or is_traced(layout.offset):
        out = _read_traced(storage, layout, plan, part, method)
        return _flatten(out, plan, part) if flat else out
    if layout.is_empty:
        # placed from the host: a program's empty output comes back with every device holding
        # the whole (empty) shape, which an array sharded along a dim of extent > 0 refuses
        # when it is read back (np.asarray), though its type is right
        blocks = flat and plan.out_sharding.spec != P()  # as _flatten places 0 elements
        sharding = part.sharding(P(part.axis)) if blocks else plan.out_sharding
        return jax.device_put(np.zeros((0,) if flat else layout.shape, storage.dtype), sharding)
    return _program(layout, plan, part, method, flat)(storage)


def contiguous(storage: Any, layout: Layout, out_sharding: Any = None, *, method: str = "auto"
               ) -> tuple[jax.Array, Layout]:
    """``(flat storage, layout)`` of ``contiguous()`` for a sharded storage: the values
    flattened in blocks (:func:`read` with ``flat=True``) and the view's row-major layout
    over them (which leaves out the padding rows at the storage's end)."""
    flat = read(storage, layout, out_sharding, flat=True, method=method)
    return flat, Layout.contiguous(layout.shape)

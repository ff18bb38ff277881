"""The implementation of :mod:`functional_strides.sharded` (its public names are documented there)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ..core.checks import check_choice
from ..core.config import config as _config
from ..core.errors import LayoutError, LayoutTypeError
from ..core.layout import Layout, check_in_storage, is_traced
from ..lowering.reads import materialize, xla_read_plan
from ..lowering.writes import MODES
from ..lowering.writes import write as _write
from ..native import copy_kernel as _copy_kernel
from .collectives import Collective, collectives

__all__ = ["Collective", "Partition", "ShardedRead", "collectives", "default_out_sharding", "partition",
           "program", "read", "read_plan", "read_report", "write", "write_plan", "write_program"]


@dataclasses.dataclass(frozen=True)
class Partition:
    """How a 1-D storage lies on devices: ``mesh``, the mesh axis (a name or a tuple of
    names) its only axis is sharded over, and ``devices``, the number of blocks.

    A storage of ``n`` elements lies in ``devices`` blocks of ``n // devices`` consecutive
    elements, block ``d`` on the ``d``-th device along ``axis``. :func:`partition` reads one
    from a sharded storage; the planners (:func:`read_plan`, :func:`write_plan`) take one,
    so plans can be computed for any device count (the example plans for 8 devices on a
    1-device mesh).

    Attributes:
      mesh: the ``jax.sharding.Mesh`` of the storage's ``NamedSharding``.
      axis: the mesh axis name (or tuple of names) of the storage's ``PartitionSpec``.
      devices: the number of blocks (the product of those mesh axes' sizes), an int.
    Raises:
      Nothing: a frozen record; its fields are not checked (``axis`` must name an axis of
      ``mesh`` for the shardings built from it, and ``devices`` must divide the storage).
    Example:
      >>> import jax, numpy as np
      >>> from jax.sharding import Mesh
      >>> part = Partition(Mesh(np.array(jax.devices()[:1]), ("x",)), "x", 8)
      >>> part.axis, part.devices
      ('x', 8)

    Semantics: the storage's ``jax.sharding.NamedSharding`` (its mesh and the
    ``PartitionSpec`` entry of axis 0), reduced to what the planners need."""

    mesh: Any
    axis: Any
    devices: int


def _axis_size(mesh: Any, axis: Any) -> int:
    names = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([mesh.shape[a] for a in names]))


def partition(storage: Any) -> Partition | None:
    """The :class:`Partition` of a concrete 1-D storage sharded over more than one device
    (a ``NamedSharding`` whose spec shards axis 0), else ``None`` (a single-device or
    replicated storage, a batch of storages, or a traced one).

    Args:
      storage: any value; a 1-D ``jax.Array`` placed with a ``NamedSharding`` is looked at.
    Returns:
      A :class:`Partition` (``devices >= 2``), or ``None``.
    Raises:
      Nothing: anything that is not a concrete 1-D array sharded over several devices
      (a NumPy array, a scalar, a tracer, a 2-D array) gives ``None``.
    Example:
      >>> import jax.numpy as jnp
      >>> partition(jnp.zeros(8)) is None       # one device: the single-device paths apply
      True

    Semantics: reads ``jax.Array.sharding`` (a ``jax.sharding.NamedSharding``)."""
    if is_traced(storage):
        return None
    sharding = getattr(storage, "sharding", None)
    if type(sharding) is not NamedSharding or storage.ndim != 1:
        return None
    spec = sharding.spec
    if not spec or spec[0] is None:
        return None
    devices = _axis_size(sharding.mesh, spec[0])
    return Partition(sharding.mesh, spec[0], devices) if devices > 1 else None


def _out_dim(sharding: NamedSharding, part: Partition) -> int | None:
    """The output dim ``sharding`` shards over the storage's mesh axis, or ``None``."""
    if sharding.mesh != part.mesh:
        return None
    dims = [d for d, entry in enumerate(sharding.spec) if entry is not None]
    if len(dims) == 1 and sharding.spec[dims[0]] == part.axis:
        return dims[0]
    return None


def default_out_sharding(layout: Layout, part: Partition) -> NamedSharding:
    """The view's output sharded over the storage's mesh axis along its outermost dim whose
    extent the device count divides; replicated when no dim's does (JAX shards evenly).

    Args:
      layout: the view read (its shape decides; extents in elements).
      part: the storage's :class:`Partition`.
    Returns:
      A ``NamedSharding`` over ``part.mesh``: ``PartitionSpec(None, ..., part.axis)`` with the
      axis at that dim, or ``PartitionSpec()`` (replicated).
    Raises:
      Nothing of its own: a ``part.axis`` that is not an axis of ``part.mesh`` raises JAX's
      ``ValueError`` ("Resource axis ... is not found in mesh").
    Example:
      >>> import jax, numpy as np
      >>> from jax.sharding import Mesh
      >>> part = Partition(Mesh(np.array(jax.devices()[:1]), ("x",)), "x", 8)
      >>> default_out_sharding(Layout((501, 256), (64, 1)), part).spec   # 501 frames do not split
      P(None, 'x')
      >>> default_out_sharding(Layout((3, 5), (5, 1)), part).spec          # no dim splits in 8
      P()

    Semantics: ``jax.sharding.NamedSharding`` (an even split, as JAX requires of a
    sharded output dim)."""
    for d, extent in enumerate(layout.shape):
        if extent and extent % part.devices == 0:
            return NamedSharding(part.mesh, P(*([None] * d), part.axis))
    return NamedSharding(part.mesh, P())


@dataclasses.dataclass(frozen=True)
class ShardedRead:
    """The plan of a read of a sharded storage.

    Attributes:
      strategy: ``"local"`` (each device reads its output part from its own block: no
        communication), ``"halo"`` (its own block plus ``left``/``right`` elements of its
        neighbours, exchanged with ``lax.ppermute``) or ``"partitioner"`` (the single-device
        lowering partitioned by JAX's SPMD partitioner).
      dim: the output dim sharded over the devices (``None``: replicated output).
      left, right: per device, the elements it needs from the end of its left neighbour's
        block and from the start of its right neighbour's (all 0 unless ``"halo"``).
      block: storage elements per device.
      out_sharding: the output's ``NamedSharding``.
    Raises:
      Nothing: a frozen record, built by :func:`read_plan` and :func:`write_plan`.
    Example:
      >>> import jax, numpy as np
      >>> from jax.sharding import Mesh
      >>> part = Partition(Mesh(np.array(jax.devices()[:1]), ("x",)), "x", 8)
      >>> plan = read_plan(Layout((512, 256), (64, 1)), 32960, part)   # frames: window 256, hop 64
      >>> plan.strategy, plan.dim, plan.block, plan.out_sharding.spec, plan.halo_elements
      ('halo', 0, 4120, P('x',), 1344)

    Semantics: the plan of a ``jax.shard_map`` program with ``lax.ppermute`` halo exchanges
    (``"local"``/``"halo"``) or of ``jax.jit`` with ``out_shardings`` (``"partitioner"``)."""

    strategy: str
    dim: int | None
    left: tuple[int, ...]
    right: tuple[int, ...]
    block: int
    out_sharding: Any

    @property
    def halo_elements(self) -> int:
        """Storage elements that cross a shard boundary in the whole read (halo reads)."""
        return sum(self.left) + sum(self.right)


def _part_range(layout: Layout, dim: int, devices: int) -> tuple[int, int, int]:
    """``(lo_0, step, span)``: output part ``d`` addresses storage ``[lo_0 + d*step, ... + span]``."""
    per = layout.shape[dim] // devices
    shape = tuple(per if k == dim else n for k, n in enumerate(layout.shape))
    low = sum((n - 1) * s for n, s in zip(shape, layout.strides, strict=True) if s < 0)
    span = sum((n - 1) * abs(s) for n, s in zip(shape, layout.strides, strict=True))
    return int(layout.offset) + low, per * layout.strides[dim], span


def _halos(layout: Layout, n: int, part: Partition, dim: int) -> tuple[tuple[int, ...], ...] | None:
    """Per device, the elements it needs from its left and from its right neighbour's block,
    when every output part lies within its own block and its neighbours'; else None."""
    block = n // part.devices
    lo0, step, span = _part_range(layout, dim, part.devices)
    starts = [lo0 + d * step for d in range(part.devices)]
    left = tuple(max(0, d * block - lo) for d, lo in enumerate(starts))
    right = tuple(max(0, lo + span + 1 - (d + 1) * block) for d, lo in enumerate(starts))
    return (left, right) if max(left) <= block and max(right) <= block else None


def read_plan(layout: Layout, n: int, part: Partition, out_sharding: Any = None) -> ShardedRead:
    """How :func:`read` reads ``layout`` from a storage of ``n`` elements partitioned as ``part``.

    Args:
      layout: the view (static offset; elements).
      n: storage elements; ``part.devices`` divides it.
      part: the storage's :class:`Partition`.
      out_sharding: a ``NamedSharding`` of the output (default: :func:`default_out_sharding`).
    Returns:
      A :class:`ShardedRead`.
    Raises:
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding``.
      Nothing else is checked: ``layout`` is taken to lie within the storage (a
      ``StridedArray`` checks that when it is built).
    Example:
      512 frames (window 256, hop 64) of a signal of 32960 elements on 8 devices: each
      device needs a few elements of its neighbours' blocks, ``w - h`` per boundary.

      >>> import jax, numpy as np
      >>> from jax.sharding import Mesh
      >>> part = Partition(Mesh(np.array(jax.devices()[:1]), ("x",)), "x", 8)
      >>> plan = read_plan(Layout((512, 256), (64, 1)), 32960, part)
      >>> plan.strategy, plan.left[:3], plan.right[:3], plan.halo_elements // 7
      ('halo', (0, 24, 48), (168, 144, 120), 192)
      >>> read_plan(Layout((256, 128), (1, 256)), 32768, part).strategy     # a transpose
      'partitioner'

    Semantics: no PyTorch/NumPy counterpart; it plans a ``jax.shard_map`` program with
    ``lax.ppermute`` halo exchanges, or ``jax.jit`` with ``out_shardings``."""
    if out_sharding is None:
        out_sharding = default_out_sharding(layout, part)
    if not isinstance(out_sharding, NamedSharding):
        raise LayoutTypeError(f"contiguous: out_sharding must be a jax.sharding.NamedSharding, not "
                              f"{type(out_sharding).__name__} (got out_sharding={out_sharding!r}, layout "
                              f"{layout}); build one with NamedSharding(mesh, PartitionSpec(...)).")
    block = n // part.devices
    dim = _out_dim(out_sharding, part)
    static = not is_traced(layout.offset) and not layout.is_empty
    if dim is not None and static and layout.shape[dim] % part.devices == 0:
        halos = _halos(Layout(layout.shape, layout.strides, int(np.asarray(layout.offset))), n, part, dim)
        if halos is not None:
            strategy = "halo" if any(halos[0]) or any(halos[1]) else "local"
            return ShardedRead(strategy, dim, *halos, block, out_sharding)
    none = (0,) * part.devices
    return ShardedRead("partitioner", dim, none, none, block, out_sharding)


def _transfer(piece: Any, moves: list[tuple[int, int, int]], total: int, part: Partition, *,
              at_end: bool) -> jax.Array:
    """Per device, ``total`` elements holding what it receives: ``moves`` lists
    ``(source, target, k)``, the ``k`` elements ``piece(k)`` of device ``source`` go to device
    ``target``, placed at the end (``at_end``) or the start of its buffer (zeros elsewhere).
    One ``ppermute`` when every move has ``k == total``, else one per move, so that exactly
    ``k`` elements cross each boundary."""
    moves = [m for m in moves if m[2]]
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
        pieces.insert(0, _transfer(lambda k: local[block - k:], moves, left, part, at_end=True))
    if right:
        moves = [(d + 1, d, plan.right[d]) for d in range(devices - 1)]
        pieces.append(_transfer(lambda k: local[:k], moves, right, part, at_end=False))
    return jnp.concatenate(pieces) if len(pieces) > 1 else local


def _part_layout(layout: Layout, plan: ShardedRead, part: Partition) -> Layout:
    """Device ``d``'s part of ``layout`` (inside ``shard_map``), offset inside its window."""
    dim, block = plan.dim, plan.block
    per = layout.shape[dim] // part.devices
    shape = tuple(per if k == dim else e for k, e in enumerate(layout.shape))
    step = per * layout.strides[dim]
    # the window starts at d*B - left: static when the parts move by one block per device
    offset = layout.offset + max(plan.left)
    if step != block:
        offset = offset + lax.axis_index(part.axis) * (step - block)
    return Layout(shape, layout.strides, offset)


def _halo_body(layout: Layout, plan: ShardedRead, part: Partition):
    def body(local: jax.Array) -> jax.Array:
        return materialize(_window(local, plan, part), _part_layout(layout, plan, part))

    return body


def _read_traced(storage: jax.Array, layout: Layout, plan: ShardedRead, part: Partition) -> jax.Array:
    """The read inside a trace (``storage`` may be a tracer); output sharded as ``plan`` says."""
    if plan.strategy == "partitioner":
        # XLA partitions strided slices, reshapes and transposes (a transpose becomes one
        # all-to-all) but all-gathers the operand of any gather, or of the strided copy's
        # custom call: then one element gather holds the least per device
        method = "auto" if layout.is_empty else (
            "structured" if xla_read_plan(layout) == "structured" else "gather")
        return lax.with_sharding_constraint(materialize(storage, layout, method=method), plan.out_sharding)
    storage = lax.with_sharding_constraint(storage, NamedSharding(part.mesh, P(part.axis)))
    return jax.shard_map(_halo_body(layout, plan, part), mesh=part.mesh, in_specs=P(part.axis),
                         out_specs=plan.out_sharding.spec, check_vma=False)(storage)


def _flat_sharding(plan: ShardedRead, part: Partition) -> Any:
    if plan.dim == 0:  # rows of the output are consecutive blocks of its flattening
        return NamedSharding(part.mesh, P(part.axis))
    return plan.out_sharding if plan.dim is None else None


def _native_as(native: bool, fn: Any) -> Any:
    """``fn`` traced with ``fs.config``'s ``native_copy`` at ``native``: the programs cached
    below take the switch in their key, so that a cached program follows it."""
    @functools.wraps(fn)
    def traced(*args: Any) -> Any:
        with _config.using(native_copy=native):
            return fn(*args)
    return traced


@functools.lru_cache(maxsize=256)
def _program(layout: Layout, plan: ShardedRead, part: Partition, flat: bool, native: bool = True) -> Any:
    def run(storage: jax.Array) -> jax.Array:
        out = _read_traced(storage, layout, plan, part)
        return out.reshape(-1) if flat else out

    out_sharding = _flat_sharding(plan, part) if flat else plan.out_sharding
    return jax.jit(_native_as(native, run), out_shardings=out_sharding)


def _static(layout: Layout) -> Layout:
    if is_traced(layout.offset) or isinstance(layout.offset, int):
        return layout
    return Layout(layout.shape, layout.strides, int(np.asarray(layout.offset)))


def _check_bounds(op: str, layout: Layout, n: int) -> None:
    """The one bounds check (both ends) for a view with a known offset; a traced offset is
    clamped where it is read, as on one device."""
    if not is_traced(layout.offset):
        check_in_storage(op, layout.shape, layout.strides, layout.offset, n)


def program(storage: Any, layout: Layout, out_sharding: Any = None, *, flat: bool = False) -> Any:
    """The jitted read of ``layout`` from the sharded ``storage`` (``program(...).lower(storage)``
    gives its HLO); ``flat=True`` returns the values flattened (``contiguous()``'s storage).

    Args:
      storage: a 1-D ``jax.Array`` of ``n`` elements with a ``NamedSharding`` over its only
        axis, on more than one device.
      layout: the view (elements; a concrete offset).
      out_sharding: the output's ``NamedSharding`` (default: :func:`default_out_sharding`).
      flat: the program returns the values flattened to 1-D.
    Returns:
      A ``jax.jit``-wrapped function ``f(storage) -> values`` of ``layout.shape`` (or
      ``(numel,)``), cached per layout, plan and partition; the same program as :func:`read`.
    Raises:
      LayoutError: ``storage`` is not a 1-D array sharded over more than one device.
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding``.
      StorageError: a view with a concrete offset reaching outside the storage (either
        end: :func:`functional_strides._src.core.layout.check_in_storage`, as on one device).
    Example:
      >>> import jax.numpy as jnp
      >>> program(jnp.zeros(8), Layout((2, 2), (1, 2)))       # one device: nothing to partition
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: sharded read: the storage (shape (8,)) is not a 1-D array ...

    Semantics: ``jax.jit`` with ``out_shardings`` of the read :func:`read` performs
    (``torch.as_strided`` values)."""
    part = partition(storage)
    if part is None:
        raise LayoutError(f"sharded read: the storage (shape {tuple(jnp.shape(storage))}) is not a 1-D "
                          "array sharded over more than one device; pass one placed with "
                          "jax.device_put(storage, NamedSharding(mesh, PartitionSpec(axis))).")
    layout = _static(layout)
    _check_bounds("sharded read", layout, storage.shape[0])
    plan = read_plan(layout, storage.shape[0], part, out_sharding)
    return _program(layout, plan, part, flat, _copy_kernel.enabled())


def read(storage: Any, layout: Layout, out_sharding: Any = None, *, flat: bool = False) -> jax.Array:
    """The values of ``layout`` over a storage sharded across devices, sharded as asked.

    Args:
      storage: a 1-D ``jax.Array`` of ``n`` elements with a ``NamedSharding`` over its only
        axis (or, inside ``jit``, a traced 1-D array; then ``out_sharding`` is required and
        the storage is taken to be sharded over the mesh axis ``out_sharding`` uses).
      layout: the view (elements).
      out_sharding: the output's ``NamedSharding``; default: along the view's outermost dim
        the device count divides (replicated when none does).
      flat: return the values flattened to 1-D (as ``contiguous()`` stores them).
    Returns:
      A ``jax.Array`` of ``layout.shape`` (``(numel,)`` when ``flat``) and the storage dtype.
    Raises:
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding``.
      LayoutError: a concrete storage not sharded over more than one device; a traced
        storage without an ``out_sharding`` that shards one dim over one mesh axis, or
        whose length that axis's device count does not divide.
      StorageError: a view with a concrete offset reaching outside the storage (either
        end, as on one device).
    Example:
      >>> import jax, jax.numpy as jnp, numpy as np
      >>> from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      >>> rows = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("x",)), P("x"))
      >>> jax.jit(lambda s: read(s, Layout((3, 4), (2, 1)), rows))(jnp.arange(8.0)).tolist()
      [[0.0, 1.0, 2.0, 3.0], [2.0, 3.0, 4.0, 5.0], [4.0, 5.0, 6.0, 7.0]]

    Semantics: the values of ``torch.as_strided(storage, layout.shape, layout.strides,
    layout.offset)`` (as :func:`functional_strides.materialize`), placed as
    ``jax.jit(..., out_shardings=out_sharding)`` places them."""
    if is_traced(storage):
        part = _traced_partition(storage, layout, out_sharding)
        plan = read_plan(_static(layout), storage.shape[0], part, out_sharding)
        out = _read_traced(storage, _static(layout), plan, part)
        return out.reshape(-1) if flat else out
    return program(storage, layout, out_sharding, flat=flat)(storage)


def _traced_partition(storage: Any, layout: Layout, out_sharding: Any) -> Partition:
    spec = getattr(out_sharding, "spec", ())
    axes = [entry for entry in spec if entry is not None]
    if not isinstance(out_sharding, NamedSharding) or len(axes) != 1:
        raise LayoutError(
            f"contiguous: inside jit the storage's sharding is not known; pass out_sharding, a "
            f"NamedSharding that shards one dim of the output over one mesh axis (got "
            f"out_sharding={out_sharding!r}, layout {layout}).")
    part = Partition(out_sharding.mesh, axes[0], _axis_size(out_sharding.mesh, axes[0]))
    if storage.shape[0] % part.devices:
        raise LayoutError(f"contiguous: a storage of {storage.shape[0]} elements does not split into "
                          f"{part.devices} equal blocks over mesh axis {axes[0]!r} (layout {layout}); "
                          "pad the storage to a multiple of the device count.")
    return part


def write_plan(layout: Layout, n: int, part: Partition, *, mode: str = "set",
               overlap: str = "error") -> ShardedRead:
    """How :func:`write` writes through ``layout`` into a storage of ``n`` elements
    partitioned as ``part``: the parts of the view along its dim 0 written where they lie
    (``"local"``/``"halo"``: each device writes its part into ``[left halo, block, right
    halo]`` and sends the halos' updates back to their owners) or by JAX's SPMD partitioner
    (``"partitioner"``, also for a ``"set"`` through an overlapping view with
    ``overlap="error"``, so that it raises as on one device).

    Args:
      layout: the view written through (static offset; elements).
      n: storage elements; ``part.devices`` divides it.
      part: the storage's :class:`Partition`.
      mode: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"``.
      overlap: ``"error"`` or another policy of :func:`functional_strides.write`.
    Returns:
      A :class:`ShardedRead` (its ``out_sharding`` is the storage's sharding).
    Raises:
      Nothing of its own: ``mode`` and ``overlap`` are read, not checked (the write checks
      them when it runs), and ``layout`` is taken to lie within the storage.
    Example:
      >>> import jax, numpy as np
      >>> from jax.sharding import Mesh
      >>> part = Partition(Mesh(np.array(jax.devices()[:1]), ("x",)), "x", 8)
      >>> frames = Layout((512, 256), (64, 1))
      >>> write_plan(frames, 32960, part, mode="add").strategy
      'halo'
      >>> write_plan(frames, 32960, part, mode="set").strategy   # overlapping: raises as on one device
      'partitioner'

    Semantics: no PyTorch/NumPy counterpart; it plans a ``jax.shard_map`` program (halo
    updates sent back with ``lax.ppermute``), or ``jax.jit`` with ``out_shardings``."""
    sharding = NamedSharding(part.mesh, P(part.axis))
    by_rows = NamedSharding(part.mesh, P(part.axis, *([None] * (layout.ndim - 1)))) if layout.ndim else None
    refused = mode == "set" and overlap == "error" and layout.has_internal_overlap()
    if by_rows is not None and not refused:
        plan = read_plan(layout, n, part, by_rows)
        if plan.strategy != "partitioner":
            return dataclasses.replace(plan, out_sharding=sharding)
    none = (0,) * part.devices
    return ShardedRead("partitioner", None, none, none, n // part.devices, sharding)


def _identity(mode: str, dtype: Any) -> Any:
    if mode in ("set", "add"):
        return 0
    if mode == "mul":
        return 1
    info = jnp.finfo(dtype) if jnp.issubdtype(dtype, jnp.inexact) else jnp.iinfo(dtype)
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.inf if mode == "min" else -jnp.inf
    return info.max if mode == "min" else info.min


_COMBINE = {"set": lambda a, u: u, "add": jnp.add, "mul": jnp.multiply, "min": jnp.minimum,
            "max": jnp.maximum}


def _received(moves: list[tuple[int, int, int]], total: int, part: Partition, *, at_end: bool) -> jax.Array:
    """Per device, which of the ``total`` slots of its :func:`_transfer` buffer hold data."""
    counts = [0] * part.devices
    for _, dst, k in moves:
        counts[dst] = k
    k = jnp.asarray(counts)[lax.axis_index(part.axis)]
    slots = lax.iota(jnp.int32, total)
    return slots >= total - k if at_end else slots < k


def _write_body(layout: Layout, plan: ShardedRead, part: Partition, mode: str):
    left, right, block, devices = max(plan.left), max(plan.right), plan.block, part.devices
    combine = _COMBINE[mode]

    def body(local: jax.Array, src: jax.Array) -> jax.Array:
        lay = _part_layout(layout, plan, part)
        if not left and not right:  # every part in its own block: write it there
            return _write(local, lay, src, mode=mode, overlap="last", op=mode)
        size = left + block + right
        upd = _write(jnp.full((size,), _identity(mode, local.dtype), local.dtype), lay, src, mode=mode,
                     overlap="last", op=mode)
        if mode == "set":  # which slots were written travels with the values
            mask = _write(jnp.zeros((size,), bool), lay, True, mode="set", overlap="last", op=mode)
            sent = jnp.stack([upd, mask.astype(upd.dtype)], axis=1)
        else:  # slots left at the identity combine to no change: values alone suffice
            sent = upd

        def apply(x: jax.Array, got: jax.Array, where: Any = True) -> jax.Array:
            if mode == "set":
                where, got = where & (got[:, 1] != 0), got[:, 0]
            return jnp.where(where, combine(x, got), x)

        out = local
        if right:  # updates of the left neighbour's right halo, which lies at my block start
            moves = [(d, d + 1, plan.right[d]) for d in range(devices - 1)]
            got = _transfer(lambda k: sent[left + block:left + block + k], moves, right, part, at_end=False)
            out = out.at[:right].set(apply(out[:right], got, _received(moves, right, part, at_end=False)))
        out = apply(out, sent[left:left + block])
        if left:  # updates of the right neighbour's left halo, which lies at my block end
            moves = [(d, d - 1, plan.left[d]) for d in range(1, devices)]
            got = _transfer(lambda k: sent[left - k:left], moves, left, part, at_end=True)
            received = _received(moves, left, part, at_end=True)
            out = out.at[block - left:].set(apply(out[block - left:], got, received))
        return out

    return body


def _broadcasts(src: Any, shape: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(np.shape(src), shape)
    except ValueError:
        return False
    return len(np.shape(src)) <= len(shape)


def write(storage: Any, layout: Layout, src: Any, *, mode: str, overlap: str, op: str) -> jax.Array:
    """Write ``src`` through ``layout`` into a storage sharded across devices.

    The parts of the view along its dim 0 are written where they lie, as
    :func:`write_plan` says; the new storage keeps the storage's sharding.

    Args:
      storage: a 1-D ``jax.Array`` with a ``NamedSharding`` over its only axis.
      layout: the view written through (static offset; elements).
      src: broadcastable to ``layout.shape``; cast to the storage dtype.
      mode, overlap, op: as :func:`functional_strides._src.lowering.writes.write`.
    Returns:
      The new storage (same shape, dtype and sharding).
    Raises:
      LayoutError: ``storage`` is not sharded over several devices; and the errors of
        :func:`functional_strides._src.lowering.writes.write` (``OverlapError`` for ``"set"`` through an
        overlapping view with ``overlap="error"``, ``LayoutError`` for ``src`` that does
        not broadcast); ``LayoutError`` for an unknown ``mode`` or ``overlap``;
        ``StorageError`` for a view reaching outside the storage (either end), on every
        strategy, as on one device.
    Example:
      >>> import jax.numpy as jnp
      >>> write(jnp.zeros(4), Layout((2,), (2,)), 1.0, mode="add", overlap="error", op="add")
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: sharded write: the storage (shape (4,)) is not a 1-D array ...

    Semantics: :func:`functional_strides._src.lowering.writes.write` (``jnp``'s ``.at[]``)."""
    return write_program(storage, layout, mode=mode, overlap=overlap, op=op)(storage, src)


def write_program(storage: Any, layout: Layout, *, mode: str = "set", overlap: str = "error",
                  op: str = "set") -> Any:
    """The jitted write ``f(storage, src) -> new storage`` that :func:`write` runs
    (``write_program(...).lower(storage, src)`` gives its HLO).

    Args:
      storage: a 1-D ``jax.Array`` with a ``NamedSharding`` over its only axis, on more than
        one device.
      layout: the view written through (static offset; elements).
      mode, overlap, op: as :func:`functional_strides._src.lowering.writes.write`.
    Returns:
      A ``jax.jit``-wrapped function ``f(storage, src) -> new storage`` (same shape, dtype
      and sharding), cached per layout, options, plan and partition.
    Raises:
      LayoutError: ``storage`` is not a 1-D array sharded over more than one device, or
        an unknown ``mode``/``overlap``.
      StorageError: a view reaching outside the storage (either end).
      When the returned function runs: the other errors listed under :func:`write`.
    Example:
      >>> import jax.numpy as jnp
      >>> write_program(jnp.zeros(8), Layout((2, 2), (1, 2)), mode="add", op="add")
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: sharded write: the storage (shape (8,)) is not a 1-D array ...

    Semantics: ``jax.jit`` with ``out_shardings`` of the write :func:`write` performs
    (``jnp``'s ``.at[]`` through the view)."""
    part = partition(storage)
    if part is None:
        raise LayoutError(f"sharded write: the storage (shape {tuple(jnp.shape(storage))}) is not a 1-D "
                          "array sharded over more than one device; pass one placed with "
                          "jax.device_put(storage, NamedSharding(mesh, PartitionSpec(axis))).")
    check_choice(op, "mode", mode, MODES)
    check_choice(op, "overlap", overlap, ("error", "last"))
    layout = _static(layout)
    _check_bounds(op, layout, storage.shape[0])
    plan = write_plan(layout, storage.shape[0], part, mode=mode, overlap=overlap)
    return _write_program(layout, mode, overlap, op, plan, part, _copy_kernel.enabled())


@functools.lru_cache(maxsize=256)
def _write_program(layout: Layout, mode: str, overlap: str, op: str, plan: ShardedRead,
                   part: Partition, native: bool = True) -> Any:
    if plan.strategy == "partitioner":
        def partitioned(s: jax.Array, v: Any) -> jax.Array:
            return _write(s, layout, v, mode=mode, overlap=overlap, op=op)

        return jax.jit(_native_as(native, partitioned), out_shardings=plan.out_sharding)
    rows = P(part.axis, *([None] * (layout.ndim - 1)))

    def run(storage: jax.Array, src: Any) -> jax.Array:
        if jnp.result_type(src, storage.dtype) != storage.dtype or not _broadcasts(src, layout.shape):
            return _write(storage, layout, src, mode=mode, overlap=overlap, op=op)  # raises as on one device
        src = jnp.broadcast_to(jnp.asarray(src, storage.dtype), layout.shape)
        src = lax.with_sharding_constraint(src, NamedSharding(part.mesh, rows))
        body = _write_body(layout, plan, part, mode)
        return jax.shard_map(body, mesh=part.mesh, in_specs=(P(part.axis), rows), out_specs=P(part.axis),
                             check_vma=False)(storage, src)

    return jax.jit(_native_as(native, run), out_shardings=plan.out_sharding)


def _collective_line(what: str, found: list[Collective], storage: Any) -> list[str]:
    if not found:
        return [f"{what} collectives: none"]
    ops = sorted({c.op for c in found})
    counts = ", ".join(f"{sum(c.op == op for c in found)} {op}" for op in ops)
    lines = [f"{what} collectives: {counts}; {sum(c.moved for c in found)} bytes cross devices in all "
             f"(the storage holds {storage.nbytes} bytes)"]
    if any(c.op == "all-gather" for c in found):
        lines.append(f"the {what} all-gathers: some device needs elements beyond its neighbours' blocks")
    return lines


def read_report(storage: Any, layout: Layout, out_sharding: Any = None) -> list[str]:
    """Lines saying how a read of a sharded storage, and a write through the same view
    (``add``), are partitioned and what they communicate (compiled, read from the HLO:
    collective ops and the bytes that cross devices); ``[]`` for a storage that is not
    sharded over several devices.

    Args:
      storage: the storage; a 1-D ``jax.Array`` sharded over several devices is reported on.
      layout: the view (elements; a concrete offset).
      out_sharding: the read's output ``NamedSharding`` (default: :func:`default_out_sharding`).
    Returns:
      A list of ``str`` lines: the partition, the read's strategy and collectives (ops and
      bytes), then, for a non-empty view, the same for ``at[...].add`` through it.
    Raises:
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding`` (checked only for a
        sharded storage). Compiling also raises what :func:`program` raises (a view past
        the storage end under the ``"partitioner"`` strategy: ``StorageError``).
    Example:
      >>> import jax.numpy as jnp
      >>> read_report(jnp.zeros(8), Layout((2, 2), (1, 2)))
      []

    Semantics: no PyTorch/NumPy counterpart; it reads XLA's compiled HLO
    (``jax.stages.Compiled.as_text()``, see :func:`collectives`)."""
    part = partition(storage)
    if part is None:
        return []
    layout = _static(layout)
    plan = read_plan(layout, storage.shape[0], part, out_sharding)
    found = collectives(program(storage, layout, out_sharding).lower(storage).compile())
    dim = "replicated" if plan.dim is None else f"sharded along dim {plan.dim}"
    lines = [f"sharded storage: {storage.shape[0]} elements in {part.devices} blocks of {plan.block} "
             f"over mesh axis {part.axis!r}; output {dim} ({plan.out_sharding.spec})"]
    lines.append(f"sharded read: {plan.strategy}: {_how(plan)}")
    lines += _collective_line("read", found, storage)
    if layout.is_empty:
        return lines
    wplan = write_plan(layout, storage.shape[0], part, mode="add")
    src = jax.ShapeDtypeStruct(layout.shape, storage.dtype)
    found = collectives(write_program(storage, layout, mode="add", op="add").lower(storage, src).compile())
    lines.append(f"sharded write (at[...].add): {wplan.strategy}: {_how(wplan)}")
    return lines + _collective_line("write", found, storage)


def _how(plan: ShardedRead) -> str:
    return {"local": "each device works on its part in its own block (no communication)",
            "halo": f"each device works on its own block plus up to {max(plan.left)} elements of its left "
                    f"neighbour's and {max(plan.right)} of its right neighbour's (lax.ppermute; "
                    f"{plan.halo_elements} elements cross shard boundaries in all)",
            "partitioner": "JAX's SPMD partitioner partitions the single-device program"}[plan.strategy]

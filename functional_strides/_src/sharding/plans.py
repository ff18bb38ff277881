"""Plans of the reads and writes of one 1-D storage sharded across devices (pure planning:
Python ints and tuples; the programs are in :mod:`.reads` and :mod:`.writes`).

Where the sharding comes from: a concrete ``jax.Array`` carries its ``NamedSharding``; a
traced one carries it in its type (``jax.typeof(x).sharding``) on an explicit mesh (axes of
``AxisType.Explicit``), inside a user's ``jit`` as outside. On a mesh of ``Auto`` axes a traced
storage's type says nothing (``unknown_mesh``), and inside ``jax.shard_map`` the storage is
a device's own block (manual axes): the single-device paths apply there.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import jax
import numpy as np
from jax.sharding import AbstractMesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ..core.errors import LayoutTypeError
from ..core.layout import Layout, is_traced
from ..core.overlap import overlap as _overlap
from ..lowering.modes import has_exact_identity, storage_mode

__all__ = ["Exchange", "Partition", "Parts", "ShardedRead", "ShardingWarning", "default_out_sharding",
           "partition", "read_plan", "unknown_mesh", "warn_unknown", "write_plan"]


class ShardingWarning(UserWarning):
    """Inside ``jit`` on a mesh of ``Auto`` axes a storage's sharding is not in its type, so
    the sharded plans cannot be chosen: pass ``out_sharding`` to name the mesh axis, or put the
    storage on an explicit mesh (``AxisType.Explicit``)."""


@dataclasses.dataclass(frozen=True)
class Partition:
    """How a 1-D storage lies on devices: ``mesh``, the mesh axis (a name or a tuple of
    names) its only axis is sharded over, and ``devices``, the number of blocks.

    A storage of ``n`` elements lies in ``devices`` blocks of ``n // devices`` consecutive
    elements, block ``d`` on the ``d``-th device along ``axis``. :func:`partition` reads one
    from a sharded storage (concrete, or traced on an explicit mesh, where ``mesh`` is the
    type's ``AbstractMesh``); the planners (:func:`read_plan`, :func:`write_plan`) take one,
    so plans can be computed for any device count (the example plans for 8 devices on a
    1-device mesh).

    Attributes:
      mesh: the ``jax.sharding.Mesh`` (or ``AbstractMesh``) of the storage's ``NamedSharding``.
      axis: the mesh axis name (or tuple of names) of the storage's ``PartitionSpec``.
      devices: the number of blocks (the product of those mesh axes' sizes), an int.
    Raises:
      Nothing: a frozen record; its fields are not checked (``axis`` must name an axis of
      ``mesh`` for the shardings built from it, and ``devices`` must divide the storage).
    Example:
      >>> import jax, numpy as np
      >>> from jax.sharding import Mesh
      >>> part = Partition(Mesh(np.array(jax.devices()[:1]), ("x",)), "x", 8)
      >>> part.axis, part.devices, part.explicit
      ('x', 8, False)

    Semantics: the storage's ``jax.sharding.NamedSharding`` (its mesh and the
    ``PartitionSpec`` entry of axis 0), reduced to what the planners need."""

    mesh: Any
    axis: Any
    devices: int

    @property
    def names(self) -> tuple[Any, ...]:
        """The mesh axis names of ``axis``, a tuple."""
        return self.axis if isinstance(self.axis, tuple) else (self.axis,)

    @property
    def explicit(self) -> bool:
        """True when every axis of ``axis`` is ``AxisType.Explicit`` in ``mesh`` (the sharding
        is part of the arrays' types: programs must keep the types consistent)."""
        axes = getattr(self.mesh, "explicit_axes", ())
        return self.mesh is not None and all(a in axes for a in self.names)

    def sharding(self, spec: Any) -> NamedSharding:
        """``NamedSharding(self.mesh, spec)``."""
        return NamedSharding(self.mesh, spec)


def _axis_size(mesh: Any, axis: Any) -> int:
    names = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([mesh.shape[a] for a in names]))


def _abstract(mesh: Any) -> Any:
    return mesh if isinstance(mesh, AbstractMesh) or mesh is None else mesh.abstract_mesh


def _type_sharding(storage: Any) -> NamedSharding | None:
    """The ``NamedSharding`` of a 1-D traced value's type, else None."""
    try:
        aval = jax.typeof(storage)
    except TypeError:
        return None
    sharding = getattr(aval, "sharding", None)
    if getattr(aval, "ndim", None) != 1 or not isinstance(sharding, NamedSharding):
        return None
    return sharding


def partition(storage: Any) -> Partition | None:
    """The :class:`Partition` of a 1-D storage sharded over more than one device (or over
    explicit mesh axes of one device), else ``None`` (a single-device or replicated storage,
    a batch of storages, a device's own block inside ``jax.shard_map``, or a traced storage
    whose type carries no sharding).

    A concrete ``jax.Array`` gives its ``NamedSharding`` (any mesh); a traced one (inside a
    user's ``jit``) its type's, which holds the sharding on an explicit mesh
    (``jax.make_mesh(..., axis_types=(AxisType.Explicit,))``) and not on a mesh of ``Auto``
    axes (a :class:`ShardingWarning` says so, once per mesh).

    Args:
      storage: any value; a 1-D ``jax.Array`` (or tracer) with a ``NamedSharding`` is looked at.
    Returns:
      A :class:`Partition` (``devices >= 2``, or ``devices == 1`` on explicit axes), or ``None``.
    Raises:
      Nothing: anything that is not a 1-D array sharded over several devices (a NumPy
      array, a scalar, a 2-D array, a traced array on an ``Auto`` mesh) gives ``None``.
    Example:
      >>> import jax, jax.numpy as jnp
      >>> partition(jnp.zeros(8)) is None       # one device: the single-device paths apply
      True
      >>> jax.jit(lambda s: print(partition(s)) or s)(jnp.zeros(8)).shape
      None
      (8,)

    Semantics: reads ``jax.Array.sharding``, or ``jax.typeof(x).sharding`` of a tracer
    (a ``jax.sharding.NamedSharding``)."""
    if is_traced(storage):
        sharding = _type_sharding(storage)
        if sharding is None or sharding.mesh.empty or sharding.mesh.manual_axes:
            return None  # no mesh, or inside shard_map: the storage is one device's block
        entry = sharding.spec[0] if len(sharding.spec) else None
        names = entry if isinstance(entry, tuple) else (entry,)
        if entry is None or not all(a in sharding.mesh.explicit_axes for a in names):
            return None
    else:
        sharding = getattr(storage, "sharding", None)
        if type(sharding) is not NamedSharding or getattr(storage, "ndim", None) != 1:
            return None
        entry = sharding.spec[0] if len(sharding.spec) else None
        if entry is None:
            return None
    devices = _axis_size(sharding.mesh, entry)
    found = Partition(sharding.mesh, entry, devices)
    # one block is a plain storage, unless its axis is explicit: then the sharding is in the
    # types, which the single-device lowering does not keep (a one-device plan does)
    return found if devices > 1 or found.explicit else None


def unknown_mesh(storage: Any) -> Any:
    """The mesh of a traced 1-D storage whose sharding its type cannot say: inside ``jit`` on
    a mesh with ``Auto`` axes of more than one device, outside ``shard_map``, a storage
    sharded outside the ``jit`` and a replicated one have the same type (spec ``P(None)``).
    ``None`` otherwise."""
    if not is_traced(storage):
        return None
    sharding = _type_sharding(storage)
    if sharding is None or sharding.mesh.empty or sharding.mesh.manual_axes:
        return None
    mesh = sharding.mesh
    if (sharding.spec[0] if len(sharding.spec) else None) is not None:
        return None
    if math.prod(mesh.shape[a] for a in mesh.auto_axes) <= 1:
        return None
    return mesh


_WARNED: set[Any] = set()


def warn_unknown(mesh: Any, op: str) -> None:
    """Warn once per mesh (:class:`ShardingWarning`) that inside ``jit`` the sharding of a
    storage on this ``Auto`` mesh is unknown, and how to make it known."""
    if mesh in _WARNED:
        return
    _WARNED.add(mesh)
    warnings.warn(
        f"{op}: inside jax.jit, a 1-D storage on a mesh of Auto axes {tuple(mesh.auto_axes)} carries no "
        "sharding in its type (jax.typeof(storage).sharding.spec is P(None) whether the storage was "
        "sharded outside the jit or replicated), so functional_strides cannot choose its sharded plans "
        "(local reads, halo ppermutes, one all-to-all) and XLA's partitioner may all-gather the storage "
        "onto every device. Pass out_sharding=NamedSharding(mesh, PartitionSpec(...)) to contiguous() "
        "or fs.materialize (the storage is then taken to be sharded over that mesh axis), or put the "
        "storage on an explicit mesh, jax.make_mesh(..., axis_types=(AxisType.Explicit,)) (with "
        "jax.set_mesh), whose shardings are part of the types. This warning is given once per mesh.",
        ShardingWarning, stacklevel=4)


def _out_dim(sharding: NamedSharding, part: Partition) -> int | None:
    """The output dim ``sharding`` shards over the storage's mesh axis, or ``None``."""
    if _abstract(sharding.mesh) != _abstract(part.mesh):
        return None
    dims = [d for d, entry in enumerate(sharding.spec) if entry is not None]
    if len(dims) == 1 and sharding.spec[dims[0]] == part.axis:
        return dims[0]
    return None


def _dim_spec(dim: int | None, part: Partition) -> Any:
    return P() if dim is None else P(*([None] * dim), part.axis)


def _default_dim(layout: Layout, part: Partition) -> int | None:
    # an extent of 0 splits too (0 elements per device), as JAX shards it: an empty view is
    # typed as its non-empty neighbours are, so that concatenating them type-checks
    for d, extent in enumerate(layout.shape):
        if extent % part.devices == 0:
            return d
    return None


def default_out_sharding(layout: Layout, part: Partition) -> NamedSharding:
    """The view's output sharded over the storage's mesh axis along its outermost dim whose
    extent the device count divides; replicated when no dim's does (JAX shards evenly). An
    extent of 0 counts as divided (as in JAX, an empty dim splits into empty blocks), so an
    empty view is typed as a non-empty neighbour it is concatenated with.

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
      >>> default_out_sharding(Layout((1, 4, 0), (4, 1, 1)), part).spec    # 8 divides 0
      P(None, None, 'x')

    Semantics: ``jax.sharding.NamedSharding`` (an even split, as JAX requires of a
    sharded output dim)."""
    return part.sharding(_dim_spec(_default_dim(layout, part), part))


# -- the parts of an output ------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Parts:
    """The output cut into one part per device: part ``d`` is the view's elements at
    ``shape`` with ``strides``, from storage index ``offset + starts[d]`` (the view's offset,
    clamped where traced). ``dim`` is the output dim the parts are stacked along (the parts
    are its slices), or ``None`` when they are the flat blocks of the row-major output, cut
    across dims (a part is then ``shape[0]`` rows of one dim and the dims inside it)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    starts: tuple[int, ...]
    dim: int | None


def _dim_parts(layout: Layout, devices: int, dim: int, rows: int) -> Parts:
    """Slices of ``rows`` along ``dim`` (the last ones may lie past the view: padding)."""
    shape = tuple(rows if k == dim else e for k, e in enumerate(layout.shape))
    step = rows * layout.strides[dim]
    return Parts(shape, layout.strides, tuple(d * step for d in range(devices)), dim)


def _flat_parts(layout: Layout, devices: int) -> Parts | None:
    """The flat blocks of the row-major output when each is ``q`` rows of one dim ``k`` and
    the dims inside it (the outer dims and ``shape[k] / q`` fixed per device), else None."""
    numel = layout.numel
    if numel % devices:
        return None
    per = numel // devices
    for k in range(layout.ndim):
        inner = math.prod(layout.shape[k + 1:])
        if per % inner == 0 and layout.shape[k] % (per // inner) == 0:
            break
    else:
        return None
    q = per // inner
    lead = (*layout.shape[:k], layout.shape[k] // q)
    steps = (*layout.strides[:k], q * layout.strides[k])
    starts = tuple(sum(int(i) * s for i, s in zip(np.unravel_index(d, lead), steps, strict=True))
                   for d in range(devices))
    return Parts((q, *layout.shape[k + 1:]), layout.strides[k:], starts, 0 if k == 0 else None)


def _offset_range(layout: Layout, n: int) -> tuple[int, int]:
    """The offsets the view may start at: its own when known; for a traced one every offset
    it may be clamped to (the lowest index in ``[0, n - span - 1]``, as on one device)."""
    if not is_traced(layout.offset):
        offset = int(np.asarray(layout.offset))
        return offset, offset
    return -layout.low_reach, n - 1 - layout.span - layout.low_reach


def _halos(parts: Parts, offsets: tuple[int, int], n: int,
           devices: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Per device, the elements its part needs from its left and from its right neighbour's
    block (for any offset in ``offsets``), when every part lies within its own block and its
    neighbours'; else None. A part past the storage end (padding) reads zeros there."""
    block = n // devices
    low = sum((e - 1) * s for e, s in zip(parts.shape, parts.strides, strict=True) if s < 0)
    span = sum((e - 1) * abs(s) for e, s in zip(parts.shape, parts.strides, strict=True))
    lo, hi = offsets
    left = tuple(max(0, d * block - (lo + low + start)) for d, start in enumerate(parts.starts))
    right = tuple(max(0, hi + low + start + span + 1 - (d + 1) * block)
                  for d, start in enumerate(parts.starts))
    return (left, right) if max(left) <= block and max(right) <= block else None


# -- permutes: the storage's grid re-cut between devices ---------------------------------------

@dataclasses.dataclass(frozen=True)
class Exchange:
    """A view that is a permutation of the whole storage, read by sending each device's
    block's pieces to the devices whose output parts hold them.

    The storage is the row-major array ``grid`` (its dims, the view's dims cut where the
    device blocks of the input and of the output begin); device ``d``'s block is the slice of
    ``grid[:src]`` at the digits of ``d``, and target device ``c``'s part is the slice of
    ``grid`` axes ``tgt`` at the digits of ``c`` (row-major in that order); ``out[u]`` lists
    the grid axes of output dim ``u``. When no axis is in both (a transpose, a heads-first
    permute sharded along the heads) every device sends every other one an equal piece: one
    ``lax.all_to_all``; otherwise devices exchange with the few that share digits
    (``lax.ppermute`` rounds)."""

    grid: tuple[int, ...]
    src: int
    tgt: tuple[int, ...]
    out: tuple[tuple[int, ...], ...]

    @property
    def rounds(self) -> int:
        """Devices each device sends a piece to (itself included): 1 is no communication."""
        return math.prod(self.grid[a] for a in range(self.src) if a not in self.tgt)

    @property
    def part_shape(self) -> tuple[int, ...]:
        """The shape of a device's output part (each output dim without its ``tgt`` axes)."""
        return tuple(math.prod(self.grid[a] for a in axes if a not in self.tgt) for axes in self.out)


def _top(pieces: list[int], factor: int) -> int | None:
    """How many leading ``pieces`` multiply to ``factor`` (None when none do)."""
    acc = 1
    for i, p in enumerate(pieces):
        if acc == factor:
            return i
        acc *= p
    return len(pieces) if acc == factor else None


def _leading_split(extents: list[int], devices: int) -> tuple[int, int] | None:
    """``(k, a)``: the first ``k`` extents and the top ``a`` of the next multiply to
    ``devices`` (a row-major index's leading digits), else None."""
    acc = 1
    for k, e in enumerate(extents):
        if devices % acc:
            return None
        if (acc * e) % devices == 0:
            return k, devices // acc
        acc *= e
    return None


def _exchange(layout: Layout, n: int, devices: int, dim: int | None) -> Exchange | None:
    """The :class:`Exchange` of a view that addresses each storage element once, with
    positive strides (a permute of the storage reshaped), its output cut along ``dim`` (or
    into flat blocks, ``dim=None``); None for any other view."""
    if layout.numel != n or _offset_range(layout, n) != (0, 0):
        return None
    dims = sorted(((e, s, u) for u, (e, s) in enumerate(zip(layout.shape, layout.strides, strict=True))
                   if e > 1), key=lambda t: -t[1])
    run = 1
    for e, s, _ in reversed(dims):
        if s != run:
            return None
        run *= e
    extents = [e for e, _, _ in dims]
    g_of = {u: g for g, (_, _, u) in enumerate(dims)}
    cuts: list[set[int]] = [set() for _ in dims]
    found = _leading_split(extents, devices)
    if found is None:
        return None
    k, a = found
    cuts[k].add(a)
    if dim is not None:
        if layout.shape[dim] % devices or dim not in g_of:
            return None
        tgt_dims, m, b = [], dim, devices
    else:
        users = [u for u in range(layout.ndim) if u in g_of]
        found = _leading_split([layout.shape[u] for u in users], devices)
        if found is None:
            return None
        tgt_dims, m, b = users[:found[0]], users[found[0]], found[1]
    cuts[g_of[m]].add(b)
    pieces: list[list[int]] = []
    for e, factors in zip(extents, cuts, strict=True):
        chain = sorted(f for f in factors if 1 < f < e)
        steps, last = [], 1
        for f in chain:
            if f % last:
                return None
            steps.append(f // last)
            last = f
        pieces.append([*steps, e // last])
    first = np.cumsum([0] + [len(p) for p in pieces]).tolist()
    grid = tuple(p for ps in pieces for p in ps)
    src = first[k] + _top(pieces[k], a)
    tgt = [a_ for u in tgt_dims for a_ in range(first[g_of[u]], first[g_of[u] + 1])]
    tgt += list(range(first[g_of[m]], first[g_of[m]] + _top(pieces[g_of[m]], b)))
    out = tuple(tuple(range(first[g_of[u]], first[g_of[u] + 1])) if u in g_of else ()
                for u in range(layout.ndim))
    return Exchange(grid, src, tuple(tgt), out)


# -- read plans --------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ShardedRead:
    """The plan of a read (or a write) of a sharded storage.

    Attributes:
      strategy: ``"local"`` (each device reads its output part from its own block: no
        communication), ``"halo"`` (its own block plus ``left``/``right`` elements of its
        neighbours, exchanged with ``lax.ppermute``), ``"all_to_all"`` (a permute of the whole
        storage: every device sends each other one the piece of its block that device's part
        holds, one ``lax.all_to_all``), ``"exchange"`` (such a permute where each device sends
        pieces to a few devices only: ``lax.ppermute``) or ``"partitioner"`` (the single-device
        lowering partitioned by JAX's SPMD partitioner).
      dim: the output dim split into the parts (``None``: flat blocks cut across dims, or
        a replicated output).
      left: per device, the elements it needs from the end of its left neighbour's block (all
        0 unless ``"halo"``).
      right: per device, the elements it needs from the start of its right neighbour's block
        (all 0 unless ``"halo"``).
      block: storage elements per device.
      out_sharding: the output's ``NamedSharding`` (for a ``flat`` read, of the values before
        they are flattened; a write's is the storage's).
      padded: rows past the end of dim 0 read (or written) so that it splits evenly: the
        last parts are shorter in the view (a ``flat`` read's storage keeps the padding; a
        read of the values then reshards them along ``out_sharding`` and cuts it off).
      flat: the read returns the row-major values flattened, in blocks (``contiguous()``'s
        storage).
      detail: the parts (a ``Parts`` record: per device, the shape, strides and first storage
        index of its part) or the permute (an ``Exchange`` record: the pieces each device sends
        and receives) the program runs.
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
    or a ``lax.all_to_all`` (``"local"``, ``"halo"``, ``"all_to_all"``, ``"exchange"``), or of the
    single-device program with the output's sharding (``"partitioner"``)."""

    strategy: str
    dim: int | None
    left: tuple[int, ...]
    right: tuple[int, ...]
    block: int
    out_sharding: Any
    padded: int = 0
    flat: bool = False
    detail: Any = dataclasses.field(default=None, repr=False)

    @property
    def halo_elements(self) -> int:
        """Storage elements that cross a shard boundary in the whole read (halo reads; the
        last device's reach past the storage end, padding, reads zeros and crosses none)."""
        return sum(self.left) + sum(self.right[:-1])


def _none(part: Partition) -> tuple[int, ...]:
    return (0,) * part.devices


def _halo_plan(layout: Layout, n: int, part: Partition, parts: Parts | None, out: Any, *,
               padded: int = 0, flat: bool = False) -> ShardedRead | None:
    if parts is None:
        return None
    halos = _halos(parts, _offset_range(layout, n), n, part.devices)
    if halos is None:
        return None
    strategy = "halo" if any(halos[0]) or any(halos[1]) else "local"
    return ShardedRead(strategy, parts.dim, *halos, n // part.devices, out, padded, flat, parts)


def _exchange_plan(layout: Layout, n: int, part: Partition, dim: int | None, out: Any,
                   flat: bool) -> ShardedRead | None:
    ex = _exchange(layout, n, part.devices, dim)
    if ex is None:
        return None
    shared = set(ex.tgt) & set(range(ex.src))
    strategy = "local" if ex.rounds == 1 else ("exchange" if shared else "all_to_all")
    return ShardedRead(strategy, dim, _none(part), _none(part), n // part.devices, out, 0, flat, ex)


def _moved(plan: ShardedRead, n: int) -> int:
    """Storage elements a plan sends between devices."""
    if isinstance(plan.detail, Exchange):
        rounds = plan.detail.rounds
        return n * (rounds - 1) // rounds
    return plan.halo_elements


def _cheapest(*plans: Any) -> ShardedRead | None:
    """The plan that sends the fewest elements between devices (the first of equals)."""
    found = [p for p in plans if p]
    if not found:
        return None
    n = found[0].block * len(found[0].left)
    return min(found, key=lambda p: _moved(p, n))


def _padded_rows(layout: Layout, part: Partition) -> int:
    rows = layout.shape[0]
    return -(-rows // part.devices) * part.devices - rows


def read_plan(layout: Layout, n: int, part: Partition, out_sharding: Any = None, *,
              flat: bool = False) -> ShardedRead:
    """How :func:`read` reads ``layout`` from a storage of ``n`` elements partitioned as ``part``.

    The output is cut into one part per device (along ``out_sharding``'s dim, or into the
    flat blocks of the row-major output for ``flat``, ``contiguous()``'s storage), and the
    first plan that applies is taken: ``"local"``/``"halo"`` when every part lies within its
    own device's block and its neighbours'; ``"all_to_all"``/``"exchange"`` for a permute of
    the whole storage (a transpose, a heads-first permute), the one that moves fewer elements
    where both apply; ``"halo"`` along dim 0 then one reshard of the output to
    ``out_sharding``, while that moves less than an all-gather of the storage (a dim 0 the
    device count does not divide is padded to a multiple of it: the last part is shorter in
    the view); else ``"partitioner"``. A traced offset is planned for every offset it may be
    clamped to.

    Args:
      layout: the view (elements; a traced offset is clamped into the storage, as on one device).
      n: storage elements; ``part.devices`` divides it.
      part: the storage's :class:`Partition`.
      out_sharding: a ``NamedSharding`` of the output (default: :func:`default_out_sharding`;
        for ``flat``, the flat blocks).
      flat: plan the values flattened, in blocks of the storage's mesh axis.
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
      'all_to_all'
      >>> odd = read_plan(Layout((509, 256), (64, 1)), 32960, part, flat=True)   # 509 frames
      >>> odd.strategy, odd.padded, odd.flat
      ('halo', 3, True)

    Semantics: no PyTorch/NumPy counterpart; it plans a ``jax.shard_map`` program with
    ``lax.ppermute`` halo exchanges or one ``lax.all_to_all``, or the single-device program
    partitioned by JAX's SPMD partitioner."""
    if out_sharding is not None and not isinstance(out_sharding, NamedSharding):
        raise LayoutTypeError(f"contiguous: out_sharding must be a jax.sharding.NamedSharding, not "
                              f"{type(out_sharding).__name__} (got out_sharding={out_sharding!r}, layout "
                              f"{layout}); build one with NamedSharding(mesh, PartitionSpec(...)).")
    devices, block = part.devices, n // part.devices
    if out_sharding is None:
        dim = 0 if flat else _default_dim(layout, part)
    else:
        dim = _out_dim(out_sharding, part)
        if dim is None:  # replicated, another mesh axis or several dims: placed as asked
            flat = flat and out_sharding.spec == P()
            return ShardedRead("partitioner", None, _none(part), _none(part), block, out_sharding, flat=flat)
        out_sharding = part.sharding(out_sharding.spec)
    if flat and dim is not None and dim > 0:
        flat = False  # values sharded along an inner dim: flattened afterwards
    if layout.is_empty or layout.ndim == 0:
        spec = _dim_spec(dim, part)
        return ShardedRead("partitioner", dim, _none(part), _none(part), block,
                           out_sharding or part.sharding(spec), flat=flat and spec != P())
    if flat:
        rows = layout.shape[0]
        values = part.sharding(P(part.axis))
        even = rows % devices == 0
        found = _cheapest(
            even and _halo_plan(layout, n, part, _dim_parts(layout, devices, 0, rows // devices), values,
                                flat=True),
            _halo_plan(layout, n, part, _flat_parts(layout, devices), values, flat=True),
            _exchange_plan(layout, n, part, None, values, True),
            not even and _halo_plan(layout, n, part, _dim_parts(layout, devices, 0, -(-rows // devices)),
                                    values, padded=_padded_rows(layout, part), flat=True))
        if found:
            return found
        spec = P(part.axis) if layout.numel % devices == 0 else P()
        return ShardedRead("partitioner", None, _none(part), _none(part), block, part.sharding(spec),
                           flat=True)
    out = out_sharding if out_sharding is not None else part.sharding(_dim_spec(dim, part))
    if dim is not None and layout.shape[dim] % devices == 0:
        along = _dim_parts(layout, devices, dim, layout.shape[dim] // devices)
        found = _cheapest(_halo_plan(layout, n, part, along, out),
                          _exchange_plan(layout, n, part, dim, out, False))
        if found:
            return found
    # along dim 0 (padded to split evenly), then one reshard of the output: while that moves less
    # than an all-gather of the storage, which the partitioner's read may need
    if (dim is None and layout.numel < n) or (dim is not None and dim > 0 and layout.numel < n * devices):
        rows = layout.shape[0]
        found = _halo_plan(layout, n, part, _dim_parts(layout, devices, 0, -(-rows // devices)), out,
                           padded=_padded_rows(layout, part))
        if found:
            return dataclasses.replace(found, dim=dim)
    return ShardedRead("partitioner", dim, _none(part), _none(part), block, out)


def write_plan(layout: Layout, n: int, part: Partition, *, mode: str = "set",
               overlap: str = "error", dtype: Any = None) -> ShardedRead:
    """How :func:`write` writes through ``layout`` into a storage of ``n`` elements
    partitioned as ``part``: the parts of the view along its dim 0 written where they lie
    (``"local"``/``"halo"``: each device writes its part into ``[left halo, block, right
    halo]`` and sends the halos' updates back to their owners; a dim 0 the device count does
    not divide is padded, the padding rows written with the mode's identity, or masked out for
    ``"set"``); a permute of the whole storage as the read of ``src`` through the inverse
    permute (``"all_to_all"``/``"exchange"``), combined with the storage where it lies; or by
    JAX's SPMD partitioner (``"partitioner"``, also for a ``"set"`` through an overlapping view
    with ``overlap="error"``, so that it raises as on one device).

    Args:
      layout: the view written through (elements; a traced offset is clamped into the
        storage, as on one device).
      n: storage elements; ``part.devices`` divides it.
      part: the storage's :class:`Partition`.
      mode: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"``.
      overlap: ``"error"`` or another policy of :func:`functional_strides.write`.
      dtype: the storage's dtype, where a mode has no exact identity for it (a complex
        multiply, min or max):
        its padding rows are masked out, as a set's.
    Returns:
      A :class:`ShardedRead` (its ``out_sharding`` is the storage's sharding; for a permute,
      ``detail`` is ``(inverse layout, the read plan of src through it)``).
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
      >>> write_plan(Layout((256, 128), (1, 256)), 32768, part).strategy   # through a transpose
      'all_to_all'

    Semantics: no PyTorch/NumPy counterpart; it plans a ``jax.shard_map`` program (halo
    updates sent back with ``lax.ppermute``, or ``src`` permuted back by one
    ``lax.all_to_all``), or the single-device write partitioned by JAX's SPMD partitioner."""
    sharding = part.sharding(P(part.axis))
    devices, block = part.devices, n // part.devices
    none = ShardedRead("partitioner", None, _none(part), _none(part), block, sharding)
    overlapping = _overlap.write_check(layout) is not None if not layout.is_empty else False
    if layout.ndim == 0 or layout.is_empty or (mode == "set" and overlap == "error" and overlapping):
        return none
    rows = layout.shape[0]
    even = rows % devices == 0
    halo = even and _halo_plan(layout, n, part, _dim_parts(layout, devices, 0, rows // devices), sharding)
    inverse, permuted = _inverse(layout, n), None
    if inverse is not None:
        read = read_plan(inverse, n, part, flat=True)
        if read.strategy != "partitioner" and not read.padded:
            permuted = ShardedRead(read.strategy, None, read.left, read.right, block, sharding, 0, True,
                                   (inverse, read))
    if halo and (permuted is None or _moved(halo, n) <= _moved(permuted.detail[1], n)):
        return halo
    if permuted is not None:
        return permuted
    if rows % devices:
        padded = Layout((rows + _padded_rows(layout, part), *layout.shape[1:]), layout.strides, layout.offset)
        # a set (a mode without an exact identity) keeps its writers only where the padding rows
        # share no slot with the view
        exact = mode != "set" and (dtype is None or has_exact_identity(storage_mode(mode, dtype), dtype))
        if exact or _overlap.write_check(padded) is None:
            found = _halo_plan(layout, n, part, _dim_parts(layout, devices, 0, padded.shape[0] // devices),
                               sharding, padded=padded.shape[0] - rows)
            if found:
                return found
    return none


def _inverse(layout: Layout, n: int) -> Layout | None:
    """For a view that is a permutation of the whole storage (positive strides), the layout
    that reads the row-major values of the view back into storage order; else None."""
    if layout.numel != n or layout.ndim == 0 or _offset_range(layout, n) != (0, 0):
        return None
    dims = sorted(((e, s, u) for u, (e, s) in enumerate(zip(layout.shape, layout.strides, strict=True))
                   if e > 1), key=lambda t: -t[1])
    run = 1
    for e, s, _ in reversed(dims):
        if s != run:
            return None
        run *= e
    rowmajor = Layout.contiguous(layout.shape).strides
    return Layout(tuple(e for e, _, _ in dims), tuple(rowmajor[u] for _, _, u in dims), 0)

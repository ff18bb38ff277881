"""The library's primitives: every read and write of a view in a program is one of them.

``strided_read`` (operands: the storage, and the offset where it is traced) gives the dense
values of a view; ``strided_write`` (operands: the storage, the values, and a traced offset)
gives the storage after writing them through a view. Their params are the view's shape and
strides (in elements), its offset where it is static (``offset=None``: the last operand), the
method, whether the strided copy was enabled when the program was traced (``native``), the
write's mode, and the batch they are mapped over (``batch``: the leading extents of the
batched operands; ``batched``: which operands carry them), so that ``jax.make_jaxpr`` reads::

    strided_read[batch=() batched=(False, False) method=auto native=True offset=0 shape=(4, 4)
                 strides=(1, 4)] a

Their rules, all in this module:

* abstract evaluation -- the one check of the operands a traced read or write reaches: the
  storage's rank against the batch, the offset operand's dtype and shape, the bounds (a static
  offset at both ends; a traced one: the view's span against the storage) and whether the
  indices need x64 (:func:`functional_strides._src.lowering.reads.index_dtype`). A forced
  method is checked where the primitive is bound, since it depends on ``fs.config``, which is
  not in the key JAX caches abstract evaluations under;
* lowering -- the plan's XLA ops (:func:`functional_strides._src.lowering.reads.lower_impl`,
  :func:`functional_strides._src.lowering.writes.lower_impl`) through ``mlir.lower_fun`` for
  every platform and for ``jax.export``; where the program is lowered for XLA:CPU alone and not
  for export, the strided copy or write where the plan takes it. Off the CPU the plan has no
  loop of cache tiles (:func:`functional_strides._src.lowering.tiled.loops`): XLA's transpose
  emitter is the GPU's and TPU's;
* JVP -- both are linear in their array operands (a read in the storage; a ``"set"`` or
  ``"add"`` write in the storage and the values), so the tangent is the same primitive of the
  tangents; a ``"mul"`` write's is the product rule, built of the primitives themselves (a
  multiplying write into ones, an add-write of the tangents times the exclusive products of
  the elements sharing a slot); a ``"min"`` or ``"max"`` write takes the JVP of its XLA plan;
* transpose -- a read's is an add-write of the cotangent into zeros of the storage (stride-0
  dims summed first), planned as a write (the strided write on CPU), or a read of the
  cotangent where the view is a permutation of the whole storage; a write's are a read of the
  cotangent for the values and, for the storage, the cotangent with the view's slots cleared
  (``"set"``) or kept (``"add"``); a ``"set"`` through an overlapping view gives its values'
  cotangent by the transpose of its XLA plan (only the last element of each slot was written);
* batching -- the primitive itself, with one more batch extent (no loop): a batched read or
  write lowers to its XLA plan mapped over the batch (``jax.vmap``), which XLA's partitioner
  can split across devices along the batch where a custom call would be gathered.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jax_core
from jax.interpreters import ad, batching, mlir

from ..core.errors import StorageError
from ..core.layout import Layout, check_in_storage
from ..core.overlap import overlap as _overlap
from ..native import copy_kernel as _copy_kernel
from . import reads as _reads
from . import tiled as _tiled
from . import writes as _writes
from .product_scatter import exclusive_products as _exclusive_products

__all__ = ["read", "read_operands", "strided_read_operands_p", "strided_read_p", "strided_write_p", "write"]

strided_read_p = jax_core.Primitive("strided_read")
strided_write_p = jax_core.Primitive("strided_write")
#: The eager read (outside ``jit``) with strides as operands: one program per output shape.
strided_read_operands_p = jax_core.Primitive("strided_read_operands")


# -- binding ---------------------------------------------------------------------------------


def _operands(layout: Layout) -> tuple[tuple[jax.Array, ...], int | None]:
    """The offset as an operand (a traced or array offset) or a param (a static one)."""
    if layout.has_static_offset:
        return (), int(layout.offset)
    return (jnp.asarray(layout.offset),), None


def read(storage: jax.Array, layout: Layout, method: str = "auto") -> jax.Array:
    """``strided_read`` of a non-empty view of a 1-D storage: ``out[i] = storage[layout(*i)]``.

    Args:
      storage: 1-D array of ``n`` elements.
      layout: the view (strides, offset in elements); a traced offset is clamped as
        ``lax.dynamic_slice`` clamps (:func:`functional_strides._src.lowering.reads.dynamic_window`).
      method: ``"auto"`` or a read path (:data:`functional_strides.READ_METHODS`).
    Returns:
      The dense row-major array of ``layout.shape``.
    Raises:
      StorageError: the view does not lie in the storage, or its indices need x64 while it is
        off (the abstract evaluation).
      LayoutError: a forced ``method`` that does not apply."""
    _reads.check_read_method(layout, storage.dtype, method)
    offset_operands, offset = _operands(layout)
    storage, *offset_operands = _copy_kernel.alike(storage, *offset_operands)[0]
    return strided_read_p.bind(storage, *offset_operands, shape=tuple(layout.shape),
                               strides=tuple(layout.strides), offset=offset, method=method,
                               native=_copy_kernel.enabled(), batch=(), batched=(False, False))


def write(storage: jax.Array, layout: Layout, values: jax.Array, *, mode: str, overlapping: bool,
          method: str = "auto", op: str = "write") -> jax.Array:
    """``strided_write``: ``storage`` with ``values`` combined into the slots of a non-empty view.

    Args:
      storage: 1-D array of ``n`` elements.
      layout: the view (strides, offset in elements); a traced offset is clamped as reads clamp it.
      values: broadcastable to ``layout.shape``, of the storage's dtype.
      mode: ``"set"``, ``"add"``, ``"mul"``, ``"min"`` or ``"max"`` (bool storages: as
        :func:`functional_strides._src.lowering.modes.storage_mode` maps them).
      overlapping: whether elements of the view may share slots (``"set"``: the last in
        row-major order wins).
      method: ``"auto"`` or a write path (:data:`functional_strides.WRITE_METHODS`).
      op: the name used in error messages.
    Returns:
      The new storage, of the storage's shape and dtype.
    Raises:
      StorageError, LayoutError: as :func:`read`; values of another shape or dtype."""
    _writes.check_write_method(layout, storage.shape[0], storage.dtype, mode, method, op)
    offset_operands, offset = _operands(layout)
    values = jnp.broadcast_to(values, layout.shape)
    storage, values, *offset_operands = _copy_kernel.alike(storage, values, *offset_operands)[0]
    return strided_write_p.bind(storage, values, *offset_operands, shape=tuple(layout.shape),
                                strides=tuple(layout.strides), offset=offset, mode=mode,
                                overlapping=bool(overlapping), method=method, op=op,
                                native=_copy_kernel.enabled(), batch=(), batched=(False, False))


def read_operands(storage: jax.Array, strides: jax.Array, offset: jax.Array,
                  shape: tuple[int, ...]) -> jax.Array:
    """``strided_read_operands``: the read of ``shape`` at ``offset`` + ``strides`` (int arrays of
    the index dtype; the caller has checked the bounds), the strided copy on CPU, else a gather."""
    return strided_read_operands_p.bind(storage, strides, offset, shape=tuple(shape),
                                        native=_copy_kernel.enabled())


_reads.PRIMITIVES.update(read=read, write=write, read_operands=read_operands)


# -- abstract evaluation ---------------------------------------------------------------------


def _layout(shape: tuple[int, ...], strides: tuple[int, ...], offset: int | None,
            operand: Any = None) -> Layout:
    """The view of a primitive's params; with ``offset=None`` at ``operand`` (a value of the
    offset operand), or at a placeholder array offset (the lowest that fits) for the checks."""
    if offset is not None:
        return Layout(shape, strides, offset)
    if operand is None:
        operand = np.asarray(_lowest_offset(shape, strides), np.int64)
    return Layout(shape, strides, operand)


def _lowest_offset(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """The lowest offset a view of ``shape`` and ``strides`` fits at (its lowest index at 0):
    ``-Layout.low_reach``, which a Layout at offset 0 would refuse to hold for negative strides."""
    return -sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)


def _aval(like: Any, shape: tuple[int, ...], lead: int = 0) -> Any:
    """An aval of ``shape`` and ``like``'s dtype that varies over ``like``'s manual axes, sharded
    as ``like`` along its ``lead`` leading (batch) axes and unsharded along the rest (as the
    XLA plan's result is)."""
    spec = (*tuple(like.sharding.spec), *([None] * like.ndim))[:lead]
    sharding = jax.sharding.NamedSharding(like.sharding.mesh, jax.sharding.PartitionSpec(*spec))
    return like.update(shape=tuple(shape), weak_type=False, sharding=sharding)


def _check_storage(op: str, storage: Any, batch: tuple[int, ...], batched: bool, layout: Layout) -> int:
    want = len(batch) + 1 if batched else 1
    if storage.ndim != want or (batched and tuple(storage.shape[:-1]) != tuple(batch)):
        raise StorageError(f"{op}: the storage must have shape {(*batch, 'N') if batched else ('N',)}, not "
                           f"{tuple(storage.shape)} (layout {layout}); pass a 1-D storage (or one of "
                           "shape (*batch, N) with a batched array).")
    return int(storage.shape[-1])


def _check_offset(op: str, aval: Any, batch: tuple[int, ...], batched: bool, layout: Layout) -> None:
    want = tuple(batch) if batched else ()
    if np.dtype(aval.dtype).kind not in "iu" or tuple(aval.shape) != want:
        raise StorageError(f"{op}: the offset operand must be an integer array of shape {want}, not "
                           f"{aval.str_short()} (layout {layout}); pass an int, or an integer scalar array.")


def _check_view(op: str, layout: Layout, n: int) -> None:
    """The bounds (static offset) or span (traced offset) of a non-empty view and its index dtype."""
    if layout.is_empty:
        return
    _reads.index_dtype(layout, n, op)  # first: a span past int32 without x64 says so
    if layout.has_static_offset:
        check_in_storage(op, layout.shape, layout.strides, int(layout.offset), n)
    else:
        reach = layout.span + 1
        if reach > n:
            raise StorageError(
                f"{op}: layout {layout} spans {reach} storage elements (sum((size-1)*stride) + 1), "
                f"but the storage has {n} elements, so no offset fits. Shrink the shape or strides, or "
                "pass a larger storage.")


def _read_abstract_eval(storage, *offset_operand, shape, strides, offset, method, native, batch, batched):
    del method, native
    layout = _layout(shape, strides, offset)
    n = _check_storage("materialize", storage, batch, batched[0], layout)
    if offset is None:
        _check_offset("materialize", offset_operand[0], batch, batched[1], layout)
    _check_view("materialize", layout, n)
    return _aval(storage, (*batch, *shape), len(batch) if batched[0] else 0)


def _write_abstract_eval(storage, values, *offset_operand, shape, strides, offset, mode, overlapping,
                         method, op, native, batch, batched):
    del mode, overlapping, method, native
    layout = _layout(shape, strides, offset)
    n = _check_storage(op, storage, batch, bool(batch), layout)
    want = (*batch, *shape) if batched[0] else tuple(shape)
    if tuple(values.shape) != want or values.dtype != storage.dtype:
        raise StorageError(f"{op}: the values must have shape {want} and dtype {storage.dtype}, not "
                           f"{values.str_short()} (layout {layout}); broadcast and cast them first.")
    if offset is None:
        _check_offset(op, offset_operand[0], batch, batched[1], layout)
    _check_view(op, layout, n)
    return storage.update(weak_type=False)  # the storage, written: its shape, dtype and sharding


def _read_operands_abstract_eval(storage, strides, offset, *, shape, native):
    del native
    if storage.ndim != 1 or strides.shape != (len(shape),) or offset.shape != ():
        raise StorageError(f"materialize: a 1-D storage, {len(shape)} strides and a scalar offset, not "
                           f"{storage.str_short()}, {strides.str_short()} and {offset.str_short()}.")
    return _aval(storage, shape)


# -- lowering --------------------------------------------------------------------------------


def _mapped(fn: Callable[..., jax.Array], batch: tuple[int, ...],
            in_axes: tuple[int | None, ...]) -> Callable[..., jax.Array]:
    """``fn`` mapped over ``len(batch)`` leading axes of the operands ``in_axes`` marks 0."""
    for _ in batch:
        fn = jax.vmap(fn, in_axes=in_axes)
    return fn


def _flat_batch(storage: jax.Array, layout: Layout, batch: tuple[int, ...]) -> Layout | None:
    """A batch of storages ``(*batch, N)`` read or written at one offset is one view of the
    flattened storage, with a leading dim of stride ``N`` per batch axis (the offset clamps into
    the same range): the view, where its indices fit the index dtype; else ``None``."""
    n = storage.shape[-1]
    if math.prod(batch) * n - 1 > np.iinfo(np.int32).max and not jax.config.read("jax_enable_x64"):
        return None
    steps = Layout.contiguous((*batch, n)).strides[:-1]
    return Layout((*batch, *layout.shape), (*steps, *layout.strides), layout.offset)


def _read_fn(storage, *offset_operand, shape, strides, offset, method, batch, batched, kernel):
    """The read's XLA plan (or the strided copy where ``kernel``), mapped over its batch."""
    o = offset_operand[0] if offset_operand else None
    if kernel and batch and batched == (True, False):  # one view of the flattened storages
        flat = _flat_batch(storage, _layout(shape, strides, offset, o), batch)
        if flat is not None:
            return _reads.lower_impl(storage.reshape(-1), flat, method, kernel=True)

    def one(s, o):
        return _reads.lower_impl(s, _layout(shape, strides, offset, o), method, kernel=kernel and not batch)

    return _mapped(one, batch, (0 if batched[0] else None, 0 if batched[1] else None))(storage, o)


def _write_fn(storage, values, *offset_operand, shape, strides, offset, mode, overlapping, method, op,
              batch, batched, kernel):
    """The write's XLA plan (or the strided write where ``kernel``), mapped over its batch."""
    o = offset_operand[0] if offset_operand else None
    if kernel and batch and batched == (True, False):  # one view of the flattened storages
        flat = _flat_batch(storage, _layout(shape, strides, offset, o), batch)
        if flat is not None:
            out = _writes.lower_impl(storage.reshape(-1), flat, values, mode=mode, overlapping=overlapping,
                                     method=method, op=op, kernel=True)
            return out.reshape(storage.shape)

    def one(s, v, o):
        return _writes.lower_impl(s, _layout(shape, strides, offset, o), v, mode=mode,
                                  overlapping=overlapping, method=method, op=op, kernel=kernel and not batch)

    axes = (0, 0 if batched[0] else None, 0 if batched[1] else None)
    return _mapped(one, batch, axes)(storage, values, o)


def _one_device(ctx) -> bool:
    """Whether the program runs on one device: a batched read or write may then take the strided
    copy (a program partitioned across devices splits XLA's ops along the batch, but would
    gather every operand of a custom call)."""
    return getattr(ctx.module_context.axis_context, "num_devices", None) == 1


def _platforms(ctx) -> tuple[str, ...]:
    return tuple(ctx.platforms or ctx.module_context.platforms)


def _lowering(fn: Callable[..., jax.Array]) -> Callable[..., Any]:
    def rule(ctx, *args, native, **params):
        kernel = (bool(native) and _copy_kernel.takes_native(ctx)
                  and (not params["batch"] or _one_device(ctx)))
        with _tiled.loops(all(p == "cpu" for p in _platforms(ctx))):  # no tile loop off the CPU
            return mlir.lower_fun(functools.partial(fn, kernel=kernel, **params),
                                  multiple_results=False)(ctx, *args)
    return rule


def _gather_operands(storage, strides, offset, *, shape):
    return _reads._gather_at(storage, strides, offset, shape)


def _read_operands_lowering(ctx, storage, strides, offset, *, shape, native):
    if native and _copy_kernel.takes_native(ctx):
        fn = functools.partial(_copy_kernel.ffi_read_operands, shape=shape)
    else:
        fn = functools.partial(_gather_operands, shape=shape)
    return mlir.lower_fun(fn, multiple_results=False)(ctx, storage, strides, offset)


def _on_cpu(*operands: Any) -> bool:
    platforms = {d.platform for x in operands if isinstance(x, jax.Array) for d in x.devices()}
    return platforms == {"cpu"} or (not platforms and jax.default_backend() == "cpu")


@functools.lru_cache(maxsize=256)
def _compiled(prim: Any, params: tuple[tuple[str, Any], ...]) -> Callable[..., Any]:
    return jax.jit(functools.partial(prim.bind, **dict(params)))


def _impl(prim: Any, fn: Callable[..., jax.Array]) -> Callable[..., Any]:
    """Outside a trace (a bind on concrete arrays: eager derivatives and ``vmap``): the primitive
    compiled alone, once per params; under ``jax.disable_jit``, the plan evaluated op by op, the
    strided copy or write where the operands live on the CPU."""
    def impl(*args, **params):
        if jax.config.jax_disable_jit:  # pyright: ignore[reportAttributeAccessIssue]
            native = params.pop("native")
            kernel = bool(native) and not params.get("batch") and _on_cpu(*args)
            return fn(*args, kernel=kernel, **params)
        return _compiled(prim, tuple(sorted(params.items())))(*args)
    return impl


def _read_operands_impl(storage, strides, offset, *, shape, native):
    if native and _on_cpu(storage, strides, offset):
        return _copy_kernel.ffi_read_operands(storage, strides, offset, shape)
    return _gather_operands(storage, strides, offset, shape=shape)


# -- JVP -------------------------------------------------------------------------------------


def _is_zero(t: Any) -> bool:
    return type(t) is ad.Zero


def _zero_tangent(out: Any) -> Any:
    """The symbolic zero tangent of a primal output."""
    return ad.Zero.from_primal_value(out)  # pyright: ignore[reportAttributeAccessIssue]


def _read_jvp(primals, tangents, **params):
    storage, *rest = primals
    out = strided_read_p.bind(storage, *rest, **params)
    if _is_zero(tangents[0]):
        return out, _zero_tangent(out)
    return out, strided_read_p.bind(tangents[0], *rest, **params)


def _write_jvp(primals, tangents, **params):
    storage, values, *rest = primals
    out = strided_write_p.bind(storage, values, *rest, **params)
    t_storage, t_values = tangents[0], tangents[1]
    if _is_zero(t_storage) and _is_zero(t_values):
        return out, _zero_tangent(out)
    t_storage, t_values = ad.instantiate_zeros(t_storage), ad.instantiate_zeros(t_values)
    if params["mode"] in ("set", "add"):  # linear in the storage and the values
        return out, strided_write_p.bind(t_storage, t_values, *rest, **params)
    if params["mode"] == "mul":
        return out, _mul_tangent(storage, values, rest, t_storage, t_values, params)
    params = {k: v for k, v in params.items() if k != "native"}
    fn = functools.partial(_write_fn, kernel=False, **params)
    _, tangent = jax.jvp(lambda s, v: fn(s, v, *rest), (storage, values), (t_storage, t_values))
    return out, tangent


def _mul_tangent(storage, values, rest, t_storage, t_values, params) -> jax.Array:
    """The product rule of a ``"mul"`` write: ``out[s] = storage[s] * prod_{k -> s} v_k``, so
    ``d out[s] = d storage[s] * prod_{k -> s} v_k + storage[s] * sum_{k -> s} d v_k *
    prod_{j -> s, j != k} v_j``: a multiplying write into ones, and an add-write of the values'
    tangents, each times the product of the other elements in its slot where elements share
    slots (:func:`functional_strides._src.lowering.product_scatter.exclusive_products`: exact
    with zeros, no division). Every piece is a primitive with its own rules (or plain JAX ops),
    so the rule differentiates again and batches."""
    shape, strides, batch, batched = params["shape"], params["strides"], params["batch"], params["batched"]
    per_slot = strided_write_p.bind(jnp.ones_like(storage), values, *rest, **params)
    local = Layout(shape, strides, _lowest_offset(shape, strides))  # which elements share slots
    if _overlaps(local):  # elements share slots: each tangent times the others' product
        slots = _reads.storage_indices(shape, strides, local.offset,
                                       _reads.index_dtype(local, local.span + 1)).reshape(-1)
        lead = batch if batched[0] else ()
        flat = values.reshape(-1, math.prod(shape))
        others = jax.vmap(lambda v: _exclusive_products(slots, v))(flat)
        t_values = t_values * others.reshape((*lead, *shape))
    add = {**params, "mode": "add", "method": "auto"}
    spread = strided_write_p.bind(jnp.zeros_like(storage), t_values, *rest, **add)
    return t_storage * per_slot + storage * spread


# -- transpose -------------------------------------------------------------------------------


def _summed(ct: jax.Array, shape: tuple[int, ...], strides: tuple[int, ...],
            lead: int) -> tuple[jax.Array, tuple[int, ...], tuple[int, ...]]:
    """``ct`` summed over the view's stride-0 dims (past ``lead`` batch axes), and the view without them."""
    axes = tuple(lead + k for k, (size, stride) in enumerate(zip(shape, strides, strict=True))
                 if stride == 0 and size > 1)
    if not axes:
        return ct, shape, strides
    keep = [k for k in range(len(shape)) if lead + k not in axes]
    return ct.sum(axes), tuple(shape[k] for k in keep), tuple(strides[k] for k in keep)


def _overlaps(layout: Layout) -> bool:
    return _overlap.write_check(layout) is not None


def _read_transpose(ct, storage, *rest, shape, strides, offset, method, native, batch, batched):
    del method
    aval = storage.aval
    if _is_zero(ct):
        return [ad.Zero(aval), *([None] * len(rest))]
    ct = ad.instantiate_zeros(ct)
    n = aval.shape[-1]
    lead = len(batch)
    if batch and not batched[0]:  # one storage read at many offsets: the plan's own transpose
        fn = functools.partial(_read_fn, shape=shape, strides=strides, offset=offset, method="auto",
                               batch=batch, batched=batched, kernel=False)
        like = jax.ShapeDtypeStruct(aval.shape, aval.dtype)
        (out,) = jax.linear_transpose(lambda s: fn(s, *rest), like)(ct)
        return [out, *([None] * len(rest))]
    inverse = _writes.permutation_inverse(_layout(shape, strides, offset), n) if offset is not None else None
    if inverse is not None:  # a permutation of the whole storage: read the cotangent back
        flat = ct.reshape((*batch, -1))
        out = strided_read_p.bind(flat, shape=inverse.shape, strides=inverse.strides,
                                  offset=int(inverse.offset), method="auto", native=native, batch=batch,
                                  batched=(bool(batch), False))
        return [out.reshape(aval.shape), *([None] * len(rest))]
    ct, shape, strides = _summed(ct, shape, strides, lead)
    zeros = jnp.zeros(aval.shape, aval.dtype)
    out = strided_write_p.bind(zeros, ct, *rest, shape=shape, strides=strides, offset=offset, mode="add",
                               overlapping=_overlaps(_layout(shape, strides, offset)), method="auto",
                               op="materialize", native=native, batch=batch,
                               batched=(bool(batch), batched[1]))
    return [out, *([None] * len(rest))]


def _write_transpose(ct, storage, values, *rest, shape, strides, offset, mode, overlapping, method, op,
                     native, batch, batched):
    del method
    if mode not in ("set", "add"):
        # never reached: the JVP of these modes is the XLA plan's, which JAX transposes itself
        raise NotImplementedError(f"strided_write of mode {mode!r} is not linear")
    s_undefined, v_undefined = ad.is_undefined_primal(storage), ad.is_undefined_primal(values)
    none = [None] * len(rest)
    if _is_zero(ct):
        return [ad.Zero(storage.aval) if s_undefined else None, ad.Zero(values.aval) if v_undefined else None,
                *none]
    ct = ad.instantiate_zeros(ct)
    common = {"shape": shape, "strides": strides, "offset": offset, "native": native, "batch": batch}
    ct_storage = ct_values = None
    if s_undefined:
        if mode == "add":
            ct_storage = ct
        else:  # the slots the write replaced carry no cotangent to the old storage
            zeros = jnp.zeros(values.aval.shape, values.aval.dtype)
            ct_storage = strided_write_p.bind(ct, zeros, *rest, mode="set", overlapping=overlapping,
                                              method="auto", op=op, batched=batched, **common)
    if v_undefined:
        ct_values = strided_read_p.bind(ct, *rest, method="auto", batched=(bool(batch), batched[1]),
                                        **common)
        if mode == "set" and overlapping:  # only the last element of each slot was written
            ct_values = jnp.where(_winners(ct.shape, rest, op=op, batched=batched, **common), ct_values, 0)
        if batch and not batched[0]:  # values shared by the batch: their cotangents add up
            ct_values = ct_values.sum(tuple(range(len(batch))))
    return [ct_storage, ct_values, *none]


def _winners(storage_shape, rest, *, shape, strides, offset, native, batch, batched, op):
    """Which elements of an overlapping view a ``"set"`` keeps (the last in row-major order of
    each slot): their positions written through the view and read back."""
    numel = math.prod(shape)
    dtype = np.int32 if numel < 2**31 else np.int64
    ids = jnp.arange(1, numel + 1, dtype=dtype).reshape(shape)
    common = {"shape": shape, "strides": strides, "offset": offset, "native": native, "batch": batch}
    written = strided_write_p.bind(jnp.zeros(storage_shape, dtype), ids, *rest, mode="set", overlapping=True,
                                   method="auto", op=op, batched=(False, batched[1]), **common)
    back = strided_read_p.bind(written, *rest, method="auto", batched=(bool(batch), batched[1]), **common)
    return back == ids


def _read_operands_jvp(primals, tangents, *, shape, native):
    storage, strides, offset = primals
    out = strided_read_operands_p.bind(storage, strides, offset, shape=shape, native=native)
    if _is_zero(tangents[0]):
        return out, _zero_tangent(out)
    return out, strided_read_operands_p.bind(tangents[0], strides, offset, shape=shape, native=native)


def _read_operands_transpose(ct, storage, strides, offset, *, shape, native):
    del native
    aval = storage.aval
    if _is_zero(ct):
        return [ad.Zero(aval), None, None]
    fn = functools.partial(_gather_operands, shape=shape)
    (out,) = jax.linear_transpose(lambda s: fn(s, strides, offset),
                                  jax.ShapeDtypeStruct(aval.shape, aval.dtype))(ad.instantiate_zeros(ct))
    return [out, None, None]


# -- batching --------------------------------------------------------------------------------


def _lift(x: Any, dim: Any, was_batched: bool, size: int, batch: tuple[int, ...]) -> Any:
    """An operand of a primitive mapped over ``batch``, given a new batch axis ``dim`` (or none)
    of extent ``size``: with the new axis in front of the old ones, or ``None`` where it has
    none of them (it stays unbatched)."""
    if dim is None:
        if not was_batched:
            return None
        return jnp.broadcast_to(x, (size, *x.shape))
    x = jnp.moveaxis(x, dim, 0)
    if batch and not was_batched:  # batched now, not over the old axes: spread it over them
        x = jnp.broadcast_to(jnp.expand_dims(x, tuple(range(1, 1 + len(batch)))),
                             (size, *batch, *x.shape[1:]))
    return x


def _size(args, dims) -> int:
    return next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)


def _lift_offset(args, dims, k: int, was_batched: bool, size: int, batch: tuple[int, ...],
                 offset: int | None) -> tuple[list[Any], bool]:
    """The offset operands (``args[k:]``) of a primitive given a new batch axis, and whether the
    offset is batched now (a static offset is no operand)."""
    if offset is not None:
        return list(args[k:]), False
    lifted = _lift(args[k], dims[k], was_batched, size, batch)
    return [args[k] if lifted is None else lifted], lifted is not None


def _read_batch(args, dims, *, shape, strides, offset, method, native, batch, batched):
    size = _size(args, dims)
    storage = _lift(args[0], dims[0], batched[0], size, batch)
    offset_operands, offset_batched = _lift_offset(args, dims, 1, batched[1], size, batch, offset)
    storage_batched = storage is not None
    out = strided_read_p.bind(args[0] if storage is None else storage, *offset_operands, shape=shape,
                              strides=strides, offset=offset, method=method, native=native,
                              batch=(size, *batch), batched=(storage_batched, offset_batched))
    return out, 0


def _write_batch(args, dims, *, shape, strides, offset, mode, overlapping, method, op, native, batch,
                 batched):
    size = _size(args, dims)
    storage = _lift(args[0], dims[0], bool(batch), size, batch)
    if storage is None:  # the output is batched: so is the storage it is written into
        storage = jnp.broadcast_to(args[0], (size, *batch, *args[0].shape))
    values = _lift(args[1], dims[1], batched[0], size, batch)
    offset_operands, offset_batched = _lift_offset(args, dims, 2, batched[1], size, batch, offset)
    out = strided_write_p.bind(storage, args[1] if values is None else values, *offset_operands,
                               shape=shape, strides=strides, offset=offset, mode=mode,
                               overlapping=overlapping, method=method, op=op, native=native,
                               batch=(size, *batch),
                               batched=(values is not None, offset_batched))
    return out, 0


def _read_operands_batch(args, dims, *, shape, native):
    del native
    axes = tuple(None if d is None else d for d in dims)
    return jax.vmap(functools.partial(_gather_operands, shape=shape), in_axes=axes)(*args), 0


# -- registration ----------------------------------------------------------------------------

strided_read_p.def_impl(_impl(strided_read_p, _read_fn))
strided_read_p.def_abstract_eval(_read_abstract_eval)
mlir.register_lowering(strided_read_p, _lowering(_read_fn))
ad.primitive_jvps[strided_read_p] = _read_jvp
ad.primitive_transposes[strided_read_p] = _read_transpose
batching.primitive_batchers[strided_read_p] = _read_batch

strided_write_p.def_impl(_impl(strided_write_p, _write_fn))
strided_write_p.def_abstract_eval(_write_abstract_eval)
mlir.register_lowering(strided_write_p, _lowering(_write_fn))
ad.primitive_jvps[strided_write_p] = _write_jvp
ad.primitive_transposes[strided_write_p] = _write_transpose
batching.primitive_batchers[strided_write_p] = _write_batch

strided_read_operands_p.def_impl(_read_operands_impl)
strided_read_operands_p.def_abstract_eval(_read_operands_abstract_eval)
mlir.register_lowering(strided_read_operands_p, _read_operands_lowering)
ad.primitive_jvps[strided_read_operands_p] = _read_operands_jvp
ad.primitive_transposes[strided_read_operands_p] = _read_operands_transpose
batching.primitive_batchers[strided_read_operands_p] = _read_operands_batch

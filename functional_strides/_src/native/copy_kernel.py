"""The ``"strided_copy"`` read and write: a view materialised by one strided copy on XLA:CPU,
or written through by one strided write.

XLA has no strided copy: a permute is its ``transpose`` emitter, which walks the output in
order and reads the input a cache line per element, and a tile loop written in XLA ops runs
on one thread. The C++ extension ``_copy_native`` (built from ``handlers.cc`` and the headers
beside it, ``README.md``, when jaxlib's FFI headers are at hand) is the copy PyTorch and NumPy
make, as an XLA FFI handler: the output written once in row-major order, the last dim copied
as one run where it is contiguous, cache tiles of 64 columns by 64 rows (32 by 32, or up to
128 rows by 32 where the last dim spans at most two tiles, for elements of 8 bytes or more)
where the last dim jumps a cache line per element and another dim runs through memory, every
other element (a last dim of stride 2) picked out of whole AVX2 loads where the CPU has them,
the output of a large permute stored past the caches, a fresh output advised to take 2 MiB
pages (as NumPy advises its large arrays), and chunks of the output dealt in one range per
part to the calling thread and to tasks on XLA's own intra-op pool (``ffi::ThreadPool``; a
part done with its own range takes chunks from the back of the others'). It starts no thread
and leaves nothing running between calls.

The same extension writes through a view (``"set"``, and ``"add"`` of float32, float64 and
32/64-bit integers), updating only the view's slots, in place where the storage is donated
(``input_output_aliases``); overlapping windows (overlap-add of frames) are split across
threads by runs of storage slots, each window clipped to the run and the windows added row
by row, in row-major order. Additions over contiguous runs take AVX-512 through overlapping
windows and AVX2 elsewhere where the CPU has them (checked when first called; whole rows of
runs a stretch at a time), SSE2 otherwise; sets of every other slot take AVX2 too
(``x[::2, ::2] = v``: 4- and 8-byte elements blended into whole loads of the view, the
slots between rewritten with what they hold).

In a program each is the CPU lowering of a primitive of the library
(:mod:`functional_strides._src.lowering.primitives`: ``strided_read``, ``strided_write``),
emitted where the program is lowered for XLA:CPU alone and not for ``jax.export``: an
exported program holds standard StableHLO only (the XLA plan of the same values, bit for bit),
which runs wherever jax does, in a process that never imports this library (docs/export.md).
Derivatives and ``vmap`` are the primitives' rules, not this module's. The offset is an
operand, clamped like ``lax.dynamic_slice`` clamps
(:func:`functional_strides._src.lowering.reads.dynamic_window`), so a traced offset costs no
window copy.
"""

from __future__ import annotations

from types import ModuleType

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..core.builds import load_extension
from ..core.config import KERNEL_MAX_THREADS, config
from ..core.layout import Layout

__all__ = ["OPERANDS_TARGET", "SOURCES", "TARGET", "WRITE_TARGET", "alike", "coalesced", "enabled",
           "extension", "ffi_read", "ffi_read_operands", "ffi_write", "handler_time", "kernel_offset",
           "native", "stats", "supports", "supports_write", "takes_native"]

#: The FFI target names the handlers are registered under (platform ``"cpu"``).
TARGET = "functional_strides_strided_copy"
OPERANDS_TARGET = "functional_strides_strided_copy_operands"
WRITE_TARGET = "functional_strides_strided_write"

#: Element sizes (bytes) the handler copies.
ITEMSIZES = (1, 2, 4, 8, 16)


#: The files the extension is built from, beside it in an in-place build (setup.py): one newer
#: than the built extension makes it stale.
SOURCES = ("handlers.cc", "plan.h", "movers.h", "parallel.h", "pages.h")



def _load_native() -> ModuleType | None:
    """The extension with its handlers registered, or None when it is not built or stale
    (:func:`functional_strides._src.core.builds.load_extension` warns of a stale one)."""
    module = load_extension(f"{__package__}._copy_native", SOURCES)
    if module is None:
        return None
    jax.ffi.register_ffi_target(TARGET, module.strided_copy(), platform="cpu")
    jax.ffi.register_ffi_target(OPERANDS_TARGET, module.strided_copy_operands(), platform="cpu")
    jax.ffi.register_ffi_target(WRITE_TARGET, module.strided_write(), platform="cpu")
    _apply_kernel_threads(config.kernel_threads, module)
    return module


def _apply_kernel_threads(value: bool | int, module: ModuleType | None = None) -> None:
    """Give the loaded extension ``fs.config.kernel_threads`` as its cap on one call's parts
    (0: as many as XLA's pool has)."""
    module = module or native
    if module is not None:
        module._set_max_parts(int(value) or KERNEL_MAX_THREADS)


config._on_update["kernel_threads"] = _apply_kernel_threads


_loaded = False


def extension() -> ModuleType | None:
    """The extension, loaded on first use where the import did not load it; None when it is
    not built or stale."""
    global native, _loaded
    if not _loaded:
        _loaded = True
        native = _load_native()
    return native


def enabled() -> bool:
    """Whether reads and writes may take the strided copy and write now: ``fs.config.native_copy``
    is on and the extension is built (and not stale)."""
    return bool(config.native_copy) and extension() is not None


#: The loaded extension; None when it is not built or stale, or not loaded yet because
#: ``FUNCTIONAL_STRIDES_PURE_PYTHON`` was set at import (it loads when ``fs.config`` turns
#: ``native_copy`` on). Whether reads and writes take it is :func:`enabled`.
native: ModuleType | None = None
if config.native_copy:
    extension()


def handler_time() -> tuple[int, float] | None:
    """``(calls, seconds)``: the calls of the strided copy and write handlers in this process
    and the time spent inside them (steady clock), or None when the extension is not loaded.
    Benchmarks read it before and after a call to tell the handler's own time from the
    runtime's around it (dispatch, argument handling)."""
    return None if native is None else native.handler_time()


def stats() -> dict[str, int | float] | None:
    """The extension's counters since it was loaded, or None when it is not loaded: ``calls``
    and ``seconds`` (as :func:`handler_time`), ``tasks_scheduled`` (tasks handed to XLA's
    intra-op pool), ``tasks_joined`` (those that found work left), ``calls_alone`` (calls on a
    worker of that pool, or in a forked child, run on the calling thread alone),
    ``pool_threads`` (the pool's size at the latest call), ``max_parts``
    (``fs.config.kernel_threads``, 64 where that is 0)
    and ``advised_bytes`` (of outputs advised to take 2 MiB pages)."""
    return None if native is None else native.stats()


def supports(dtype) -> bool:
    """Whether the handler is enabled (:func:`enabled`) and copies elements of ``dtype``: 1,
    2, 4, 8 or 16 whole bytes (not the packed sub-byte types such as ``int4``)."""
    dtype = np.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.integer):
        bits = jnp.iinfo(dtype).bits
    elif jnp.issubdtype(dtype, jnp.floating):
        bits = jnp.finfo(dtype).bits
    else:
        bits = dtype.itemsize * 8
    return dtype.itemsize in ITEMSIZES and bits == dtype.itemsize * 8 and enabled()


#: The write handler's ``mode`` attribute for ``"set"`` (any dtype :func:`supports`) and for
#: ``"add"`` by the dtypes it adds (the integers as unsigned ones of their width, which wrap
#: as two's complement does).
_WRITE_MODES = {"set": 0}
_ADD_MODES = {"float32": 1, "float64": 2, "int32": 3, "uint32": 3, "int64": 4, "uint64": 4}


def supports_write(dtype, mode: str) -> bool:
    """Whether the write handler is enabled (:func:`enabled`) and writes ``mode`` (``"set"``,
    or ``"add"`` of float32, float64 and 32- or 64-bit integers) into a storage of ``dtype``."""
    if mode == "set":
        return supports(dtype)
    return mode == "add" and np.dtype(dtype).name in _ADD_MODES and enabled()


def _write_mode(dtype, mode: str) -> int:
    return _WRITE_MODES[mode] if mode == "set" else _ADD_MODES[np.dtype(dtype).name]


def coalesced(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(sizes, strides)`` of a view with its size-1 dims dropped and each dim merged into
    the one before it where the two run as one (``stride[k] == stride[k+1] * size[k+1]``),
    in the user's order: the same elements in the same row-major order.

    >>> coalesced((2, 1, 3, 4), (12, 99, 4, 1))
    ((24,), (1,))
    >>> coalesced((4, 4), (1, 4))
    ((4, 4), (1, 4))
    """
    sizes: list[int] = []
    out: list[int] = []
    for n, s in zip(shape, strides, strict=True):
        if n == 1:
            continue
        if sizes and out[-1] == s * n:
            sizes[-1] *= n
            out[-1] = s
        else:
            sizes.append(n)
            out.append(s)
    return tuple(sizes), tuple(out)


def _varying(aval) -> frozenset:
    """The manual mesh axes a value varies over (inside ``jax.shard_map``; empty elsewhere)."""
    return getattr(getattr(aval, "mat", None), "varying", frozenset())


def alike(*operands: jax.Array) -> tuple[tuple[jax.Array, ...], dict]:
    """The operands made to vary over the same manual mesh axes, the union of theirs, and the
    keyword that gives an FFI call's result that type: inside ``jax.shard_map`` (which checks
    what varies over which axis) a custom call takes operands that vary alike and returns
    what its operands vary over, as XLA's own ops do."""
    if not hasattr(jax, "typeof"):  # a JAX that tracks no varying axes
        return operands, {}
    axes = frozenset().union(*(_varying(jax.typeof(x)) for x in operands))
    if not axes:
        return operands, {}
    out = tuple(x if _varying(jax.typeof(x)) == axes
                else lax.pcast(x, tuple(sorted(axes - _varying(jax.typeof(x)), key=str)), to="varying")
                for x in operands)
    aval = jax.typeof(out[0])
    return out, {"sharding": jax.sharding.NamedSharding(aval.sharding.mesh, jax.sharding.PartitionSpec()),
                 "manual_axis_type": aval.mat}


def takes_native(ctx) -> bool:
    """Whether a lowering rule's context lowers for XLA:CPU alone, and not for ``jax.export``
    (whose artifacts must run where this library's handlers are not registered)."""
    platforms = tuple(ctx.platforms or ctx.module_context.platforms)
    return platforms == ("cpu",) and not ctx.module_context.lowering_parameters.for_export


#: The read handler's ``order`` attribute: the order it visits blocks of the output in.
#: ``"auto"`` is the dense array's, or the storage's for whole contiguous rows where that
#: writes at most 32 runs of the output at once (attention heads); the others force one
#: (``benchmarks/lowering_choices.py --only rows`` times both). Under ``"storage"`` a
#: permute's cache tiles also run down the running dim rather than along the last.
ORDERS = {"auto": 0, "dense": 1, "storage": 2}

#: The read handler's ``tiles`` attribute: the shape of its cache tiles, 32x32 (``"short"``),
#: up to 128 rows by 32 (``"tall"``, 16 KiB) or 64x64 (``"wide"``, for elements of at most 4
#: bytes; wider ones take 32x32). ``"auto"`` is wide where it fits, else tall where the last
#: dim spans at most two tiles of 32 columns, else short; the others force one
#: (``benchmarks/lowering_choices.py --only tiles``).
TILES = {"auto": 0, "short": 1, "tall": 2, "wide": 3}

#: The read handler's ``stores`` attribute: how it stores the output, through the caches
#: (``"cached"``) or past them (``"streaming"``: no line of the output is read before it is
#: written). ``"auto"`` streams a permute's output from 8 MiB (tiles, or whole rows that a
#: permute moves), where every run it stores is whole cache lines
#: (``benchmarks/lowering_choices.py --only stores``).
STORES = {"auto": 0, "cached": 1, "streaming": 2}


def ffi_read(storage: jax.Array, offset: jax.Array, shape: tuple[int, ...],
             strides: tuple[int, ...], order: str = "auto", tiles: str = "auto",
             stores: str = "auto") -> jax.Array:
    """``out[i] = storage[layout(*i)]`` by the strided-copy handler (XLA:CPU only).

    Args:
      storage: 1-D array of ``n`` elements whose dtype :func:`supports`.
      offset: int32 or int64 scalar array, in elements (:func:`kernel_offset`): the handler
        clamps it at its lowest index into ``[0, n - span - 1]`` as ``lax.dynamic_slice`` clamps.
      shape, strides: the non-empty view (strides in elements), spanning at most ``n`` elements.
      order, tiles, stores: the handler's choices (:data:`ORDERS`, :data:`TILES`, :data:`STORES`).
    Returns:
      The dense row-major array of ``shape`` and the storage's dtype."""
    (storage, offset), kind = alike(storage, offset)
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(shape, storage.dtype, **kind))
    return call(storage, offset, **_view_attrs(shape, strides), order=np.int64(ORDERS[order]),
                tiles=np.int64(TILES[tiles]), stores=np.int64(STORES[stores]))


def _view_attrs(shape: tuple[int, ...], strides: tuple[int, ...]) -> dict:
    sizes, steps = coalesced(shape, strides)
    below = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    reach = sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True)) + 1
    return {"sizes": np.asarray(sizes, np.int64), "strides": np.asarray(steps, np.int64),
            "below": np.int64(below), "reach": np.int64(reach)}


def kernel_offset(layout: Layout, n: int, offset_dtype) -> jax.Array:
    """The offset operand: an int32 or int64 offset as it is (the handler clamps it in int64),
    another integer clamped in its own width into the offsets that fit, then narrowed to
    ``offset_dtype`` (the index dtype)."""
    offset = jnp.asarray(layout.offset)
    if offset.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        offset = jnp.clip(offset, *layout.offset_bounds(n)).astype(offset_dtype)
    return offset


def ffi_write(storage: jax.Array, values: jax.Array, offset: jax.Array, shape: tuple[int, ...],
              strides: tuple[int, ...], mode: str, serial: bool) -> jax.Array:
    """``storage`` with ``values`` set or added through the view by the strided-write handler
    (XLA:CPU only), in place where the storage's buffer is donated.

    Args:
      storage: 1-D array of ``n`` elements; ``supports_write(storage.dtype, mode)``.
      values: the values, of shape ``shape`` and the storage's dtype.
      offset: as for :func:`ffi_read`.
      shape, strides: the non-empty view, spanning at most ``n`` elements.
      mode: ``"set"`` or ``"add"``.
      serial: whether elements of the view share slots: the handler then writes in
        row-major order (the last element wins a ``"set"``, additions arrive in that order),
        on one thread unless the view is overlapping windows (dims ``(count, length):(step,
        1)``, ``0 < step < length``), which it splits by runs of storage slots.
    Returns:
      The new storage (aliased to ``storage``'s buffer: XLA copies it first unless donated)."""
    (storage, values, offset), kind = alike(storage, values, offset)
    call = jax.ffi.ffi_call(WRITE_TARGET, jax.ShapeDtypeStruct(storage.shape, storage.dtype, **kind),
                            input_output_aliases={0: 0})
    return call(storage, values, offset, **_view_attrs(shape, strides),
                mode=np.int64(_write_mode(storage.dtype, mode)), serial=serial)


def ffi_read_operands(storage: jax.Array, strides: jax.Array, offset: jax.Array,
                      shape: tuple[int, ...]) -> jax.Array:
    """The read with strides and offset as operands (outside ``jit``: one program per output
    shape serves every layout of that shape), by the strided-copy handler (XLA:CPU only).

    Args:
      storage: 1-D array whose dtype :func:`supports`; the view must lie in it (checked by
        the caller: the offset is clamped at its lowest index as :func:`ffi_read` clamps it).
      strides: int32 or int64 array of ``len(shape)`` strides, in elements.
      offset: int32 or int64 scalar, in elements.
      shape: the view's shape (static), without a zero extent.
    Returns:
      The dense row-major array of ``shape`` and the storage's dtype."""
    (storage, offset, strides), kind = alike(storage, offset, strides)
    return jax.ffi.ffi_call(OPERANDS_TARGET, jax.ShapeDtypeStruct(shape, storage.dtype, **kind))(
        storage, offset, strides)

"""Reads and writes through a view of a ``jax.Ref``: the storage updated in place.

A ``jax.Ref`` (``jax.new_ref``) is a mutable array: inside a traced program ``ref[...] =
value`` updates its buffer, which XLA aliases to the program's input and output, so a write
that only touches a window of it costs no copy of the storage. JAX's own indexers of a ref
write through slices only (its reshape, transpose and bitcast views of a ref take reads, not
writes), so the library keeps the ref 1-D and does the view arithmetic itself: every write is
``ref[...] = g(ref[...])`` where ``g`` is a write plan that XLA runs in place.

:func:`update` is the one entry point of a write: ``ref[layout] = fn(ref[layout], *operands)``
for an elementwise ``fn``. Its plans (:func:`plan`), for a static ``layout`` whose offset is
static or traced:

* ``"empty"`` -- a zero extent: nothing is written (nor read).
* ``"slice"`` -- the view is one contiguous run of the storage: a 1-D
  ``dynamic_update_slice`` at its lowest index (of the values transposed into storage order
  where the view permutes the run, unless the strided write below takes it).
* ``"strided_copy"`` -- on CPU where the extension is built, the strided write handler, which
  changes only the view's slots and takes the offset as an operand (no window is cut).
* ``"row_scatter"`` -- one scatter of whole dense rows, the offset folded into the row
  starts.
* ``"structured"`` -- for a static offset only, the transposed read (``pad`` and ``select``)
  that rewrites the storage, where the write table's ``"auto"`` takes it (a view covering much
  of the storage).
* ``"scatter"`` -- one scatter of elements, the offset folded into their indices.

Which of the last four applies follows the write table's ``"auto"`` rule
(:func:`functional_strides._src.lowering.writes.write_plan`). Two of the table's paths are
never taken here: a ``"block"`` ``dynamic_update_slice`` of the storage reshaped to a grid
(XLA copies the storage once a program holds two such updates of one buffer; the two writes of
``tests/lowering/test_ref_writes.py`` check that the paths taken here do not) and the window
the functional write cuts around a view with a traced offset (as large as the view's span).
A traced offset is clamped as reads and functional writes clamp it: into ``[0, size - span -
1]`` at the view's lowest index.

Outside a trace (eager use) :func:`update` and :func:`read` call a program compiled once per
(shape, strides, storage size and dtype, update): the ref and the offset are its arguments,
so a new offset costs no compile (the plan is that of a traced offset), and the program
updates the ref in place. (An eager ``ref[idx] = v`` of JAX dispatches a program that returns
the old value: a copy of the storage per write.) Such a program takes the ref's buffer and
gives the ref a new one, so two of them on one ref at once, from two threads, would find the
buffer gone ("Array has been deleted"): every eager program on a ref runs holding the ref's
lock (:func:`ref_lock`, one reentrant lock per ref, held weakly), so that calls from several
threads run one at a time, in some order, and none is lost. The cache of compiled programs
takes its own lock; compiling happens outside it.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..core.canonical import box, canonicalize
from ..core.checks import check_choice
from ..core.errors import LayoutError, StorageError
from ..core.layout import Layout, check_in_storage, is_traced
from ..core.strategies import Need
from ..native import copy_kernel as _copy_kernel
from . import reads as _reads
from . import writes as _writes

__all__ = ["PLANS", "clear_compiled", "eager_lock", "is_ref", "plan", "read", "read_value", "ref_lock",
           "update", "write_value"]

#: The paths a write through a view of a ref may take (see the module docstring).
PLANS = ("empty", "slice", "strided_copy", "row_scatter", "structured", "scatter")


def is_ref(x: Any) -> bool:
    """Whether ``x`` is a ``jax.Ref``, concrete or traced (``jax.new_ref(...)``)."""
    return isinstance(x, jax.Ref)


def _is_run(layout: Layout) -> bool:
    """The view's elements are one contiguous run of storage slots, each once, in any order:
    the canonical dims (strides decreasing) nest densely down to stride 1."""
    c = canonicalize(layout)
    if c.broadcast:
        return False
    inner = 1
    for n, s in reversed(c.dims):
        if s != inner:
            return False
        inner *= n
    return True


def _local(layout: Layout) -> Layout:
    """``layout`` at its lowest index 0 (a traced offset's static stand-in for planning)."""
    return Layout(layout.shape, layout.strides, -layout.low_reach)


def plan(layout: Layout, storage_size: int, dtype: Any = np.float32, *, method: str = "auto",
         copy_kernel: bool = True) -> str:
    """The path :func:`update` takes to write through ``layout`` (static shape and strides;
    the offset static or traced) of a ref of ``storage_size`` elements of ``dtype``.

    Args:
      layout: the view; strides and offset in elements.
      storage_size: elements in the ref.
      dtype: the ref's dtype (the strided write handler takes elements of 1-16 bytes).
      method: ``"auto"`` (the rule of the module docstring), or one of :data:`PLANS` but
        ``"empty"`` to check that it applies.
      copy_kernel: whether the strided write handler may be used (CPU).
    Returns:
      One of :data:`PLANS`.
    Raises:
      LayoutError: ``method`` is unknown or does not apply (``"slice"`` to a view that is not
        one contiguous run, ``"structured"`` with a traced offset or to a view that is not a
        strided box, ``"row_scatter"`` without dense rows, ``"strided_copy"`` where the
        extension is not built or for this dtype).
      StorageError: the view spans more elements than the ref holds.
    Example:
      >>> plan(Layout((16,), (1,), 5), 2**22), plan(Layout((4, 8), (1024, 1)), 2**22)
      ('slice', 'row_scatter')
      >>> plan(Layout((16,), (2048,)), 2**22), plan(Layout((4, 8), (1024, 1)), 2**22, method="scatter")
      ('scatter', 'scatter')

    Semantics: no PyTorch counterpart (an in-place write through a strided view is one loop
    there); the choice among the library's write paths for an in-place update."""
    check_choice("update", "method", method, ("auto", *PLANS[1:]))
    if layout.is_empty:
        return "empty"
    _reads._check_span(layout, storage_size)
    static = _static(layout)
    at = layout if static else _local(layout)
    c = canonicalize(at)
    kernel = copy_kernel and _copy_kernel.supports_write(dtype, "set")
    if method != "auto":
        ok = {"slice": _is_run(at), "strided_copy": kernel, "scatter": True,
              "row_scatter": _writes._applies_row_scatter(c, Need(storage_size, "set")),
              "structured": static and box(c.dims) is not None}
        if not ok[method]:
            fits = ", ".join(repr(m) for m, good in ok.items() if good)
            kind = "static" if static else "traced"
            raise LayoutError(f"update: method={method!r} does not apply to layout {layout} (offset {kind}, "
                              f"{storage_size} elements of {np.dtype(dtype)}); these do: {fits}.")
        return method
    path = _writes._plan(at, storage_size, "set", "auto", "update", kernel)
    if path == "permutation":  # a ref is written in place: the strided write, else the full rewrite
        path = "strided_copy" if kernel else "structured"
    if _is_run(at) and (path != "strided_copy" or (c.perm == tuple(range(len(c.perm))) and not c.flipped)):
        return "slice"  # in order, or permuted where the strided write does not pay: values transposed
    if path == "structured" and not static:  # its pad and select need the offset at trace time
        rows = (_writes._applies_row_scatter(c, Need(storage_size, "set"))
                and _writes._split_rows(c)[2].reach >= _writes.ROW_SCATTER_MIN_ROW
                and _writes._row_density(c) >= _writes.ROW_SCATTER_MIN_DENSITY)
        path = "row_scatter" if rows else "scatter"
    return "scatter" if path == "block" else path


def _clamped(layout: Layout, n: int) -> Layout:
    """``layout`` with its traced offset clamped so that the view lies in ``n`` elements (as
    :func:`functional_strides._src.lowering.reads.dynamic_window` clamps it), in the index
    dtype."""
    _reads._check_span(layout, n)  # StorageError where no offset fits
    dtype = _reads.index_dtype(layout, n)
    offset = jnp.clip(jnp.asarray(layout.offset), *layout.offset_bounds(n)).astype(dtype)
    return Layout(layout.shape, layout.strides, offset)


def _static(layout: Layout) -> bool:
    return layout.has_static_offset and not is_traced(layout.offset)


def read_value(storage: jax.Array, layout: Layout) -> jax.Array:
    """The values of ``layout`` in ``storage`` (a ref's value, inside a trace): the read table's
    plan for a static offset; for a traced one, no window: a ``dynamic_slice`` of a contiguous
    view, else the strided copy (CPU, where ``"auto"`` takes it) or one gather with the
    offset folded into the indices."""
    n = storage.shape[-1]
    if layout.is_empty:
        return jnp.zeros(layout.shape, storage.dtype)
    if _static(layout):
        return _reads.materialize(storage, layout)
    layout = _clamped(layout, n)
    if layout.is_contiguous():
        return lax.dynamic_slice(storage, (layout.offset,), (layout.numel,)).reshape(layout.shape)
    if _reads.read_plan(_local(layout)) == "strided_copy" and _copy_kernel.supports(storage.dtype):
        return _reads.PRIMITIVES["read"](storage, layout, "strided_copy")
    return _gather(storage, layout)


def _gather(storage: jax.Array, layout: Layout) -> jax.Array:
    idx = _reads.storage_indices(layout.shape, layout.strides, layout.offset,
                                 _reads.index_dtype(layout, storage.shape[-1]))
    return _reads._gather(storage, idx, sorted_=False, unique=False,
                          mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def write_value(storage: jax.Array, layout: Layout, values: jax.Array, *, method: str = "auto",
                copy_kernel: bool = True) -> jax.Array:
    """``storage`` (a ref's value, inside a trace) with ``values`` (shape ``layout.shape``, the
    storage dtype) set through ``layout``, which must not overlap itself, by :func:`plan`'s
    path: ``ref[...] = write_value(ref[...], layout, values)`` updates the ref in place."""
    n = storage.shape[-1]
    path = plan(layout, n, storage.dtype, method=method, copy_kernel=copy_kernel)
    if path == "empty":
        return storage
    if _static(layout):
        check_in_storage("update", layout.shape, layout.strides, int(layout.offset), n)
    else:
        layout = _clamped(layout, n)
    c = canonicalize(layout)
    if path == "slice":
        flat = _writes._canonical_values(c, values, "set").reshape(-1)
        start = jnp.asarray(c.offset, _reads.index_dtype(layout, n))
        return lax.dynamic_update_slice(storage, flat, (start,))
    if path == "strided_copy":
        return _reads.PRIMITIVES["write"](storage, layout, values, mode="set", overlapping=False,
                                          method="strided_copy", op="update")
    if path == "structured":
        return _writes._structured(storage, layout, c, values, "set", False)
    if path == "row_scatter":
        return _writes._row_scatter(storage, layout, c, values, "set", False)
    return _writes._element_scatter(storage, layout, c, values, "set", False)


def _update_traced(ref: Any, layout: Layout, fn: Callable[..., jax.Array], reads_old: bool,
                   operands: tuple[Any, ...], method: str) -> None:
    storage = ref[...]
    old = read_value(storage, layout) if reads_old else None
    values = jnp.broadcast_to(fn(old, *operands), layout.shape).astype(storage.dtype)
    ref[...] = write_value(storage, layout, values, method=method)


@functools.partial(jax.jit, static_argnames=("shape", "strides", "fn", "reads_old", "method"))
def _eager_update(ref, offset, operands, *, shape, strides, fn, reads_old, method):
    _update_traced(ref, Layout(shape, strides, offset), fn, reads_old, operands, method)


@functools.partial(jax.jit, static_argnames=("shape", "strides"))
def _eager_read(ref, offset, *, shape, strides):
    return read_value(ref[...], Layout(shape, strides, offset))


def _offset_operand(layout: Layout, n: int) -> np.ndarray:
    return np.asarray(int(np.asarray(layout.offset)), _reads.index_dtype(layout, n))


#: How many compiled eager programs are kept (least recently used dropped first): calling the
#: compiled executable skips the dispatch ``jax.jit`` takes for a call with a ref argument,
#: which its C++ fast path does not serve.
COMPILED_CACHE_SIZE = 256
_COMPILED: collections.OrderedDict[Any, Any] = collections.OrderedDict()
_COMPILED_LOCK = threading.Lock()  # guards _COMPILED; never held while compiling nor running

_LOCKS: weakref.WeakKeyDictionary[Any, threading.RLock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()  # guards _LOCKS


def ref_lock(ref: Any) -> threading.RLock:
    """The lock of the concrete ``jax.Ref`` ``ref``: every eager read and write of the library
    through a view of it runs holding it. One reentrant lock per ref, made at its first use
    and held weakly (it goes with the ref).

    An eager program on a ref takes its buffer and hands the ref a new one, so two at once
    from two threads would find the buffer gone (``RuntimeError: Array has been deleted``);
    under the lock they run one at a time, in the order the threads take it.

    Example:
      >>> r = jax.new_ref(jnp.zeros(3))
      >>> ref_lock(r) is ref_lock(r)
      True"""
    with _LOCKS_LOCK:
        lock = _LOCKS.get(ref)
        if lock is None:
            lock = _LOCKS[ref] = threading.RLock()
    return lock


def eager_lock(ref: Any) -> contextlib.AbstractContextManager[Any]:
    """:func:`ref_lock` of ``ref`` where the library is about to run eager programs on it (a
    concrete ref, no trace active), else a context that holds nothing: inside a trace the
    reads and writes are staged into the caller's program, which JAX runs."""
    if is_ref(ref) and not is_traced(ref) and not tracing():
        return ref_lock(ref)
    return contextlib.nullcontext()


def _call_compiled(program: Any, args: tuple[Any, ...], static: dict[str, Any], check: Callable[[], Any]):
    """``program(*args, **static)`` through its compiled executable, compiled once per
    abstract values of ``args`` and ``static`` (``check`` runs before compiling); ``args[0]``
    is a ref, whose lock the caller holds."""
    key = (program, tuple(jax.typeof(a) for a in jax.tree_util.tree_leaves(args)),
           args[0].sharding, tuple(sorted(static.items())))
    with _COMPILED_LOCK:
        compiled = _COMPILED.get(key)
        if compiled is not None:
            _COMPILED.move_to_end(key)
    if compiled is None:  # two threads may both compile it; the second's is kept, both correct
        check()
        compiled = program.lower(*args, **static).compile()
        with _COMPILED_LOCK:
            _COMPILED[key] = compiled
            while len(_COMPILED) > COMPILED_CACHE_SIZE:
                _COMPILED.popitem(last=False)
    return compiled(*args)


def clear_compiled() -> None:
    """Forget the compiled eager programs of :func:`update` and :func:`read`."""
    with _COMPILED_LOCK:
        _COMPILED.clear()


def tracing() -> bool:
    """Whether a JAX trace is active (a ``jit``, a loop body, a transform being traced), also
    where no argument is a tracer: a concrete ``jax.Ref`` that the traced function closes over
    must be read and written by the staged program, at every run, not once while it traces."""
    try:
        from jax._src import core as jax_core

        return not jax_core.trace_ctx.is_top_level()
    except (ImportError, AttributeError):  # a JAX without the trace context: a probe value
        return isinstance(lax.iota(np.int32, 1), jax.core.Tracer)


def update(ref: Any, layout: Layout, fn: Callable[..., jax.Array], operands: tuple[Any, ...] = (), *,
           reads_old: bool = True, method: str = "auto") -> None:
    """``ref[layout] = fn(old, *operands)`` in place, ``old`` the view's current values
    (``None`` when ``reads_old`` is false).

    Args:
      ref: a 1-D ``jax.Ref`` (concrete, or traced inside ``jit``, ``vmap``, loops).
      layout: a view of the ref that does not overlap itself (checked by the caller).
      fn: ``fn(old, *operands)`` -> values broadcastable to ``layout.shape``, cast to the
        ref's dtype; a hashable function (it keys the eager program's cache).
      operands: arrays passed to ``fn``.
      reads_old: whether ``fn`` reads the old values.
      method: ``"auto"`` or a path of :data:`PLANS` to force (see :func:`plan`).
    Returns:
      ``None``; the ref holds the new values.
    Raises:
      StorageError: a static offset and the view runs past the ref's end, or the view spans
        more elements than the ref holds.
      LayoutError: ``method`` is unknown or does not apply.
    Example:
      >>> r = jax.new_ref(jnp.zeros(6))
      >>> update(r, Layout((2, 2), (1, 3), 1), lambda old, v: old + v, (jnp.ones((2, 2)),))
      >>> r[...].tolist()
      [0.0, 1.0, 1.0, 0.0, 1.0, 1.0]

    Semantics: ``torch.as_strided(ref, ...).copy_(fn(...))`` in place."""
    n = ref.shape[-1]
    if layout.is_empty:
        return
    traced = (is_traced(ref) or is_traced(layout.offset) or tracing()
              or any(is_traced(x) for x in jax.tree_util.tree_leaves(operands)))
    if traced:
        _update_traced(ref, layout, fn, reads_old, operands, method)
        return
    check_in_storage("update", layout.shape, layout.strides, int(np.asarray(layout.offset)), n)
    probe = Layout(layout.shape, layout.strides, np.asarray(-layout.low_reach, np.int32))  # not static
    static = {"shape": layout.shape, "strides": layout.strides, "fn": fn, "reads_old": reads_old,
              "method": method}
    with ref_lock(ref):
        _call_compiled(_eager_update, (ref, _offset_operand(layout, n), operands), static,
                       lambda: plan(probe, n, ref.dtype, method=method))


def read(ref: Any, layout: Layout) -> jax.Array:
    """The values of ``layout`` in ``ref`` now: a dense ``jax.Array`` of ``layout.shape``.

    Inside a trace, ``ref[...]`` read through :func:`read_value`; outside, a program compiled
    once per shape and strides, which reads only the view (no copy of the storage).

    Raises:
      StorageError: a static offset and the view runs past the ref's end.
    Example:
      >>> r = jax.new_ref(jnp.arange(6.0))
      >>> read(r, Layout((2, 2), (1, 3), 1)).tolist()
      [[1.0, 4.0], [2.0, 5.0]]

    Semantics: ``torch.as_strided(ref, ...).contiguous()``."""
    n = ref.shape[-1]
    if is_traced(ref) or is_traced(layout.offset) or tracing():
        return read_value(ref[...], layout)
    if layout.is_empty:
        return jnp.zeros(layout.shape, ref.dtype)
    check_in_storage("read", layout.shape, layout.strides, int(np.asarray(layout.offset)), n)
    if not isinstance(layout.offset, int) and np.ndim(layout.offset):
        raise StorageError(f"read: one offset per view, not {np.shape(layout.offset)} (layout {layout}).")
    with ref_lock(ref):
        return _call_compiled(_eager_read, (ref, _offset_operand(layout, n)),
                              {"shape": layout.shape, "strides": layout.strides}, lambda: None)

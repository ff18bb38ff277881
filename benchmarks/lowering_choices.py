"""Measure the lowering paths of ``functional_strides.materialize`` side by side.

Prints, for each layout, the run time of every path that applies (best of ``--repeats``
interleaved runs after one warm-up, inside ``jax.jit``), its ratio to the element gather, the native XLA
op where one exists, compile time, HLO size and XLA's temp bytes. A study of internal
candidates: it imports the lowering's private pieces from ``functional_strides._src`` (the
canonical form, the XLA-only read plan, the paths themselves), which the other benchmarks do
not. The constants ``SLICES_MAX_PIECES`` and ``ROW_GATHER_MIN_ROW`` in
``functional_strides/_src/lowering/reads.py`` come from the "windows" table; ``P_TILE_BYTES``,
``Q_TILE_MAX`` and ``TILED_MIN_ELEMENTS`` in ``functional_strides/_src/lowering/tiled.py`` from
the "permutes" table, which times every formulation of
a permute tried (medians of interleaved rounds, with an A/A column: XLA's transpose against a
second compiled copy of itself).

    python benchmarks/lowering_choices.py                    # all tables
    python benchmarks/lowering_choices.py --quick            # smaller arrays
    python benchmarks/lowering_choices.py --only permutes    # one table (or several)

The "copy" table times the strided copy (``method="strided_copy"``, CPU, when its extension
is built) against XLA's best read (``xla_read_plan``) of permutes and windows by size: the
``COPY_*`` constants of ``functional_strides/_src/lowering/reads.py``, and the "far" table far-apart
elements (a diagonal, a column), the "every_other" table every other element of every other
row; the "rows" table the order the
strided copy moves whole rows in (``kWriteStreams`` of ``_src/native/plan.h``) and the "tiles"
table the shape of its cache tiles (``TallRows``, ``kWide``), the "stores" table its streaming stores
(``Streams``, ``kStreamMinBytes``); the "eager" table times reads
outside ``jit`` (strides as operands), the strided copy against the gather it replaces there.

Four tables study the strided copy as a guest in the process, through the FFI binding of
``functional_strides._src.native`` (its switches for the split and the pages, its
statistics), each stored in ``--json`` (``benchmarks/results/strided_copy.json``, merged, each
table stamped with the run that measured it); columns interleaved round by round, each
sample after ``SETTLE_S`` of untimed calls of its own column, ratios of the minima and of the
medians:

* ``split`` -- the strided copy (frames 256/64 and near-square transposes, float32, 2^14 to
  2^22 elements) split over XLA's intra-op pool, with the extension's minimum work per part
  (``kTaskMinBytes`` in ``parallel.h``) and with smaller and larger minima, against the same
  call on the calling thread alone: from which size the split pays.
* ``idle`` -- the CPU the process burns while its caller sleeps between calls (``getrusage``
  around each sleep) for ours, XLA's own transpose, a 1024^2 matmul (XLA's pool) and sleeps
  alone, and the thread count before and after: the library starts no thread and leaves
  nothing spinning between calls.
* ``pages`` -- transposes and every-other-element reads of 2^20 to 2^24 elements with the
  output advised to take 2 MiB pages (``pages.h``) and without: time and page faults per call.
* ``routes`` -- reads XLA's own ops serve with the structured path (a broadcast row or column,
  every other element, a slice of rows, a strided slice, reversed every other element) of
  2^16 to 2^24 elements: the strided copy (forced) against the XLA path ``"auto"`` takes
  without it, NumPy and PyTorch. Behind ``COPY_FRESH_MIN_ELEMENTS``.

    python benchmarks/lowering_choices.py --only split idle pages routes --repeats 20
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import resource
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_contiguous as bc  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import READ_METHODS as METHODS  # noqa: E402
from functional_strides import Layout, materialize, read_plan  # noqa: E402
from functional_strides._src.core.canonical import canonicalize, split_windows  # noqa: E402
from functional_strides._src.lowering import tiled as _tiled  # noqa: E402
from functional_strides._src.lowering.reads import xla_read_plan  # noqa: E402
from functional_strides._src.native import copy_kernel as _copy_kernel  # noqa: E402
from functional_strides._src.native.copy_kernel import ffi_read  # noqa: E402

#: Slice counts past this compile for seconds (HLO grows linearly); not measured.
MAX_PIECES_MEASURED = 64


def slice_pieces(layout: Layout) -> int:
    """How many slices the ``"slices"`` path of ``materialize`` emits for ``layout``: the
    shifts of the shifted form or the windows of the stacked one, whichever is fewer (the
    count the lowering compares with ``SLICES_MAX_PIECES``). Only for layouts where
    ``read_plan(layout, "slices")`` applies."""
    w = split_windows(canonicalize(layout).dims)
    counts = [w.shifts] if w.shifted is not None else []
    counts += [w.count] if w.stacked is not None else []
    return min(counts)


def _times(fns, x, repeats: int) -> list[float]:
    """Best time of each function of ``x`` over ``repeats`` interleaved rounds
    (``timing.time_columns``), so that load from other processes hits them alike."""
    cols = {i: (lambda f=f: jax.block_until_ready(f(x))) for i, f in enumerate(fns)}
    samples, _ = timing.time_columns(cols, repeats)
    return [min(samples[i]) for i in range(len(fns))]


def _compile_stats(fn, x) -> tuple[float, int, int]:
    compiled, seconds = timing.seconds(lambda: jax.jit(fn).lower(x).compile())
    mem = compiled.memory_analysis()
    temp = getattr(mem, "temp_size_in_bytes", -1) if mem is not None else -1
    return seconds, len(compiled.as_text()), temp


def measure(name: str, storage_size: int, layout: Layout, native, repeats: int, dtype=jnp.float32):
    x = jnp.arange(storage_size, dtype=dtype)
    out_bytes = layout.numel * np.dtype(dtype).itemsize
    candidates = []
    for method in METHODS[1:]:
        try:
            read_plan(layout, method)
        except fs.LayoutError:
            continue
        if method == "slices" and slice_pieces(layout) > MAX_PIECES_MEASURED:
            continue
        candidates.append((method, lambda s, m=method: materialize(s, layout, method=m)))
    if native is not None:
        candidates.append(("native", native))
    stats = [_compile_stats(fn, x) for _, fn in candidates]
    times = _times([jax.jit(fn) for _, fn in candidates], x, repeats)
    rows = [(name, t, *st) for (name, _), t, st in zip(candidates, times, stats, strict=True)]
    base = dict((r[0], r[1]) for r in rows)["gather"]
    print(f"\n{name}: layout {layout}, auto -> {read_plan(layout)}, output {out_bytes / 2**20:.1f} MiB")
    print(f"  {'path':<11} {'ms':>9} {'/gather':>8} {'compile s':>10} {'HLO KB':>8} {'temp/out':>9}")
    for method, t, compile_s, hlo, temp in rows:
        print(f"  {method:<11} {t * 1e3:9.2f} {t / base:8.2f} {compile_s:10.3f} {hlo / 1024:8.1f} "
              f"{temp / out_bytes:9.2f}")
    return rows


def windows_table(out_elements: int, repeats: int) -> None:
    print(f"\n=== windows: unfold(0, size, step) of a float32 signal, ~{out_elements} output elements ===")
    for size, step in [(1024, 512), (1024, 256), (1024, 128), (1024, 64), (1024, 16), (1024, 1),
                       (256, 64), (256, 16), (256, 4), (256, 2), (256, 1), (64, 32), (64, 16),
                       (64, 4), (64, 2), (64, 1), (16, 8), (16, 4), (16, 2), (16, 1), (8, 4),
                       (8, 2), (8, 1), (4, 1), (2, 1)]:
        count = out_elements // size
        n = (count - 1) * step + size
        measure(f"frames {size}/{step}", n, Layout((count, size), (step, 1)), None, repeats)
    print("\n=== windows with outer dims: 4 signals framed 64/16; 3x3 patches of an image ===")
    count = out_elements // (4 * 64)
    m = (count - 1) * 16 + 64
    measure("batched frames 64/16", 4 * m, Layout((4, count, 64), (m, 16, 1)), None, repeats)
    side = int((out_elements / 9) ** 0.5) + 2
    measure("3x3 patches", side * side,
            Layout((side - 2, side - 2, 3, 3), (side, 1, side, 1)), None, repeats)
    measure("3x3 patches, step 3", side * side,
            Layout((side // 3, side // 3, 3, 3), (3 * side, 3, side, 1)), None, repeats)


def benchmark_layouts(repeats: int, scale: int) -> None:
    print("\n=== benchmark-style layouts ===")
    b, c, h, w = 32 // scale, 64, 56, 56
    nchw = Layout.contiguous((b, c, h, w))
    measure("NCHW->NHWC", nchw.numel, fs.views.permute(nchw, (0, 2, 3, 1)),
            lambda s: jnp.transpose(s.reshape(b, c, h, w), (0, 2, 3, 1)), repeats)
    n = 4096 // scale
    sq = Layout.contiguous((n, n))
    measure("transpose", n * n, fs.views.t(sq), lambda s: s.reshape(n, n).T, repeats)
    measure("every other row/col", n * n, Layout((n // 2, n // 2), (2 * n, 2)),
            lambda s: s.reshape(n, n)[::2, ::2], repeats)
    measure("row expanded", n * n, Layout((n, n), (0, 1)),
            lambda s: jnp.broadcast_to(s[:n], (n, n)), repeats)
    heads, seq, dh = 16, 1024 // scale, 64
    qkv = Layout.contiguous((16, seq, heads * dh))
    measure("heads split", qkv.numel, Layout((16, heads, seq, dh), (seq * heads * dh, dh, heads * dh, 1)),
            lambda s: jnp.transpose(s.reshape(16, seq, heads, dh), (0, 2, 1, 3)), repeats)


# -- permutes: formulations of a batch of matrix transposes (batch, p, q) -> (batch, q, p) ----
def _native_permute(shape):
    return lambda s: jax.lax.transpose(s.reshape(shape), (0, 2, 1))


def _one_op_tiles(shape, pt: int, qt: int):
    """The tiles as one reshape + transpose (XLA sees the same permute)."""
    b, p, q = shape

    def f(s):
        x = s.reshape(b, p // pt, pt, q // qt, qt)
        return jax.lax.transpose(x, (0, 3, 4, 1, 2)).reshape(b, q, p)
    return f


def _output_stripes(shape, width: int):
    """A loop over stripes of ``width`` output rows: a column block of the input per step."""
    b, p, q = shape

    def f(s):
        x = s.reshape(shape)

        def step(j, out):
            block = jax.lax.dynamic_slice(x, (0, 0, j * width), (b, p, width))
            return jax.lax.dynamic_update_slice(out, jax.lax.transpose(block, (0, 2, 1)), (0, j * width, 0))
        return jax.lax.fori_loop(0, q // width, step, jnp.empty((b, q, p), s.dtype))
    return f


def _tile_loop(shape, pt: int, qt: int):
    """The lowering's loop over ``pt x qt`` tiles (``_tiled``), with the given tile."""
    b, p, q = shape
    plan = _tiled.TiledPlan(b, p, q, pt, qt)
    return lambda s: _tiled._tiles(lambda: s.reshape(shape), plan)


def _view_gather(s, view: Layout):
    """One element gather, indices from iota over ``view``'s own dims (no dims merged)."""
    idx = fs.storage_indices(view.shape, view.strides, view.offset, jnp.int32)
    dnums = jax.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    return jax.lax.gather(s, idx[..., None], dnums, slice_sizes=(1,), unique_indices=True,
                          mode=jax.lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _gather_permute(shape):
    b, p, q = shape
    layout = Layout((b, q, p), (p * q, 1, q))
    return lambda s: materialize(s, layout, method="gather")


TILES = ((16, 4096), (16, 1024), (16, 256), (8, 4096), (8, 1024), (32, 256), (64, 64))


def time_permute(name: str, shape: tuple[int, int, int], repeats: int, tiles=TILES,
                 view: Layout | None = None) -> None:
    """Every formulation of ``(b, p, q) -> (b, q, p)`` timed in the same interleaved rounds.
    ``view``: the permute as the user's view (unmerged dims): "auto" reads it, and "gather
    (view's dims)" is one element gather with indices over its dims rather than (b, q, p)."""

    b, p, q = shape
    x = jnp.arange(b * p * q, dtype=jnp.float32)
    merged = Layout((b, q, p), (p * q, 1, q))
    cands = {"native": _native_permute(shape), "native A/A": _native_permute(shape),
             "gather": _gather_permute(shape),
             "auto": lambda s: materialize(s, view or merged).reshape(b, q, p)}
    if view is not None:
        cands["gather (view's dims)"] = lambda s: _view_gather(s, view).reshape(b, q, p)
    for pt, qt in tiles:
        if p % pt == 0 and q % min(qt, q) == 0:
            cands[f"one op {pt}x{min(qt, q)}"] = _one_op_tiles(shape, pt, min(qt, q))
            cands[f"loop {pt}x{min(qt, q)}"] = _tile_loop(shape, pt, min(qt, q))
    if q % 16 == 0:
        cands["out stripes 16"] = _output_stripes(shape, 16)
    want = np.transpose(np.asarray(x).reshape(shape), (0, 2, 1))
    comps = {}
    for cname, fn in cands.items():
        compiled, seconds = timing.seconds(lambda fn=fn: jax.jit(fn).lower(x).compile())
        comps[cname] = (compiled, seconds, compiled.memory_analysis().temp_size_in_bytes)
        assert np.array_equal(np.asarray(compiled(x)), want), cname
    cols = {c: (lambda c=c: comps[c][0](x).block_until_ready()) for c in comps}
    samples, rounds = timing.time_columns(cols, repeats)
    base = statistics.median(samples["native"])
    print(f"\n{name}: (batch, p, q) = {shape}, auto -> "
          f"{_tiled.tiled_plan(shape, (0, 2, 1), 4) or 'XLA transpose'}; {rounds} rounds")
    print(f"  {'formulation':<18} {'median ms':>10} {'/native':>8} {'min ms':>8} {'compile s':>10} "
          f"{'temp B':>8}")
    for cname, (_, compile_s, temp) in comps.items():
        med = statistics.median(samples[cname])
        print(f"  {cname:<18} {med * 1e3:10.4f} {med / base:8.2f} {min(samples[cname]) * 1e3:8.4f} "
              f"{compile_s:10.3f} {temp:8d}")


def _row_loop(shape, axis: str, tile: int = 16):
    """Heads ``(b, t, h, d) -> (b, h, t, d)`` as a loop: one step per head (``axis="h"``), per
    (batch, head) (``"bh"``), per batch (``"b"``) or per ``tile`` positions of a batch (``"bt"``)."""
    b, t, h, d = shape

    def f(s):
        x = s.reshape(shape)
        out = jnp.empty((b, h, t, d), s.dtype)
        if axis == "h":
            def step(i, o):
                part = jax.lax.dynamic_slice(x, (0, 0, i, 0), (b, t, 1, d)).reshape(b, 1, t, d)
                return jax.lax.dynamic_update_slice(o, part, (0, i, 0, 0))
            return jax.lax.fori_loop(0, h, step, out)
        if axis == "bh":
            def step(k, o):
                part = jax.lax.dynamic_slice(x, (k // h, 0, k % h, 0), (1, t, 1, d)).reshape(1, 1, t, d)
                return jax.lax.dynamic_update_slice(o, part, (k // h, k % h, 0, 0))
            return jax.lax.fori_loop(0, b * h, step, out)
        size = t if axis == "b" else tile

        def step(k, o):
            i, j = k // (t // size), k % (t // size) * size
            part = jax.lax.dynamic_slice(x, (i, j, 0, 0), (1, size, h, d))
            return jax.lax.dynamic_update_slice(o, jax.lax.transpose(part, (0, 2, 1, 3)), (i, 0, j, 0))
        return jax.lax.fori_loop(0, b * (t // size), step, out)
    return f


def time_rows_permute(repeats: int, scale: int) -> None:
    """Attention heads: a permute that keeps the innermost dim (rows of ``d`` move whole)."""

    shape = (16 // scale, 1024, 16, 64)
    b, t, h, d = shape
    x = jnp.arange(b * t * h * d, dtype=jnp.float32)
    layout = Layout((b, h, t, d), (t * h * d, d, h * d, 1))
    cands = {"native": lambda s: jax.lax.transpose(s.reshape(shape), (0, 2, 1, 3)),
             "native A/A": lambda s: jax.lax.transpose(s.reshape(shape), (0, 2, 1, 3)),
             "gather": lambda s: materialize(s, layout, method="gather"),
             "row_gather": lambda s: materialize(s, layout, method="row_gather"),
             "auto": lambda s: materialize(s, layout),
             "loop per head": _row_loop(shape, "h"), "loop per (b, h)": _row_loop(shape, "bh"),
             "loop per batch": _row_loop(shape, "b"), "loop 16 positions": _row_loop(shape, "bt"),
             "loop 64 positions": _row_loop(shape, "bt", 64), "copy (same bytes)": lambda s: jnp.copy(s)}
    want = np.transpose(np.asarray(x).reshape(shape), (0, 2, 1, 3))
    comps = {}
    for cname, fn in cands.items():
        compiled = jax.jit(fn).lower(x).compile()
        comps[cname] = compiled
        if not cname.startswith("copy"):
            assert np.array_equal(np.asarray(compiled(x)).reshape(want.shape), want), cname
    samples, rounds = timing.time_columns({c: (lambda c=c: comps[c](x).block_until_ready()) for c in comps},
                                      repeats)
    base = statistics.median(samples["native"])
    print(f"\nattention heads {shape} -> (b, h, t, d), auto -> {read_plan(layout)} (XLA transpose); "
          f"{rounds} rounds")
    print(f"  {'formulation':<18} {'median ms':>10} {'/native':>8} {'min ms':>8}")
    for cname in comps:
        med = statistics.median(samples[cname])
        print(f"  {cname:<18} {med * 1e3:10.4f} {med / base:8.2f} {min(samples[cname]) * 1e3:8.4f}")


def permutes_table(repeats: int, scale: int) -> None:
    print("\n=== permutes: formulations of the transpose at the end of a structured read ===")
    n = 4096 // scale
    time_permute("transpose", (1, n, n), repeats)
    time_permute("NCHW->NHWC", (32 // scale, 64, 56 * 56), repeats, tiles=((16, 784), (16, 3136), (8, 784)))
    d = 32 // scale
    time_permute("NCDHW->NDHWC", (2, 32, d * 64 * 64), repeats,
                 view=Layout((2, d, 64, 64, 32), (32 * d * 4096, 4096, 64, 1, d * 4096)))
    time_permute("NDHWC->NCDHW", (2, 32 * 64 * 64 // scale, 32), repeats, tiles=((16, 32), (64, 32)))
    time_rows_permute(repeats, scale)
    print("\n=== permutes by size: 2-D transposes, XLA's op against the tile loop (TILED_MIN_ELEMENTS) ===")
    for log2 in range(12, 21, 2):
        side = 2 ** (log2 // 2)
        time_permute(f"transpose 2^{log2}", (1, side, side), repeats, tiles=((16, 1024),))


def copy_table(repeats: int, top: int) -> None:
    """The strided copy against XLA's best read of the same permute or windows, by size: the
    constants ``COPY_*`` of ``functional_strides/_src/lowering/reads.py``."""
    print("\n=== permutes and windows by size: the strided copy (CPU) against XLA's best read ===")
    try:
        read_plan(Layout((64, 64), (1, 64)), "strided_copy")
    except fs.LayoutError as exc:
        print(f"  not measured: {exc}")
        return
    print(f"  {'layout':<28} {'elements':>9} {'XLA path':>10} {'XLA ms':>9} {'strided_copy ms':>16} "
          f"{'ratio':>6}")
    families = {
        "transpose (tiles)": lambda n: Layout((2 ** ((n + 1) // 2), 2 ** (n // 2)), (1, 2 ** ((n + 1) // 2))),
        "(n/64, 64) to last (tiles)": lambda n: Layout((2 ** n // 64, 64), (1, 2 ** n // 64)),
        "rows of 16 (rows)": lambda n: Layout((16, 2 ** n // 256, 16), (16, 256, 1)),
        "rows of 64, heads (rows)": lambda n: Layout((16, 2 ** n // 1024, 64), (64, 1024, 1)),
        "frames 256/64 (windows)": lambda n: Layout((2 ** n // 256, 256), (64, 1)),
        "frames 1024/256 (windows)": lambda n: Layout((2 ** n // 1024, 1024), (256, 1)),
    }
    for name, make in families.items():
        for log2 in range(12, top + 1, 2):
            layout = make(log2)
            x = jnp.arange(layout.required_storage_size, dtype=jnp.float32)
            path = xla_read_plan(layout)
            fns = [jax.jit(lambda s, m=m, lay=layout: materialize(s, lay, method=m))
                   for m in (path, "strided_copy")]
            xla, copy = _times(fns, x, repeats)
            size = f"2^{log2}"
            print(f"  {name:<28} {size:>9} {path:>10} {xla * 1e3:9.4f} {copy * 1e3:16.4f} {copy / xla:6.2f}")


def _forced_reads(layout: Layout, x: jax.Array, attribute: str, values: tuple[str, ...],
                  extra: dict, repeats: int) -> dict[str, float]:
    """Median seconds per call of the strided copy of ``layout`` with the read handler's
    ``attribute`` (``order``, ``tiles`` or ``stores``) forced to each of ``values``, beside the columns of
    ``extra`` (name -> a call), in interleaved rounds; every forced read must give the same
    values."""

    from functional_strides._src.native import copy_kernel as _copy_kernel

    fns = {v: jax.jit(lambda s, v=v: _copy_kernel.ffi_read(s, jnp.int32(0), layout.shape, layout.strides,
                                                       **{attribute: v})) for v in values}
    first = np.asarray(fns[values[0]](x))
    for fn in fns.values():
        np.testing.assert_array_equal(np.asarray(fn(x)), first)
    cols = {v: (lambda f=fn: f(x).block_until_ready()) for v, fn in fns.items()} | extra
    samples, _ = timing.time_columns(cols, repeats)
    return {k: statistics.median(v) for k, v in samples.items()}


def _copy_column(numel: int) -> dict:
    """A column timing XLA's copy of ``numel`` float32 elements (the output's bytes)."""
    dense = jnp.zeros(numel, jnp.float32)
    copy = jax.jit(jnp.copy)
    return {"copy": lambda: copy(dense).block_until_ready()}


def _copy_built() -> bool:
    from functional_strides._src.native import copy_kernel as _copy_kernel

    if not _copy_kernel.supports(jnp.float32):
        print("  not measured: the C++ extension is not built")
        return False
    return True


def far_table(repeats: int, scale: int) -> None:
    """Far-apart elements (one dim whose stride jumps a cache line or more: a diagonal, a
    column, every 16th element) read by the strided copy against XLA's strided slice (the
    ``"structured"`` path), by stride and size, NumPy's copy beside them: the constants
    ``COPY_FAR_MIN_ELEMENTS``, ``COPY_FAR_PAGE_MIN_ELEMENTS``, ``COPY_FAR_PAGE`` and
    ``COPY_TILE_JUMP`` of ``functional_strides/_src/lowering/reads.py``.
    Medians of interleaved rounds (``timing.time_columns``); storages of at most
    2^26 elements (``scale`` divides that bound)."""

    print("\n=== far-apart elements: the strided copy against XLA's strided slice ===")
    if not _copy_built():
        return
    print(f"  {'layout':<24} {'structured us':>14} {'strided_copy us':>16} {'numpy us':>9} "
          f"{'copy/structured':>16}")
    for stride in (2, 16, 64, 256, 1024, 4097):
        for log2 in (10, 12, 14, 16):
            layout = Layout((2**log2,), (stride,))
            if layout.required_storage_size > 2**26 // scale:
                continue
            storage = np.arange(layout.required_storage_size, dtype=np.float32)
            x = jnp.asarray(storage)
            cols = {}
            for m in ("structured", "strided_copy"):
                read = jax.jit(lambda s, m=m, lay=layout: materialize(s, lay, method=m))
                cols[m] = lambda read=read, x=x: read(x).block_until_ready()
            view = np.lib.stride_tricks.as_strided(storage, layout.shape, (stride * 4,))
            cols["numpy"] = lambda view=view: np.ascontiguousarray(view)
            samples, _ = timing.time_columns(cols, repeats)
            med = {c: statistics.median(v) for c, v in samples.items()}
            print(f"  {str(layout):<24} {med['structured'] * 1e6:14.1f} {med['strided_copy'] * 1e6:16.1f} "
                  f"{med['numpy'] * 1e6:9.1f} {med['strided_copy'] / med['structured']:16.2f}")


def every_other_table(repeats: int, scale: int) -> None:
    """Every other element of every other row (``x[::2, ::2]`` of a square float32 or int8
    matrix) and of a vector (``x[::2]``): the strided copy (1- to 8-byte elements picked out of
    whole AVX2 loads) against XLA's strided slice (the ``"structured"`` path) by size, NumPy's
    copy beside them: the constants ``COPY_EVERY_OTHER_MIN_ELEMENTS`` and
    ``COPY_EVERY_OTHER_MAX_ELEMENTS`` of ``functional_strides/_src/lowering/reads.py``. Medians of
    interleaved rounds (``timing.time_columns``); storages of at most 2^26 elements
    (``scale`` divides that bound)."""

    print("\n=== every other element: the strided copy against XLA's strided slice ===")
    if not _copy_built():
        return
    print(f"  {'layout':<28} {'dtype':<8} {'structured us':>14} {'strided_copy us':>16} {'numpy us':>9} "
          f"{'copy/structured':>16}")
    for dtype, log2, rank in itertools.product(("float32", "int8"), (14, 16, 18, 20, 22, 24), (2, 1)):
        n = 2 ** (log2 // 2 + 1)
        if n * n > 2**26 // scale:
            continue
        storage = np.arange(n * n).astype(dtype)
        if rank == 2:  # x[::2, ::2] of an n x n matrix
            layout, view = Layout((n // 2, n // 2), (2 * n, 2)), storage.reshape(n, n)[::2, ::2]
        else:  # x[::2] of half as many elements
            layout, view = Layout((2**log2,), (2,)), storage[:2**(log2 + 1):2]
        x = jnp.asarray(storage)
        cols = {}
        for m in ("structured", "strided_copy"):
            read = jax.jit(lambda s, m=m, lay=layout: materialize(s, lay, method=m))
            cols[m] = lambda read=read, x=x: read(x).block_until_ready()
        cols["numpy"] = lambda view=view: np.ascontiguousarray(view)
        samples, _ = timing.time_columns(cols, repeats)
        med = {c: statistics.median(v) for c, v in samples.items()}
        print(f"  {str(layout):<28} {dtype:<8} {med['structured'] * 1e6:14.1f} "
              f"{med['strided_copy'] * 1e6:16.1f} {med['numpy'] * 1e6:9.1f} "
              f"{med['strided_copy'] / med['structured']:16.2f}")


def rows_table(repeats: int, scale: int) -> None:
    """The order the strided copy visits whole contiguous rows in: the dense array's (the
    output written straight through, the storage read a row here and there) against the
    storage's (the storage read straight through, as many runs of the output written at
    once as the innermost dim of the storage's order counts), on attention-head splits
    [B, T, H*64] -> [B, H, T, 64] of one size with H from 4 to 256: the constant
    ``kWriteStreams`` of ``functional_strides/_src/native/plan.h``, below which ``auto`` takes
    the storage's order. Medians of interleaved rounds, PyTorch's ``contiguous()`` beside
    them where it is installed."""
    print("\n=== whole rows: the strided copy in the dense order against the storage's ===")
    if not _copy_built():
        return
    try:
        import torch
    except ImportError:
        torch = None
    total, t, d = 2**24 // scale, 1024 // scale, 64
    print(f"  {'heads':>6} {'layout':<44} {'dense ms':>9} {'storage ms':>11} {'auto ms':>8} "
          f"{'torch ms':>9} {'storage/dense':>14} {'auto/torch':>11}")
    for h in (4, 8, 16, 32, 64, 256):
        b = max(1, total // (t * h * d))
        layout = fs.views.permute(Layout.contiguous((b, t, h, d)), (0, 2, 1, 3))
        x = jnp.arange(layout.required_storage_size, dtype=jnp.float32)
        extra = {}
        if torch is not None:
            tx = torch.arange(layout.required_storage_size, dtype=torch.float32)
            extra["torch"] = lambda tx=tx, lay=layout: torch.as_strided(
                tx, lay.shape, lay.strides, lay.offset).contiguous()
        med = _forced_reads(layout, x, "order", ("dense", "storage", "auto"), extra, repeats)
        vs_torch = f"{med['auto'] / med['torch']:11.2f}" if "torch" in med else f"{'-':>11}"
        torch_ms = f"{med['torch'] * 1e3:9.3f}" if "torch" in med else f"{'-':>9}"
        print(f"  {h:>6} {str(layout):<44} {med['dense'] * 1e3:9.3f} {med['storage'] * 1e3:11.3f} "
              f"{med['auto'] * 1e3:8.3f} {torch_ms} {med['storage'] / med['dense']:14.2f} {vs_torch}")


def tiles_table(repeats: int, scale: int) -> None:
    """The shape of the strided copy's cache tiles: 32 rows by 32 columns (short), up to 128
    rows by 32 (tall: 16 KiB of float32) and 64 by 64 (wide: 16 KiB of float32), on permutes
    whose last dim is short (NCHW->NHWC: 64 channels, NCDHW->NDHWC: 32), where a tile's output
    rows lie together, and on wide ones (a transpose, NDHWC->NCDHW), where they lie a row of
    the output apart: the rule behind ``TallRows`` and ``kWide`` in
    ``functional_strides/_src/native/plan.h``, with ``auto``, XLA's best read and a copy of the
    output's bytes beside them. Medians of interleaved rounds."""
    print("\n=== cache tiles: 32x32 against 128x32 and 64x64 ===")
    if not _copy_built():
        return
    n = 4096 // scale
    cases = {
        "NCHW->NHWC": fs.views.permute(Layout.contiguous((32 // scale, 64, 56, 56)), (0, 2, 3, 1)),
        "NCDHW->NDHWC": fs.views.permute(Layout.contiguous((2, 32, 32 // scale, 64, 64)), (0, 2, 3, 4, 1)),
        "(n/32, 32) to last": Layout((2**22 // scale // 32, 32), (1, 2**22 // scale // 32)),
        "transpose": Layout((n, n), (1, n)),
        "flip+transpose": Layout((n, n // 2), (-1, 2 * n), n - 1),
        "NDHWC->NCDHW": fs.views.permute(Layout.contiguous((2, 32 // scale, 64, 64, 32)), (0, 4, 1, 2, 3)),
    }
    print(f"  {'layout':<20} {'32x32 ms':>9} {'128x32 ms':>10} {'64x64 ms':>9} {'auto ms':>8} {'XLA ms':>8} "
          f"{'copy ms':>8} {'128x32/32x32':>13} {'64x64/32x32':>12} {'64x64/copy':>11}")
    for name, layout in cases.items():
        x = jnp.arange(layout.required_storage_size, dtype=jnp.float32)
        xla = jax.jit(lambda s, lay=layout: materialize(s, lay, method=xla_read_plan(lay)))
        extra = {"xla": lambda f=xla, x=x: f(x).block_until_ready()} | _copy_column(layout.numel)
        med = _forced_reads(layout, x, "tiles", ("short", "tall", "wide", "auto"), extra, repeats)
        print(f"  {name:<20} {med['short'] * 1e3:9.3f} {med['tall'] * 1e3:10.3f} {med['wide'] * 1e3:9.3f} "
              f"{med['auto'] * 1e3:8.3f} {med['xla'] * 1e3:8.3f} {med['copy'] * 1e3:8.3f} "
              f"{med['tall'] / med['short']:13.2f} {med['wide'] / med['short']:12.2f} "
              f"{med['wide'] / med['copy']:11.2f}")


def stores_table(repeats: int, scale: int) -> None:
    """How the strided copy stores a read's output: through the caches against past them
    (streaming stores), on permutes (tiles and whole rows) and on overlapping windows, each
    at three output sizes from a fraction of the caches to well past them: the rule behind
    ``Streams`` and ``kStreamMinBytes`` in ``functional_strides/_src/native/plan.h``, with
    ``auto`` and a copy of the output's bytes beside them. Medians of interleaved rounds."""
    print("\n=== stores: through the caches against past them ===")
    if not _copy_built():
        return
    print(f"  {'layout':<14} {'out MiB':>8} {'cached ms':>10} {'streaming ms':>13} {'auto ms':>8} "
          f"{'copy ms':>8} {'streaming/cached':>17}")
    for shrink in (16 * scale, 4 * scale, scale):
        n = 4096 // int(shrink ** 0.5)
        cases = {
            "transpose": Layout((n, n), (1, n)),
            "flip+transpose": Layout((n, n // 2), (-1, 2 * n), n - 1),
            "NCHW->NHWC": fs.views.permute(Layout.contiguous((32 // shrink or 1, 64, 56, 56)), (0, 2, 3, 1)),
            "NDHWC->NCDHW": fs.views.permute(Layout.contiguous((2, max(1, 32 // shrink), 64, 64, 32)),
                                             (0, 4, 1, 2, 3)),
            "heads": fs.views.permute(Layout.contiguous((max(1, 16 // shrink), 1024, 16, 64)), (0, 2, 1, 3)),
            "frames": Layout(((2**22 // shrink - 1024) // 256 + 1, 1024), (256, 1)),
        }
        for name, layout in cases.items():
            x = jnp.arange(layout.required_storage_size, dtype=jnp.float32)
            med = _forced_reads(layout, x, "stores", ("cached", "streaming", "auto"),
                                _copy_column(layout.numel), repeats)
            print(f"  {name:<14} {layout.numel * 4 / 2**20:8.1f} {med['cached'] * 1e3:10.3f} "
                  f"{med['streaming'] * 1e3:13.3f} {med['auto'] * 1e3:8.3f} {med['copy'] * 1e3:8.3f} "
                  f"{med['streaming'] / med['cached']:17.2f}")


def eager_table(repeats: int, scale: int) -> None:
    """Reads outside ``jit`` (strides and offset as operands, one program per output shape):
    the strided copy against the gather it replaces on CPU."""
    from functional_strides._src.lowering import reads as _lowering

    print("\n=== eager reads: the strided copy with strides as operands against the gather ===")
    if not _lowering._copy_kernel.supports(jnp.float32):
        print("  not measured: the C++ extension is not built")
        return
    n = 4096 // scale
    cases = {
        "transpose": Layout((n, n), (1, n)),
        "NCHW->NHWC": fs.views.permute(Layout.contiguous((32 // scale, 64, 56, 56)), (0, 2, 3, 1)),
        "heads split": Layout((16, 16, 1024 // scale, 64), (16 * 64 * 1024 // scale, 64, 1024, 1)),
        "every other row/col": Layout((n // 2, n // 2), (2 * n, 2)),
    }
    print(f"  {'layout':<22} {'gather ms':>10} {'strided_copy ms':>16} {'ratio':>6}")
    for name, layout in cases.items():
        x = jnp.arange(layout.required_storage_size, dtype=jnp.float32)
        strides = np.asarray(layout.strides, np.int32)
        offset = np.int32(layout.offset)
        gather, copy = _times([
            lambda s, t=strides, o=offset, lay=layout: _lowering._eager_gather(s, t, o, shape=lay.shape),
            lambda s, t=strides, o=offset, lay=layout: _lowering._eager_copy(s, t, o, shape=lay.shape)],
            x, repeats)
        print(f"  {name:<22} {gather * 1e3:10.3f} {copy * 1e3:16.3f} {copy / gather:6.2f}")


# -- the strided copy's own choices: its split, idle cost, pages and routes ----------------
#: The tables of the strided copy's own choices, stored in ``--json``.
NATIVE_TABLES = ("split", "idle", "pages", "routes")
#: Where the tables of the strided copy's own choices (split, idle, pages, routes) are stored.
NATIVE_RESULTS = Path(__file__).resolve().parent / "results" / "strided_copy.json"
#: Each sample follows this long (s) of untimed calls of its own column (its loop's steady
#: state, not the wind-down of the column before it: PyTorch's OpenMP workers spin after each
#: call, taking the core a pool task of ours would run on; bench_writes.py does the same).
SETTLE_S = 20e-3
#: The minima per part (bytes of traffic) timed against the extension's own.
MINIMA = (2**17, 2**19, 2**20)


def _native():
    native = _copy_kernel.extension()
    if native is None:
        sys.exit("the strided copy is not built: python -m pip install -e . first")
    return native


#: log2 of the element counts of each table; ``--small`` keeps the smallest of each (a smoke run)
SIZES = {"split": tuple(range(14, 23, 2)), "pages": tuple(range(20, 25)), "routes": (16, 18, 20, 22, 23, 24),
         "idle": 22}
SMALL_SIZES = {"split": (14, 16), "pages": (20,), "routes": (16, 18), "idle": 16}


def _native_layout(kind: str, log2: int) -> tuple[Layout, int]:
    """A view of 2^log2 float32 elements and the storage size it needs."""
    n = 2**log2
    if kind == "frames":  # windows of 256 elements, hop 64
        count = n // 256
        return Layout((count, 256), (64, 1)), (count - 1) * 64 + 256
    if kind == "transpose":
        c = 2 ** (log2 // 2)
        return Layout((c, n // c), (1, c)), n
    if kind == "every_other":  # every other row and column of a (2r, 2c) matrix
        c = 2 ** (log2 // 2)
        return Layout((n // c, c), (4 * c, 2)), 4 * n
    raise ValueError(kind)


def _compiled(layout: Layout, size: int) -> Callable[[], Any]:
    storage = jnp.arange(size, dtype=jnp.float32) % 1021
    f = jax.jit(lambda s: ffi_read(s, jnp.int32(0), layout.shape, layout.strides)).lower(storage).compile()
    return lambda: f(storage).block_until_ready()


def _with(setter: Callable[[Any], Any], value: Any, fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with a process-wide switch of the extension set to ``value`` for the call."""
    def call():
        old = setter(value)
        try:
            return fn()
        finally:
            setter(old)
    return call


def _native_ratios(samples: dict[str, list[float]], base: str) -> dict[str, dict[str, float]]:
    low, mid = timing.minima(samples), timing.medians(samples)
    return {name: {"min_s": low[name], "median_s": mid[name], "ratio_min": low[name] / low[base],
                   "ratio_median": mid[name] / mid[base]} for name in samples}


def run_split(repeat: int) -> list[dict[str, Any]]:
    native = _native()
    rows = []
    for kind in ("frames", "transpose"):
        for log2 in SIZES["split"]:
            layout, size = _native_layout(kind, log2)
            call = _compiled(layout, size)
            fns = {"alone": _with(native._set_max_parts, 1, call), "split": call}
            for m in MINIMA:
                fns[f"split, min {m >> 10} KiB"] = _with(native._set_task_min_bytes, m, call)
            samples, rounds = timing.time_columns(fns, repeat, settle_s=SETTLE_S)
            row = {"kind": kind, "elements": 2**log2, "layout": str(layout), "rounds": rounds,
                   "columns": _native_ratios(samples, "alone")}
            rows.append(row)
            print(f"split {kind:9s} 2^{log2:<2d} " + "  ".join(
                f"{k}: {v['min_s'] * 1e3:.3f} ms ({v['ratio_min']:.2f}x)" for k, v in row["columns"].items()),
                flush=True)
    return rows


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def _idle_cpu(fn: Callable[[], Any], calls: int, sleep_s: float) -> dict[str, float]:
    """``calls`` calls, each followed by a sleep of ``sleep_s``: the process's CPU seconds per
    call (outside the sleeps) and per sleep (inside them: every thread but the sleeping one)."""
    fn()
    busy = idle = 0.0
    for _ in range(calls):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        fn()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        time.sleep(sleep_s)
        r2 = resource.getrusage(resource.RUSAGE_SELF)
        busy += _cpu(r1) - _cpu(r0)
        idle += _cpu(r2) - _cpu(r1)
    return {"cpu_per_call_s": busy / calls, "cpu_per_sleep_s": idle / calls,
            "idle_cpu": idle / (calls * sleep_s)}


def _threads() -> int | None:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def run_idle(calls: int = 100, sleep_s: float = 5e-3) -> dict[str, Any]:
    """Per column: the CPU the process burns while its caller sleeps between calls (threads
    that spin for the next call, work left running after the call returned), as a fraction of
    one CPU, and the CPU of the calls themselves."""
    layout, size = _native_layout("transpose", SIZES["idle"])
    storage = jnp.arange(size, dtype=jnp.float32)
    ours = jax.jit(lambda s: materialize(s, layout, method="strided_copy")).lower(storage).compile()
    xla = jax.jit(lambda s: jnp.transpose(s.reshape(layout.shape[::-1]))).lower(storage).compile()
    a = jnp.ones((1024, 1024), jnp.float32)
    matmul = jax.jit(lambda x: x @ x).lower(a).compile()  # an XLA op that runs on the pool
    ours(storage).block_until_ready()
    xla(storage).block_until_ready()
    before = _threads()
    out: dict[str, Any] = {"calls": calls, "sleep_s": sleep_s, "layout": str(layout)}
    for name, fn in (("sleep", lambda: None), ("xla transpose", lambda: xla(storage).block_until_ready()),
                     ("xla matmul", lambda: matmul(a).block_until_ready()),
                     ("ours", lambda: ours(storage).block_until_ready())):
        out[name] = _idle_cpu(fn, calls, sleep_s)
        row = out[name]
        print(f"idle {name:14s} CPU per call {row['cpu_per_call_s'] * 1e3:.2f} ms, per {sleep_s * 1e3:.0f} "
              f"ms sleep after it {row['cpu_per_sleep_s'] * 1e3:.3f} ms: {row['idle_cpu']:.4f} CPU while "
              "asleep", flush=True)
    out["threads_before"], out["threads_after"] = before, _threads()
    print(f"idle threads before {before}, after {out['threads_after']}", flush=True)
    return out


def run_pages(repeat: int) -> list[dict[str, Any]]:
    native = _native()
    rows = []
    for kind in ("transpose", "every_other"):
        for log2 in SIZES["pages"]:
            layout, size = _native_layout(kind, log2)
            call = _compiled(layout, size)
            fns = {"advised": call, "not advised": _with(native._set_advise_huge_pages, False, call)}
            faults = {k: timing.faults_per_call(f) for k, f in fns.items()}
            samples, rounds = timing.time_columns(fns, repeat, settle_s=SETTLE_S)
            row = {"kind": kind, "elements": 2**log2, "layout": str(layout), "rounds": rounds,
                   "columns": _native_ratios(samples, "not advised"), "faults_per_call": faults}
            rows.append(row)
            print(f"pages {kind:11s} 2^{log2} " + "  ".join(
                f"{k}: {v['min_s'] * 1e3:.2f} ms, {faults[k]:.0f} faults" for k, v in row["columns"].items())
                + f"  advised/not: {row['columns']['advised']['ratio_min']:.2f}x", flush=True)
    return rows


def _route_layout(kind: str, log2: int) -> tuple[Layout, int]:
    n = 2**log2
    c = 2 ** (log2 // 2)
    r = n // c
    if kind == "expand_row":
        return Layout((r, c), (0, 1)), c
    if kind == "expand_col":
        return Layout((r, c), (1, 0)), r
    if kind == "every_other":
        return Layout((r, c), (4 * c, 2)), 4 * n
    if kind == "rows_slice":  # x[:, 1:-1] of a (r, c + 2) matrix
        return Layout((r, c), (c + 2, 1), 1), r * (c + 2)
    if kind == "stride3":  # x[:, ::3]
        return Layout((r, c), (3 * c, 3)), 3 * n
    if kind == "reversed_every_other":  # x[:, ::-2]
        return Layout((r, c), (2 * c, -2), 2 * c - 2), 2 * n
    raise ValueError(kind)


ROUTES = ("expand_row", "expand_col", "every_other", "rows_slice", "stride3", "reversed_every_other")


def run_routes(repeat: int) -> list[dict[str, Any]]:
    try:
        import torch
    except ImportError:
        torch = None
    rows = []
    for kind in ROUTES:
        for log2 in SIZES["routes"]:
            layout, size = _route_layout(kind, log2)
            host = (np.arange(size, dtype=np.int64) % 1021).astype(np.float32)
            storage = jnp.asarray(host)
            xla_path = xla_read_plan(layout)
            fns, compiled = {}, {}
            for name, method in (("strided_copy", "strided_copy"), ("xla", xla_path)):
                read = jax.jit(lambda s, m=method, lay=layout: materialize(s, lay, method=m))
                compiled[name] = f = read.lower(storage).compile()
                fns[name] = lambda f=f, s=storage: f(s).block_until_ready()
            start = layout.offset + layout.low_reach
            forwards = tuple(abs(s) for s in layout.strides)
            flipped = tuple(d for d, s in enumerate(layout.strides) if s < 0)

            def numpy_read(host=host, layout=layout, start=start, forwards=forwards, flipped=flipped):
                view = np.lib.stride_tricks.as_strided(host[start:], layout.shape, [4 * s for s in forwards])
                return np.ascontiguousarray(np.flip(view, flipped) if flipped else view)

            fns["numpy"] = numpy_read
            if torch is not None:
                t = torch.from_numpy(host)

                def torch_read(t=t, layout=layout, start=start, forwards=forwards, flipped=flipped):
                    view = torch.as_strided(t, layout.shape, forwards, start)
                    return torch.flip(view, flipped) if flipped else view.contiguous()

                fns["torch"] = torch_read
            want = numpy_read()
            for name, f in compiled.items():
                if not np.array_equal(np.asarray(f(storage)), want):
                    raise AssertionError(f"routes: {name} reads {kind} at 2^{log2} wrong")
            faults = {k: timing.faults_per_call(f) for k, f in fns.items()}
            samples, rounds = timing.time_columns(fns, repeat, settle_s=SETTLE_S)
            row = {"kind": kind, "elements": 2**log2, "layout": str(layout), "xla_path": xla_path,
                   "rounds": rounds, "columns": _native_ratios(samples, "xla"), "faults_per_call": faults}
            rows.append(row)
            best = min(v["min_s"] for k, v in row["columns"].items() if k != "strided_copy")
            row["copy_over_best"] = row["columns"]["strided_copy"]["min_s"] / best
            print(f"routes {kind:20s} 2^{log2} " + "  ".join(
                f"{k}: {v['min_s'] * 1e3:.3f} ms" for k, v in row["columns"].items())
                + f"  copy/{xla_path}: {row['columns']['strided_copy']['ratio_min']:.2f}x,"
                f" copy/best: {row['copy_over_best']:.2f}x", flush=True)
    return rows

def native_tables(only: list[str], repeat: int, quick: bool, path: Path) -> None:
    """The tables of the strided copy's own choices (``split``, ``idle``, ``pages``, ``routes``),
    merged into the stored results at ``path``, each stamped with the run that measured it."""
    if quick:
        SIZES.update(SMALL_SIZES)
    stored = json.loads(path.read_text()) if path.exists() else {}
    result: dict[str, Any] = dict(stored)
    meta = {"timestamp": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": shlex.join(["python", *sys.argv]), "repeat": repeat, "machine": bc.machine(),
            "small": quick, "cpu_count": os.cpu_count(), "jax": jax.__version__, "numpy": np.__version__,
            "glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "load_average_start": os.getloadavg()}
    runs = {"split": lambda: run_split(repeat), "idle": run_idle, "pages": lambda: run_pages(repeat),
            "routes": lambda: run_routes(repeat)}
    for table in only:
        result[table] = runs[table]()
    meta["pool_threads"] = (_copy_kernel.stats() or {}).get("pool_threads")
    meta["load_average_end"] = os.getloadavg()
    for table in only:  # each table keeps the stamp of the run that measured it
        result.setdefault("runs", {})[table] = meta
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {path}")


#: Every table, in the order a full run measures them.
TABLES = ("windows", "layouts", "permutes", "copy", "far", "every_other", "rows", "tiles", "stores", "eager",
          *NATIVE_TABLES)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", "--small", action="store_true", help="arrays 16x smaller (a smoke run)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="+", default=None, choices=TABLES, help="these tables only")
    parser.add_argument("--json", type=Path, default=NATIVE_RESULTS,
                        help=f"where the tables {', '.join(NATIVE_TABLES)} are stored (merged)")
    args = parser.parse_args(argv)
    wanted = set(args.only or TABLES)
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind} ({jax.default_backend()})")
    if "windows" in wanted:
        windows_table(2**20 if args.quick else 2**24, args.repeats)
    if "layouts" in wanted:
        benchmark_layouts(args.repeats, 4 if args.quick else 1)
    if "permutes" in wanted:
        permutes_table(args.repeats, 4 if args.quick else 1)
    if "copy" in wanted:
        copy_table(args.repeats, 20 if args.quick else 26)
    if "far" in wanted:
        far_table(max(args.repeats, 15), 4 if args.quick else 1)
    if "every_other" in wanted:
        every_other_table(max(args.repeats, 15), 4 if args.quick else 1)
    if "rows" in wanted:
        rows_table(args.repeats, 4 if args.quick else 1)
    if "tiles" in wanted:
        tiles_table(args.repeats, 4 if args.quick else 1)
    if "stores" in wanted:
        stores_table(args.repeats, 4 if args.quick else 1)
    if "eager" in wanted:
        eager_table(args.repeats, 4 if args.quick else 1)
    native = [t for t in NATIVE_TABLES if t in wanted]
    if native:
        native_tables(native, args.repeats, args.quick, args.json)


if __name__ == "__main__":
    main()

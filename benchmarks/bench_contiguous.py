"""Benchmark suite for ``StridedArray.contiguous()``: side by side with the alternatives.

Every column runs through public names; the *kernel* column is the time JAX's profiler
(``jax.profiler.trace``) gives the strided copy's custom call in ten calls of ``ours`` traced
after the timed rounds (their median; ``timing.op_seconds``), where ``ours`` runs it.

For each case a float32 storage is built, a view is taken through the library's API
(``permute``, ``t``, ``[::2, ::2]``, ``expand``, ``unfold``, ``diagonal``, ``as_strided``,
``flip``),
and these columns are timed in one run, interleaved round by round:

* ``ours``    ``jax.jit(lambda s: StridedArray(s, layout).contiguous().storage.reshape(shape))``:
              whatever lowering the library chooses for a static layout;
* ``gather``  the naive gather: storage indices built in the graph from iota
              (``fs.storage_indices``) and one ``lax.gather`` with no structure used
              (indices not declared sorted or unique);
* ``native``  the XLA op a JAX user would write on the dense input (``jnp.transpose``,
              slicing, ``jnp.broadcast_to``, ``jnp.diagonal``), where one exists;
* ``torch``   ``torch.as_strided(t, size, stride, offset).contiguous()`` (CPU); a view with
              negative strides, which PyTorch cannot make, is ``torch.flip`` of the
              ``as_strided`` view that addresses the same elements forwards;
* ``numpy``   ``np.ascontiguousarray(np.lib.stride_tricks.as_strided(...))`` (byte strides);
* ``copy``    a jitted ``jnp.copy`` of a dense array with the output's number of bytes.

Every JAX column is compiled ahead of time (``jit(...).lower(...).compile()``) and the
compiled executable is called, so all columns pay the same dispatch. Times are medians of
``--repeat`` rounds after warm-up, with ``block_until_ready``. Ratios are ``ours / column``
(below 1: ours is faster); the A/A ratio, ``ours`` against a second compiled copy of itself
timed in the same rounds, is the noise floor of the row; a jitted copy of one element, timed
in the same rounds too (``floor_s`` in the JSON), is the fixed cost of any call, with which
``bench_report.py`` explains a miss to a rival faster than that cost allows. The run also reports, for
``ours``: compile time (trace + lower + compile), optimised HLO text size, and
``compiled.memory_analysis()`` temp bytes against output bytes; the eager cost of view ops
(pure metadata) against PyTorch's; a size sweep; and checks every column's values against
NumPy's.

Usage::

    python benchmarks/bench_contiguous.py [--small] [--cases NAME ...] [--json PATH]
        [--plot PATH] [--markdown PATH] [--repeat N]

``--small`` shrinks every case to a few seconds of work (a smoke run). A run merges into
the results JSON: the records it measured (cases, eager ops, the sweep) replace the stored
ones of the same name, the others are kept, and every record carries the metadata (date,
machine, load, command) of the run that measured it. ``--markdown`` then renders the whole
merged file (``bench_report.py --markdown`` does the same from stored results alone). The
exit status is 0 when every column of every case agrees with NumPy, 2 otherwise. Timing
targets are reported, never enforced.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import Layout, StridedArray  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_report import (  # noqa: E402
    COLUMNS,
    OVERLAP_JSON,
    WRITES_JSON,
    case_rows,
    eager_rows,
    evaluate_targets,
    fault_rows,
    load_results,
    memory_rows,
    run_stamp,
    sweep_rows,
    target_rows,
    write_markdown,
    write_plot,
)
from timing import call_n, custom_calls, faults_per_call, op_seconds, time_columns  # noqa: E402

try:
    import torch
except ImportError:  # the torch column is skipped with a note
    torch = None

RESULTS_DIR = Path(__file__).resolve().parent / "results"
DTYPE = np.float32
# Untimed calls of a column before each of its samples (s; ``time_columns``'s ``settle_s``,
# ``--settle-ms``). None by default: settling keeps each column's data in the caches and hands
# NumPy its last output back already mapped, so each sample follows the other columns' calls
# (docs/performance.md, "Writes through views"); ``--settle-ms 20`` times each column in the
# steady state of its own loop instead, away from the wind-down of PyTorch's OpenMP workers,
# which spin after each call on the CPU a task of ours on XLA's pool would run on.
SETTLE_S = 0.0
AGAIN = "ours_again"  # the A/A control column (not shown among the ratios)
FLOOR = "floor"  # a jitted copy of one element: the fixed cost of any call (not a rival)


# -- cases --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    """One benchmark case: views of a 1-D storage and the dense-input XLA op, if any."""

    name: str
    description: str
    storage: np.ndarray  # 1-D, float32
    layouts: tuple[Layout, ...]  # one view, or many stacked into one (n, *shape) output
    native: Callable[[jax.Array], jax.Array] | None  # storage -> the same values
    native_name: str | None
    target_group: str | None = None  # "permute" | "slice" | "expand": torch target applies

    @property
    def out_elements(self) -> int:
        return sum(lay.numel for lay in self.layouts)


def _storage(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64).astype(DTYPE) % 1021 + 0.5


def _layout_of(view: StridedArray) -> Layout:
    assert not view.is_contiguous(), view  # contiguous() would return the storage itself
    return view.layout


def _dense_case(name: str, desc: str, shape: tuple[int, ...], make_view, native, native_name,
                group: str | None = None) -> Case:
    storage = _storage(math.prod(shape))
    layout = _layout_of(make_view(fs.from_array(storage.reshape(shape))))
    return Case(name, desc, storage, (layout,),
                None if native is None else (lambda s: native(s.reshape(shape))), native_name, group)


def _case_nchw(small: bool) -> Case:
    shape = (2, 8, 14, 14) if small else (32, 64, 56, 56)
    return _dense_case("nchw_to_nhwc", f"NCHW->NHWC permute of {list(shape)}", shape,
                       lambda x: x.permute(0, 2, 3, 1),
                       lambda a: jnp.transpose(a, (0, 2, 3, 1)), "jnp.transpose", "permute")


def _case_transpose(small: bool) -> Case:
    n = 128 if small else 4096
    return _dense_case("transpose", f"{n}x{n} transpose", (n, n), lambda x: x.t(),
                       jnp.transpose, "jnp.transpose", "permute")


def _case_slice(small: bool) -> Case:
    n = 128 if small else 4096
    return _dense_case("slice_every_other", f"every other row and column of {n}x{n}", (n, n),
                       lambda x: x[::2, ::2], lambda a: a[::2, ::2], "a[::2, ::2]", "slice")


def _case_expand(small: bool) -> Case:
    n = 128 if small else 4096
    storage = _storage(n)
    layout = _layout_of(fs.from_array(storage).unsqueeze(0).expand(n, n))
    return Case("expand_row", f"a row expanded to {n}x{n}", storage, (layout,),
                lambda s: jnp.broadcast_to(s[None, :], (n, n)), "jnp.broadcast_to", "expand")


def _case_frame(small: bool) -> Case:
    n, win, hop = (2**14, 256, 64) if small else (4 * 2**20, 1024, 256)
    storage = _storage(n)
    layout = _layout_of(fs.from_array(storage).unfold(0, win, hop))
    return Case("frame_signal", f"{n}-sample signal framed, window {win}, hop {hop}", storage,
                (layout,), None, None)


def _case_heads(small: bool) -> Case:
    b, t, h, d = (2, 64, 4, 16) if small else (16, 1024, 16, 64)
    return _dense_case(
        "attention_heads", f"heads [{b},{t},{h}*{d}] -> [{b},{h},{t},{d}]", (b, t, h * d),
        lambda x: x.view(b, t, h, d).permute(0, 2, 1, 3),
        lambda a: jnp.transpose(a.reshape(b, t, h, d), (0, 2, 1, 3)), "jnp.transpose")


def _case_3d(small: bool, to_last: bool) -> Case:
    n, c, d, h, w = (1, 4, 8, 8, 8) if small else (2, 32, 32, 64, 64)
    if to_last:
        shape, perm, label = (n, c, d, h, w), (0, 2, 3, 4, 1), "NCDHW->NDHWC"
    else:
        shape, perm, label = (n, d, h, w, c), (0, 4, 1, 2, 3), "NDHWC->NCDHW"
    return _dense_case("ncdhw_to_ndhwc" if to_last else "ndhwc_to_ncdhw",
                       f"{label} permute of {list(shape)}", shape, lambda x: x.permute(*perm),
                       lambda a: jnp.transpose(a, perm), "jnp.transpose")


def _case_diagonal(small: bool) -> Case:
    n = 128 if small else 4096
    return _dense_case("diagonal", f"diagonal of {n}x{n}", (n, n), lambda x: x.diagonal(),
                       jnp.diagonal, "jnp.diagonal")


def _case_flip(small: bool) -> Case:
    n = 128 if small else 4096
    return _dense_case("flip_transpose", f"{n}x{n} flipped left-right, every other row, transposed",
                       (n, n), lambda x: x.flip(1)[::2].t(),
                       lambda a: jnp.transpose(jnp.flip(a, 1)[::2]), "jnp.flip + slice + jnp.transpose",
                       "slice")


def _case_batch(small: bool) -> Case:
    count, b = (50, 16) if small else (1000, 32)
    storage = _storage(count * b * b)
    # View i is the transpose of the i-th b*b block, taken with fs.as_strided.
    layouts = tuple(fs.as_strided(storage, (b, b), (1, b), i * b * b).layout for i in range(count))
    return Case(
        "batch_small_views",
        f"{count} views of {b * b} elements (transposed {b}x{b} blocks), one jitted program",
        storage, layouts,
        lambda s: jnp.transpose(s.reshape(count, b, b), (0, 2, 1)),
        "jnp.transpose (batched)")


CASE_BUILDERS: dict[str, Callable[[bool], Case]] = {
    "nchw_to_nhwc": _case_nchw,
    "transpose": _case_transpose,
    "slice_every_other": _case_slice,
    "expand_row": _case_expand,
    "frame_signal": _case_frame,
    "attention_heads": _case_heads,
    "ncdhw_to_ndhwc": lambda small: _case_3d(small, True),
    "ndhwc_to_ncdhw": lambda small: _case_3d(small, False),
    "diagonal": _case_diagonal,
    "batch_small_views": _case_batch,
    "flip_transpose": _case_flip,
}
EXTRA_SECTIONS = ("sweep", "eager", "memory")


# -- the columns --------------------------------------------------------------------------
def _stack(parts: list[Any], stack: Callable[[list[Any]], Any]) -> Any:
    return parts[0] if len(parts) == 1 else stack(parts)


class Ours:
    """The ``ours`` column's program for ``layouts``, recording the lowering it builds.

    Calling it (tracing it under ``jit``) fills ``paths`` with ``fs.read_plan`` of every layout
    it actually reads, so that the reported path is that of the program that was timed."""

    def __init__(self, layouts: Sequence[Layout]):
        self.layouts = tuple(layouts)
        self.paths: set[str] = set()
        first = self.layouts[0]
        # Many views that differ only in their offset: one layout with a dynamic (traced)
        # offset, mapped over the offsets, is one gather whatever the number of views.
        self.batched = len(self.layouts) > 1 and all(
            (lay.shape, lay.strides) == (first.shape, first.strides) for lay in self.layouts)

    def __call__(self, s: jax.Array) -> jax.Array:
        # The flat storage is reshaped to the view's shape (a free bitcast) so that every JAX
        # column returns the same N-d array: with a 1-D program output, XLA:CPU's loop fusion
        # indexes the output with div/mod and runs a transpose slower, whoever computes it
        # (the native transpose too; docs/benchmarks.md). Inside a larger program that reshape
        # cancels.
        if self.batched:
            first = self.layouts[0]
            offsets = jnp.asarray(np.asarray([lay.offset for lay in self.layouts], np.int32))

            def one(o):
                view = StridedArray(s, Layout(first.shape, first.strides, o))
                path = fs.read_plan(view.layout)
                self.paths.add(f"vmap({len(self.layouts)} offsets) of dynamic_slice+{path}")
                return jnp.asarray(view)
            return jax.vmap(one)(offsets)
        parts = []
        for lay in self.layouts:
            self.paths.add(fs.read_plan(lay))
            parts.append(StridedArray(s, lay).contiguous().storage.reshape(lay.shape))
        return _stack(parts, jnp.stack)

    @property
    def path(self) -> str:
        """The lowering path(s) traced so far, ``+``-joined (empty before the first trace)."""
        return "+".join(sorted(self.paths))


_DNUMS = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))


def naive_gather(storage: jax.Array, layout: Layout) -> jax.Array:
    """Flat ``storage[offset + sum_d iota_d * strides[d]]``: one ``lax.gather``, no structure.

    The indices are built in the graph (never a baked-in constant) and are not declared
    sorted or unique, so XLA gets no hint about the layout. Returns shape ``layout.shape``."""
    idx = fs.storage_indices(layout.shape, layout.strides, layout.offset, jnp.int32)
    return lax.gather(storage, idx[..., None], _DNUMS, slice_sizes=(1,),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _gather(layouts: Sequence[Layout]) -> Callable[[jax.Array], jax.Array]:
    return lambda s: _stack([naive_gather(s, lay) for lay in layouts], jnp.stack)


def _plain_copy(x: jax.Array) -> jax.Array:
    # ``jnp.copy`` emits an HLO ``copy`` whose result is the program's output. Without
    # donation the output buffer can never alias the input, so XLA must read every byte and
    # write a fresh buffer; checked on the compiled HLO by ``_compile_copy``. (``lambda x: x``
    # would not do: JAX forwards an unchanged input without running anything, and ``x + 0``
    # is simplified to this same copy.)
    return jnp.copy(x)


def _torch_fn(case: Case) -> Callable[[], Any] | None:
    if torch is None:
        return None
    t = torch.from_numpy(case.storage)
    lays = case.layouts

    def one(lay: Layout) -> Any:
        flipped = [d for d, (n, s) in enumerate(zip(lay.shape, lay.strides, strict=True)) if s < 0 and n > 1]
        if not flipped:
            return torch.as_strided(t, lay.shape, lay.strides, lay.offset).contiguous()
        forwards = torch.as_strided(t, lay.shape, tuple(abs(s) for s in lay.strides),
                                    lay.offset + lay.low_reach)
        # torch.flip copies, but keeps the input's dim order (a transposed view stays
        # transposed: strides (1, 4096) for flip_transpose); .contiguous() makes the row-major
        # output every other column returns
        return torch.flip(forwards, flipped).contiguous()

    def f():
        return _stack([one(lay) for lay in lays], torch.stack)
    return f


def numpy_view(storage: np.ndarray, lay: Layout) -> np.ndarray:
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(storage[lay.offset:], lay.shape,
                                           tuple(s * item for s in lay.strides), writeable=False)


def _numpy_fn(case: Case) -> Callable[[], Any]:
    views = [numpy_view(case.storage, lay) for lay in case.layouts]
    return lambda: _stack([np.ascontiguousarray(v) for v in views], np.stack)


@dataclasses.dataclass
class Compiled:
    """An AOT-compiled JAX column with its compile statistics."""

    call: Callable[[], Any]
    compile_s: float
    hlo_bytes: int
    stablehlo_bytes: int
    temp_bytes: int
    output_bytes: int
    hlo_text: str


def _compile(fn: Callable[[jax.Array], Any], arg: jax.Array) -> Compiled:
    t0 = time.perf_counter()
    # Callers pass a fresh closure, so JAX's caches hold nothing for it from an earlier case.
    lowered = jax.jit(fn).lower(arg)
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t0
    mem = compiled.memory_analysis()
    hlo = compiled.as_text()
    return Compiled(lambda: compiled(arg).block_until_ready(), compile_s, len(hlo.encode()),
                    len(lowered.as_text().encode()), int(mem.temp_size_in_bytes),
                    int(mem.output_size_in_bytes), hlo)


def _compile_copy(n: int) -> Compiled:
    comp = _compile(lambda x: _plain_copy(x), jnp.asarray(_storage(n)))  # a fresh closure
    if " copy(" not in comp.hlo_text and "fusion" not in comp.hlo_text:
        raise RuntimeError("plain copy: XLA elided the copy; the copy column would time nothing.")
    return comp


def _ratios(times: dict[str, float | None]) -> dict[str, float | None]:
    ours = times["ours"]
    return {c: (ours / t if t else None) for c, t in times.items() if c != "ours"}


# -- one case -----------------------------------------------------------------------------
def _row_major(out: Any) -> bool:
    """Whether a column's output is a row-major array (every column must write one: a strided
    result, as ``torch.flip`` leaves of a transposed view, skipped the work being timed)."""
    if hasattr(out, "is_contiguous"):  # a torch tensor
        return bool(out.is_contiguous())
    return bool(np.asarray(out).flags.c_contiguous)


def _check(case: Case, outputs: dict[str, Any]) -> dict[str, bool]:
    want = np.stack([np.ascontiguousarray(numpy_view(case.storage, lay)).reshape(-1)
                     for lay in case.layouts]).reshape(-1)
    return {name: _row_major(out) and bool(np.array_equal(np.asarray(out).reshape(-1), want))
            for name, out in outputs.items()}


def run_case(case: Case, repeat: int) -> dict[str, Any]:
    """Compile, check and time every column of ``case``; a JSON-ready record."""
    storage = jnp.asarray(case.storage)
    ours_fn = Ours(case.layouts)
    comps = {"ours": _compile(ours_fn, storage),
             "gather": _compile(_gather(case.layouts), storage)}
    # A/A control: the same program compiled again and timed in the same rounds. Its ratio
    # to ``ours`` is the noise floor of every ratio in the row (1.00 on a quiet machine).
    again = _compile(Ours(case.layouts), storage)
    if case.native is not None:
        comps["native"] = _compile(case.native, storage)
    comps["copy"] = _compile_copy(case.out_elements)
    floor = _compile_copy(1)
    fns: dict[str, Callable[[], Any]] = {name: c.call for name, c in comps.items()}
    torch_fn = _torch_fn(case)
    if torch_fn is not None:
        fns["torch"] = torch_fn
    fns["numpy"] = _numpy_fn(case)
    checked = {n: f() for n, f in fns.items() if n != "copy"}
    agree = _check(case, checked)
    del checked
    fns = {c: fns[c] for c in COLUMNS if c in fns} | {AGAIN: again.call, FLOOR: floor.call}
    samples, rounds = time_columns(fns, repeat, settle_s=SETTLE_S)
    # the strided copy's share of ours: its custom call's time in JAX's profiler
    kernel_ops = custom_calls(comps["ours"].hlo_text, "functional_strides_")
    kernel = op_seconds(fns["ours"], kernel_ops) if kernel_ops else []
    times = {c: (statistics.median(samples[c]) if c in samples else None) for c in COLUMNS}
    faults = {c: faults_per_call(fns[c]) for c in COLUMNS if c in fns}
    ours = comps["ours"]
    return {
        "description": case.description,
        "layout": str(case.layouts[0]) + (f" (+{len(case.layouts) - 1} more)" * (len(case.layouts) > 1)),
        "views": len(case.layouts),
        "storage_elements": int(case.storage.size),
        "out_elements": case.out_elements,
        "out_bytes": case.out_elements * np.dtype(DTYPE).itemsize,
        "native_op": case.native_name,
        "lowering_path": ours_fn.path,
        "target_group": case.target_group,
        "times_s": times,  # medians
        "min_times_s": {c: (min(samples[c]) if c in samples else None) for c in COLUMNS},
        "ratios": _ratios(times),
        "aa_ratio": times["ours"] / statistics.median(samples[AGAIN]),
        "aa_ratio_min": min(samples["ours"]) / min(samples[AGAIN]),
        "floor_s": statistics.median(samples[FLOOR]),
        "kernel_s": statistics.median(kernel) if kernel else None,
        "floor_min_s": min(samples[FLOOR]),
        "rounds": rounds,
        "faults_per_call": faults,
        "compile_s": {n: c.compile_s for n, c in comps.items()},
        "hlo_bytes": ours.hlo_bytes,
        "stablehlo_bytes": ours.stablehlo_bytes,
        "temp_bytes": {n: c.temp_bytes for n, c in comps.items()},
        "agrees_with_numpy": agree,
    }


# -- size sweep ---------------------------------------------------------------------------
def _sweep_case(kind: str, log2: int) -> Case:
    n = 2**log2
    if kind == "transpose":
        rows, cols = 2 ** (log2 // 2), 2 ** (log2 - log2 // 2)
        return _dense_case(f"transpose_2^{log2}", f"{rows}x{cols} transpose", (rows, cols),
                           lambda x: x.t(), jnp.transpose, "jnp.transpose")
    win, hop = 256, 64
    frames = n // win
    storage = _storage((frames - 1) * hop + win)
    layout = _layout_of(fs.from_array(storage).unfold(0, win, hop))
    return Case(f"unfold_2^{log2}", f"{storage.size}-sample signal, window {win}, hop {hop}",
                storage, (layout,), None, None)


def run_sweep(max_log2: int, repeat: int) -> dict[str, list[dict[str, Any]]]:
    """``contiguous()`` of a transpose and of a framed signal, 2^10 .. 2^max_log2 elements."""
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in ("transpose", "unfold"):
        out[kind] = []
        for log2 in range(10, max_log2 + 1):
            rec = run_case(_sweep_case(kind, log2), repeat)
            rec["log2_elements"] = log2
            out[kind].append(rec)
            print(f"  sweep {kind:9s} 2^{log2:<2d} ours {rec['times_s']['ours'] * 1e3:.3f} ms  "
                  + "  ".join(f"ours/{c} {r:.2f}x" for c, r in rec["ratios"].items() if r),
                  flush=True)
    return out


# -- physical limits: bandwidth and the page faults of a fresh output ----------------------
_PROBE = textwrap.dedent("""
    import json, sys
    import numpy as np, jax, jax.numpy as jnp
    n, rounds = int(sys.argv[1]), int(sys.argv[2])
    sys.path.insert(0, sys.argv[3])
    import timing
    src = np.ones(n, np.float32)
    x = jnp.asarray(src)
    copy = jax.jit(jnp.copy).lower(x).compile()
    reused = np.empty_like(src)
    reused[:] = 0
    fns = {"jnp_copy": lambda: copy(x).block_until_ready(), "np_fresh": lambda: src.copy(),
           "np_reused": lambda: np.copyto(reused, src)}
    samples, _ = timing.time_columns(fns, rounds)
    out = {}
    for k, f in fns.items():
        out[k + "_faults"] = timing.faults_per_call(f)
        out[k + "_ms"] = timing.medians(samples)[k] * 1e3
        out[k + "_gbs"] = 2 * 4 * n / (out[k + "_ms"] * 1e-3) / 1e9  # read + write
    print(json.dumps(out))
""")
#: The allocator settings the probe runs under (the environment of a fresh process).
MEMORY_SETTINGS = {"default": None, "GLIBC_TUNABLES=glibc.malloc.hugetlb=1": "glibc.malloc.hugetlb=1"}


def run_memory(elements: int, rounds: int) -> dict[str, Any]:
    """Copy bandwidth and page-fault cost of a fresh output, per allocator setting.

    Each setting runs the probe in a fresh process (the allocator reads ``GLIBC_TUNABLES`` at
    start-up): a jitted ``jnp.copy`` of ``elements`` float32 (a fresh XLA output per call),
    NumPy's fresh copy, and NumPy's copy into a reused buffer (no faults: the bandwidth).
    *fault_us* is the time a fault costs: (fresh - reused) / faults of the fresh copy."""
    settings = {}
    for name, tunables in MEMORY_SETTINGS.items():
        env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
        if tunables:
            env["GLIBC_TUNABLES"] = tunables
        done = subprocess.run([sys.executable, "-c", _PROBE, str(elements), str(rounds),
                               str(Path(__file__).resolve().parent)], env=env,
                              capture_output=True, text=True, check=True)
        m = json.loads(done.stdout.strip().splitlines()[-1])
        extra = m["jnp_copy_faults"] - m["np_reused_faults"]
        m["fault_us"] = ((m["jnp_copy_ms"] - m["np_reused_ms"]) * 1e3 / extra) if extra > 100 else None
        settings[name] = m
        print(f"  memory [{name}]: jnp.copy {m['jnp_copy_ms']:.2f} ms ({m['jnp_copy_faults']:.0f} faults), "
              f"numpy fresh {m['np_fresh_ms']:.2f} ms ({m['np_fresh_faults']:.0f} faults), "
              f"numpy reused {m['np_reused_ms']:.2f} ms", flush=True)
    return {"elements": elements, "settings": settings}


# -- eager view-op overhead ---------------------------------------------------------------
def _eager_ops() -> dict[str, tuple[Callable[[Any], Any], str]]:
    return {
        "permute": (lambda x: x.permute(2, 0, 1), "x.permute(2, 0, 1)"),
        "transpose": (lambda x: x.transpose(0, 1), "x.transpose(0, 1)"),
        "view": (lambda x: x.view(8, 512), "x.view(8, 512)"),
        "getitem": (lambda x: x[1:, ::2], "x[1:, ::2]"),
        "unfold": (lambda x: x.unfold(2, 8, 4), "x.unfold(2, 8, 4)"),
        "diagonal": (lambda x: x.diagonal(0, 1, 2), "x.diagonal(0, 1, 2)"),
        "expand": (lambda x: x[:, :1].expand(8, 16, 32), "x[:, :1].expand(8, 16, 32)"),
    }


def run_eager(calls: int) -> dict[str, dict[str, Any]]:
    """Seconds per view op on an (8, 16, 32) ``StridedArray`` and on a torch tensor.

    ``calls`` calls per op, in 5 interleaved blocks; the median block gives the time."""
    base = np.zeros((8, 16, 32), DTYPE)
    ours_x = fs.from_array(base)
    torch_x = torch.from_numpy(base) if torch is not None else None
    out = {}
    for name, (op, code) in _eager_ops().items():
        op(ours_x)
        if torch_x is not None:
            op(torch_x)
        ours_t, torch_t = [], []
        for _ in range(5):
            ours_t.append(call_n(lambda op=op: op(ours_x), max(calls // 5, 1)))
            if torch_x is not None:
                torch_t.append(call_n(lambda op=op: op(torch_x), max(calls // 5, 1)))
        ours_s = statistics.median(ours_t)
        torch_s = statistics.median(torch_t) if torch_t else None
        out[name] = {"code": code, "calls": calls, "ours_s": ours_s, "torch_s": torch_s,
                     "ratio": ours_s / torch_s if torch_s else None,
                     "ratio_min": min(ours_t) / min(torch_t) if torch_t else None}
    return out


# -- the stored results and the console ---------------------------------------------------
def _merge_section(old: dict[str, Any], new: dict[str, Any], order: Sequence[str]) -> dict[str, Any]:
    return {n: new[n] if n in new else old[n] for n in order if n in new or n in old}


def merge_results(stored: dict[str, Any] | None, new: dict[str, Any], case_order: Sequence[str],
                  eager_order: Sequence[str]) -> dict[str, Any]:
    """``new`` folded into ``stored``: each case, eager op and sweep layout that ``new``
    measured replaces the stored record of that name; the others are kept as stored (records
    of names no longer in ``case_order``/``eager_order`` are dropped). Every record keeps its
    own ``run`` metadata (records stored without one get the stored file's ``meta``). The
    targets are re-evaluated on the merged records. Results of another size (``--small``
    against full) are never mixed: ``new`` then replaces ``stored`` whole."""
    if stored is None or stored.get("meta", {}).get("small") != new["meta"].get("small"):
        return {**new, "targets": evaluate_targets(new)}
    old_stamp = run_stamp(stored["meta"])
    for section in ("cases", "eager"):
        for rec in stored.get(section, {}).values():
            rec.setdefault("run", old_stamp)
    for points in stored.get("sweep", {}).values():
        for rec in points:
            rec.setdefault("run", old_stamp)
    merged: dict[str, Any] = {"meta": dict(new["meta"]),
                              "cases": _merge_section(stored.get("cases", {}), new["cases"], case_order)}
    eager = _merge_section(stored.get("eager", {}), new.get("eager", {}), eager_order)
    if eager:
        merged["eager"] = eager
    sweep = stored.get("sweep", {}) | new.get("sweep", {})
    if sweep:
        merged["sweep"] = sweep
        if "sweep" not in new and stored["meta"].get("plot"):
            merged["meta"]["plot"] = stored["meta"]["plot"]
    memory = new.get("memory") or stored.get("memory")
    if memory:
        merged["memory"] = memory
    merged["targets"] = evaluate_targets(merged)
    return merged


def format_text(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def print_report(result: dict[str, Any]) -> None:
    """Every table of ``result`` as plain text on stdout."""
    if result["cases"]:
        print("\n" + format_text(*case_rows(result["cases"])))
    if result.get("eager"):
        print("\n" + format_text(*eager_rows(result["eager"])))
    if result.get("sweep"):
        print("\n" + format_text(*sweep_rows(result["sweep"])))
    if any(rec.get("faults_per_call") for rec in result["cases"].values()):
        print("\n" + format_text(*fault_rows(result["cases"])))
    if result.get("memory"):
        print("\n" + format_text(*memory_rows(result["memory"])))
    print("\n" + format_text(*target_rows(evaluate_targets(result))))
    if result["meta"]["torch_note"]:
        print(result["meta"]["torch_note"])


# -- main ---------------------------------------------------------------------------------
def _meta(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    return {
        "command": "python benchmarks/bench_contiguous.py " + shlex.join(argv),
        "small": args.small,
        "repeat": args.repeat,
        "jax": jax.__version__,
        "numpy": np.__version__,
        "torch": None if torch is None else torch.__version__,
        "torch_threads": None if torch is None else torch.get_num_threads(),
        "torch_note": None if torch is not None else "PyTorch is not installed: torch column skipped",
        "machine": machine(),
        "cpu_count": os.cpu_count(),
        "load_average_start": _loadavg(),
        "glibc_tunables": os.environ.get("GLIBC_TUNABLES"),
        "transparent_hugepages": transparent_hugepages(),
        "settle_s": SETTLE_S,
        "timestamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "dtype": np.dtype(DTYPE).name,
        "naive_gather": naive_gather.__doc__.splitlines()[0],
        "plain_copy": "jit(jnp.copy) of a dense array with the output's bytes (HLO copy, not elided)",
    }


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``), or
    "unknown CPU": results from two hosts differ by more than their noise."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> str:
    """``"x86_64 Linux (AMD EPYC), cpu"``: architecture, system, CPU model, JAX's platform."""
    return f"{platform.machine()} {platform.system()} ({cpu_model()}), {jax.devices()[0].platform}"


def transparent_hugepages() -> str | None:
    """The kernel's transparent huge page mode (``always``, ``madvise``, ``never``), or None
    where it does not say: with ``madvise``, only memory advised with ``MADV_HUGEPAGE`` (NumPy's
    large arrays, the strided copy's outputs) gets 2 MiB pages."""
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    chosen = [w for w in text.split() if w.startswith("[")]
    return chosen[0].strip("[]") if chosen else None


def _loadavg() -> list[float] | None:
    """1, 5 and 15-minute load averages (other work on the machine skews every column)."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="shrink every case (a smoke run of seconds)")
    p.add_argument("--cases", nargs="+", choices=[*CASE_BUILDERS, *EXTRA_SECTIONS],
                   help="cases to run (default: all, plus the sweep and eager sections)")
    p.add_argument("--json", type=Path, help="results JSON (default benchmarks/results/<name>.json)")
    p.add_argument("--plot", type=Path, help="size-sweep plot (default benchmarks/results/<name>_sweep.png)")
    p.add_argument("--markdown", type=Path, help="write a markdown report here (e.g. docs/benchmarks.md)")
    p.add_argument("--repeat", type=int, default=None,
                   help="timed rounds per case (default 10; 3 with --small)")
    p.add_argument("--settle-ms", type=float, default=SETTLE_S * 1e3,
                   help="untimed calls of a column before each of its samples, in ms (0: none)")
    args = p.parse_args(argv)
    if args.repeat is None:
        args.repeat = 3 if args.small else 10
    if args.repeat < 1:
        p.error(f"--repeat must be >= 1 (got {args.repeat})")
    name = "bench_contiguous_small" if args.small else "bench_contiguous"
    args.json = args.json or RESULTS_DIR / f"{name}.json"
    args.plot = args.plot or RESULTS_DIR / f"{name}_sweep.png"
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected cases; merge them into the JSON (and write plot, markdown); 0 when
    every value agrees with NumPy's."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    global SETTLE_S
    SETTLE_S = args.settle_ms * 1e-3
    selected = args.cases or [*CASE_BUILDERS, *EXTRA_SECTIONS]
    _compile(_plain_copy, jnp.zeros(8, DTYPE))  # one-off backend start-up, outside any case
    result: dict[str, Any] = {"meta": _meta(args, argv), "cases": {}}
    for name in (n for n in CASE_BUILDERS if n in selected):
        print(f"case {name} ...", flush=True)
        result["cases"][name] = run_case(CASE_BUILDERS[name](args.small), args.repeat)
    if "eager" in selected:
        print("eager view ops ...", flush=True)
        result["eager"] = run_eager(1000 if args.small else 10_000)
    if "memory" in selected:
        print("physical limits (copy bandwidth, page faults) ...", flush=True)
        result["memory"] = run_memory(2**16 if args.small else 2**24, 3 if args.small else 9)
    if "sweep" in selected:
        print("size sweep ...", flush=True)
        result["sweep"] = run_sweep(16 if args.small else 26, args.repeat)
        write_plot(args.plot, result["sweep"])
        result["meta"]["plot"] = os.path.relpath(args.plot, _REPO)
    result["meta"]["load_average_end"] = _loadavg()
    stamp = run_stamp(result["meta"])
    for rec in _measured_records(result):
        rec["run"] = stamp
    result["targets"] = evaluate_targets(result)
    print_report(result)
    bad = [f"{name}:{col}" for name, rec in _all_records(result)
           for col, ok in rec["agrees_with_numpy"].items() if not ok]
    stored = load_results(args.json)
    merged = merge_results(stored, result, list(CASE_BUILDERS), list(_eager_ops()))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(merged, indent=1) + "\n")
    kept = _record_names(merged) - _record_names(result)
    print(f"\nwrote {args.json}" + (f" (kept {len(kept)} stored records: {', '.join(sorted(kept))})"
                                   if kept else ""))
    if args.markdown:
        write_markdown(args.markdown, merged, overlap=load_results(OVERLAP_JSON),
                       writes=load_results(WRITES_JSON))
        print(f"wrote {args.markdown}")
    if bad:
        print(f"ERROR: values differ from NumPy's in {', '.join(bad)}", file=sys.stderr)
        return 2
    return 0


def _measured_records(result: dict[str, Any]):
    yield from result["cases"].values()
    yield from result.get("eager", {}).values()
    for points in result.get("sweep", {}).values():
        yield from points
    if result.get("memory"):
        yield result["memory"]


def _record_names(result: dict[str, Any]) -> set[str]:
    return ({f"case {n}" for n in result["cases"]} | {f"eager {n}" for n in result.get("eager", {})}
            | {f"sweep {k}" for k in result.get("sweep", {})}
            | ({"memory"} if result.get("memory") else set()))


def _all_records(result: dict[str, Any]):
    yield from result["cases"].items()
    for kind, points in result.get("sweep", {}).items():
        for rec in points:
            yield f"sweep {kind} 2^{rec['log2_elements']}", rec


if __name__ == "__main__":
    sys.exit(main())

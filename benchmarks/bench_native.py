"""The strided copy as a guest in the process: its split over XLA's pool, its idle cost, its
pages, and the reads its pages win.

A study of the compiled kernel's internals: it imports the FFI binding from
``functional_strides._src.native`` (its switches for the split and the pages, its statistics),
which no public name exposes.

Three tables, each measured side by side in one process (columns interleaved round by round,
``bench_contiguous.time_columns``; ratios of the minima, which other work on a shared machine
only ever raises, and of the medians):

* ``split`` -- the strided copy (frames 256/64 and near-square transposes, float32, 2^14 to
  2^22 elements) split over XLA's intra-op pool, with the extension's minimum work per part
  (``kTaskMinBytes`` in ``parallel.h``) and with smaller and larger minima, against the same
  call on the calling thread alone (``_set_max_parts(1)``): what a pool worker's wake-up costs
  a small call, and from which size the split pays. Behind ``kTaskMinBytes``.
* ``idle`` -- the CPU the process burns while its caller sleeps between calls (a program
  that reads a view now and then): ``getrusage`` around each sleep, over the sleep; for ours
  (the strided copy of a 2^22-element transpose), XLA's own transpose of the same array (one
  thread), a 1024^2 matmul (XLA's Eigen call, on the pool) and a loop of sleeps alone; and the
  process's thread count before and after. The library starts no thread and leaves nothing
  spinning between calls: what it burns asleep is XLA's pool's own.
* ``pages`` -- the strided copy of transposes and every-other-element reads of 2^20 to 2^24
  float32 elements with its outputs advised to take 2 MiB pages (``pages.h``) and without
  (``_set_advise_huge_pages(False)``): time and page faults per call (``getrusage``).
* ``routes`` -- reads that XLA's own ops serve with the structured path (a broadcast row or
  column, every other element, a slice of rows, a strided slice, reversed every other
  element) of 2^16 to 2^24 float32 elements: the strided copy (forced) against the XLA path
  ``"auto"`` takes without it, NumPy and PyTorch. Behind ``COPY_EXPAND_MIN_ELEMENTS`` and
  ``COPY_FRESH_MIN_ELEMENTS`` (``_src/lowering/reads.py``).

Usage::

    python benchmarks/bench_native.py [--only split idle pages routes] [--repeat N] [--json PATH]

Writes ``benchmarks/results/bench_native.json`` by default. Run it in the environment
being described (the stored run: no ``GLIBC_TUNABLES``, transparent huge pages in ``madvise``
mode); timings are reported, never enforced.
"""

from __future__ import annotations

import argparse
import datetime
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

_HERE = Path(__file__).resolve().parent
for _p in (str(_HERE.parent), str(_HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import bench_contiguous as bc  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from functional_strides import Layout, materialize  # noqa: E402
from functional_strides._src.native import copy_kernel  # noqa: E402
from functional_strides._src.native.copy_kernel import _ffi  # noqa: E402

RESULTS = _HERE / "results" / "bench_native.json"
#: Each sample follows this long (s) of untimed calls of its own column (its loop's steady
#: state, not the wind-down of the column before it: PyTorch's OpenMP workers spin after each
#: call, taking the core a pool task of ours would run on; bench_writes.py does the same).
SETTLE_S = 20e-3
#: The minima per part (bytes of traffic) timed against the extension's own.
MINIMA = (2**17, 2**19, 2**20)


def _native():
    native = copy_kernel.extension()
    if native is None:
        sys.exit("the strided copy is not built: python -m pip install -e . first")
    return native


#: log2 of the element counts of each table; ``--small`` keeps the smallest of each (a smoke run)
SIZES = {"split": tuple(range(14, 23, 2)), "pages": tuple(range(20, 25)), "routes": (16, 18, 20, 22, 23, 24),
         "idle": 22}
SMALL_SIZES = {"split": (14, 16), "pages": (20,), "routes": (16, 18), "idle": 16}


def _layout(kind: str, log2: int) -> tuple[Layout, int]:
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
    f = jax.jit(lambda s: _ffi(s, jnp.int32(0), layout.shape, layout.strides)).lower(storage).compile()
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


def _ratios(samples: dict[str, list[float]], base: str) -> dict[str, dict[str, float]]:
    out = {}
    for name, s in samples.items():
        out[name] = {"min_s": min(s), "median_s": statistics.median(s),
                     "ratio_min": min(s) / min(samples[base]),
                     "ratio_median": statistics.median(s) / statistics.median(samples[base])}
    return out


def run_split(repeat: int) -> list[dict[str, Any]]:
    native = _native()
    rows = []
    for kind in ("frames", "transpose"):
        for log2 in SIZES["split"]:
            layout, size = _layout(kind, log2)
            call = _compiled(layout, size)
            fns = {"alone": _with(native._set_max_parts, 1, call), "split": call}
            for m in MINIMA:
                fns[f"split, min {m >> 10} KiB"] = _with(native._set_task_min_bytes, m, call)
            samples, rounds = bc.time_columns(fns, repeat, settle_s=SETTLE_S)
            row = {"kind": kind, "elements": 2**log2, "layout": str(layout), "rounds": rounds,
                   "columns": _ratios(samples, "alone")}
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
    layout, size = _layout("transpose", SIZES["idle"])
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
            layout, size = _layout(kind, log2)
            call = _compiled(layout, size)
            fns = {"advised": call, "not advised": _with(native._set_advise_huge_pages, False, call)}
            faults = {k: bc.faults_per_call(f) for k, f in fns.items()}
            samples, rounds = bc.time_columns(fns, repeat, settle_s=SETTLE_S)
            row = {"kind": kind, "elements": 2**log2, "layout": str(layout), "rounds": rounds,
                   "columns": _ratios(samples, "not advised"), "faults_per_call": faults}
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
    from functional_strides._src.lowering.reads import xla_read_plan

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
            faults = {k: bc.faults_per_call(f) for k, f in fns.items()}
            samples, rounds = bc.time_columns(fns, repeat, settle_s=SETTLE_S)
            row = {"kind": kind, "elements": 2**log2, "layout": str(layout), "xla_path": xla_path,
                   "rounds": rounds, "columns": _ratios(samples, "xla"), "faults_per_call": faults}
            rows.append(row)
            best = min(v["min_s"] for k, v in row["columns"].items() if k != "strided_copy")
            row["copy_over_best"] = row["columns"]["strided_copy"]["min_s"] / best
            print(f"routes {kind:20s} 2^{log2} " + "  ".join(
                f"{k}: {v['min_s'] * 1e3:.3f} ms" for k, v in row["columns"].items())
                + f"  copy/{xla_path}: {row['columns']['strided_copy']['ratio_min']:.2f}x,"
                f" copy/best: {row['copy_over_best']:.2f}x", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tables = ("split", "idle", "pages", "routes")
    p.add_argument("--only", nargs="+", choices=tables, default=tables)
    p.add_argument("--repeat", type=int, default=15, help="interleaved rounds per table row")
    p.add_argument("--json", type=Path, default=RESULTS)
    p.add_argument("--small", action="store_true", help="the smallest sizes of each table (a smoke run)")
    args = p.parse_args(argv)
    if args.small:
        SIZES.update(SMALL_SIZES)
    stored = json.loads(args.json.read_text()) if args.json.exists() else {}
    result: dict[str, Any] = dict(stored)
    meta = {"timestamp": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": shlex.join(["python", *sys.argv]), "repeat": args.repeat, "machine": bc.machine(),
            "small": args.small, "cpu_count": os.cpu_count(), "jax": jax.__version__, "numpy": np.__version__,
            "glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "load_average_start": os.getloadavg()}
    if "split" in args.only:
        result["split"] = run_split(args.repeat)
    if "idle" in args.only:
        result["idle"] = run_idle()
    if "pages" in args.only:
        result["pages"] = run_pages(args.repeat)
    if "routes" in args.only:
        result["routes"] = run_routes(args.repeat)
    meta["pool_threads"] = (copy_kernel.stats() or {}).get("pool_threads")
    meta["load_average_end"] = os.getloadavg()
    for section in args.only:  # each section keeps the stamp of the run that measured it
        result.setdefault("runs", {})[section] = meta
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Functional writes through views vs jnp's ``.at[]`` and PyTorch's in-place writes.

Every column runs through public names; the *kernel* column is the time JAX's profiler
(``jax.profiler.trace``) gives the strided write's custom call in ten donated calls of ours
traced after the timed rounds (their median; ``timing.op_seconds``).

For each case, times in one run, side by side:

* ours: ``StridedArray(storage, layout).at[...].set(src)`` / ``.at[...].add(src)`` under ``jax.jit``;
* ``.at[]``: ``storage.at[idx].set(src)`` / ``.add(src)`` with the same storage indices,
  built in-graph from iota (the same index arithmetic, no structure);
* torch: the same view of a torch tensor (``as_strided``) written in place with
  ``copy_(src)`` / ``add_(src)``; the in-place op mutates, so each call writes into the same
  buffer, as a loop would (``add_`` accumulates, which costs the same per call);

and prints ours/each ratios, also with the storage donated to the jitted write
(``donate_argnums``), so that XLA may update it in place as PyTorch does. The ``floor``
column is a donated jitted write of one slot: the fixed cost of calling a jitted write,
which no write through a view can undercut; ``kernel`` the time of the strided write's
custom call in donated calls of ours (the rest of such a call is the runtime around it,
which runs with caches the write has just filled with its own data). Before timing, every
column's result is checked against NumPy's write through the same view (``np.add.at`` for
``add``), the torch column on a clone of its storage. All columns of a case are timed in the
same rounds, interleaved (``timing.time_columns``), each sample after ``SETTLE_S``
of untimed calls of its own column (the steady state of a loop of that write); times are
medians. Machines are noisy: read the ratios, not the absolute times.

    python benchmarks/bench_writes.py [--small] [--repeat N] [--json PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import statistics
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _p in (str(_HERE.parent), str(_HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import bench_contiguous as bc  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import Layout, StridedArray  # noqa: E402

try:
    import torch
except ImportError:  # the torch column is skipped
    torch = None


# Each sample follows this long (s) of untimed calls of its own column: a write in place is
# timed as a loop of it runs (PyTorch's column writes into one buffer, as ours donated does),
# and not while the column before it winds down: PyTorch's OpenMP workers spin for some ms of
# CPU after each call (libgomp's wait policy), taking a core from whatever runs next (the
# measurements: docs/performance.md, "Writes through views").
SETTLE_S = 20e-3


def cases(small: bool) -> list[tuple[str, Layout, int, str]]:
    """(name, view layout, storage size, mode) — the views a ported program writes through."""
    n = 256 if small else 4096
    sig = 1 << (14 if small else 22)
    win, hop = (256, 64) if small else (1024, 256)
    b, h, t, d = (2, 4, 64, 16) if small else (16, 16, 1024, 64)
    frames = fs.views.unfold(Layout((sig,), (1,)), 0, win, hop)
    heads = fs.views.permute(Layout.contiguous((b, t, h, d)), (0, 2, 1, 3))
    return [
        ("column of a matrix (x[:, 7] = v)", Layout((n,), (n,), 7), n * n, "set"),
        ("every other row/col (x[::2, ::2] = v)", Layout((n // 2, n // 2), (2 * n, 2), 0), n * n, "set"),
        ("transposed block (x.t() = v)", Layout((n, n), (1, n), 0), n * n, "set"),
        ("attention heads [B,H,T,D] view (+= v)", heads, b * t * h * d, "add"),
        (f"overlap-add of frames {win}/{hop}", frames, sig, "add"),
    ]


def expected(layout: Layout, size: int, mode: str) -> np.ndarray:
    """NumPy's result of one write of ones through ``layout`` into ``arange(size)`` (float32):
    ``set`` assigns (overlapping slots all receive 1), ``add`` accumulates with ``np.add.at``."""
    out = np.arange(size, dtype=np.float32)
    idx = np.asarray(fs.storage_indices(layout.shape, layout.strides, layout.offset, jnp.int64
                                     if jax.config.jax_enable_x64 else jnp.int32))
    if mode == "set":
        out[idx] = 1.0
    else:
        np.add.at(out, idx, np.float32(1.0))
    return out


def _check(name: str, column: str, got, want: np.ndarray) -> None:
    got = np.asarray(got)
    if not np.array_equal(got, want):
        bad = np.flatnonzero(got != want)
        raise AssertionError(f"{name}: column {column} differs from NumPy's write at {bad.size} slots, "
                             f"first {bad[:5].tolist()}: got {got[bad[:5]].tolist()}, "
                             f"want {want[bad[:5]].tolist()}")


def measure(name: str, layout: Layout, size: int, mode: str, repeat: int) -> dict:
    storage = jnp.arange(size, dtype=jnp.float32)
    src = jnp.ones(layout.shape, jnp.float32)

    def ours_fn(s, v):
        return getattr(StridedArray(s, layout).at[...], mode)(v).storage

    def at_fn(s, v):
        idx = fs.storage_indices(layout.shape, layout.strides, layout.offset, jnp.int32)
        return getattr(s.at[idx], mode)(v)

    ours, at = jax.jit(ours_fn), jax.jit(at_fn)
    want = expected(layout, size, mode)
    _check(name, "ours", ours(storage, src), want)
    _check(name, ".at[]", at(storage, src), want)
    # Donating the storage lets XLA update it in place, as a loop carrying it would.
    state = {"ours": jnp.array(storage), "at": jnp.array(storage)}
    ours_d = jax.jit(ours_fn, donate_argnums=0)
    at_d = jax.jit(at_fn, donate_argnums=0)
    _check(name, "ours donated", ours_d(jnp.array(storage), src), want)
    _check(name, ".at[] donated", at_d(jnp.array(storage), src), want)

    def step(key, fn):
        state[key] = fn(state[key], src)
        return state[key].block_until_ready()

    # The fixed cost of a donated jitted write: one slot updated (dispatch, no bandwidth).
    floor_d = jax.jit(lambda s, v: s.at[0].add(v.reshape(-1)[0] * 0), donate_argnums=0)
    state["floor"] = jnp.array(storage)
    fns = {"ours": lambda: ours(storage, src).block_until_ready(),
           "at": lambda: at(storage, src).block_until_ready(),
           "ours_donated": lambda: step("ours", ours_d),
           "at_donated": lambda: step("at", at_d),
           "floor_donated": lambda: step("floor", floor_d)}
    if torch is not None:
        base = torch.arange(size, dtype=torch.float32)
        tsrc = torch.ones(layout.shape)
        clone = base.clone()  # the check writes once into a clone; timing writes into base
        view = clone.as_strided(layout.shape, layout.strides, layout.offset)
        # An in-place write whose elements share slots races across PyTorch's threads (its
        # result is undefined there: an overlap-add may lose additions), so the check of such
        # a view runs on one thread; the timed calls use every thread, as a program would.
        threads = torch.get_num_threads()
        if fs.internal_overlap_witness(layout) is not None:
            torch.set_num_threads(1)
        try:
            (view.copy_ if mode == "set" else view.add_)(tsrc)
        finally:
            torch.set_num_threads(threads)
        _check(name, "torch", clone.numpy(), want)
        view = base.as_strided(layout.shape, layout.strides, layout.offset)
        fns["torch"] = view.copy_ if mode == "set" else view.add_
        fns["torch"] = (lambda op: lambda: op(tsrc))(fns["torch"])
    samples, rounds = timing.time_columns(fns, repeat, settle_s=SETTLE_S)
    row = {"case": name, "mode": mode, "elements": layout.numel, "rounds": rounds}
    for col, times in samples.items():
        row[f"{col}_s"] = statistics.median(times)
        row[f"{col}_min_s"] = min(times)
    # the strided write's share of a donated call of ours (the rest is the runtime around it:
    # dispatch, arguments, the result handed back), from JAX's profiler
    hlo = ours_d.lower(state["ours"], src).compile().as_text()
    kernel_ops = timing.custom_calls(hlo, "functional_strides_")
    kernel = timing.op_seconds(fns["ours_donated"], kernel_ops) if kernel_ops else []
    row["ours_donated_kernel_s"] = statistics.median(kernel) if kernel else None
    return row


def _loadavg() -> list[float] | None:
    """1, 5 and 15-minute load averages (other work on the machine skews every column)."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per measurement")
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.small else 20)
    load_start, started = _loadavg(), datetime.datetime.now(datetime.timezone.utc)
    rows = [measure(*case, repeat) for case in cases(args.small)]
    command = "python benchmarks/bench_writes.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    run = {"timestamp": started.strftime("%Y-%m-%d %H:%M UTC"), "command": command,
           "small": args.small, "repeat": repeat, "machine": bc.machine(), "cpu_count": os.cpu_count(),
           "jax": jax.__version__,
           "numpy": np.__version__, "torch": torch.__version__ if torch else None,
           "glibc_tunables": os.environ.get("GLIBC_TUNABLES"), "settle_s": SETTLE_S,
           "load_average_start": load_start, "load_average_end": _loadavg()}
    for r in rows:
        r["run"] = run  # when, where and how each row was measured
    print(f"jax {jax.__version__} on {jax.default_backend()}; torch "
          f"{torch.__version__ if torch else 'not installed'}; median of up to {repeat} interleaved rounds")
    head = (f"{'case':42} {'mode':4} {'elements':>9} {'ours ms':>9} {'.at[] ms':>9} {'torch ms':>9} "
            f"{'ours/.at[]':>10} {'ours/torch':>10} {'donated: ours/.at[]':>19} {'ours/torch':>10} "
            f"{'floor ms':>9} {'kernel ms':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        t = r.get("torch_s")
        print(f"{r['case']:42} {r['mode']:4} {r['elements']:>9} {r['ours_s'] * 1e3:>9.3f} "
              f"{r['at_s'] * 1e3:>9.3f} {t * 1e3 if t else float('nan'):>9.3f} "
              f"{r['ours_s'] / r['at_s']:>10.2f} {r['ours_s'] / t if t else float('nan'):>10.2f} "
              f"{r['ours_donated_s'] / r['at_donated_s']:>19.2f} "
              f"{r['ours_donated_s'] / t if t else float('nan'):>10.2f} {r['floor_donated_s'] * 1e3:>9.3f} "
              f"{k * 1e3 if (k := r['ours_donated_kernel_s']) else float('nan'):>9.3f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

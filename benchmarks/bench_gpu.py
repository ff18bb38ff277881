"""``contiguous()`` on a GPU: the cases of ``bench_contiguous.py`` against the device's copy bandwidth.

For each case, on the first GPU JAX sees, these columns are timed side by side
(interleaved rounds, medians, ``timing.time_columns``): ``ours`` (the library's
lowering under ``jit``), ``gather`` (the naive iota gather), ``native`` (the XLA op on the
dense input, where one exists) and ``copy`` (a plain ``jnp.copy`` of the output's bytes).
A read of ``B`` output bytes moves at least ``2 B`` bytes (read once, written once), so
the achieved bandwidth of a column is ``2 B / time``; its *fraction* is that over the
device's copy bandwidth, measured first with a ``jnp.copy`` of ``--peak-mib`` MiB (the
best of its rounds). The values of every column are checked against NumPy's.

    bash benchmarks/gpu.sh [--cases NAME ...] [--json PATH] [--repeat N]
    bash benchmarks/gpu.sh --dry-run --small     # the same script on the CPU: a check of the script

Without a GPU the script says so and exits with status 3 (nothing is measured), unless
``--dry-run`` asks for the run on the CPU, whose figures mean nothing for a GPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from collections.abc import Sequence
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
import timing  # noqa: E402

#: Exit status when no GPU is visible and ``--dry-run`` was not given.
NO_GPU = 3
COLUMNS = ("ours", "gather", "native", "copy")


def gpu_device() -> jax.Device | None:
    """The first GPU JAX sees, or None (no CUDA/ROCm backend, or no device on it)."""
    try:
        devices = jax.devices("gpu")
    except RuntimeError:
        return None
    return devices[0] if devices else None


def peak_copy_bandwidth(device: jax.Device, mib: int, repeat: int) -> dict[str, float]:
    """Bytes per second moved (read + write) by the best of ``repeat`` ``jnp.copy`` calls of
    ``mib`` MiB on ``device``: the device's copy bandwidth."""
    x = jax.device_put(jnp.zeros(mib * 2**20 // 4, jnp.float32), device)
    copy = jax.jit(jnp.copy).lower(x).compile()
    copy(x).block_until_ready()
    samples, _ = timing.time_columns({"copy": lambda: copy(x).block_until_ready()}, repeat)
    best = min(samples["copy"])
    return {"bytes": mib * 2**20, "best_s": best, "bytes_per_s": 2 * mib * 2**20 / best}


def run_case(case: bc.Case, device: jax.Device, repeat: int, peak: float) -> dict[str, Any]:
    """Compile, check and time the columns of ``case`` on ``device``; a JSON-ready record."""
    storage = jax.device_put(jnp.asarray(case.storage), device)
    fns = {"ours": bc.Ours(case.layouts), "gather": bc._gather(case.layouts)}
    if case.native is not None:
        fns["native"] = case.native
    comps = {name: bc._compile(fn, storage) for name, fn in fns.items()}
    dense = jax.device_put(jnp.asarray(bc._storage(case.out_elements)), device)
    comps["copy"] = bc._compile(bc._plain_copy, dense)
    agree = bc._check(case, {n: jax.jit(f)(storage) for n, f in fns.items()})
    samples, rounds = timing.time_columns({n: c.call for n, c in comps.items()}, repeat)
    times = {n: statistics.median(s) for n, s in samples.items()}
    moved = 2 * case.out_elements * np.dtype(bc.DTYPE).itemsize
    return {
        "description": case.description,
        "out_elements": case.out_elements,
        "times_s": times,
        "ratios": {n: times["ours"] / t for n, t in times.items() if n != "ours"},
        "fraction_of_copy_bandwidth": {n: moved / t / peak for n, t in times.items()},
        "compile_s": comps["ours"].compile_s,
        "temp_bytes": comps["ours"].temp_bytes,
        "rounds": rounds,
        "agrees_with_numpy": agree,
    }


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="+", choices=list(bc.CASE_BUILDERS), help="cases (default: all)")
    p.add_argument("--small", action="store_true", help="the small shapes of bench_contiguous --small")
    p.add_argument("--repeat", type=int, default=20, help="timed rounds per case (default 20)")
    p.add_argument("--peak-mib", type=int, default=1024, help="MiB copied to measure the copy bandwidth")
    p.add_argument("--json", type=Path, help="write the results here (default: "
                   "benchmarks/results/bench_gpu.json on a GPU, nothing on a dry run)")
    p.add_argument("--dry-run", action="store_true",
                   help="run on the CPU when no GPU is visible (checks the script; CPU figures)")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error(f"--repeat must be >= 1 (got {args.repeat})")
    if args.peak_mib < 1:
        p.error(f"--peak-mib must be >= 1 (got {args.peak_mib})")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cases on the GPU (or the CPU with ``--dry-run``); 0 when every value agrees
    with NumPy's, 2 when one differs, ``NO_GPU`` when there is no GPU and no ``--dry-run``."""
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    device = gpu_device()
    if device is None and not args.dry_run:
        print(f"bench_gpu: no GPU visible to JAX (jax.devices() -> {jax.devices()}); nothing measured. "
              "Run on a machine with a GPU and a GPU build of jaxlib (e.g. pip install "
              "'jax[cuda12]'), or pass --dry-run to check this script on the CPU.", file=sys.stderr)
        return NO_GPU
    device = device or jax.devices()[0]
    dry = " [dry run: CPU figures, not a GPU's]" if device.platform == "cpu" else ""
    print(f"device: {device.device_kind} ({device.platform}){dry}", flush=True)
    peak = peak_copy_bandwidth(device, args.peak_mib, args.repeat)
    print(f"copy bandwidth: {peak['bytes_per_s'] / 1e9:.1f} GB/s (read + write, jnp.copy of "
          f"{args.peak_mib} MiB)", flush=True)
    records = {}
    for name in args.cases or list(bc.CASE_BUILDERS):
        print(f"case {name} ...", flush=True)
        records[name] = run_case(bc.CASE_BUILDERS[name](args.small), device, args.repeat,
                                 peak["bytes_per_s"])
    print("\n" + bc.format_text(*_rows(records)))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    result = {"meta": {"device": device.device_kind, "platform": device.platform, "jax": jax.__version__,
                       "dry_run": device.platform == "cpu", "timestamp": stamp,
                       "command": "bash benchmarks/gpu.sh " + " ".join(argv or sys.argv[1:])},
              "copy_bandwidth": peak, "cases": records}
    path = args.json or (None if device.platform == "cpu" else bc.RESULTS_DIR / "bench_gpu.json")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {path}")
    bad = [n for n, rec in records.items() if not all(rec["agrees_with_numpy"].values())]
    if bad:
        print(f"ERROR: values differ from NumPy's in {', '.join(bad)}", file=sys.stderr)
        return 2
    return 0


def _rows(records: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["case", "out elems"] + [f"{c} ms (of copy bw)" for c in COLUMNS] + ["ours/native", "ok"]
    rows = []
    for name, rec in records.items():
        t, f = rec["times_s"], rec["fraction_of_copy_bandwidth"]
        cells = [name, f"{rec['out_elements']:,}"]
        cells += [f"{t[c] * 1e3:.3f} ({f[c]:.0%})" if c in t else "-" for c in COLUMNS]
        cells += [f"{rec['ratios']['native']:.2f}x" if "native" in rec["ratios"] else "-",
                  "yes" if all(rec["agrees_with_numpy"].values()) else "NO"]
        rows.append(cells)
    return header, rows


if __name__ == "__main__":
    sys.exit(main())

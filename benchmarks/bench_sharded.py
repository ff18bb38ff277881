"""Reads of one storage sharded across devices: collectives and bytes, ours vs a naive gather.

Usage:
    python benchmarks/bench_sharded.py [--devices 8] [--small] [--repeat N] [--json PATH]

Runs on ``--devices`` simulated CPU devices (``XLA_FLAGS=--xla_force_host_platform_device_count``,
set before JAX starts). Each case is a view of a float32 storage placed with
``NamedSharding(mesh, P("x"))`` over its only axis; both columns read it into the same
output sharding (:func:`functional_strides.sharded.read_plan`'s default: along the outermost
dim the device count divides):

* **ours**: ``fs.sharded.program(storage, layout)``, what ``x.contiguous()`` and
  ``jnp.asarray(x)`` run (halo exchange with ``lax.ppermute``, or JAX's SPMD partitioner on
  the structured lowering);
* **naive**: ``jax.jit(lambda s: fs.materialize(s, layout, method="gather"))`` with the same
  output sharding: one element gather, partitioned by XLA.

Write cases (``frames_add``, ``rows_set``) compare ``fs.sharded.write_program`` (what
``x.at[...]`` runs) with ``fs.write`` under ``jit`` with the storage's sharding,
partitioned by XLA; their output is the new storage, sharded as the old one.

Per column, read from the compiled program: its collective ops, the bytes that cross
between devices (``fs.sharded.collectives``: a collective-permute's result times its pairs;
an all-gather's or all-to-all's result times ``devices - 1``), and ``memory_analysis()``'s
temp bytes per device; also the median time of ``--repeat`` interleaved calls (simulated
devices share this machine's cores: times say little, bytes are the result). Both columns'
values are checked against ``fs.oracle.materialize``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import timing  # noqa: E402

_REPO = Path(__file__).resolve().parents[1]
RESULTS = _REPO / "benchmarks" / "results" / "bench_sharded.json"


def _devices_flag(argv: list[str]) -> int:
    for i, a in enumerate(argv):
        if a == "--devices" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--devices="):
            return int(a.split("=", 1)[1])
    return 8


def cases(small: bool) -> dict[str, dict[str, Any]]:
    """Each case: a description and ``build(fs, storage_of)`` returning ``(plain, x)``."""
    k = 4 if small else 1  # --small divides the sizes

    def frames(fs, put):  # 2048 frames of 1024 at hop 256 tile the signal exactly
        n = (2048 // k - 1) * 256 + 1024
        plain, st = put(n)
        return plain, fs.StridedArray(st, fs.Layout.contiguous((n,))).unfold(0, 1024, 256)

    def frames_drift(fs, put):  # frames from offset 40 of a 2^19 signal, a multiple of 8 of them
        n = 2**19 // k
        plain, st = put(n)
        x = fs.StridedArray(st, fs.Layout.contiguous((n,)))[40:].unfold(0, 1000, 248)
        return plain, x[: x.shape[0] // 8 * 8]

    def matrix(shape):
        def build(fs, put):
            plain, st = put(shape[0] * shape[1])
            return plain, fs.StridedArray(st, fs.Layout.contiguous(shape))
        return build

    def view(base, fn):
        def build(fs, put):
            plain, x = base(fs, put)
            return plain, fn(x)
        return build

    mat = matrix((2048 // k, 512))
    act = matrix((1024 // k, 8 * 64))
    return {
        "frames": {"view": "signal.unfold(0, 1024, 256), frames tiling the storage", "build": frames},
        "frames_drift": {"view": "signal[40:].unfold(0, 1000, 248)[:8m]: parts drift across blocks",
                         "build": frames_drift},
        "transpose": {"view": "(2048, 512) matrix .t()", "build": view(mat, lambda x: x.t())},
        "heads": {"view": "activation (T, 8*64).view(T, 8, 64).permute(1, 0, 2): heads first",
                  "build": view(act, lambda x: x.view(x.shape[0], 8, 64).permute(1, 0, 2))},
        "slice": {"view": "matrix[:, 10:500:2]", "build": view(mat, lambda x: x[:, 10:500:2])},
        "select": {"view": "matrix.select(1, 7)", "build": view(mat, lambda x: x.select(1, 7))},
        "expand": {"view": "signal.unsqueeze(1).expand(-1, 4)",
                   "build": view(matrix((2**16 // k, 1)), lambda x: x.view(-1).unsqueeze(1).expand(-1, 4))},
        "expand_outer": {"view": "signal.unsqueeze(0).expand(8, -1): every device needs the source",
                         "build": view(matrix((2**12 // k, 1)),
                                       lambda x: x.view(-1).unsqueeze(0).expand(8, -1))},
        "row": {"view": "matrix.select(0, 300): one device's row, split over all",
                "build": view(mat, lambda x: x.select(0, 300 // k))},
        "frames_add": {"view": "write: signal.unfold(0, 1024, 256).at[...].add(src) (overlap-add)",
                       "build": frames, "write": "add"},
        "rows_set": {"view": "write: matrix.at[:, 7].set(src), rows within shards",
                     "build": view(mat, lambda x: x[:, 7]), "write": "set"},
        "frames_uneven": {"view": "signal.unfold(0, 1024, 256) with 2045 frames: dim 0 does not split",
                          "build": view(matrix((2**19 // k, 1)), lambda x: x.view(-1).unfold(0, 1024, 256))},
    }


def _median_times(fns: dict[str, Any], args: tuple[Any, ...], repeat: int) -> dict[str, float]:
    import jax

    cols = {k: (lambda fn=fn: jax.block_until_ready(fn(*args))) for k, fn in fns.items()}
    return timing.medians(timing.time_columns(cols, repeat)[0])


def _column(compiled: Any, fs: Any) -> dict[str, Any]:
    found = fs.sharded.collectives(compiled)
    ops: dict[str, int] = {}
    for c in found:
        ops[c.op] = ops.get(c.op, 0) + 1
    return {"ops": ops, "moved_bytes": sum(c.moved for c in found),
            "temp_bytes": compiled.memory_analysis().temp_size_in_bytes}


def run_case(name: str, case: dict[str, Any], mesh: Any, repeat: int) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import functional_strides as fs

    def put(n: int):
        plain = (np.arange(n, dtype=np.float32) * 0.5) % 101.0
        return plain, jax.device_put(jnp.asarray(plain), NamedSharding(mesh, P("x")))

    plain, x = case["build"](fs, put)
    st, layout = x.storage, x.layout
    part = fs.sharded.partition(st)
    if "write" in case:  # a write through the view: f(storage, src) -> new storage
        mode = case["write"]
        plan = fs.sharded.write_plan(layout, st.shape[0], part, mode=mode)
        src = (np.arange(layout.numel, dtype=np.float32).reshape(layout.shape) % 5.0) - 2.0
        ours = fs.sharded.write_program(st, layout, mode=mode)
        naive = jax.jit(lambda s, v: fs.write(s, layout, v, mode=mode), out_shardings=st.sharding)
        expect = fs.oracle.scatter(plain, layout, src, mode)
        args: tuple[Any, ...] = (st, src)
    else:
        plan = fs.sharded.read_plan(layout, st.shape[0], part)
        ours = fs.sharded.program(st, layout)
        naive = jax.jit(lambda s: fs.materialize(s, layout, method="gather"),
                        out_shardings=plan.out_sharding)
        expect = fs.oracle.materialize(plain, layout)
        args = (st,)
    ok = all(np.array_equal(np.asarray(f(*args)), expect) for f in (ours, naive))
    times = _median_times({"ours": ours, "naive": naive}, args, repeat)
    rec = {"view": case["view"], "layout": str(layout), "storage_bytes": int(plain.nbytes),
           "out_bytes": int(expect.nbytes), "devices": int(mesh.size), "strategy": plan.strategy,
           "out_spec": str(plan.out_sharding.spec), "halo_elements": plan.halo_elements,
           "ours": _column(ours.lower(*args).compile(), fs),
           "naive": _column(naive.lower(*args).compile(), fs),
           "times_s": times, "agrees_with_oracle": bool(ok)}
    return rec


def _ops_text(ops: dict[str, int]) -> str:
    return ", ".join(f"{n} {op}" for op, n in ops.items()) or "none"


def _kib(b: int) -> str:
    return f"{b / 1024:.1f}"


def rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table (bytes in KiB)."""
    header = ["case", "output spec", "ours: plan", "ours: collectives", "ours KiB moved",
              "naive: collectives", "naive KiB moved", "ours/naive bytes", "temp KiB/device ours / naive",
              "storage KiB", "ok"]
    out = []
    for name, r in result["cases"].items():
        o, n = r["ours"], r["naive"]
        ratio = "-" if not n["moved_bytes"] else f"{o['moved_bytes'] / n['moved_bytes']:.4f}"
        out.append([name, f"`{r['out_spec']}`", r["strategy"], _ops_text(o["ops"]), _kib(o["moved_bytes"]),
                    _ops_text(n["ops"]), _kib(n["moved_bytes"]), ratio,
                    f"{_kib(o['temp_bytes'])} / {_kib(n['temp_bytes'])}", _kib(r["storage_bytes"]),
                    "yes" if r["agrees_with_oracle"] else "NO"])
    return header, out


def markdown(result: dict[str, Any]) -> str:
    """The section of ``docs/benchmarks.md`` for the stored ``bench_sharded.json``."""
    header, body = rows(result)
    meta = result["meta"]
    lines = ["## Sharded storage: collectives per read and write", "",
             f"Measured by `{meta['command']}` ({meta['timestamp']}; jax {meta['jax']}, "
             f"{meta['devices']} simulated CPU devices). Each case reads a view of one float32 "
             "storage sharded over its only axis into the same output sharding: **ours** "
             "(`fs.sharded.program`, what `x.contiguous()` runs) against **naive**, one element "
             "gather partitioned by XLA; the write cases run `fs.sharded.write_program` (what "
             "`x.at[...]` runs) against `fs.write` partitioned by XLA. *KiB moved*: bytes "
             "that cross between devices, from the compiled HLO's collectives; *temp*: "
             "`memory_analysis()` per device; *ok*: both equal the NumPy oracle. Descriptions:", ""]
    lines += [f"* `{name}`: {r['view']}; layout `{r['layout']}`" for name, r in result["cases"].items()]
    head = "| " + " | ".join(header) + " |"
    lines += ["", head, "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    devices = _devices_flag(argv)
    flag = f"--xla_force_host_platform_device_count={devices}"
    if "jax" not in sys.modules:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.path.insert(0, str(_REPO))
    import jax
    import numpy as np
    from jax.sharding import Mesh

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=int, default=8, help="simulated CPU devices (default 8)")
    p.add_argument("--small", action="store_true", help="smaller storages (a smoke run)")
    p.add_argument("--repeat", type=int, default=5, help="timed calls per column (median); default 5")
    p.add_argument("--cases", nargs="*", help="run only these cases")
    p.add_argument("--json", type=Path, help=f"write the results here (stored: {RESULTS.relative_to(_REPO)})")
    args = p.parse_args(argv)
    if len(jax.devices()) < args.devices:
        p.error(f"JAX has {len(jax.devices())} devices, not {args.devices}: run this script in a fresh "
                "process (XLA_FLAGS is read when JAX starts)")
    mesh = Mesh(np.array(jax.devices()[: args.devices]), ("x",))
    table = cases(args.small)
    chosen = args.cases or list(table)
    result = {"meta": {"command": "python benchmarks/bench_sharded.py " + " ".join(argv),
                       "timestamp": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "jax": jax.__version__, "devices": args.devices, "small": args.small,
                       "machine": platform.machine(), "cpu_count": os.cpu_count()},
              "cases": {name: run_case(name, table[name], mesh, args.repeat) for name in chosen}}
    header, body = rows(result)
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for r in body:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    times = [f"{n} ours {r['times_s']['ours']:.4f} naive {r['times_s']['naive']:.4f}"
             for n, r in result["cases"].items()]
    print("times (s, medians): " + ", ".join(times))
    if not all(r["agrees_with_oracle"] for r in result["cases"].values()):
        print("a column differs from the oracle", file=sys.stderr)
        return 1
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

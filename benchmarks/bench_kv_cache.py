"""KV-cache decode loop: in-place writes through a view of a ``jax.Ref`` against the functional spellings.

Public names only; the record names the write plan (``fs.write_plan`` of a step's view) and
whether the strided write was built and on (the "compiled parts" line of ``fs.explain``).

A cache ``[layers, heads, positions, dim]`` takes one key vector per layer and head at each
decode step ``t``, inside ``lax.fori_loop`` over ``--steps`` steps. Columns, compiled ahead
of time, checked against NumPy, then timed side by side in one run (interleaved rounds,
``timing.time_columns``; medians):

* ``ref``         the cache in one ``jax.Ref`` (``fs.from_ref(ref).view(L, H, P, D)``) and
                  ``cache.select(2, t).copy_(ks[t])`` per step; the jitted program takes the
                  ref-backed view, and the caller's ref holds the written cache;
* ``functional``  the cache over a ``jax.Array`` storage and
                  ``cache = cache.at[:, :, t].set(ks[t])`` carried through the loop, the storage
                  donated (``donate_argnums=0``);
* ``jnp``         a dense ``[L, H, P, D]`` array and ``cache = cache.at[:, :, t].set(ks[t])``
                  carried, donated;
* ``ref_eager``   ``ref``'s write from a Python loop, one call per step (the program compiled
                  once for the view's shape and strides, its offset an argument).

Per column: the time per decode step (a call's median time over its steps: 1024 by default,
so that the fixed cost of a call, larger for a program with a ref argument, which JAX's C++
dispatch does not serve, weighs little), and from
``compiled.memory_analysis()`` the temporary bytes and the peak (arguments + outputs +
temporaries - aliased bytes) of the program (for ``ref_eager``: of a jitted step, the view's
position an argument, as the program an eager step runs takes its offset). The machine these
results come from is shared: read ratios measured in one run, not absolute times.

    python benchmarks/bench_kv_cache.py [--small] [--repeat N] [--steps T] [--json PATH] [--markdown PATH]

With ``FUNCTIONAL_STRIDES_PURE_PYTHON=1`` in the environment the CPU's strided write is off and
every column takes the XLA paths other platforms take (stored as ``bench_kv_cache_xla.json``).

Exit status 0 when every column's cache equals NumPy's, 2 otherwise.
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
from jax import lax  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import Layout, StridedArray  # noqa: E402

COLUMNS = ("ref", "functional", "jnp", "ref_eager")
RESULTS = _HERE / "results" / "bench_kv_cache.json"


def cases(small: bool) -> dict[str, tuple[int, int, int, int]]:
    """name -> cache shape ``(layers, heads, positions, dim)``."""
    if small:
        return {"tiny": (2, 2, 64, 16)}
    return {"16 MiB": (2, 8, 2048, 128), "128 MiB": (4, 16, 4096, 128)}


def _memory(compiled: Any) -> dict[str, int]:
    m = compiled.memory_analysis()
    out = {"temp_bytes": m.temp_size_in_bytes, "arg_bytes": m.argument_size_in_bytes,
           "out_bytes": m.output_size_in_bytes, "alias_bytes": m.alias_size_in_bytes}
    out["peak_bytes"] = out["arg_bytes"] + out["out_bytes"] + out["temp_bytes"] - out["alias_bytes"]
    return out


def _programs(shape: tuple[int, int, int, int], steps: int):
    """The three jitted decode loops (each returns something to wait on)."""
    def decode_ref(cache, ks):
        def body(t, count):
            cache.select(2, t).copy_(ks[t])
            return count + 1
        return lax.fori_loop(0, steps, body, 0)

    def decode_functional(storage, ks):
        def body(t, s):
            return StridedArray(s, Layout.contiguous(shape)).at[:, :, t].set(ks[t]).storage
        return lax.fori_loop(0, steps, body, storage)

    def decode_jnp(cache, ks):
        return lax.fori_loop(0, steps, lambda t, c: c.at[:, :, t].set(ks[t]), cache)

    return (jax.jit(decode_ref), jax.jit(decode_functional, donate_argnums=0),
            jax.jit(decode_jnp, donate_argnums=0))


def _write_step(cache, k, t) -> None:
    """One decode step's write, the position ``t`` an argument: the program an eager
    ``copy_`` of a step runs (it takes the view's offset as an argument)."""
    cache.select(2, t).copy_(k)


def measure(name: str, shape: tuple[int, int, int, int], steps: int, repeat: int) -> dict[str, Any]:
    layers, heads, positions, dim = shape
    n = layers * heads * positions * dim
    ks = jax.random.normal(jax.random.key(0), (steps, layers, heads, dim), jnp.float32)
    want = np.zeros(shape, np.float32)
    want[:, :, :steps] = np.moveaxis(np.asarray(ks), 0, 2)
    ref_fn, fun_fn, jnp_fn = _programs(shape, steps)

    ref = jax.new_ref(jnp.zeros(n, jnp.float32))
    cache = fs.from_ref(ref).view(*shape)
    compiled = {"ref": ref_fn.lower(cache, ks).compile(),
                "functional": fun_fn.lower(jnp.zeros(n), ks).compile(),
                "jnp": jnp_fn.lower(jnp.zeros(shape), ks).compile()}
    row = cache.select(2, 0)
    compiled["ref_eager"] = jax.jit(_write_step).lower(cache, ks[0], np.int32(0)).compile()
    memory = {col: _memory(c) for col, c in compiled.items()}

    # -- check every column once, on a zero cache
    compiled["ref"](cache, ks).block_until_ready()
    state = {"functional": compiled["functional"](jnp.zeros(n), ks),
             "jnp": compiled["jnp"](jnp.zeros(shape), ks)}
    eager_ref = jax.new_ref(jnp.zeros(n, jnp.float32))
    eager_cache = fs.from_ref(eager_ref).view(*shape)
    k_steps = [ks[t] for t in range(steps)]

    def eager_loop() -> None:
        for t, k in enumerate(k_steps):
            eager_cache.select(2, t).copy_(k)
        eager_ref[0:1].block_until_ready()

    eager_loop()
    got = {"ref": np.asarray(ref[...]).reshape(shape), "jnp": np.asarray(state["jnp"]),
           "functional": np.asarray(state["functional"]).reshape(shape),
           "ref_eager": np.asarray(eager_ref[...]).reshape(shape)}
    agrees = {col: bool(np.array_equal(got[col], want)) for col in COLUMNS}

    def donated(col: str):
        def call() -> None:  # the output is the next call's donated input
            state[col] = compiled[col](state[col], ks)
            state[col].block_until_ready()
        return call

    fns = {"ref": lambda: compiled["ref"](cache, ks).block_until_ready(),
           "functional": donated("functional"), "jnp": donated("jnp"), "ref_eager": eager_loop}
    samples, rounds = timing.time_columns(fns, repeat)
    columns = {}
    for col in COLUMNS:
        times = samples[col]
        columns[col] = {"step_s": statistics.median(times) / steps, "step_min_s": min(times) / steps,
                        **memory[col]}
    return {"shape": list(shape), "cache_bytes": 4 * n, "steps": steps, "rounds": rounds,
            "write_plan": fs.write_plan(Layout(row.shape, row.stride(), np.asarray(0, np.int32)), n),
            "columns": columns, "agrees_with_numpy": agrees}


def markdown(result: dict[str, Any]) -> str:
    """The stored results as a Markdown table (what ``docs/inplace.md`` shows)."""
    meta = result["meta"]
    lines = [f"Measured {meta['timestamp']} on {meta['machine']}, {meta['cpu_count']} cores (load average "
             f"{meta['load_average_start']} at the start, {meta['load_average_end']} at the end), jax "
             f"{meta['jax']}, median of up to {meta['repeat']} interleaved rounds of one call per column "
             f"(the decode loop: one step per position written), the strided write "
             f"{'built' if meta.get('strided_write') else 'off (the XLA paths of other platforms)'}: "
             f"`{meta['command']}`. Peak bytes count the program's arguments, the keys of every step "
             "included.", "",
             "| cache [L, H, P, D] | MiB | steps | column | µs / step | ratio to ref | temp bytes | peak MiB "
             "| ok |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, case in result["cases"].items():
        base = case["columns"]["ref"]["step_s"]
        for col in COLUMNS:
            c = case["columns"][col]
            ok = "yes" if case["agrees_with_numpy"][col] else "NO"
            lines.append(f"| {name} {tuple(case['shape'])} | {case['cache_bytes'] / 2**20:.0f} | "
                         f"{case['steps']} | `{col}` | "
                         f"{c['step_s'] * 1e6:.1f} | {c['step_s'] / base:.2f}x | {c['temp_bytes']:,} | "
                         f"{c['peak_bytes'] / 2**20:.1f} | {ok} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a tiny cache (a smoke run)")
    parser.add_argument("--repeat", type=int, default=None, help="interleaved rounds (default 15; 3 small)")
    parser.add_argument("--steps", type=int, default=None,
                        help="decode steps per call (default: 1024, at most the positions)")
    parser.add_argument("--json", type=Path, default=None, help=f"write the results here (e.g. {RESULTS})")
    parser.add_argument("--markdown", type=Path, default=None, help="write the table here")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    repeat = args.repeat or (3 if args.small else 15)
    load_start = bc._loadavg()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    steps = {name: args.steps or min(1024, shape[2]) for name, shape in cases(args.small).items()}
    results = {name: measure(name, shape, steps[name], repeat) for name, shape in cases(args.small).items()}
    env = "FUNCTIONAL_STRIDES_PURE_PYTHON=1 " if os.environ.get("FUNCTIONAL_STRIDES_PURE_PYTHON") else ""
    meta = {"timestamp": started, "command": env + "python benchmarks/bench_kv_cache.py " + shlex.join(argv),
            "small": args.small, "repeat": repeat, "steps": steps, "machine": bc.machine(),
            "cpu_count": os.cpu_count(), "jax": jax.__version__, "numpy": np.__version__,
            "strided_write": "the strided copy and write on" in str(fs.explain(Layout((1,), (1,)))),
            "load_average_start": load_start, "load_average_end": bc._loadavg()}
    result = {"meta": meta, "cases": results}
    text = markdown(result)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(text)
    return 0 if all(all(c["agrees_with_numpy"].values()) for c in results.values()) else 2


if __name__ == "__main__":
    sys.exit(main())

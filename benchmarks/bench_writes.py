"""Functional writes through views vs jnp's ``.at[]`` and PyTorch's in-place writes.

For each case, times in one run, side by side:

* ours: ``StridedArray(storage, layout).at[...].set(src)`` / ``.at[...].add(src)`` under ``jax.jit``;
* ``.at[]``: ``storage.at[idx].set(src)`` / ``.add(src)`` with the same storage indices,
  built in-graph from iota (the same index arithmetic, no structure);
* torch: the same view of a torch tensor (``as_strided``) written in place with
  ``copy_(src)`` / ``add_(src)`` (on a clone made outside the timed region for ``copy_``;
  the in-place op mutates, so each repeat writes into the same buffer, as a loop would);

and prints ours/each ratios, also with the storage donated to the jitted write
(``donate_argnums``), so that XLA may update it in place as PyTorch does. Machines are noisy:
read the ratios, not the absolute times.

    python benchmarks/bench_writes.py [--small] [--repeat N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import functional_strides as fs
from functional_strides import Layout, StridedArray
from functional_strides.lowering import storage_indices

try:
    import torch
except ImportError:  # the torch column is skipped
    torch = None


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


def _time(fn, repeat: int) -> float:
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(name: str, layout: Layout, size: int, mode: str, repeat: int) -> dict:
    storage = jnp.arange(size, dtype=jnp.float32)
    src = jnp.ones(layout.shape, jnp.float32)

    def ours_fn(s, v):
        return getattr(StridedArray(s, layout).at[...], mode)(v).storage

    ours = jax.jit(ours_fn)

    def at_fn(s, v):
        idx = storage_indices(layout.shape, layout.strides, layout.offset, jnp.int32)
        return getattr(s.at[idx], mode)(v)

    at = jax.jit(at_fn)
    row = {"case": name, "mode": mode, "elements": layout.numel,
           "ours_s": _time(lambda: ours(storage, src), repeat),
           "at_s": _time(lambda: at(storage, src), repeat)}
    np.testing.assert_allclose(np.asarray(ours(storage, src)), np.asarray(at(storage, src)))
    # Donating the storage lets XLA update it in place, as a loop carrying it would.
    state = {"ours": jnp.array(storage), "at": jnp.array(storage)}
    ours_d = jax.jit(ours_fn, donate_argnums=0)
    at_d = jax.jit(at_fn, donate_argnums=0)

    def step(key, fn):
        state[key] = fn(state[key], src)
        return state[key]

    row["ours_donated_s"] = _time(lambda: step("ours", ours_d), repeat)
    row["at_donated_s"] = _time(lambda: step("at", at_d), repeat)
    if torch is not None:
        base = torch.arange(size, dtype=torch.float32)
        view = base.as_strided(layout.shape, layout.strides, layout.offset)
        tsrc = torch.ones(layout.shape)
        op = view.copy_ if mode == "set" else view.add_
        row["torch_s"] = _time(lambda: op(tsrc), repeat)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per measurement")
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.small else 20)
    rows = [measure(*case, repeat) for case in cases(args.small)]
    print(f"jax {jax.__version__} on {jax.default_backend()}; torch "
          f"{torch.__version__ if torch else 'not installed'}; median of {repeat} runs")
    head = (f"{'case':42} {'mode':4} {'elements':>9} {'ours ms':>9} {'.at[] ms':>9} {'torch ms':>9} "
            f"{'ours/.at[]':>10} {'ours/torch':>10} {'donated: ours/.at[]':>19} {'ours/torch':>10}")
    print(head)
    print("-" * len(head))
    for r in rows:
        t = r.get("torch_s")
        print(f"{r['case']:42} {r['mode']:4} {r['elements']:>9} {r['ours_s'] * 1e3:>9.3f} "
              f"{r['at_s'] * 1e3:>9.3f} {t * 1e3 if t else float('nan'):>9.3f} "
              f"{r['ours_s'] / r['at_s']:>10.2f} {r['ours_s'] / t if t else float('nan'):>10.2f} "
              f"{r['ours_donated_s'] / r['at_donated_s']:>19.2f} "
              f"{r['ours_donated_s'] / t if t else float('nan'):>10.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

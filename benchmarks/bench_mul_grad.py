"""Cost of differentiating a multiplying write through an overlapping view.

For each overlapping layout, times in the same interleaved rounds (``timing.time_columns``,
medians; ``jax.jit``, compiled first):

* ``mul`` and ``add`` forward: ``write(storage, layout, src, mode=...)``;
* ``mul`` and ``add`` gradient: ``jax.grad`` of the sum of the written storage with respect to
  the storage and ``src`` (``mul`` through an overlapping view takes the product rule
  described in docs/design.md: a sort of the slots and a segmented scan);
* torch: ``scatter_reduce(storage, 0, index, src, "prod", include_self=True)`` forward and
  backward on CPU, for the same indices;

and prints the ratios mul/add (forward, gradient) and ours/torch (gradient). Machines are
noisy: read the ratios, not the absolute times.

    python benchmarks/bench_mul_grad.py [--small] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402

from functional_strides import Layout, write  # noqa: E402

try:
    import torch
except ImportError:  # the torch column is skipped
    torch = None


def cases(small: bool) -> list[tuple[str, Layout, int]]:
    n = 2**12 if small else 2**20
    frames = (n - 1024) // 256 + 1
    side = 32 if small else 512
    return [
        (f"unfold 1024/256 of {n}", Layout((frames, 1024), (256, 1)), n),
        (f"unfold 64/16 of {n}", Layout(((n - 64) // 16 + 1, 64), (16, 1)), n),
        (f"hankel {side}x{side}", Layout((side, side), (1, 1)), 2 * side - 1),
    ]


def torch_grad(storage: np.ndarray, layout: Layout, src: np.ndarray):
    """PyTorch's step: ``scatter_reduce(..., "prod", include_self=True)`` and its backward
    (``None`` without PyTorch)."""
    if torch is None:
        return None
    index = torch.from_numpy(layout.indices().reshape(-1).astype(np.int64))
    base = torch.from_numpy(storage)
    values = torch.from_numpy(src.reshape(-1))

    def step():
        s = base.clone().requires_grad_(True)
        v = values.clone().requires_grad_(True)
        torch.scatter_reduce(s, 0, index, v, "prod", include_self=True).sum().backward()
        return s.grad

    return step


def ours(layout: Layout, storage: np.ndarray, src: np.ndarray) -> dict:
    """Forward and gradient steps of ``write`` for ``"add"`` and ``"mul"``, by column name."""
    s, v = jnp.asarray(storage), jnp.asarray(src)
    out = {}
    for mode in ("add", "mul"):
        def loss(s, v, mode=mode):
            return write(s, layout, v, mode=mode).sum()

        fwd = jax.jit(lambda s, v, mode=mode: write(s, layout, v, mode=mode))
        grad = jax.jit(jax.grad(loss, (0, 1)))
        out[f"{mode} fwd"] = lambda f=fwd: jax.block_until_ready(f(s, v))
        out[f"{mode} grad"] = lambda f=grad: jax.block_until_ready(f(s, v))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'case':26} {'mul/add fwd':>12} {'mul/add grad':>13} {'mul grad ms':>12} {'ours/torch grad':>16}")
    for name, layout, n in cases(args.small):
        storage = np.linspace(0.5, 1.5, n).astype(np.float32)
        src = np.linspace(0.9, 1.1, layout.numel).astype(np.float32).reshape(layout.shape)
        cols = ours(layout, storage, src)
        if (step := torch_grad(storage, layout, src)) is not None:
            cols["torch grad"] = step
        t = timing.medians(timing.time_columns(cols, args.repeat)[0])
        ref = t.get("torch grad")
        vs_torch = f"{t['mul grad'] / ref:16.2f}" if ref else f"{'(no torch)':>16}"
        fwd, grad = t["mul fwd"] / t["add fwd"], t["mul grad"] / t["add grad"]
        print(f"{name:26} {fwd:12.2f} {grad:13.1f} {t['mul grad'] * 1e3:12.1f} {vs_torch}")


if __name__ == "__main__":
    main()

"""Imports that keep the layout against the dense imports, side by side in one run.

Each case times its columns interleaved (rounds of one call each, medians) and prints each
column's time as a ratio to the first column of the case. Every column's values are checked
against NumPy's (or PyTorch's) before timing. Cases:

* ``numpy_view``   a transposed, strided view of a NumPy array (``a.T[::2]``):
                   ``fs.from_numpy`` (copies the reached span, keeps the strides) against
                   ``fs.from_array`` (reorders into a dense array) and ``jnp.asarray``;
* ``torch_view``   the same view of a torch tensor: ``fs.from_torch`` against
                   ``jnp.asarray(t.numpy())`` (dense) and ``jnp.asarray(t.contiguous().numpy())``;
* ``to_torch``     ``fs.to_torch(x)`` (storage + ``as_strided``) against
                   ``torch.from_numpy(np.asarray(x).copy())`` (materialise, then a dense tensor);
* ``channels_last`` ``x.contiguous(memory_format=fs.channels_last)`` of an NCHW array against
                   ``jnp.transpose`` to NHWC (materialised) and PyTorch's own;
* ``dtype_view``   reading ``x.view(jnp.uint16)`` of a row-strided float32 view against
                   ``lax.bitcast_convert_type(jnp.asarray(x), uint16)`` (the dense JAX way).

Usage::

    python benchmarks/bench_imports.py [--small] [--repeat N]

Exit status 0 when every column's values are right, 2 otherwise. Timing is reported, never
enforced; only the ratios of one run mean anything on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the timing harness
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402
from jax import lax  # noqa: E402

import functional_strides as fs  # noqa: E402


def _ready(value):
    """``value`` once computed (a JAX result waited for)."""
    array = value.storage if isinstance(value, fs.StridedArray) else value
    if isinstance(array, jax.Array):
        array.block_until_ready()
    return value


def _values(value) -> np.ndarray:
    if type(value).__module__.startswith("torch"):
        return value.numpy()
    return np.asarray(value)


def _cases(n: int) -> dict[str, tuple[np.ndarray, dict[str, Callable]]]:
    """name -> (expected values, {column: function}); the first column is the reference."""
    import torch

    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    view = a.T[::2]
    t = torch.from_numpy(a).t()[::2]
    x = fs.from_numpy(view)
    image = np.random.default_rng(1).random((8, 16, n // 8, n // 8), dtype=np.float32)
    nchw = fs.from_array(jnp.asarray(image))
    timage = torch.from_numpy(image)
    rows = a[::2, 8:]  # a dtype view needs a last stride of 1
    r = fs.from_numpy(rows)
    u16 = np.ascontiguousarray(rows).view(np.uint16)
    bitcast = jax.jit(lambda s: lax.bitcast_convert_type(jnp.asarray(fs.StridedArray(s, r.layout)),
                                                         jnp.uint16).reshape(u16.shape))
    read_view = jax.jit(lambda s: jnp.asarray(fs.StridedArray(s, r.layout).view(jnp.uint16)))
    to_nhwc = jax.jit(lambda s: fs.StridedArray(s, nchw.layout)
                      .contiguous(memory_format=fs.channels_last).storage)
    transpose = jax.jit(lambda s: jnp.transpose(s.reshape(image.shape), (0, 2, 3, 1)).reshape(-1))
    nhwc = image.transpose(0, 2, 3, 1).reshape(-1)
    return {
        "numpy_view": (view, {"from_numpy": lambda: fs.from_numpy(view),
                              "from_array": lambda: fs.from_array(view),
                              "jnp.asarray": lambda: jnp.asarray(view)}),
        "torch_view": (view, {"from_torch": lambda: fs.from_torch(t),
                              "jnp.asarray(t.numpy())": lambda: jnp.asarray(t.numpy()),
                              "contiguous().numpy()": lambda: jnp.asarray(t.contiguous().numpy())}),
        "to_torch": (view, {"to_torch": lambda: fs.to_torch(x),
                            "torch.from_numpy(asarray(x).copy())":
                                lambda: torch.from_numpy(np.asarray(x).copy())}),
        "channels_last": (nhwc, {"contiguous(channels_last)": lambda: to_nhwc(nchw.storage),
                                 "jnp.transpose": lambda: transpose(nchw.storage),
                                 "torch": lambda: timage.contiguous(memory_format=torch.channels_last)
                                 .permute(0, 2, 3, 1).reshape(-1)}),
        "dtype_view": (u16, {"view(uint16)": lambda: read_view(r.storage),
                             "bitcast(asarray)": lambda: bitcast(r.storage)}),
    }


def run(small: bool, repeat: int) -> int:
    n = 256 if small else 2048
    status = 0
    for name, (expected, columns) in _cases(n).items():
        for col, fn in columns.items():  # check (and warm up) every column
            got = _values(_ready(fn()))
            if got.shape != expected.shape or not np.array_equal(got, expected):
                print(f"{name}/{col}: WRONG VALUES", file=sys.stderr)
                status = 2
        samples, _ = timing.time_columns({col: (lambda fn=fn: _ready(fn())) for col, fn in columns.items()},
                                         repeat)
        medians = timing.medians(samples)
        first = next(iter(medians.values()))
        print(f"{name} ({n}x{n} float32)")
        for col, m in medians.items():
            print(f"  {col:34s} {m * 1e3:9.3f} ms   ratio {m / first:6.2f}")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="256x256 instead of 2048x2048")
    parser.add_argument("--repeat", type=int, default=15, help="interleaved rounds (default 15)")
    args = parser.parse_args(argv)
    return run(args.small, args.repeat)


if __name__ == "__main__":
    sys.exit(main())

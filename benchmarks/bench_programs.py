"""Views feeding a consumer in the same ``jit``: each program against its plain-JAX twin.

A read alone is the wrong race for a program: XLA fuses its own transpose into the op that
consumes it, so the permute of a plain-JAX program may cost nothing. Each program here is
written twice, once reading its input through a view of the library (``fs.from_array``, the
torch-named view methods, ``contiguous()`` or ``jnp.asarray`` of the view) and once in plain
JAX on the dense array (``reshape``, ``jnp.transpose``, ``.T``), and both are compiled ahead of
time and timed in the same interleaved rounds (``timing.time_columns``, medians):

* ``heads*2+1``      the attention heads split ``(B, S, H*D) -> (B, H, S, D)`` feeding an
                     elementwise op, ``4x512x8x64``;
* ``heads sum``      the same split feeding a reduction over the sequence;
* ``heads scores``   the split of ``q`` and ``k`` feeding the attention scores'
                     ``einsum("bhsd,bhtd->bhst")``;
* ``merge heads``    ``(B, H, S, D) -> (B, S, H*D)`` (``permute`` then ``reshape``) feeding
                     a projection ``@ w``;
* ``t() matmul``     a tied embedding read through ``.t()`` for the output projection,
                     ``x @ e.t()`` with ``e`` 8192x256;
* ``nhwc conv``      NCHW -> NHWC (``permute(0, 2, 3, 1)``) feeding a 3x3 convolution with
                     NHWC dimension numbers, ``8x64x56x56``;
* ``nhwc mean``      NCHW -> NHWC feeding a mean over the spatial dims, ``32x64x56x56``;
* ``t() + 1``        a 2048x2048 transpose feeding an elementwise op;
* ``t() colsum``     a 2048x2048 transpose feeding a sum over its rows.

A third column, ``xla ops``, is the same program of ours reading the view with
``fs.materialize(storage, layout, method="structured")``: XLA's own transpose (no custom
call), which XLA may fuse into the consumer as it fuses the plain program's. Values are
checked against the twin before timing. The table gives ours and plain JAX in ms and the
ratios ``ours / jax`` and ``xla ops / jax`` (below 1: faster than plain JAX); the load
average is printed before and after.

    python benchmarks/bench_programs.py [--only NAME ...] [--repeat N] [--small] [--json PATH]

``--small`` is a smoke run (every program at a small size, one round).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
for _p in (_HERE.parent, _HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import bench_contiguous as bc  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402
from jax import lax  # noqa: E402

import functional_strides as fs  # noqa: E402

RESULTS = _HERE / "results" / "bench_programs.json"


@dataclasses.dataclass(frozen=True)
class Program:
    """A program spelled twice: ``ours`` through the library's views (its last argument ``m``:
    ``"auto"``, or the read method of ``fs.materialize``), ``plain`` in plain JAX; both take the
    arrays ``args(small)`` builds."""

    name: str
    note: str
    args: Callable[[bool], tuple[tuple[int, ...], ...]]
    ours: Callable[..., jax.Array]
    plain: Callable[..., jax.Array]


def _heads_shape(small: bool) -> tuple[int, int, int, int]:
    return (2, 64, 4, 16) if small else (4, 512, 8, 64)


def _read(view: fs.StridedArray, method: str) -> jax.Array:
    """The view's values: ``contiguous()`` (``"auto"``), or ``fs.materialize`` by ``method``."""
    if method == "auto":
        return jnp.asarray(view.contiguous())
    return fs.materialize(view.storage, view.layout, method=method)


def _split(q: jax.Array, h: int, method: str) -> jax.Array:
    b, s, hd = q.shape
    return _read(fs.from_array(q.reshape(-1)).view(b, s, h, hd // h).permute(0, 2, 1, 3), method)


def _split_plain(q: jax.Array, h: int) -> jax.Array:
    b, s, hd = q.shape
    return jnp.transpose(q.reshape(b, s, h, hd // h), (0, 2, 1, 3))


def _qkv(small: bool) -> tuple[tuple[int, ...], ...]:
    b, s, h, d = _heads_shape(small)
    return ((b, s, h * d),)


def _merge_args(small: bool) -> tuple[tuple[int, ...], ...]:
    b, s, h, d = _heads_shape(small)
    return ((b, h, s, d), (h * d, h * d))


def _merge(x: jax.Array, w: jax.Array, m: str) -> jax.Array:
    b, h, s, d = x.shape
    heads = _read(fs.from_array(x.reshape(-1)).view(b, h, s, d).permute(0, 2, 1, 3), m)
    return heads.reshape(b, s, h * d) @ w


def _merge_plain(x: jax.Array, w: jax.Array) -> jax.Array:
    b, h, s, d = x.shape
    return jnp.transpose(x, (0, 2, 1, 3)).reshape(b, s, h * d) @ w


def _tied_args(small: bool) -> tuple[tuple[int, ...], ...]:
    return ((64, 64), (512, 64)) if small else ((256, 256), (8192, 256))


def _tied(x: jax.Array, e: jax.Array, m: str) -> jax.Array:
    return x @ _read(fs.from_array(e.reshape(-1)).view(*e.shape).t(), m)


def _nchw(small: bool, batch: int) -> tuple[tuple[int, ...], ...]:
    return ((2, 8, 12, 12),) if small else ((batch, 64, 56, 56),)


def _nhwc(x: jax.Array, method: str) -> jax.Array:
    return _read(fs.from_array(x.reshape(-1)).view(*x.shape).permute(0, 2, 3, 1), method)


def _conv(x: jax.Array, k: jax.Array) -> jax.Array:
    return lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_args(small: bool) -> tuple[tuple[int, ...], ...]:
    (x,) = _nchw(small, 8)
    return (x, (3, 3, x[1], x[1]))


def _square(small: bool) -> tuple[tuple[int, ...], ...]:
    return ((128, 128),) if small else ((2048, 2048),)


def _t(x: jax.Array, method: str) -> jax.Array:
    return _read(fs.from_array(x.reshape(-1)).view(*x.shape).t(), method)


PROGRAMS = [
    Program("heads*2+1", "(B,S,H*D)->(B,H,S,D) then * 2 + 1", _qkv,
            lambda q, m: _split(q, _h(q), m) * 2 + 1, lambda q: _split_plain(q, _h(q)) * 2 + 1),
    Program("heads sum", "(B,S,H*D)->(B,H,S,D) then sum over S", _qkv,
            lambda q, m: _split(q, _h(q), m).sum(axis=2), lambda q: _split_plain(q, _h(q)).sum(axis=2)),
    Program("heads scores", "split q, k; einsum bhsd,bhtd->bhst", lambda small: _qkv(small) * 2,
            lambda q, k, m: jnp.einsum("bhsd,bhtd->bhst", _split(q, _h(q), m), _split(k, _h(k), m)),
            lambda q, k: jnp.einsum("bhsd,bhtd->bhst", _split_plain(q, _h(q)), _split_plain(k, _h(k)))),
    Program("merge heads", "(B,H,S,D)->(B,S,H*D) then @ w", _merge_args, _merge, _merge_plain),
    Program("t() matmul", "x @ e.t(), e tied embedding", _tied_args, _tied, lambda x, e: x @ e.T),
    Program("nhwc conv", "NCHW->NHWC then 3x3 conv (NHWC)", _conv_args,
            lambda x, k, m: _conv(_nhwc(x, m), k), lambda x, k: _conv(jnp.transpose(x, (0, 2, 3, 1)), k)),
    Program("nhwc mean", "NCHW->NHWC then mean over H, W", lambda small: _nchw(small, 32),
            lambda x, m: _nhwc(x, m).mean(axis=(1, 2)),
            lambda x: jnp.transpose(x, (0, 2, 3, 1)).mean(axis=(1, 2))),
    Program("t() + 1", "transpose then + 1", _square, lambda x, m: _t(x, m) + 1, lambda x: x.T + 1),
    Program("t() colsum", "transpose then sum over rows", _square,
            lambda x, m: _t(x, m).sum(axis=0), lambda x: x.T.sum(axis=0)),
]


def _h(q: jax.Array) -> int:
    """The head count of a ``(B, S, H*D)`` input of this benchmark (``D`` is 64, or 16 small)."""
    return q.shape[-1] // (64 if q.shape[-1] >= 512 else 16)


def measure(p: Program, small: bool, repeat: int) -> dict[str, Any]:
    """One row: ours and plain JAX compiled, checked against each other, timed side by side."""
    rng = np.random.default_rng(0)
    args = tuple(jnp.asarray(rng.standard_normal(s, dtype=np.float32)) for s in p.args(small))
    ours = jax.jit(functools.partial(p.ours, m="auto")).lower(*args).compile()
    xla = jax.jit(functools.partial(p.ours, m="structured")).lower(*args).compile()  # XLA's own ops
    plain = jax.jit(p.plain).lower(*args).compile()
    want = np.asarray(plain(*args))
    ok = all(got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-4, atol=1e-3))
             for got in (np.asarray(ours(*args)), np.asarray(xla(*args))))
    samples, rounds = timing.time_columns({"ours": lambda: ours(*args).block_until_ready(),
                                           "xla ops": lambda: xla(*args).block_until_ready(),
                                           "jax": lambda: plain(*args).block_until_ready()}, repeat)
    t = timing.medians(samples)
    kernel = bool(timing.custom_calls(ours.as_text(), "functional_strides_"))
    return {"program": p.name, "note": p.note, "shapes": [list(s) for s in p.args(small)], "rounds": rounds,
            "ours_s": t["ours"], "xla_ops_s": t["xla ops"], "jax_s": t["jax"], "ratio": t["ours"] / t["jax"],
            "xla_ops_ratio": t["xla ops"] / t["jax"], "kernel": kernel, "agrees": ok}


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=[p.name for p in PROGRAMS], metavar="NAME")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds (default 15; 1 with --small)")
    parser.add_argument("--small", action="store_true", help="small sizes, one round: a smoke run")
    parser.add_argument("--json", type=Path, default=None,
                        help=f"results JSON (default {RESULTS.relative_to(_HERE.parent)}, none with --small)")
    args = parser.parse_args(given)
    repeat = args.repeat or (1 if args.small else 15)
    out = args.json or (None if args.small else RESULTS)
    load_start, started = bc._loadavg(), datetime.datetime.now(datetime.timezone.utc)
    print(f"jax {jax.__version__} on {bc.machine()}; median of up to {repeat} rounds; "
          f"load average {load_start}")
    print(f"{'program':13} {'what':38} {'ours ms':>9} {'jax ms':>9} {'ours/jax':>8} {'xla ops/jax':>11}  "
          "custom call")
    rows = []
    for p in PROGRAMS:
        if args.only and p.name not in args.only:
            continue
        r = measure(p, args.small, repeat)
        rows.append(r)
        flag = "" if r["agrees"] else "  DISAGREES with plain JAX"
        print(f"{r['program']:13} {r['note']:38} {r['ours_s'] * 1e3:9.3f} {r['jax_s'] * 1e3:9.3f} "
              f"{r['ratio']:8.2f} {r['xla_ops_ratio']:11.2f}  {'yes' if r['kernel'] else 'no'}{flag}",
              flush=True)
    load_end = bc._loadavg()
    print(f"load average: {load_start} at the start, {load_end} at the end; "
          f"{sum(r['ratio'] > 1 for r in rows)} of {len(rows)} programs above 1.00")
    if out:
        run = {"timestamp": started.strftime("%Y-%m-%d %H:%M UTC"),
               "command": "python benchmarks/bench_programs.py " + shlex.join(given), "repeat": repeat,
               "small": args.small, "machine": bc.machine(), "cpu_count": os.cpu_count(),
               "jax": jax.__version__,
               "load_average_start": load_start, "load_average_end": load_end}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"run": run, "rows": rows}, indent=1) + "\n")
    bad = [r["program"] for r in rows if not r["agrees"]]
    if bad:
        print(f"error: {', '.join(bad)} disagree with plain JAX", file=sys.stderr)
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

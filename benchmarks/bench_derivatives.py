"""Derivatives of reads and writes through views against the plain-JAX spelling of each program.

For every case (a view a ported program reads or writes through: permutes of rank 2 to 5,
slices with steps, a diagonal, a broadcast, frames, im2col patches, overlap-add) and every
size, six programs are built twice, once through the library (``fs.from_array(storage)``, the
view's torch-named methods, ``contiguous()`` and ``.at[...]``) and once in plain JAX on the
dense array (``jnp.transpose``/``reshape``, slicing, ``jnp.diagonal``, ``jnp.broadcast_to``,
gathers with ``jnp`` indices; writes with ``.at[].set``/``.add`` on the ``jnp`` array):

* ``read``       the view's values (``view.contiguous()``);
* ``read grad``  ``jax.grad`` w.r.t. the storage of ``vdot(read(storage), w)``;
* ``read jvp``   ``jax.jvp`` of the read (primal and tangent);
* ``vmap grad``  ``jax.vmap`` of ``read grad`` over a batch of ``BATCH`` storages, each of the
                 case built at ``1/BATCH`` of the size (the batch holds about as many elements);
* ``write``      the storage after writing ``v`` through the view: ``.at[...].set(v)`` where
                 the view's elements have slots of their own, ``.at[...].add(v)`` where they
                 share slots (broadcast, frames, patches: overlap-add);
* ``write grad`` ``jax.grad`` w.r.t. the storage and ``v`` of ``vdot(write(storage, v), w)``.

Every program is a ``jax.jit`` of a function whose cotangents and tangents (``w``, ``t``)
are arguments, so XLA cannot fold them into the program; each is compiled and its result
checked against its plain-JAX twin before timing. The twelve columns of a case and size are
timed in the same interleaved rounds (``timing.time_columns``, medians). The table gives, per
program, ours and plain JAX in ms, their ratio (below 1: ours is faster) and, on the gradient
rows, the backward/forward ratio of each (``read grad``/``read``, ``write grad``/``write``):
what differentiating costs relative to the forward program in each spelling. The worst
ratios close the run. Machines are noisy: read the ratios, not the absolute times.

A size ``k`` means about ``2**k`` elements in the larger of the storage and the view.

    python benchmarks/bench_derivatives.py [--quick] [--sizes K ...] [--only CASE ...]
        [--repeat N] [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import shlex
import sys
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
import timing  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import StridedArray  # noqa: E402

#: Storages in the batch of the ``vmap grad`` program.
BATCH = 8
#: Default sizes (exponents of 2) and those of ``--quick``.
SIZES = (16, 20, 24)
QUICK_SIZES = (12,)
PROGRAMS = ("read", "read grad", "read jvp", "vmap grad", "write", "write grad")
#: The forward program each gradient row is divided by for its backward/forward ratio.
FORWARD_OF = {"read grad": "read", "write grad": "write"}


@dataclasses.dataclass(frozen=True)
class Case:
    """One view of a storage of ``size`` elements, in both spellings.

    ``view`` takes ``fs.from_array(storage)`` to the view (ours); ``read`` takes the storage
    to the view's values and ``write`` takes (storage, values) to the written storage (plain
    JAX); ``mode`` is the write's (``"set"`` or ``"add"``)."""

    name: str
    shape_note: str
    size: int
    view: Callable[[StridedArray], StridedArray]
    read: Callable[[jax.Array], jax.Array]
    write: Callable[[jax.Array, jax.Array], jax.Array]
    mode: str


def _split(k: int, parts: int) -> list[int]:
    """``parts`` powers of two, as even as can be, multiplying to ``2**k`` (larger ones last)."""
    base, extra = divmod(k, parts)
    return [2 ** (base + (i >= parts - extra)) for i in range(parts)]


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


def _permute(name: str, shape: tuple[int, ...], perm: tuple[int, ...]) -> Case:
    n = math.prod(shape)
    inv = _inverse(perm)
    return Case(name, f"{shape} -> {tuple(shape[p] for p in perm)}", n,
                lambda x: x.view(*shape).permute(*perm),
                lambda s: jnp.transpose(s.reshape(shape), perm),
                lambda s, v: s.reshape(shape).at[...].set(jnp.transpose(v, inv)).reshape(-1), "set")


def _transpose(k: int) -> Case:
    a, b = _split(k, 2)
    return Case("transpose", f"({a},{b}).t()", a * b, lambda x: x.view(a, b).t(),
                lambda s: s.reshape(a, b).T,
                lambda s, v: s.reshape(a, b).at[...].set(v.T).reshape(-1), "set")


def _permute3(k: int) -> Case:
    return _permute("permute3", tuple(_split(k, 3)), (2, 0, 1))


def _heads(k: int) -> Case:
    d, h, b = 64, 8, 2
    return _permute("heads", (b, max(1, 2**k // (b * h * d)), h, d), (0, 2, 1, 3))


def _nchw_nhwc(k: int) -> Case:
    n, c = 2, 64
    hw, w = _split(max(k - 7, 0), 2)
    return _permute("nchw-nhwc", (n, c, hw, w), (0, 2, 3, 1))


def _permute5(k: int) -> Case:
    return _permute("permute5", tuple(_split(k, 5)), (0, 3, 1, 4, 2))


def _slice_steps(k: int) -> Case:
    r, c = _split(max(k - 3, 0), 2)  # the storage holds about 6 * (view elements) ~ 2**k
    a, b = 2 * r, 3 * c
    return Case("slice-steps", f"({a},{b})[::2, 1::3]", a * b, lambda x: x.view(a, b)[::2, 1::3],
                lambda s: s.reshape(a, b)[::2, 1::3],
                lambda s, v: s.reshape(a, b).at[::2, 1::3].set(v).reshape(-1), "set")


def _diagonal(k: int) -> Case:
    m = 32
    b = max(1, 2**k // (m * m))
    i = np.arange(m)

    def write(s, v):
        return s.reshape(b, m, m).at[:, i, i].set(v).reshape(-1)

    return Case("diagonal", f"({b},{m},{m}).diagonal(0, 1, 2)", b * m * m,
                lambda x: x.view(b, m, m).diagonal(0, 1, 2),
                lambda s: jnp.diagonal(s.reshape(b, m, m), axis1=1, axis2=2), write, "set")


def _expand(k: int) -> Case:
    a, b = _split(k, 2)
    return Case("expand", f"({a},1).expand({a},{b})", a, lambda x: x.view(a, 1).expand(a, b),
                lambda s: jnp.broadcast_to(s.reshape(a, 1), (a, b)),
                lambda s, v: s.at[:].add(v.sum(axis=1)), "add")


def _frames(name: str, k: int, win: int, hop: int) -> Case:
    win = min(win, 2**k // 4)
    hop = max(1, min(hop, win // 2))
    frames = max(1, 2**k // win)
    size = (frames - 1) * hop + win

    def index():
        return hop * jnp.arange(frames)[:, None] + jnp.arange(win)[None, :]

    return Case(name, f"({size},).unfold(0, {win}, {hop})", size, lambda x: x.unfold(0, win, hop),
                lambda s: s[index()], lambda s, v: s.at[index()].add(v), "add")


def _unfold(k: int) -> Case:
    return _frames("unfold", k, 400, 160)  # speech framing: the hop does not divide the window


def _overlap_add(k: int) -> Case:
    return _frames("overlap-add", k, 1024, 256)


def _im2col(k: int) -> Case:
    c, kh, kw = 16, 3, 3
    side = max(kh + 1, math.isqrt(2**k // (c * kh * kw)) + 2)
    h = w = side
    ho, wo = h - kh + 1, w - kw + 1

    def index():
        rows = jnp.arange(kh)[:, None] + jnp.arange(ho)[None, :]
        cols = jnp.arange(kw)[:, None] + jnp.arange(wo)[None, :]
        return rows[:, None, :, None], cols[None, :, None, :]

    def read(s):
        rows, cols = index()
        return s.reshape(c, h, w)[:, rows, cols]

    def write(s, v):
        rows, cols = index()
        return s.reshape(c, h, w).at[:, rows, cols].add(v).reshape(-1)

    return Case("im2col", f"({c},{h},{w}) -> ({c},{kh},{kw},{ho},{wo})", c * h * w,
                lambda x: x.as_strided((c, kh, kw, ho, wo), (h * w, w, 1, w, 1), 0), read, write, "add")


CASES: dict[str, Callable[[int], Case]] = {
    "transpose": _transpose, "permute3": _permute3, "heads": _heads, "nchw-nhwc": _nchw_nhwc,
    "permute5": _permute5, "slice-steps": _slice_steps, "diagonal": _diagonal, "expand": _expand,
    "unfold": _unfold, "im2col": _im2col, "overlap-add": _overlap_add,
}


def _ours(case: Case) -> tuple[Callable[[jax.Array], jax.Array], Callable[[jax.Array, jax.Array], jax.Array]]:
    """The read and the write of ``case`` through the library's view of the storage."""
    def read(s):
        return jnp.asarray(case.view(fs.from_array(s)).contiguous())

    def write(s, v):
        return getattr(case.view(fs.from_array(s)).at[...], case.mode)(v).storage

    return read, write


def programs(read: Callable, write: Callable, batch_read: Callable) -> dict[str, Callable]:
    """The six jitted programs of one spelling (``batch_read``: the read of the case at the
    size of one item of the ``vmap grad`` batch)."""
    def read_grad(s, w):
        return jax.grad(lambda s: jnp.vdot(read(s), w))(s)

    def item_grad(s, w):
        return jax.grad(lambda s: jnp.vdot(batch_read(s), w))(s)

    def write_grad(s, v, w):
        return jax.grad(lambda s, v: jnp.vdot(write(s, v), w), (0, 1))(s, v)

    return {"read": jax.jit(read),
            "read grad": jax.jit(read_grad),
            "read jvp": jax.jit(lambda s, t: jax.jvp(read, (s,), (t,))),
            "vmap grad": jax.jit(jax.vmap(item_grad)),
            "write": jax.jit(write),
            "write grad": jax.jit(write_grad)}


def _check(name: str, program: str, got: Any, want: Any) -> None:
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        g, e = np.asarray(g), np.asarray(e)
        # float32 sums in another order (the contributions of an expand added one by one, in
        # row-major order, where the plain spelling sums them first) differ by rounding
        scale = float(np.max(np.abs(e))) if e.size else 1.0
        if g.shape != e.shape or not np.allclose(g, e, rtol=1e-5, atol=1e-4 * max(1.0, scale)):
            raise AssertionError(f"{name}: {program} differs from plain JAX's (shapes {g.shape}, {e.shape}; "
                                 f"max difference {np.max(np.abs(g - e)) if g.shape == e.shape else 'n/a'})")


def _column(fn: Callable, args: tuple) -> Callable[[], Any]:
    """One call of the compiled ``fn`` on ``args``, waited for."""
    return lambda: jax.block_until_ready(fn(*args))


def measure(name: str, k: int, repeat: int) -> list[dict]:
    """The rows (one per program) of case ``name`` at size ``k``."""
    case, item = CASES[name](k), CASES[name](max(k - int(math.log2(BATCH)), 0))
    rng = np.random.default_rng(k)

    def normal(*shape):
        return jnp.asarray(rng.standard_normal(shape, dtype=np.float32))

    view_shape = case.view(fs.from_array(jnp.zeros(case.size))).shape
    item_shape = item.view(fs.from_array(jnp.zeros(item.size))).shape
    s, t, ws = normal(case.size), normal(case.size), normal(case.size)
    w, v = normal(*view_shape), normal(*view_shape)
    sb, wb = normal(BATCH, item.size), normal(BATCH, *item_shape)
    args = {"read": (s,), "read grad": (s, w), "read jvp": (s, t), "vmap grad": (sb, wb),
            "write": (s, v), "write grad": (s, v, ws)}
    ours_read, ours_write = _ours(case)
    ours = programs(ours_read, ours_write, _ours(item)[0])
    plain = programs(case.read, case.write, item.read)
    cols = {}
    for program in PROGRAMS:
        a = args[program]
        fo = ours[program].lower(*a).compile()
        fp = plain[program].lower(*a).compile()
        _check(name, program, fo(*a), fp(*a))
        cols[f"ours {program}"], cols[f"jax {program}"] = _column(fo, a), _column(fp, a)
    samples, rounds = timing.time_columns(cols, repeat)
    t_med = timing.medians(samples)
    rows = []
    for program in PROGRAMS:
        row = {"case": name, "k": k, "view": case.shape_note, "mode": case.mode, "program": program,
               "storage_elements": case.size, "view_elements": math.prod(view_shape), "rounds": rounds,
               "ours_s": t_med[f"ours {program}"], "jax_s": t_med[f"jax {program}"],
               "ours_min_s": min(samples[f"ours {program}"]), "jax_min_s": min(samples[f"jax {program}"])}
        row["ratio"] = row["ours_s"] / row["jax_s"]
        if program in FORWARD_OF:
            fwd = FORWARD_OF[program]
            row["ours_bwd_fwd"] = row["ours_s"] / t_med[f"ours {fwd}"]
            row["jax_bwd_fwd"] = row["jax_s"] / t_med[f"jax {fwd}"]
        rows.append(row)
    return rows


def _loadavg() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


HEAD = (f"{'case':12} {'size':>5} {'program':10} {'ours ms':>10} {'jax ms':>10} {'ours/jax':>9} "
        f"{'bwd/fwd ours':>12} {'jax':>6}")


def format_row(r: dict) -> str:
    bwd = (f"{r['ours_bwd_fwd']:12.2f} {r['jax_bwd_fwd']:6.2f}" if "ours_bwd_fwd" in r else "")
    return (f"{r['case']:12} {'2^' + str(r['k']):>5} {r['program']:10} {r['ours_s'] * 1e3:10.3f} "
            f"{r['jax_s'] * 1e3:10.3f} {r['ratio']:9.2f} {bwd}").rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", "--small", action="store_true",
                        help=f"size 2^{QUICK_SIZES[0]} (a smoke run)")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="exponents k of the sizes, about 2^k elements (default "
                             f"{' '.join(map(str, SIZES))})")
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), default=None, metavar="CASE",
                        help=f"run only these cases ({', '.join(CASES)})")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per case and size")
    parser.add_argument("--worst", type=int, default=8, help="rows in the closing list of worst ratios")
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    repeat = args.repeat or (1 if args.quick else 15)
    names = [n for n in CASES if args.only is None or n in args.only]
    load_start, started = _loadavg(), datetime.datetime.now(datetime.timezone.utc)
    print(f"jax {jax.__version__} on {jax.default_backend()}; median of up to {repeat} interleaved rounds; "
          f"ours/jax below 1: ours is faster")
    print(HEAD)
    print("-" * len(HEAD))
    rows = []
    for name in names:
        for k in sizes:
            case_rows = measure(name, k, repeat)
            for r in case_rows:
                print(format_row(r), flush=True)
            rows += case_rows
    worst = sorted(rows, key=lambda r: -r["ratio"])[:args.worst]
    print(f"\nworst ours/jax ratios ({sum(r['ratio'] > 1 for r in rows)} of {len(rows)} rows above 1.00):")
    for r in worst:
        print(f"  {r['ratio']:6.2f}  {r['case']} 2^{r['k']} {r['program']} ({r['view']}, {r['mode']})")
    if args.json:
        given = sys.argv[1:] if argv is None else argv
        command = "python benchmarks/bench_derivatives.py " + shlex.join(given)
        run = {"timestamp": started.strftime("%Y-%m-%d %H:%M UTC"), "command": command, "sizes": list(sizes),
               "repeat": repeat, "batch": BATCH, "machine": bc.machine(), "cpu_count": os.cpu_count(),
               "jax": jax.__version__, "numpy": np.__version__,
               "load_average_start": load_start, "load_average_end": _loadavg()}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"run": run, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

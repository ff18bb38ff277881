"""A seeded sweep of permutes: ours against XLA's transpose, a plain gather, PyTorch and NumPy.

The six headline cases of ``bench_contiguous.py`` cannot show where a lowering choice is
wrong; this sweep draws its cases from a seeded generator instead. For every rank (2 to 5),
size (about ``2**k`` elements, ``k`` from 14 to 24) and style of extents, one shape and one
random permutation (never the identity, never one that only moves size-1 dims) are drawn:

* ``pow2``     every extent a power of two;
* ``odd``      extents near ``2**(k/rank)``, odd where they can be (``7 x 91 x 91`` kinds);
* ``last64``   the last dim 64 (an attention head's width), the others odd;
* ``last128``  the last dim 128, the others powers of two;
* ``batch1``   a leading dim of 1 (a batch of one), the others odd.

``pow2`` and ``odd`` run in float32, bfloat16 and int8; the other styles in float32. Columns,
timed in the same interleaved rounds (``timing.time_columns``, medians), every JAX one
compiled ahead of time and called with its storage:

* ``ours``    ``StridedArray(storage, layout).contiguous()`` under ``jit``, ``layout`` the
              permuted view of the row-major array: whatever the library chooses;
* ``xla``     ``jnp.transpose(storage.reshape(shape), perm)`` under ``jit``: XLA's transpose;
* ``gather``  one ``lax.gather`` with storage indices built from iota (``bench_contiguous``'s
              naive gather);
* ``torch``   ``t.view(shape).permute(perm).contiguous()``, eagerly (CPU, its default threads);
* ``numpy``   ``np.ascontiguousarray(a.reshape(shape).transpose(perm))``, eagerly.

Every column's values are checked against NumPy's before timing. The table gives each case's
plan (``fs.read_plan``), ``ours`` in microseconds and the ratios ``ours / min(xla, gather)``
(``vs xla``) and ``ours / min(every peer)`` (``vs best``); below 1 ours is faster. The run
closes with the worst ratios: against XLA's best everywhere, and against every peer from
``2**22`` elements. The load average is printed before and after: other work on the machine
skews every column.

    python benchmarks/bench_permutes.py [--sizes K ...] [--ranks R ...] [--dtypes D ...]
        [--styles S ...] [--seed N] [--repeat N] [--small] [--json PATH]
    python benchmarks/bench_permutes.py --square [N ...]

``--square`` races, instead of the drawn cases, float32 N x N transposes (sides 1000 to 4104
by default, across powers of two, where a cliff would show) with one more column, ``copy``: a
jitted ``jnp.copy`` of the same bytes (not a peer; ``vs copy`` is ours over it), stored in
``benchmarks/results/bench_permutes_square.json``.

``--small`` is a smoke run (sizes 2^10 and 2^12, one round). Results go to
``benchmarks/results/bench_permutes.json`` (``--json`` elsewhere) with the command that made
them; the exit status is 0 when every column agrees with NumPy, 2 otherwise.
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
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import Layout, StridedArray  # noqa: E402

try:
    import torch
except ImportError:  # the torch column is then skipped, and the run says so
    torch = None

RANKS = (2, 3, 4, 5)
SIZES = (14, 16, 18, 20, 22, 24)
SMALL_SIZES = (10, 12)
STYLES = ("pow2", "odd", "last64", "last128", "batch1")
#: the styles run in every dtype; the others in float32 alone
EVERY_DTYPE_STYLES = ("pow2", "odd")
DTYPES = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(ml_dtypes.bfloat16),
          "int8": np.dtype(np.int8)}
#: from this size, ours is also held to the best of every peer (torch and NumPy included)
PEERS_FROM = 22
RESULTS = _HERE / "results" / "bench_permutes.json"
#: ``--square``: float32 n x n transposes across powers of two (a cliff shows there), read
#: beside a plain copy of the same bytes
SQUARE_SIDES = (1000, 1023, 1024, 1025, 1536, 2000, 2047, 2048, 2049, 3000, 4088, 4095, 4096, 4097, 4104)
SQUARE_RESULTS = _HERE / "results" / "bench_permutes_square.json"


@dataclasses.dataclass(frozen=True)
class Case:
    """One drawn permute: the row-major ``shape`` read through ``perm``."""

    rank: int
    k: int
    style: str
    dtype: str
    shape: tuple[int, ...]
    perm: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{'x'.join(map(str, self.shape))} {self.perm}"

    @property
    def layout(self) -> Layout:
        dense = Layout.contiguous(self.shape)
        return Layout(tuple(self.shape[p] for p in self.perm), tuple(dense.strides[p] for p in self.perm))


def _pow2_extents(rng: np.random.Generator, bits: int, rank: int) -> list[int]:
    """``rank`` powers of two whose product is ``2**bits``, each at least 2 where bits allow."""
    cuts = np.sort(rng.choice(np.arange(1, bits), size=rank - 1, replace=False)) if bits > rank else None
    if cuts is None:
        parts = [bits // rank + (d < bits % rank) for d in range(rank)]
    else:
        parts = np.diff([0, *cuts, bits]).tolist()
    return [2 ** int(p) for p in rng.permutation(parts)]


def _odd_extents(rng: np.random.Generator, total: float, rank: int) -> list[int]:
    """``rank`` extents near ``total ** (1/rank)`` each (odd where above 2), product near ``total``."""
    extents, left = [], total
    for d in range(rank):
        if d == rank - 1:
            e = max(1, round(left))
        else:
            e = max(2, round((left ** (1 / (rank - d))) * rng.uniform(0.6, 1.6)))
        if e > 2 and e % 2 == 0:
            e += 1
        extents.append(int(e))
        left = max(1.0, left / e)
    return extents


def draw_shape(rng: np.random.Generator, k: int, rank: int, style: str) -> tuple[int, ...]:
    """A shape of ``rank`` dims and about ``2**k`` elements in ``style`` (see the module doc)."""
    if style == "pow2":
        return tuple(_pow2_extents(rng, k, rank))
    if style == "odd":
        return tuple(_odd_extents(rng, 2.0 ** k, rank))
    if style == "last64":
        return (*_odd_extents(rng, 2.0 ** k / 64, rank - 1), 64)
    if style == "last128":
        return (*_pow2_extents(rng, max(k - 7, rank - 1), rank - 1), 128)
    if style == "batch1":
        return (1, *_odd_extents(rng, 2.0 ** k, rank - 1))
    raise ValueError(f"style {style!r} is not one of {STYLES}")


def draw_perm(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """A random permutation of ``len(shape)`` dims that moves some dim of extent above 1 (None
    where fewer than two dims have: no permute of the shape moves data)."""
    big = [d for d, n in enumerate(shape) if n > 1]
    if len(big) < 2:
        return None
    while True:
        perm = tuple(int(p) for p in rng.permutation(len(shape)))
        if [p for p in perm if p in big] != big:
            return perm


def draw_cases(seed: int, ranks: Sequence[int], sizes: Sequence[int], styles: Sequence[str],
               dtypes: Sequence[str]) -> list[Case]:
    """The sweep's cases, the same for the same arguments (one generator seeded by ``seed``,
    drawn in a fixed order whatever is selected)."""
    rng = np.random.default_rng(seed)
    cases = []
    for rank in RANKS:
        for k in SIZES + SMALL_SIZES:
            for style in STYLES:
                shape = draw_shape(rng, k, rank, style)
                perm = draw_perm(rng, shape)
                if perm is None or rank not in ranks or k not in sizes or style not in styles:
                    continue
                for dtype in DTYPES:
                    if dtype in dtypes and (dtype == "float32" or style in EVERY_DTYPE_STYLES):
                        cases.append(Case(rank, k, style, dtype, shape, perm))
    return cases


def _storage(case: Case) -> np.ndarray:
    n = math.prod(case.shape)
    values = np.arange(n, dtype=np.int64)
    if case.dtype == "int8":
        return (values % 251 - 125).astype(np.int8)
    return (values % 4093).astype(DTYPES[case.dtype])  # exact in bfloat16 below 256, distinct enough above


def _torch_tensor(a: np.ndarray) -> Any:
    if a.dtype == DTYPES["bfloat16"]:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _from_torch(t: Any) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(DTYPES["bfloat16"])
    return t.numpy()


def columns(case: Case) -> tuple[dict[str, Callable[[], Any]], dict[str, Callable[[], np.ndarray]]]:
    """The timed calls of ``case`` and, beside them, each call's result as a NumPy array."""
    host = _storage(case)
    storage = jnp.asarray(host)
    lay, shape, perm = case.layout, case.shape, case.perm
    programs = {
        "ours": lambda s: StridedArray(s, lay).contiguous().storage.reshape(lay.shape),
        "xla": lambda s: jnp.transpose(s.reshape(shape), perm),
        "gather": lambda s: bc.naive_gather(s, lay),
    }
    compiled = {name: jax.jit(fn).lower(storage).compile() for name, fn in programs.items()}
    calls: dict[str, Callable[[], Any]] = {
        name: (lambda c=c: c(storage).block_until_ready()) for name, c in compiled.items()}
    results: dict[str, Callable[[], np.ndarray]] = {
        name: (lambda c=c: np.asarray(c(storage))) for name, c in compiled.items()}
    if torch is not None:
        t = _torch_tensor(host)
        calls["torch"] = lambda: t.view(shape).permute(perm).contiguous()
        results["torch"] = lambda: _from_torch(t.view(shape).permute(perm).contiguous())
    calls["numpy"] = lambda: np.ascontiguousarray(host.reshape(shape).transpose(perm))
    results["numpy"] = calls["numpy"]
    return calls, results


def square_cases(sides: Sequence[int]) -> list[Case]:
    """The ``--square`` cases: ``.t()`` of float32 n x n arrays."""
    return [Case(2, round(math.log2(n * n)), "square", "float32", (n, n), (1, 0)) for n in sides]


def measure(case: Case, repeat: int, copy: bool = False) -> dict[str, Any]:
    """One row: every column checked against NumPy, then timed side by side (with ``copy``,
    beside a plain copy of the same bytes, ``vs_copy``)."""
    calls, results = columns(case)
    # not a peer: a jitted jnp.copy of the output's float32 bytes (bench_contiguous's), the floor
    extra = {"copy": bc._compile_copy(math.prod(case.shape)).call} if copy else {}
    want = np.ascontiguousarray(_storage(case).reshape(case.shape).transpose(case.perm))
    wrong = [name for name, get in results.items()
             if not np.array_equal(np.asarray(get()).view(np.uint8), want.view(np.uint8))]
    samples, rounds = timing.time_columns(calls | extra, repeat)
    t = timing.medians(samples)
    xla_best = min(t["xla"], t["gather"])
    row = {**dataclasses.asdict(case), "elements": math.prod(case.shape),
           "plan": str(fs.read_plan(case.layout)), "rounds": rounds, "seconds": t, "wrong": wrong,
           "vs_xla": t["ours"] / xla_best,
           "vs_best": t["ours"] / min(v for n, v in t.items() if n not in ("ours", "copy"))}
    if copy:
        row["vs_copy"] = t["ours"] / t["copy"]
    return row


HEAD = (f"{'dtype':8} {'rank':>4} {'size':>5} {'style':7} {'case':34} {'plan':13} {'ours us':>9} "
        f"{'xla':>6} {'gather':>6} {'torch':>6} {'numpy':>6} {'vs xla':>7} {'vs best':>7}")


def format_row(r: dict[str, Any]) -> str:
    t = r["seconds"]

    def ratio(name: str) -> str:
        return f"{t['ours'] / t[name]:6.2f}" if name in t else f"{'-':>6}"
    case = f"{'x'.join(map(str, r['shape']))} {tuple(r['perm'])}"
    flag = "  WRONG: " + ", ".join(r["wrong"]) if r["wrong"] else ""
    copy = f" {r['vs_copy']:7.2f}" if "vs_copy" in r else ""
    return (f"{r['dtype']:8} {r['rank']:4} {'2^' + str(r['k']):>5} {r['style']:7} {case:34} {r['plan']:13} "
            f"{t['ours'] * 1e6:9.1f} {ratio('xla')} {ratio('gather')} {ratio('torch')} {ratio('numpy')} "
            f"{r['vs_xla']:7.2f} {r['vs_best']:7.2f}{copy}{flag}")


def worst(rows: list[dict[str, Any]], key: str, count: int, min_k: int = 0) -> list[dict[str, Any]]:
    """The ``count`` rows of size ``2**min_k`` and up with the largest ``key`` ratio."""
    return sorted((r for r in rows if r["k"] >= min_k), key=lambda r: -r[key])[:count]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", help=f"exponents k, about 2^k elements (default {SIZES})")
    p.add_argument("--ranks", type=int, nargs="+", choices=RANKS, default=list(RANKS))
    p.add_argument("--styles", nargs="+", choices=STYLES, default=list(STYLES))
    p.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES))
    p.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    p.add_argument("--repeat", type=int, default=None,
                   help="timed rounds per case (default 7; 1 with --small)")
    p.add_argument("--worst", type=int, default=10, help="rows in each closing list of worst ratios")
    p.add_argument("--small", action="store_true", help="sizes 2^10 and 2^12, one round: a smoke run")
    p.add_argument("--square", type=int, nargs="*", default=None, metavar="N",
                   help="instead of the drawn cases, float32 N x N transposes beside a copy of their bytes "
                        f"(default sides {SQUARE_SIDES[0]}..{SQUARE_SIDES[-1]})")
    p.add_argument("--json", type=Path, default=None,
                   help=f"results JSON (default {RESULTS.relative_to(_HERE.parent)})")
    args = p.parse_args(argv)
    args.sizes = args.sizes or list(SMALL_SIZES if args.small else SIZES)
    bad = sorted(set(args.sizes) - set(SIZES + SMALL_SIZES))
    if bad:
        p.error(f"--sizes {bad}: the sweep draws sizes {SIZES + SMALL_SIZES} only")
    args.repeat = args.repeat or (1 if args.small else 7)
    if args.square is not None and not args.square:
        args.square = list(SQUARE_SIDES)
    if args.json is None and not args.small:
        args.json = RESULTS if args.square is None else SQUARE_RESULTS
    return args


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(given)
    square = args.square is not None
    cases = (square_cases(args.square) if square
             else draw_cases(args.seed, args.ranks, args.sizes, args.styles, args.dtypes))
    load_start, started = bc._loadavg(), datetime.datetime.now(datetime.timezone.utc)
    print(f"jax {jax.__version__}, torch {None if torch is None else torch.__version__} on {bc.machine()}; "
          f"{len(cases)} cases, seed {args.seed}, median of up to {args.repeat} rounds; "
          f"load average {load_start}")
    print("columns give ours / column (below 1: ours is faster); vs xla: ours / min(xla, gather); "
          "vs best: ours / min(every peer)")
    if torch is None:
        print("PyTorch is not installed: the torch column is skipped")
    head = HEAD + (f" {'vs copy':>7}" if square else "")
    print(head)
    print("-" * len(head))
    rows = []
    for case in cases:
        row = measure(case, args.repeat, copy=square)
        print(format_row(row), flush=True)
        rows.append(row)
    load_end = bc._loadavg()
    print(f"\nload average: {load_start} at the start, {load_end} at the end")
    over = sum(r["vs_xla"] > 1 for r in rows)
    print(f"worst ours / min(xla, gather) ({over} of {len(rows)} cases above 1.00):")
    for r in worst(rows, "vs_xla", args.worst):
        print("  " + format_row(r))
    big = [r for r in rows if r["k"] >= PEERS_FROM]
    if square:
        best, copies = [r["vs_best"] for r in rows], [r["vs_copy"] for r in rows]
        print(f"ours / best peer {min(best):.2f}-{max(best):.2f}; "
              f"ours / copy of the same bytes {min(copies):.2f}-{max(copies):.2f}")
    elif big:
        over = sum(r["vs_best"] > 1 for r in big)
        print(f"worst ours / min(every peer) from 2^{PEERS_FROM} elements "
              f"({over} of {len(big)} cases above 1.00):")
        for r in worst(rows, "vs_best", args.worst, PEERS_FROM):
            print("  " + format_row(r))
    if args.json:
        run = {"timestamp": started.strftime("%Y-%m-%d %H:%M UTC"),
               "command": "python benchmarks/bench_permutes.py " + shlex.join(given), "seed": args.seed,
               "repeat": args.repeat, "machine": bc.machine(), "cpu_count": os.cpu_count(),
               "jax": jax.__version__, "numpy": np.__version__,
               "torch": None if torch is None else torch.__version__,
               "torch_threads": None if torch is None else torch.get_num_threads(),
               "glibc_tunables": os.environ.get("GLIBC_TUNABLES"),
               "load_average_start": load_start, "load_average_end": load_end}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"run": run, "rows": rows}, indent=1) + "\n")
        print(f"results: {args.json}")
    wrong = [r for r in rows if r["wrong"]]
    for r in wrong:
        print(f"error: {r['dtype']} {tuple(r['shape'])} {tuple(r['perm'])}: {', '.join(r['wrong'])} "
              "disagree with NumPy", file=sys.stderr)
    return 2 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

"""Measure the write paths of ``functional_strides.write`` side by side.

For each case (a view, a storage size and a mode) prints the run time of every path that
applies, inside ``jax.jit``, and its ratio to the element scatter -- one XLA scatter of
single elements over the view's own shape, with indices from iota, the lowering every write
used before the structured paths -- twice: plain (the storage is copied, then written) and
with the storage donated (``jax.jit(f, donate_argnums=0)`` in a loop carrying the storage,
so XLA may write in place, touching only the view). Times are the best of ``--repeats``
interleaved rounds after one warm-up; compile time and XLA's temp bytes are printed too.
A study of internal candidates: it imports private pieces from ``functional_strides._src``
(the baseline's sortedness promise), which the other benchmarks do not. The constants
``STRUCTURED_*`` and ``ROW_SCATTER_*`` in ``functional_strides/_src/lowering/writes.py`` come
from these tables; ``T(slices)`` is a candidate measured for overlap-add (the transpose
of the read's shifted slices) that is not a write path.

    python benchmarks/write_choices.py            # 4096^2 storages, 4M-sample signals
    python benchmarks/write_choices.py --quick    # storages 16x smaller
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402
from jax import lax  # noqa: E402
from lowering_choices import slice_pieces  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import Layout, index_dtype, internal_overlap_witness, materialize, storage_indices  # noqa: E402
from functional_strides._src.core.overlap.overlap import is_monotone  # noqa: E402 - the baseline's sortedness promise

_AT = {"set": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}


def element_scatter(storage, layout: Layout, values, mode: str):
    """The baseline: one XLA scatter of every element of the view (no stride-0 dim
    combined), jnp's ``storage.at[idx]`` with iota indices, declared unique when the view
    does not overlap itself and sorted when it is monotone. An overlapping ``set``, whose
    winner ``.at[]`` leaves undefined, takes the library's element scatter instead
    (``fs.write(..., overlap="last", method="scatter")``: last write wins)."""
    overlapping = internal_overlap_witness(layout) is not None
    if overlapping and mode == "set":
        return fs.write(storage, layout, values, mode=mode, overlap="last", method="scatter")
    idx = storage_indices(layout.shape, layout.strides, layout.offset, index_dtype(layout, storage.shape[0]))
    return getattr(storage.at[idx], _AT[mode])(values, unique_indices=not overlapping,
                                               indices_are_sorted=is_monotone(layout),
                                               mode="promise_in_bounds")


def slices_transposed(storage, layout: Layout, values, mode: str):
    """A candidate for float ``add`` through windows: the transpose of the read's shifted
    slices (``pad``-and-add of each shift), by ``jax.linear_transpose``."""
    assert mode == "add"
    (placed,) = jax.linear_transpose(lambda s: materialize(s, layout, method="slices"), storage)(values)
    return storage + placed


def candidates(layout: Layout, n: int, mode: str) -> list[tuple[str, object]]:
    out = [("element", lambda s, v: element_scatter(s, layout, v, mode))]
    for method in fs.WRITE_METHODS[1:]:
        try:
            fs.write_plan(layout, n, mode=mode, method=method)
        except fs.LayoutError:
            continue
        out.append((method, lambda s, v, m=method: fs.write(s, layout, v, mode=mode, overlap="last",
                                                                  method=m)))
    try:
        fs.read_plan(layout, "slices")
    except fs.LayoutError:
        pass
    else:
        if mode == "add" and slice_pieces(layout) <= 16:
            out.append(("T(slices)", lambda s, v: slices_transposed(s, layout, v, mode)))
    return out


def _best(fns, repeats: int) -> list[float]:
    """Best time of each thunk over ``repeats`` interleaved rounds (``timing.time_columns``),
    so that load from other processes hits them alike."""
    samples, _ = timing.time_columns({i: (lambda f=f: jax.block_until_ready(f())) for i, f in enumerate(fns)},
                                     repeats)
    return [min(samples[i]) for i in range(len(fns))]


def measure(name: str, layout: Layout, n: int, mode: str, repeats: int) -> list[tuple]:
    storage = jnp.arange(n, dtype=jnp.float32) % 97.0
    src = (jnp.arange(layout.numel, dtype=jnp.float32) % 13.0).reshape(layout.shape)
    cands = candidates(layout, n, mode)
    compile_s, temps = [], []
    for _, fn in cands:
        compiled, seconds = timing.seconds(lambda fn=fn: jax.jit(fn).lower(storage, src).compile())
        compile_s.append(seconds)
        mem = compiled.memory_analysis()
        temps.append(getattr(mem, "temp_size_in_bytes", -1) if mem is not None else -1)
    plain = [jax.jit(fn) for _, fn in cands]
    expected = np.asarray(plain[0](storage, src))
    for (method, _), fn in zip(cands, plain, strict=True):
        np.testing.assert_allclose(np.asarray(fn(storage, src)), expected, rtol=1e-5, err_msg=method)
    donated = [jax.jit(fn, donate_argnums=0) for _, fn in cands]
    state = [jnp.array(storage) for _ in cands]

    def carried(i):
        def step():
            state[i] = donated[i](state[i], src)
            return state[i]
        return step

    times = _best([lambda f=f: f(storage, src) for f in plain] + [carried(i) for i in range(len(cands))],
                  repeats)
    t_plain, t_don = times[: len(cands)], times[len(cands):]
    auto = fs.write_plan(layout, n, mode=mode)
    print(f"\n{name}: {mode} through {layout} over {n} elements; auto -> {auto}")
    print(f"  {'path':<12} {'plain ms':>9} {'/element':>9} {'donated ms':>11} {'/element':>9} "
          f"{'compile s':>10} {'temp MiB':>9}")
    rows = []
    for i, (method, _) in enumerate(cands):
        row = (name, method, t_plain[i], t_plain[i] / t_plain[0], t_don[i], t_don[i] / t_don[0],
               compile_s[i], temps[i])
        rows.append(row)
        print(f"  {method:<12} {t_plain[i] * 1e3:9.2f} {row[3]:9.2f} {t_don[i] * 1e3:11.2f} {row[5]:9.2f} "
              f"{compile_s[i]:10.3f} {temps[i] / 2**20:9.1f}")
    return rows


def cases(scale: int) -> list[tuple[str, Layout, int, str]]:
    """(name, view, storage size, mode): the views the choice is made for, then probes of
    the thresholds (small views, views that are no block, short windows)."""
    n = 4096 // scale
    sig = (1 << 22) // scale
    b, h, t, d = 16 // scale, 16, 1024, 64
    heads = fs.views.permute(Layout.contiguous((b, t, h, d)), (0, 2, 1, 3))
    frames = fs.views.unfold(Layout((sig,), (1,)), 0, 1024, 256)
    main = [
        ("column of a matrix (x[:, 7] = v)", Layout((n,), (n,), 7), n * n, "set"),
        ("every other row/col (x[::2, ::2] = v)", Layout((n // 2, n // 2), (2 * n, 2)), n * n, "set"),
        ("transposed block (x.t() = v)", Layout((n, n), (1, n)), n * n, "set"),
        ("attention heads [B,H,T,D] view (+= v)", heads, b * t * h * d, "add"),
        ("overlap-add of frames 1024/256", frames, sig, "add"),
        ("row expanded to n x n (+= v)", Layout((n, n), (0, 1)), n, "add"),
    ]
    m = 64
    probes = [
        ("contiguous rows (x[n/8:7n/8] = v)", Layout((3 * n // 4, n), (n, 1), n * n // 8), n * n, "set"),
        ("small: 64x64 x.t()[::2] = v", Layout((m // 2, m), (2, m)), m * m, "set"),
        ("small: 256x256 x[::2, ::2] = v", Layout((128, 128), (512, 2)), 256 * 256, "set"),
        ("small: 64x64 column += v", Layout((m,), (m,), 7), m * m, "add"),
        ("x[::2, ::2] of a (n-2)x(n-2) matrix (= v)", Layout((n // 2 - 1, n // 2 - 1), (2 * n - 4, 2)),
         (n - 2) ** 2, "set"),
        ("x[::2, ::2] of a (n-1)x(n-1) matrix (= v)", Layout((n // 2, n // 2), (2 * n - 2, 2)),
         (n - 1) ** 2, "set"),
        ("diagonal (x.diagonal() = v)", Layout((n,), (n + 1,)), n * n, "set"),
        ("x[1:-1, 1:-1] of (n+1)-wide rows (= v)", Layout((n - 2, n - 2), (n + 1, 1), n + 2),
         n * (n + 1), "set"),
        ("every 3rd of (n+1)-wide rows (= v)", Layout((n, n // 3), (n + 1, 3)), n * (n + 1), "set"),
        ("quarter block, stride-3 rows (+= v)", Layout((n // 2, n // 2), (3 * n // 2, 1)), n * n, "add"),
        ("every other column of the left half (x[:, :n/2:2] += v)", Layout((n, n // 4), (n, 2)),
         n * n, "add"),
        ("every 8th column of the left half (x[:, :n/2:8] += v)", Layout((n, n // 16), (n, 8)), n * n, "add"),
        ("transposed quarter block (x[:n/2, :n/2].t() += v)", Layout((n // 2, n // 2), (1, n)), n * n, "add"),
        ("attention heads [B,H,T,D] view (= v)", heads, b * t * h * d, "set"),
        ("3x3 patches of an image (+= v)", Layout((n // 4 - 2, n // 4 - 2, 3, 3), (n // 4, 1, n // 4, 1)),
         (n // 4) ** 2, "add"),
        ("row expanded, set last", Layout((n, n), (0, 1)), n * n, "set"),
    ]
    for size, step in [(64, 16), (16, 4), (8, 2), (4, 1), (2, 1)]:
        count = (sig // 4) // step
        probes.append((f"overlap-add of frames {size}/{step}", Layout((count, size), (step, 1)),
                       (count - 1) * step + size, "add"))
    return main + probes


def sweep(repeats: int) -> None:
    """Ratios to the element scatter as the storage grows: where a structured path starts
    to pay (the size thresholds)."""
    print("\n=== sweep: n x n float32 storages; path plain/donated ratios to the element scatter ===")
    for label, make, mode in [
        ("x[::2, ::2] = v", lambda n: Layout((n // 2, n // 2), (2 * n, 2)), "set"),
        ("x.t()[::2] = v", lambda n: Layout((n // 2, n), (2, n)), "set"),
        ("x.t() = v", lambda n: Layout((n, n), (1, n)), "set"),
        ("x[1:-1, 1:-1] += v", lambda n: Layout((n - 2, n - 2), (n, 1), n + 1), "add"),
    ]:
        for n in (32, 64, 128, 256, 512, 1024):
            rows = _quiet(measure, f"{label} n={n}", make(n), n * n, mode, repeats)
            print(f"  {label:<20} n={n:<5} " + "  ".join(
                f"{r[1]}: {r[3]:.2f}/{r[5]:.2f} ({r[2] * 1e6:.0f} us)" for r in rows[1:]))


def fold_table(repeats: int) -> None:
    """The "fold" table: an add through stride-0 dims (``x.expand(k, r).at[...].add(v)``), its
    ``k`` contributions per slot folded into the stored values one by one (the order every
    path keeps), as a loop of ``k`` steps unrolled 1 or ``FOLD_UNROLL`` steps an iteration,
    against the element scatter of all ``k * r`` contributions (the other order-keeping
    write). Times in ms, best of ``repeats``."""
    from functional_strides._src.lowering.writes import FOLD_UNROLL

    def fold(acc, v, unroll):
        def step(i, a):
            return a + lax.dynamic_index_in_dim(v, i, 0, keepdims=False)
        return lax.fori_loop(0, v.shape[0], step, acc, unroll=unroll)

    def scatter(s, v):
        idx = jnp.broadcast_to(jnp.arange(v.shape[1], dtype=jnp.int32), v.shape)
        return s.at[idx].add(v)

    print(f"fold: k contributions per slot into r slots, ms (best of {repeats}); "
          f"the writes unroll {FOLD_UNROLL}")
    for k, r in [(64, 16), (4096, 16), (4096, 256), (4096, 4096), (512, 1024), (65536, 1)]:
        s, v = jnp.zeros(r, jnp.float32), jnp.ones((k, r), jnp.float32)
        fns = [jax.jit(lambda s, v: fold(s, v, 1)), jax.jit(lambda s, v: fold(s, v, FOLD_UNROLL)),
               jax.jit(scatter)]
        times = _best([lambda f=f, s=s, v=v: f(s, v) for f in fns], repeats)
        print(f"  k={k:<6} r={r:<5} loop {times[0] * 1e3:8.3f}  unrolled {times[1] * 1e3:8.3f}  "
              f"scatter {times[2] * 1e3:8.3f}")


def _quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", "--small", action="store_true", help="storages 16x smaller (a smoke run)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", type=str, default=None, help="run the cases whose name contains this")
    parser.add_argument("--sweep", action="store_true", help="only the sweep over storage sizes")
    parser.add_argument("--fold", action="store_true", help="only the fold of stride-0 contributions")
    args = parser.parse_args()
    if args.sweep:
        sweep(args.repeats)
        return
    if args.fold:
        fold_table(max(args.repeats, 15))
        return
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind} ({jax.default_backend()}), float32; "
          f"best of {args.repeats}; ratios to the element scatter")
    for name, layout, n, mode in cases(4 if args.quick else 1):
        if args.only is None or args.only in name:
            measure(name, layout, n, mode, args.repeats)


if __name__ == "__main__":
    main()

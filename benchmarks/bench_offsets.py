"""A view passed into ``jit`` (traced offset) against the same view built inside (static offset).

The offset of a view is a pytree leaf, so ``jax.jit(f)(view)`` traces it and compiles once
for every offset; inside, the view is read from a ``dynamic_slice`` window with the plan the
static layout gets. This script checks, on every case of ``bench_contiguous.py``, that the
traced-offset program is no slower than the static-offset one, emits no gather where the
static one emits none, and compiles once for many offsets. Columns, timed interleaved in one
run (medians):

* ``static``  ``jax.jit(lambda s: jnp.asarray(StridedArray(s, layout)))``: the layout, its
              offset included, is a constant of the program;
* ``traced``  ``jax.jit(lambda v: jnp.asarray(v))`` called with ``StridedArray(s, layout)``;
* ``again``   a second compile of ``static`` (A/A: the noise floor of the ratio).

Usage::

    python benchmarks/bench_offsets.py [--small] [--cases NAME ...] [--repeat N]

The exit status is 0 when every traced result equals the static one and no traced program
gathers where the static one does not; 2 otherwise. Timing is reported, never enforced.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_contiguous as bc  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import timing  # noqa: E402

from functional_strides import Layout, StridedArray  # noqa: E402


def _compile(fn, arg) -> tuple[object, float, str]:
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(arg).compile()
    return compiled, time.perf_counter() - t0, compiled.as_text()


def run_case(name: str, small: bool, repeat: int) -> dict:
    case = bc.CASE_BUILDERS[name](small)
    storage = jnp.asarray(case.storage)
    layout = case.layouts[0]
    view = StridedArray(storage, layout)
    static, static_s, static_hlo = _compile(lambda s: jnp.asarray(StridedArray(s, layout)), storage)
    again, _, _ = _compile(lambda s: jnp.asarray(StridedArray(s, layout)), storage)
    traced, traced_s, traced_hlo = _compile(lambda v: jnp.asarray(v), view)
    same = bool(np.array_equal(np.asarray(static(storage)), np.asarray(traced(view))))
    # another offset of the same shape and strides reuses the traced program, unchanged
    if layout.offset == 0 and layout.span + 1 < storage.shape[0]:
        moved = StridedArray(storage, Layout(layout.shape, layout.strides, 1))
        same &= bool(np.array_equal(np.asarray(traced(moved)), bc.numpy_view(case.storage, moved.layout)))
    fns = {"static": lambda: static(storage).block_until_ready(),
           "traced": lambda: traced(view).block_until_ready(),
           "again": lambda: again(storage).block_until_ready()}
    samples, _ = timing.time_columns(fns, repeat)
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "case": name, "layout": str(layout), "elements": layout.numel,
        "static_ms": med["static"] * 1e3, "traced_ms": med["traced"] * 1e3,
        "ratio": med["traced"] / med["static"], "aa": med["again"] / med["static"],
        "compile_static_s": static_s, "compile_traced_s": traced_s,
        "gather_static": "gather(" in static_hlo, "gather_traced": "gather(" in traced_hlo,
        "same": same,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes: a smoke run")
    single = [n for n in bc.CASE_BUILDERS if n != "batch_small_views"]
    parser.add_argument("--cases", nargs="*", default=single,
                        help="cases of bench_contiguous.py (default: every single-view case)")
    parser.add_argument("--repeat", type=int, default=15, help="timing rounds (medians)")
    args = parser.parse_args(argv)
    rows = [run_case(name, args.small, 3 if args.small else args.repeat) for name in args.cases]
    print("| case | layout | elements | static ms | traced ms | traced/static | A/A | compile static s "
          "| compile traced s | gather static/traced | equal |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['layout']} | {r['elements']} | {r['static_ms']:.3f} "
              f"| {r['traced_ms']:.3f} | {r['ratio']:.2f} | {r['aa']:.2f} | {r['compile_static_s']:.3f} "
              f"| {r['compile_traced_s']:.3f} "
              f"| {'yes' if r['gather_static'] else 'no'}/{'yes' if r['gather_traced'] else 'no'} "
              f"| {'yes' if r['same'] else 'NO'} |")
    bad = [r["case"] for r in rows if not r["same"] or (r["gather_traced"] and not r["gather_static"])]
    if bad:
        print(f"FAILED: {bad}")
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

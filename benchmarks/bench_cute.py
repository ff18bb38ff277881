"""CuTe layout algebra: ``functional_strides.cute`` vs CUTLASS's ``pycute`` on the same inputs.

For each case (composition, complement, logical/zipped divide, logical product on layouts a
kernel author writes), times calls of ours and of pycute in the same interleaved rounds
(``timing.time_columns``, medians) and prints ``ours/pycute``. Results are checked equal
first (every case here is one where pycute is right). pycute ships in the
``nvidia-cutlass`` wheel; without it the pycute columns are skipped with a note. Machines
are noisy: read the ratios, not the times.

    python benchmarks/bench_cute.py [--small] [--repeat N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import timing  # noqa: E402

from functional_strides import cute  # noqa: E402

try:
    import pycute
except ImportError:  # the pycute columns are skipped
    pycute = None


def cases() -> list[tuple[str, str, tuple, tuple]]:
    """(name, op, args as (kind, shape, stride) or ints/tuples)."""
    row_major = ("L", (128, 64), (64, 1))
    return [
        ("composition: row-major 128x64 o (16,8):(1,128)", "composition",
         (row_major, ("L", (16, 8), (1, 128))), ()),
        ("composition: hierarchical A o 8:4", "composition",
         (("L", ((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))), ("L", 8, 4)), ()),
        ("composition: (4,8,2):(2,8,1) o (4,2,2):(2,8,1)", "composition",
         (("L", (4, 8, 2), (2, 8, 1)), ("L", (4, 2, 2), (2, 8, 1))), ()),
        ("complement: (2,4,8):(8,1,64) up to 1024", "complement", (("L", (2, 4, 8), (8, 1, 64)), 1024), ()),
        ("complement: ((2,2),(2,2)):((1,4),(8,32)) up to 256", "complement",
         (("L", ((2, 2), (2, 2)), ((1, 4), (8, 32))), 256), ()),
        ("logical_divide: 1024 by (4,8):(1,16)", "logical_divide",
         (("L", 1024, 1), ("L", (4, 8), (1, 16))), ()),
        ("logical_divide: row-major 128x64 by (16, 8)", "logical_divide",
         (row_major, ("T", (("L", 16, 1), ("L", 8, 1)))), ()),
        ("zipped_divide: row-major 128x64 by (16, 8)", "zipped_divide",
         (row_major, ("T", (("L", 16, 1), ("L", 8, 1)))), ()),
        ("logical_product: (2,2):(1,2) by (4,8)", "logical_product",
         (("L", (2, 2), (1, 2)), ("L", (4, 8), (1, 4))), ()),
    ]


def _build(lib, arg):
    if isinstance(arg, tuple) and arg and arg[0] == "L":
        return lib.Layout(arg[1], arg[2])
    if isinstance(arg, tuple) and arg and arg[0] == "T":
        return tuple(_build(lib, a) for a in arg[1])
    return arg


def _same(a, b) -> bool:
    return str(a.shape) == str(b.shape) and str(a.stride) == str(b.stride)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="few iterations (a smoke run)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    repeat = min(args.repeat, 3) if args.small else args.repeat
    rows = []
    if pycute is None:
        print("note: pycute is not installed (pip install nvidia-cutlass); its columns are skipped.")
    print(f"{'case':<58} {'ours us':>9} {'pycute us':>10} {'ours/pycute':>12}")
    for name, op, op_args, _ in cases():
        ours_args = [_build(cute, a) for a in op_args]
        mine = getattr(cute, op)(*ours_args)
        cols = {"ours": lambda o=op, a=ours_args: getattr(cute, o)(*a)}
        if pycute is not None:
            their_args = [_build(pycute, a) for a in op_args]
            theirs = getattr(pycute, op)(*their_args)
            if not _same(mine, theirs):
                print(f"FAIL {name}: ours {mine} != pycute {theirs}")
                return 1
            cols["pycute"] = lambda o=op, a=their_args: getattr(pycute, o)(*a)
        times = timing.medians(timing.time_columns(cols, repeat)[0])
        row = {"case": name, "op": op, "result": str(mine), "ours_s": times["ours"]}
        if pycute is not None:
            row["pycute_s"] = times["pycute"]
            row["ratio"] = row["ours_s"] / row["pycute_s"]
            print(f"{name:<58} {row['ours_s'] * 1e6:9.1f} {row['pycute_s'] * 1e6:10.1f} {row['ratio']:12.2f}")
        else:
            print(f"{name:<58} {row['ours_s'] * 1e6:9.1f} {'-':>10} {'-':>12}")
        rows.append(row)
    if pycute is not None:
        ratios = [r["ratio"] for r in rows]
        print(f"geometric mean ours/pycute: {statistics.geometric_mean(ratios):.2f} over {len(ratios)} cases")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Exact overlap of two layouts: ``fs.overlaps`` against ``np.shares_memory(a, b, max_work=None)``.

Public names only: the header names the search that ran (C or Python) as ``fs.explain`` says
it.

Usage:
    python benchmarks/bench_overlap.py [--small] [--repeat N] [--json PATH] [--seed S]
    python benchmarks/bench_overlap.py --adversarial [--seconds T] [--max-work N] [--json PATH]

Both sides answer the same question side by side in one run: do two strided views of one
``int8`` buffer share an element (strides in bytes == elements). NumPy's views are built
with ``np.lib.stride_tricks.as_strided`` over ``np.empty`` of the needed size (virtual
memory, never touched); ours are :class:`Layout` records only, nothing is allocated.

Families (both answers in each; the answers must agree, or the script fails):

* ``docstring``: the hard instance of NumPy's ``shares_memory`` docstring. ``a`` has shape
  ``(1049,)*3`` and strides ``(36674, 61119, 85569)``; ``b`` has shape ``(1049, 1049, 1)``
  and strides ``(12223, 12224, 1)`` at element ``64023025 + shift``. The strides are
  ``p*M + r`` with ``M = 12224`` and small ``p``, ``r``; shift 0 is NumPy's instance (no
  overlap); other shifts move the base into or out of reach.
* ``structured``: random instances of the same construction (random ``M``, ``p``, ``r``,
  extents 150..400, random base), which NumPy's depth-first search finds hard.
* ``random``: random rank-2/3 views with unrelated strides up to 10^5 and extents up to 400,
  as in NumPy's ``test_mem_overlap`` fuzz tests, keeping pairs whose index ranges meet.
* ``random6``: two random rank-3 views with unrelated strides in [10^5, 10^6] (six unknowns).
* ``internal``: self-overlap of one layout, ``has_internal_overlap`` against NumPy's
  ``internal_overlap`` test helper (exact), when NumPy ships it.

Per case: our time (every call from scratch: a self-overlap query cycles through
``COLD_RING`` copies of its layout, each a new key of the answers' cache, which holds fewer;
pair queries keep none), NumPy's, ours/numpy and both answers. Times are the fastest
samples of ``--repeat`` interleaved rounds (``timing.time_columns``: a sample of a call
faster than about 2 ms times a loop of calls, about 2 ms in all); where a call takes over a
second, its first call is its one sample. ``--small`` keeps only cases
NumPy solves in milliseconds (a smoke run).

Our overlap search runs compiled (the C extension built by ``pip install -e .`` where a C
compiler is present): the header says which; ``FUNCTIONAL_STRIDES_PURE_PYTHON=1`` times the
pure-Python fallback.

``--adversarial`` runs instead the layouts that exhaust an unbounded search's memory: rank 30
and 40, extents 2 and 3, strides within 1/16 of 2**20 or 2**40 (three seeds each), one layout
(the witness of ``internal_overlap_witness``, and ``has_internal_overlap``) and pairs
(``overlap_witness``). Per query: our exact answer (``max_work=-1``, stopped by an alarm after
``--seconds``) with its time and the peak of the memory NumPy and Python allocate during it
(``tracemalloc``: the search's sets; the cap is 256 MiB); ours and NumPy's with ``max_work=N``
(``--max-work``, default 10**6: an answer or "too hard"), with their times. NumPy's views there
are built over a fake address (NumPy reads only addresses and strides), since their spans
reach 2**46 bytes.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the timing harness

import timing  # noqa: E402

import functional_strides as fs  # noqa: E402
from functional_strides import Layout  # noqa: E402

#: Copies of a layout a cold self-overlap query cycles through: more than the answers' cache
#: holds (4096 layouts; tests/repo/test_benchmarks_smoke.py checks it), so that every query
#: misses it.
COLD_RING = 4099


def _cold_ring(layout: Layout) -> list[Layout]:
    """``COLD_RING`` layouts with ``layout``'s elements and answer, each a distinct key of the
    self-overlap answers' cache: ``layout`` with a trailing size-1 dim of stride 1, 2, ..."""
    return [Layout((*layout.shape, 1), (*layout.strides, k), layout.offset) for k in range(1, COLD_RING + 1)]

DOC_A = Layout((1049, 1049, 1049), (36674, 61119, 85569), 0)
DOC_B_STRIDES, DOC_BASE = (12223, 12224, 1), 64023025
# shifts of b's base: 0 is NumPy's docstring instance; the others were chosen to give both answers
DOC_SHIFTS_NO = (0, 1, -2000, 12224)
DOC_SHIFTS_YES = (-5000, 7000, 8000, 10000)


def docstring_cases(small: bool) -> list[dict[str, Any]]:
    shifts = DOC_SHIFTS_YES[:3] if small else DOC_SHIFTS_NO + DOC_SHIFTS_YES
    return [{"family": "docstring", "name": f"shift {d:+d}", "a": DOC_A,
             "b": Layout((1049, 1049, 1), DOC_B_STRIDES, DOC_BASE + d)} for d in shifts]


def structured_pair(rng: random.Random, n: int) -> tuple[Layout, Layout]:
    """Strides ``p*M + r`` (small ``p``, ``r``) as in NumPy's docstring instance; random base."""
    m = rng.randint(6 * n, 14 * n)
    pa = rng.sample(range(2, 10), 3)
    a = Layout((n, n, n), tuple(p * m + rng.randint(-3, 3) for p in pa), 0)
    b_strides = (m - rng.randint(1, 3), m)
    base = rng.randint(2 * n, 6 * n) * m + rng.randint(0, m - 1)
    return a, Layout((n, n, 1), (*b_strides, 1), base)


def random_pair(rng: random.Random) -> tuple[Layout, Layout]:
    """Unrelated random strides and extents; the base lands inside ``a``'s index range."""
    def one(offset: int) -> Layout:
        rank = rng.randint(2, 3)
        return Layout(tuple(rng.randint(20, 400) for _ in range(rank)),
                      tuple(rng.randint(1000, 100_000) for _ in range(rank)), offset)
    a = one(0)
    return a, one(rng.randint(0, a.required_storage_size))


def random_wide_pair(rng: random.Random) -> tuple[Layout, Layout]:
    """Two rank-3 views with unrelated strides in [10^5, 10^6]: six unknowns, no structure;
    ``b`` starts in the last quarter of ``a``'s index range, so both answers occur."""
    def one(offset: int) -> Layout:
        return Layout(tuple(rng.randint(20, 200) for _ in range(3)),
                      tuple(rng.randint(10**5, 10**6) for _ in range(3)), offset)
    a = one(0)
    span = a.required_storage_size
    return a, one(span - rng.randint(0, span // 4))


def _answer(a: Layout, b: Layout) -> bool:
    return fs.overlaps(a, b)


def random_cases(small: bool, seed: int) -> list[dict[str, Any]]:
    """Seeded instances of both generators, balanced between the two answers."""
    out = []
    for family, per_answer, make in (
        ("structured", 1 if small else 4, lambda r: structured_pair(r, r.randint(30, 60) if small
                                                                    else r.randint(150, 400))),
        ("random", 2 if small else 6, random_pair),
        ("random6", 1 if small else 6, random_wide_pair),
    ):
        rng = random.Random(seed)
        wanted = {True: per_answer, False: per_answer}
        for k in range(10_000):
            if not any(wanted.values()):
                break
            a, b = make(rng)
            answer = _answer(a, b)
            if wanted[answer]:
                wanted[answer] -= 1
                out.append({"family": family, "name": f"#{k}", "a": a, "b": b})
    return out


def internal_cases(small: bool) -> list[dict[str, Any]]:
    layouts = [Layout((40, 40, 40), (1201, 1999, 2803)), Layout((64, 64, 64), (4095, 4097, 1))]
    if not small:
        layouts += [DOC_A, Layout((1049, 1049), (12223, 12224)), Layout((300, 300, 300), (90001, 90300, 301))]
    return [{"family": "internal", "name": str(lay), "a": lay, "b": None} for lay in layouts]


def _numpy_view(buffer: np.ndarray, layout: Layout) -> np.ndarray:
    return as_strided(buffer[layout.offset:], layout.shape, layout.strides)


def _timed_pair(ours, theirs, repeat: int) -> tuple[float, Any, float, Any]:
    """Seconds per call of ``ours`` and ``theirs`` (the fastest of their samples in
    ``repeat`` interleaved rounds, ``timing.time_columns``: a sample of a fast call times a
    loop of calls lasting about 2 ms), and their answers; where one call of either side takes
    over a second, that first call is the only sample of both. The fastest sample is the one
    least disturbed by other work on the machine (as ``timeit`` advises)."""
    ans_ours, first_ours = timing.seconds(ours)
    ans_theirs, first_theirs = timing.seconds(theirs)
    if max(first_ours, first_theirs) > 1.0:
        return first_ours, ans_ours, first_theirs, ans_theirs
    best = timing.minima(timing.time_columns({"ours": ours, "theirs": theirs}, repeat)[0])
    return best["ours"], ans_ours, best["theirs"], ans_theirs


def run_case(case: dict[str, Any], repeat: int, np_internal) -> dict[str, Any]:
    a, b = case["a"], case["b"]
    size = max(lay.offset + lay.required_storage_size for lay in (a, b) if lay is not None) + 1
    buffer = np.empty(size, np.int8)  # untouched: NumPy only reads its address and strides

    if b is None:
        ring = _cold_ring(a)
        turn = iter(range(1 << 62))

        def ours():
            # a cold query each time: the next of the ring's copies of ``a``, each a new key of
            # the answers' cache, which holds fewer than the ring
            return fs.has_internal_overlap(ring[next(turn) % len(ring)], max_work=-1)  # exact, as NumPy's
        view = _numpy_view(buffer, a)

        def theirs():
            return bool(np_internal(view, max_work=-1))
    else:
        def ours():
            return fs.overlaps(a, b, max_work=-1)  # exact, as NumPy's max_work=None
        va, vb = _numpy_view(buffer, a), _numpy_view(buffer, b)

        def theirs():
            return bool(np.shares_memory(va, vb, max_work=None))
    t_ours, ans_ours, t_np, ans_np = _timed_pair(ours, theirs, repeat)
    if ans_ours != ans_np:
        raise AssertionError(f"answers differ on {case['family']} {case['name']}: ours {ans_ours}, "
                             f"numpy {ans_np} (a={a}, b={b})")
    return {"family": case["family"], "name": case["name"], "a": str(a), "b": None if b is None else str(b),
            "answer": ans_ours, "ours_s": t_ours, "numpy_s": t_np, "ratio": t_ours / t_np}


# -- the adversarial families (--adversarial) --------------------------------------------------------
def adversarial_layout(seed: int, rank: int, exponent: int, offset_seed: int = 0) -> Layout:
    """Extents 2 and 3, strides within 1/16 of ``2**exponent``, an offset below it."""
    rng = random.Random(seed + offset_seed)
    base = 2**exponent
    shape = tuple(rng.choice((2, 3)) for _ in range(rank))
    strides = tuple(base + rng.randint(-base // 16, base // 16) for _ in shape)
    return Layout(shape, strides, rng.randint(0, base))


class _Late(Exception):
    pass


def _late(*args: Any) -> None:
    raise _Late


def _unallocated_view(anchor: np.ndarray, layout: Layout) -> np.ndarray:
    """A NumPy view of ``layout`` (element strides in bytes) at ``anchor``'s address plus the
    offset, over memory that is never allocated nor read (``shares_memory`` reads addresses)."""
    class Interface:
        __array_interface__ = {"data": (anchor.ctypes.data + layout.offset, False), "shape": layout.shape,
                               "strides": layout.strides, "typestr": "|i1", "version": 3}
    return np.asarray(Interface())


def _attempt(fn, seconds: float | None = None) -> tuple[Any, float, float]:
    """``(answer, seconds, peak MiB)``: the answer, ``"too hard"`` (``TooHardError``, NumPy's
    too) or ``"over T s"``."""
    import signal
    import tracemalloc

    tracemalloc.start()
    if seconds:
        signal.signal(signal.SIGALRM, _late)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.perf_counter()
    try:
        answer = fn()
    except (fs.TooHardError, np.exceptions.TooHardError, ValueError):  # NumPy's helper: ValueError
        answer = "too hard"
    except _Late:
        answer = f"over {seconds:g} s"
    finally:
        if seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return answer, elapsed, peak


def _adversarial_queries(kind: str, a: Layout, b: Layout, va: np.ndarray, vb: np.ndarray, max_work: int,
                         np_internal) -> tuple[Any, Any, Any]:
    """Our exact query (its witness checked), ours with ``max_work``, NumPy's with ``max_work``."""
    if kind == "internal":
        def exact():
            w = fs.internal_overlap_witness(a)
            assert w is None or a(*w[0]) == a(*w[1])
            return w is not None

        def bounded():
            return fs.has_internal_overlap(a, max_work=max_work)

        def theirs():
            return None if np_internal is None else bool(np_internal(va, max_work=max_work))
        return exact, bounded, theirs

    def exact_pair():
        w = fs.overlap_witness(a, b)
        assert w is None or a(*w[0]) == b(*w[1])
        return w is not None

    def bounded_pair():
        return fs.overlaps(a, b, max_work=max_work)

    def theirs_pair():
        return bool(np.shares_memory(va, vb, max_work=max_work))
    return exact_pair, bounded_pair, theirs_pair


def adversarial_rows(seconds: float, max_work: int, np_internal) -> list[dict[str, Any]]:
    anchor = np.zeros(1, np.int8)
    rows = []
    for rank in (30, 40):
        for exponent in (20, 40):
            for seed in range(3):
                a = adversarial_layout(seed, rank, exponent)
                b = adversarial_layout(seed, rank, exponent, 1000)
                va, vb = _unallocated_view(anchor, a), _unallocated_view(anchor, b)
                for kind in ("internal", "pair"):  # each layout once: no answer of it is cached
                    exact, bounded, theirs = _adversarial_queries(kind, a, b, va, vb, max_work, np_internal)
                    ours, t_ours, peak = _attempt(exact, seconds)
                    ours_w, t_ours_w, _ = _attempt(bounded)
                    np_w, t_np_w, _ = _attempt(theirs)
                    rows.append({"kind": kind, "rank": rank, "strides": f"2**{exponent}", "seed": seed,
                                 "exact": ours, "exact_s": t_ours, "exact_peak_mib": peak,
                                 "max_work": max_work, "ours": ours_w, "ours_s": t_ours_w,
                                 "numpy": np_w, "numpy_s": t_np_w})
                    r = rows[-1]
                    print(f"{kind:<8} {rank:>4} {r['strides']:>6} {seed:>4}  {str(ours):<10} {t_ours:>8.2f} "
                          f"{peak:>8.1f}  {str(ours_w):<9} {t_ours_w:>8.3f}  {str(np_w):<9} {t_np_w:>8.3f}",
                          flush=True)
    return rows


def _fmt(t: float) -> str:
    """Seconds as microseconds: three significant digits below 1000 us, whole ones above."""
    us = t * 1e6
    return f"{us:.3g}" if us < 1000 else f"{us:,.0f}"


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median ratio per family and answer."""
    groups: dict[tuple[str, bool], list[float]] = {}
    for r in rows:
        groups.setdefault((r["family"], r["answer"]), []).append(r["ratio"])
    return [{"family": f, "answer": ans, "cases": len(v), "median_ratio": statistics.median(v)}
            for (f, ans), v in groups.items()]


def markdown(rows: list[dict[str, Any]], summary: list[dict[str, Any]], header: str) -> str:
    """A markdown section: per-case table and median ratios (for docs/benchmarks.md)."""
    lines = ["## Exact overlap: `fs.overlaps` vs `np.shares_memory(a, b, max_work=None)`", "",
             "Generated by `python benchmarks/bench_overlap.py --markdown PATH`. " + header, "",
             "| family | case | answer | ours µs | numpy µs | ours/numpy |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['family']} | {r['name']} | {r['answer']} | {_fmt(r['ours_s'])} | {_fmt(r['numpy_s'])} "
              f"| {r['ratio']:.3g}x |" for r in rows]
    lines += ["", "| family | answer | cases | median ours/numpy |", "|---|---|---|---|"]
    lines += [f"| {s['family']} | {'overlap' if s['answer'] else 'none'} | {s['cases']} "
              f"| {s['median_ratio']:.3g}x |" for s in summary]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="only cases NumPy solves fast (a few seconds in all)")
    p.add_argument("--repeat", type=int, default=7, help="samples per case (the fastest counts); default 7")
    p.add_argument("--seed", type=int, default=0, help="seed of the random families; default 0")
    p.add_argument("--json", type=Path, help="write the rows and summary here")
    p.add_argument("--markdown", type=Path, help="write a markdown section (tables) here")
    p.add_argument("--adversarial", action="store_true",
                   help="the rank-30/40 layouts instead: exact within the memory cap, and with max_work")
    p.add_argument("--seconds", type=float, default=20.0, help="--adversarial: limit of an exact query")
    p.add_argument("--max-work", type=int, default=10**6, help="--adversarial: the bounded queries' max_work")
    args = p.parse_args(argv)
    try:
        from numpy._core._multiarray_tests import internal_overlap as np_internal
    except ImportError:  # NumPy built without its test helpers
        np_internal = None
    if args.adversarial:
        header = (f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}; "
                  f"exact queries stopped after {args.seconds:g} s; max_work={args.max_work}; "
                  f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        print(header)
        print(f"{'kind':<8} {'rank':>4} {'stride':>6} {'seed':>4}  {'exact':<10} {'s':>8} {'peak MiB':>8}  "
              f"{'max_work':<9} {'s':>8}  {'numpy':<9} {'s':>8}")
        rows = adversarial_rows(args.seconds, args.max_work, np_internal)
        if args.json:
            args.json.write_text(json.dumps({"header": header, "rows": rows}, indent=1))
            print(f"wrote {args.json}")
        return 0
    cases = docstring_cases(args.small) + random_cases(args.small, args.seed)
    if np_internal is not None:
        cases += internal_cases(args.small)
    # which search runs, the compiled one or Python's, as fs.explain says it
    said = str(fs.explain(Layout((1,), (1,))))
    engine = "the overlap search " + said.split("the overlap search ")[1].split(".")[0]
    header = (f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, {engine}; "
              f"repeat {args.repeat}{' (--small)' if args.small else ''}; "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(header)
    print(f"{'family':<10} {'case':<40} {'answer':<6} {'ours us':>10} {'numpy us':>10} {'ours/numpy':>11}")
    rows = []
    for case in cases:
        r = run_case(case, args.repeat, np_internal)
        rows.append(r)
        print(f"{r['family']:<10} {r['name'][:40]:<40} {r['answer']!s:<6} {_fmt(r['ours_s']):>10} "
              f"{_fmt(r['numpy_s']):>10} {r['ratio']:>10.3g}x", flush=True)
    summary = summarise(rows)
    print("\nmedian ours/numpy per family and answer:")
    for s in summary:
        print(f"  {s['family']:<10} {'overlap' if s['answer'] else 'none':<8} {s['cases']:>3} cases  "
              f"{s['median_ratio']:.3g}x")
    if args.json:
        args.json.write_text(json.dumps({"small": args.small, "repeat": args.repeat, "header": header,
                                         "rows": rows, "summary": summary}, indent=1))
        print(f"wrote {args.json}")
    if args.markdown:
        args.markdown.write_text(markdown(rows, summary, header))
        print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

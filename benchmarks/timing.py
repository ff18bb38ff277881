"""The one timing harness of the benchmark scripts: columns timed side by side in one run.

Machines are noisy, so a benchmark never compares times taken at different moments: every
column of a case (ours, XLA's, NumPy's, PyTorch's, ...) is timed in the same interleaved
rounds by :func:`time_columns`, and a script reports ratios of the columns' medians (or
minima, where it says so). A column is a function of no arguments that does one call and
waits for its result (``jax.block_until_ready`` for JAX values).

Example:
    >>> samples, rounds = time_columns({"a": lambda: sum(range(100)), "b": lambda: None}, repeat=3)
    >>> rounds, sorted(samples), len(samples["a"])
    (3, ['a', 'b'], 3)
"""

from __future__ import annotations

import math
import re
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

#: Per-case time budget (s) for the timed rounds; rounds drop to no fewer than 3 past it.
ROUND_BUDGET_S = 20.0
#: Fast calls are repeated back to back until a timing sample lasts about this long (s).
MIN_SAMPLE_S = 2e-3
#: A column whose one call takes longer than this (s) is not settled (``time_columns``'s
#: ``settle_s``): the wind-down of the column before it is then a few percent of its sample.
SETTLE_MAX_CALL_S = 0.2


def call_n(fn: Callable[[], Any], n: int) -> float:
    """Seconds per call of ``n`` back-to-back calls of ``fn``."""
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def time_columns(fns: dict[str, Callable[[], Any]], repeat: int,
                 settle_s: float = 0.0) -> tuple[dict[str, list[float]], int]:
    """Seconds per call of each column, one sample per interleaved round; and the round count.

    Warm-up: two calls per column (one when a call takes over 0.2 s). A sample is the mean of
    enough back-to-back calls to last about ``MIN_SAMPLE_S`` (one call for slow columns), which
    steadies microsecond timings. Each round takes one sample of every column, starting from
    a rotating column so that none always follows the same one. Rounds are capped by
    ``ROUND_BUDGET_S`` (never below 3).

    ``settle_s`` > 0: untimed calls of the same column for that long precede each sample
    (none where one call exceeds ``SETTLE_MAX_CALL_S``), so that a sample times the column
    in the steady state of its own loop, its data where that loop leaves it in the caches,
    and not while the threads of the column before it wind down. Without it (the default)
    each sample follows other columns' calls, which evict its data from the caches."""
    inner, settle, per_round = {}, {}, 0.0
    for name, fn in fns.items():
        t = call_n(fn, 1)
        if t < 0.2:
            t = call_n(fn, 1)
        inner[name] = max(1, min(1000, math.ceil(MIN_SAMPLE_S / max(t, 1e-7))))
        settle[name] = 0 < settle_s and t <= SETTLE_MAX_CALL_S
        per_round += t * inner[name] + (max(t, settle_s) if settle[name] else 0.0)
    rounds = max(min(repeat, 3), min(repeat, int(ROUND_BUDGET_S / max(per_round, 1e-9))))
    names = list(fns)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            if settle[name]:
                settle_for(fns[name], settle_s)
            samples[name].append(call_n(fns[name], inner[name]))
    return samples, rounds


def medians(samples: dict[str, list[float]]) -> dict[str, float]:
    """The median of each column's samples (seconds per call)."""
    return {k: statistics.median(v) for k, v in samples.items()}


def minima(samples: dict[str, list[float]]) -> dict[str, float]:
    """The fastest of each column's samples (seconds per call)."""
    return {k: min(v) for k, v in samples.items()}


def settle_for(fn: Callable[[], Any], seconds: float) -> None:
    """Calls ``fn``, untimed, until ``seconds`` have passed (at least once)."""
    t0 = time.perf_counter()
    while True:
        fn()
        if time.perf_counter() - t0 >= seconds:
            return


def faults_per_call(fn: Callable[[], Any], calls: int = 3) -> float:
    """Minor page faults per call of ``fn`` (``getrusage``; the result is dropped after each
    call, so a fresh output buffer is mapped, and faulted in, every time)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def custom_calls(hlo_text: str, target_prefix: str) -> set[str]:
    """Names of the custom calls in a compiled program's HLO text (``compiled.as_text()``)
    whose target starts with ``target_prefix`` (``"functional_strides_"``: the strided copy
    and write)."""
    call = r'%?([\w.\-]+) = [^\n]*?custom-call\([^\n]*custom_call_target="'
    return set(re.findall(call + re.escape(target_prefix), hlo_text))


def op_seconds(fn: Callable[[], Any], ops: set[str], calls: int = 10) -> list[float]:
    """Per call of ``fn`` (which runs one compiled program and waits for it), the seconds that
    JAX's profiler (``jax.profiler.trace``) gives the HLO ops named ``ops`` in that call,
    summed: ``calls`` calls traced after one untraced one, apart from any timed rounds (the
    profiler adds its own cost to each call). Empty where no such op ran."""
    import glob
    import tempfile

    import jax

    fn()
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder):
            for _ in range(calls):
                fn()
        data = jax.profiler.ProfileData.from_file(glob.glob(f"{folder}/**/*.xplane.pb", recursive=True)[0])
    per_run: dict[Any, float] = {}
    for plane in data.planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if stats.get("hlo_op") in ops:
                    run = stats.get("run_id")
                    per_run[run] = per_run.get(run, 0.0) + event.duration_ns * 1e-9
    return list(per_run.values())


def seconds(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()``'s result and the seconds it took (one call: a compile, an import)."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0

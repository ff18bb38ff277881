"""The overlap search is bounded by default (``fs.config.overlap_max_work``): queries past the
bound raise ``TooHardError`` naming the option, the library's own checks (writes, ``explain``,
the command line) answer conservatively, the compiled search releases the GIL and a signal
handler interrupts it (docs/errors.md)."""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import threading
import time

import jax.numpy as jnp
import numpy as np
import pytest

import functional_strides as fs
from functional_strides import TooHardError, oracle
from functional_strides._src.core.overlap import dfs, overlap


def _hard(rank: int, seed: int = 0) -> fs.Layout:
    """Extents 2, strides drawn from [2**(rank+1), 2**(rank+2)): no fast path decides."""
    rng = random.Random(seed)
    return fs.Layout((2,) * rank, tuple(rng.randrange(2 ** (rank + 1), 2 ** (rank + 2)) for _ in range(rank)))


@pytest.fixture
def fresh():
    fs.clear_caches()
    yield
    fs.clear_caches()


@pytest.mark.usefixtures("fresh")
@pytest.mark.parametrize("query", [
    lambda lay: fs.has_internal_overlap(lay),
    lambda lay: fs.internal_overlap_witness(lay),
    lambda lay: lay.has_internal_overlap(),
], ids=["has_internal_overlap", "internal_overlap_witness", "Layout.has_internal_overlap"])
def test_a_query_past_the_default_bound_raises_naming_the_option(query):
    with pytest.raises(TooHardError, match=re.escape("fs.config.overlap_max_work")) as info:
        query(_hard(40))
    assert f"max_work={fs.config.overlap_max_work} units" in str(info.value)


@pytest.mark.usefixtures("fresh")
def test_pair_queries_obey_the_bound_too():
    a = fs.Layout((3, 3, 3), (7, 5, 3))
    b = fs.Layout((3, 3, 3), (7, 5, 3), 1)
    with fs.config.using(overlap_max_work=1), pytest.raises(TooHardError, match="overlap_max_work"):
        fs.overlaps(a, fs.Layout((3, 3, 3), (11, 5, 3), 1))
    assert fs.overlaps(a, b) and fs.overlaps(a, b, max_work=-1)


@pytest.mark.usefixtures("fresh")
def test_the_bound_is_the_configured_one_and_minus_one_is_exact():
    lay = fs.Layout((3, 3, 3), (7, 5, 3))  # overlaps: 7 + 3 == 5 + 5
    with fs.config.using(overlap_max_work=0), pytest.raises(TooHardError, match="bounds only"):
        fs.has_internal_overlap(lay)
    with fs.config.using(overlap_max_work=-1):
        assert fs.has_internal_overlap(lay)
    assert fs.has_internal_overlap(lay, max_work=-1) and fs.has_internal_overlap(lay)


@pytest.mark.usefixtures("fresh")
def test_a_write_past_the_bound_is_planned_as_overlapping_with_the_same_values():
    layout = fs.Layout((3, 3, 3), (7, 5, 3))
    view = fs.from_array(jnp.zeros(40)).as_strided(layout.shape, layout.strides)
    values = jnp.arange(27.0).reshape(3, 3, 3)
    want = oracle.scatter(np.zeros(40), layout, np.asarray(values), "set")  # row-major last wins
    with fs.config.using(overlap_max_work=1):
        assert overlap.write_check(layout) is overlap.UNDECIDED
        np.testing.assert_array_equal(np.asarray(view.at[...].set(values).storage), want)
        np.testing.assert_array_equal(np.asarray(view.at[...].add(values).storage),
                                      oracle.scatter(np.zeros(40), layout, np.asarray(values), "add"))
    with pytest.raises(fs.OverlapError):  # decided: PyTorch's refusal of an ambiguous set
        view.at[...].set(values)
    np.testing.assert_array_equal(np.asarray(view.at[...].set(values, overlap="last").storage), want)


@pytest.mark.usefixtures("fresh")
def test_explain_of_a_hard_layout_answers_and_says_undecided():
    text = fs.explain(_hard(40), show=False).text
    assert "internal overlap: undecided within fs.config.overlap_max_work" in text


@pytest.mark.slow
def test_the_command_line_answers_a_hard_layout(tmp_path):
    lay = _hard(64)
    spec = f"({','.join(map(str, lay.shape))}):({','.join(map(str, lay.strides))})+0"
    proc = subprocess.run([sys.executable, "-m", "functional_strides", "explain", spec, "--max-cells", "64"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "internal overlap: undecided within fs.config.overlap_max_work" in proc.stdout


def _compiled_or_skip():
    if dfs.compiled() is None:
        pytest.skip("the C overlap search is not built (no compiler at install)")


@pytest.mark.usefixtures("fresh")
def test_the_compiled_search_releases_the_gil():
    _compiled_or_skip()
    ticks, done = [0], threading.Event()

    def tick():
        while not done.is_set():
            time.sleep(0.005)
            ticks[0] += 1

    thread = threading.Thread(target=tick)
    thread.start()
    start = time.perf_counter()
    try:
        with fs.config.using(overlap_max_work=5 * 10**7), pytest.raises(TooHardError):
            fs.has_internal_overlap(_hard(40))
    finally:
        done.set()
        thread.join()
    elapsed = time.perf_counter() - start
    # holding the GIL, the ticker would not run at all while the search does
    assert ticks[0] >= max(2, int(0.2 * elapsed / 0.005)), (ticks[0], elapsed)


@pytest.mark.usefixtures("fresh")
def test_a_signal_handler_interrupts_the_exact_search():
    _compiled_or_skip()
    if not hasattr(signal, "setitimer"):
        pytest.skip("no interval timers on this platform")

    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(Stop):
            fs.has_internal_overlap(_hard(40), max_work=-1)  # exact: unbounded until interrupted
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)

"""Exact overlap within a memory cap, and ``max_work`` with NumPy's meaning.

The meet-in-the-middle search keeps its arrays under ``MEMORY_CAP``; past it the search runs
over narrower ranges of values, then as a depth-first search whose memory does not grow.
Answers stay exact on every path (checked against brute force with a tiny cap, so that the
narrowed and depth-first paths decide); ``max_work`` answers exactly or raises
``TooHardError`` as ``numpy.shares_memory`` raises; the adversarial layouts that exhausted
memory (rank 30 and 40, extents 2 and 3, strides near 2**20 or 2**40) are queried in
subprocesses under a 4 GiB address-space limit, each with a time limit.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided as np_as_strided

import functional_strides as fs
from functional_strides import Layout, LayoutError, LayoutTypeError, TooHardError
from functional_strides._src.core.overlap import overlap, solver


def _indices(layout: Layout) -> list[int]:
    return [layout(*c) for c in itertools.product(*map(range, layout.shape))]


def _brute_internal(layout: Layout) -> bool:
    idx = _indices(layout)
    return len(set(idx)) != len(idx)


def _brute_pair(a: Layout, b: Layout) -> bool:
    return bool(set(_indices(a)) & set(_indices(b)))


def _random_layout(rng: random.Random, rank: tuple[int, int], base: int, offset: int = 0) -> Layout:
    shape = tuple(rng.randint(2, 4) for _ in range(rng.randint(*rank)))
    return Layout(shape, tuple(base + rng.randint(-base // 2, base) for _ in shape), rng.randint(0, offset))


def _numpy_view(buffer: np.ndarray, layout: Layout) -> np.ndarray:
    return np_as_strided(buffer[layout.offset:], layout.shape, layout.strides)  # uint8: bytes == elements


@pytest.fixture
def no_quick_search(monkeypatch):
    """The bounded searches that run before the solver take no steps: the solver decides."""
    for name in ("_QUICK_STEPS", "_COMPILED_STEPS", "_FIRST_STEPS"):
        monkeypatch.setattr(overlap, name, 0)
    monkeypatch.setattr(solver, "_REDUCED_STEPS", 0)
    monkeypatch.setattr(solver, "_LATTICE_ABOVE", float("inf"))  # the enumeration, not the lattice
    overlap._internal_witness.cache_clear()
    yield
    overlap._internal_witness.cache_clear()


# -- the cap: exact answers on every path ---------------------------------------------------------
@pytest.mark.parametrize("cap", [1 << 9, 1 << 11, 1 << 13], ids=["512B", "2KiB", "8KiB"])
def test_answers_under_a_small_cap_match_brute_force(monkeypatch, no_quick_search, cap):
    """With the cap a few hundred bytes to 8 KiB, the meet-in-the-middle search narrows its
    ranges or hands over to the depth-first search; every answer and witness stays exact."""
    monkeypatch.setattr(solver, "MEMORY_CAP", cap)
    paths = {"sliced": 0, "depth_first": 0}
    meet, reduced = solver._meet, solver._reduced_search

    def count_meet(*args):
        paths["sliced"] += args[-1] > 1
        return meet(*args)

    def count_reduced(*args, **kwargs):
        paths["depth_first"] += args[4] is None
        return reduced(*args, **kwargs)

    monkeypatch.setattr(solver, "_meet", count_meet)
    monkeypatch.setattr(solver, "_reduced_search", count_reduced)
    rng = random.Random(cap)
    outcomes = set()
    for _ in range(120):
        layout = _random_layout(rng, (3, 6), rng.choice([30, 300]))
        witness = fs.internal_overlap_witness(layout)
        assert (witness is not None) == _brute_internal(layout), layout
        if witness is not None:
            assert witness[0] != witness[1] and layout(*witness[0]) == layout(*witness[1])
        a, b = _random_layout(rng, (1, 3), 40, 200), _random_layout(rng, (1, 3), 40, 200)
        found = fs.overlap_witness(a, b)
        assert (found is not None) == _brute_pair(a, b), (a, b)
        if found is not None:
            assert a(*found[0]) == b(*found[1])
        outcomes.add((witness is None, found is None))
    assert len(outcomes) == 4
    assert paths["depth_first" if cap == 1 << 9 else "sliced"] > 0, paths


def test_the_search_holds_no_more_than_the_cap(monkeypatch):
    """Measured with tracemalloc (NumPy reports its buffers to it): a query whose sets reach
    hundreds of MiB without the cap stays under a 64 MiB cap, and is still decided."""
    monkeypatch.setattr(solver, "MEMORY_CAP", 64 << 20)
    layout = _adversarial(1, 24, 40)
    overlap._internal_witness.cache_clear()
    tracemalloc.start()
    try:
        witness = fs.internal_overlap_witness(layout, max_work=-1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        overlap._internal_witness.cache_clear()
    assert witness is not None and layout(*witness[0]) == layout(*witness[1])
    assert peak < solver.MEMORY_CAP, peak


def test_memory_error_becomes_the_librarys_error(monkeypatch, no_quick_search):
    """A process that cannot allocate what the cap allows gets ``TooHardError`` naming the cap
    (``MemoryError`` stands for the failing allocation here)."""
    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(overlap, "_solve", no_memory)
    layout = Layout((3, 3, 3), (7, 5, 3))  # no fast path decides it
    for query in (fs.has_internal_overlap, fs.internal_overlap_witness,
                  lambda lay: fs.overlaps(lay, Layout((3, 3), (6, 5), 1)),
                  lambda lay: fs.has_internal_overlap(lay, max_work=10**6)):
        with pytest.raises(TooHardError, match=re.escape("ran out of memory (MemoryError) deciding whether "
                                                         "the layout")) as info:
            query(layout)
        assert "memory cap of 256 MiB (MEMORY_CAP)" in str(info.value)
        assert isinstance(info.value, RuntimeError) and isinstance(info.value, LayoutError)


# -- max_work ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value, error, message", [
    (-2, LayoutError, "max_work must be -1 (exact), 0 (bounds only) or a positive budget (got max_work=-2)"),
    (1.5, LayoutTypeError, "max_work must be an integer or None (got max_work=1.5 of type float)"),
    ("all", LayoutTypeError, "max_work must be an integer or None (got max_work='all' of type str)"),
    (True, LayoutTypeError, "max_work must be an integer or None, not a bool (got max_work=True)"),
    (-1.0, LayoutTypeError, "max_work must be an integer or None (got max_work=-1.0 of type float)"),
], ids=["below-minus-one", "float", "string", "bool", "float-minus-one"])
def test_max_work_is_checked(value, error, message):
    a, b = Layout((3, 3), (2, 3)), Layout((2,), (5,), 1)
    for name, query in [("has_internal_overlap", lambda: fs.has_internal_overlap(a, max_work=value)),
                        ("internal_overlap_witness", lambda: fs.internal_overlap_witness(a, max_work=value)),
                        ("overlaps", lambda: fs.overlaps(a, b, max_work=value)),
                        ("overlap_witness", lambda: fs.overlap_witness(a, b, max_work=value)),
                        ("has_internal_overlap", lambda: a.has_internal_overlap(max_work=value)),
                        ("overlaps", lambda: a.overlaps(b, max_work=value))]:
        with pytest.raises(error, match=re.escape(f"{name}: {message}")):
            query()


def test_max_work_none_and_minus_one_are_exact():
    layout, other, apart = Layout((4, 3), (2, 3)), Layout((3,), (4,), 1), Layout((3,), (4,), 100)
    for max_work in (None, -1, np.int64(-1)):
        assert fs.internal_overlap_witness(layout, max_work=max_work) == ((0, 2), (3, 0))
        assert fs.internal_overlap_witness(Layout((3, 3), (2, 3)), max_work=max_work) is None
        assert fs.has_internal_overlap(layout, max_work=max_work) is True
        assert fs.has_internal_overlap(Layout((3, 3), (2, 3)), max_work=max_work) is False
        assert fs.overlaps(layout, other, max_work=max_work) is _brute_pair(layout, other) is True
        assert fs.overlaps(layout, apart, max_work=max_work) is _brute_pair(layout, apart) is False
        assert fs.overlap_witness(layout, apart, max_work=max_work) is None


def test_max_work_zero_is_numpys_bounds_check():
    """Pairs: ``TooHardError`` exactly where ``np.shares_memory(..., max_work=0)`` raises (index
    ranges that meet), ``False`` where it answers. One layout: the O(rank) proofs answer (a
    superset of those of NumPy's ``internal_overlap(max_work=0)``), anything else raises."""
    tests = pytest.importorskip("numpy._core._multiarray_tests", reason="NumPy's test helpers are not built")
    rng = random.Random(5)
    raised = answered = 0
    for _ in range(400):
        a, b = _random_layout(rng, (0, 3), 6, 60), _random_layout(rng, (0, 3), 6, 60)
        if rng.random() < 0.2:
            a = Layout((0, *a.shape), (1, *a.strides), a.offset)
        buffer = np.zeros(max(a.required_storage_size, b.required_storage_size, a.offset, b.offset) + 1,
                          np.uint8)
        try:
            expected = np.shares_memory(_numpy_view(buffer, a), _numpy_view(buffer, b), max_work=0)
        except np.exceptions.TooHardError:
            expected = None
        if expected is None:
            with pytest.raises(TooHardError, match=re.escape("overlaps: max_work=0 checks the bounds only")):
                fs.overlaps(a, b, max_work=0)
            raised += 1
        else:
            assert fs.overlaps(a, b, max_work=0) is expected is False
            answered += 1
        layout = _random_layout(rng, (1, 4), rng.choice([3, 20]))
        view = _numpy_view(np.zeros(layout.required_storage_size + 1, np.uint8), layout)
        try:
            numpy_answer = bool(tests.internal_overlap(view, max_work=0))
        except ValueError:  # NumPy's helper: "Exceeded max_work"
            numpy_answer = None
        try:
            ours = fs.has_internal_overlap(layout, max_work=0)
        except TooHardError:
            assert numpy_answer is None, layout
            continue
        assert ours == _brute_internal(layout) and numpy_answer in (None, ours), layout
    assert raised > 50 and answered > 50


def test_max_work_zero_takes_no_search_steps(monkeypatch):
    monkeypatch.setattr(overlap._dfs, "search", lambda *a, **k: pytest.fail("a search ran"))
    monkeypatch.setattr(overlap, "_solve", lambda *a, **k: pytest.fail("the solver ran"))
    with pytest.raises(TooHardError, match=re.escape(
            "has_internal_overlap: max_work=0 checks the bounds only, which do not decide whether the layout "
            "(3,3,3):(7,5,3) addresses a storage index twice.")):
        fs.has_internal_overlap(Layout((3, 3, 3), (7, 5, 3)), max_work=0)
    assert fs.has_internal_overlap(Layout((4, 4), (4, 0)), max_work=0)            # a stride 0
    assert not fs.has_internal_overlap(Layout((3, 4), (40, 3)), max_work=0)       # nested strides
    assert fs.has_internal_overlap(Layout((2,) * 12, tuple(range(1, 13))), max_work=0)  # 4096 > 79 slots
    assert fs.internal_overlap_witness(Layout((4, 4), (4, 0)), max_work=0) == ((0, 0), (0, 1))
    with pytest.raises(TooHardError, match=re.escape("internal_overlap_witness: max_work=0 checks the")):
        fs.internal_overlap_witness(Layout((2,) * 12, tuple(range(1, 13))), max_work=0)  # no witness
    assert fs.overlaps(Layout((4,), (1,)), Layout((4,), (1,), 4), max_work=0) is False
    with pytest.raises(TooHardError, match=re.escape(
            "overlap_witness: max_work=0 checks the bounds only, which do not decide whether the layouts "
            "(4,):(1,)+0 and (4,):(1,)+0 share a storage index")):
        fs.overlap_witness(Layout((4,), (1,)), Layout((4,), (1,)), max_work=0)  # as NumPy: bounds only


@pytest.mark.parametrize("max_work", [1, 30, 1000, 10**5])
def test_max_work_answers_are_exact_or_too_hard(max_work):
    """Every answer under a budget is the exact one; small budgets leave some queries to
    ``TooHardError``, which names the budget."""
    rng = random.Random(max_work)
    answered = raised = 0
    for _ in range(150):
        layout = _random_layout(rng, (3, 5), rng.choice([40, 400]))
        a, b = _random_layout(rng, (1, 3), 50, 300), _random_layout(rng, (1, 3), 50, 300)
        for query, args, exact in [(fs.has_internal_overlap, (layout,), _brute_internal(layout)),
                                   (fs.overlaps, (a, b), _brute_pair(a, b))]:
            try:
                assert query(*args, max_work=max_work) == exact
                answered += 1
            except TooHardError as err:
                assert f"max_work={max_work} units of work did not suffice to decide whether the " in str(err)
                raised += 1
        witness = None
        try:
            witness = fs.internal_overlap_witness(layout, max_work=max_work)
        except TooHardError:
            continue
        assert (witness is not None) == _brute_internal(layout)
    assert answered > 0
    if max_work <= 30:
        assert raised > 0
    else:
        assert answered > raised


@pytest.mark.parametrize("cap", [None, 1 << 9], ids=["default-cap", "512B-cap"])
def test_small_pairs_agree_with_numpy_under_every_max_work(monkeypatch, cap):
    """Where both decide, ours and ``np.shares_memory`` give the same answer, for every
    ``max_work`` (and under a cap that sends the solver down its narrowed and depth-first
    paths); both equal brute force."""
    if cap is not None:
        monkeypatch.setattr(solver, "MEMORY_CAP", cap)
        monkeypatch.setattr(overlap, "_COMPILED_STEPS", 0)
        monkeypatch.setattr(overlap, "_QUICK_STEPS", 0)
    rng = random.Random(31)
    both = 0
    for _ in range(200):
        a, b = _random_layout(rng, (1, 3), 30, 150), _random_layout(rng, (1, 3), 30, 150)
        buffer = np.zeros(max(a.offset + a.required_storage_size, b.offset + b.required_storage_size) + 1,
                          np.uint8)
        va, vb = _numpy_view(buffer, a), _numpy_view(buffer, b)
        truth = _brute_pair(a, b)
        for max_work in (None, 5, 100, 10**4):
            try:
                theirs = np.shares_memory(va, vb, max_work=max_work)
            except np.exceptions.TooHardError:
                theirs = None
            try:
                ours = fs.overlaps(a, b, max_work=max_work)
            except TooHardError:
                ours = None
            assert max_work is not None or ours == theirs == truth, (a, b)
            assert ours in (None, truth) and theirs in (None, truth), (a, b, max_work)
            both += ours is not None and theirs is not None
    assert both > 200


def test_max_work_bounds_the_work(monkeypatch, no_quick_search):
    """The units charged pass ``max_work`` only by the charge that raises (each stage asks for
    what is left before it starts); ``TooHardError`` comes once the budget is spent."""
    charged = []
    spend = solver._Work.spend

    def record(self, units):
        charged.append(units)
        spend(self, units)

    monkeypatch.setattr(solver._Work, "spend", record)
    rng = random.Random(9)
    outcomes = {"answered": 0, "too hard": 0}
    for _ in range(60):
        layout = _random_layout(rng, (4, 6), 300)
        for max_work in (5, 500, 50_000):
            charged.clear()
            try:
                fs.has_internal_overlap(layout, max_work=max_work)
                assert sum(charged) <= max_work, (layout, max_work, charged)
                outcomes["answered"] += bool(charged)
            except TooHardError:
                assert sum(charged[:-1]) <= max_work <= sum(charged), (layout, max_work, charged)
                outcomes["too hard"] += 1
    assert outcomes["answered"] > 0 and outcomes["too hard"] > 0, outcomes


def test_numpy_shares_memory_front_end_takes_max_work():
    x = fs.from_array(np.arange(12.0))
    left, right = x[:6], x[6:]
    assert fs.numpy.shares_memory(left, x, None) and not fs.numpy.shares_memory(left, right, max_work=0)
    assert not fs.numpy.shares_memory(left, right) and not fs.numpy.shares_memory(x[::2], x[1::2], 10)
    with pytest.raises(TooHardError, match=re.escape("overlaps: max_work=0 checks the bounds only")):
        fs.numpy.shares_memory(left, x, max_work=0)
    with pytest.raises(TooHardError):
        fs.overlaps(x.unfold(0, 3, 2), x[1::4], max_work=0)
    assert fs.overlaps(x.unfold(0, 3, 2), x[1::4], max_work=100)


# -- the adversarial families, in subprocesses under a 4 GiB address-space limit --------------------
def _adversarial(seed: int, rank: int, exponent: int, offset_seed: int = 0) -> Layout:
    """Extents 2 and 3, strides within 1/16 of 2**exponent (the instances that exhausted memory)."""
    rng = random.Random(seed + offset_seed)
    base = 2**exponent
    shape = tuple(rng.choice((2, 3)) for _ in range(rank))
    strides = tuple(base + rng.randint(-base // 16, base // 16) for _ in shape)
    return Layout(shape, strides, rng.randint(0, base))


_CHILD = textwrap.dedent("""
    import json, resource, signal, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import random
    import functional_strides as fs
    from functional_strides import Layout

    def adversarial(seed, rank, exponent, offset_seed=0):
        rng = random.Random(seed + offset_seed)
        base = 2**exponent
        shape = tuple(rng.choice((2, 3)) for _ in range(rank))
        return Layout(shape, tuple(base + rng.randint(-base // 16, base // 16) for _ in shape),
                      rng.randint(0, base))

    class Late(Exception):
        pass

    def late(*args):
        raise Late

    signal.signal(signal.SIGALRM, late)
    out = []
    for kind, seed, rank, exponent, max_work, seconds in json.loads(sys.argv[1]):
        a = adversarial(seed, rank, exponent)
        b = adversarial(seed, rank, exponent, 1000)
        start = time.perf_counter()
        signal.alarm(seconds)
        try:
            if kind == "internal":
                found = fs.internal_overlap_witness(a, max_work=max_work)
                answer = found is not None and found[0] != found[1] and a(*found[0]) == a(*found[1])
                answer = [answer, fs.has_internal_overlap(a, max_work=max_work)]
            else:
                found = fs.overlap_witness(a, b, max_work=max_work)
                answer = [found is not None and a(*found[0]) == b(*found[1]),
                          fs.overlaps(a, b, max_work=max_work)]
                answer = answer if found is not None else [None, answer[1]]
        except fs.TooHardError as err:
            answer = "too hard" if "did not suffice" in str(err) else str(err)
        except Late:
            answer = "late"
        except MemoryError:
            answer = "MemoryError"
        signal.alarm(0)
        out.append([kind, seed, rank, exponent, answer, time.perf_counter() - start])
    # the peak of this process's own memory (VmHWM): ru_maxrss would also hold the RSS of the
    # parent it was forked from before its exec, a pytest process that may be large by then
    with open("/proc/self/status") as status:
        hwm = [line.split()[1] for line in status if line.startswith("VmHWM:")]
    peak = int(hwm[0]) >> 10 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(json.dumps({"results": out, "maxrss_mib": peak}))
""")


def _run_child(queries: list, timeout: float) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(queries)], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


_FAMILIES = [(rank, exponent) for rank in (30, 40) for exponent in (20, 40)]


@pytest.mark.slow
def test_adversarial_layouts_with_max_work_answer_or_raise_without_memory_error():
    """Rank 30 and 40, strides near 2**20 and 2**40, one layout and pairs, ``max_work=10**6``:
    each query answers (witnesses checked) or raises ``TooHardError`` within seconds, under
    4 GiB of address space; none raises ``MemoryError``."""
    queries = [[kind, seed, rank, exponent, 10**6, 60] for rank, exponent in _FAMILIES for seed in range(3)
               for kind in ("internal", "pair")]
    report = _run_child(queries, timeout=240)
    kinds = set()
    for kind, seed, rank, exponent, answer, seconds in report["results"]:
        assert answer == "too hard" or answer in ([True, True], [None, False]), (kind, seed, rank, answer)
        assert seconds < 30, (kind, seed, rank, exponent, seconds)
        kinds.add(answer if isinstance(answer, str) else "answered")
    assert kinds == {"too hard", "answered"}
    assert report["maxrss_mib"] < 2048


@pytest.mark.slow
def test_adversarial_layouts_exact_within_the_cap():
    """The exact default on the same families: self-overlap is decided with a valid witness
    (pigeonhole for the bool, the narrowed meet-in-the-middle search for the witness) where
    memory was exhausted before; an undecided pair query runs on, interrupted by an alarm, with
    its memory under the cap all the while."""
    queries = [["internal", seed, rank, exponent, -1, 60] for rank, exponent in _FAMILIES for seed in (0, 2)]
    queries += [["pair", 1, 40, 40, -1, 5], ["pair", 0, 30, 40, -1, 5]]
    report = _run_child(queries, timeout=400)
    for kind, seed, rank, exponent, answer, _ in report["results"]:
        if kind == "internal":
            assert answer == [True, True], (seed, rank, exponent, answer)
        else:
            assert answer == "late" or answer in ([True, True], [None, False]), answer
    assert report["maxrss_mib"] < (solver.MEMORY_CAP >> 20) + 1024, report["maxrss_mib"]

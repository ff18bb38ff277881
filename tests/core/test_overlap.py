"""Exact overlap analysis: one layout against itself, two layouts against each other.

Every answer is checked against brute force (``fs.oracle`` enumerates the indices), every
witness is checked to be a real collision, large layouts are checked against closed-form
facts, and where PyTorch or NumPy decide (``torch._debug_has_internal_overlap`` answers 0/1,
``numpy.shares_memory``) the answers must agree.
"""

from __future__ import annotations

import itertools
import math
import random
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch, seed_cases
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided as np_as_strided
from strategies import layouts

import functional_strides as fs
from functional_strides import Layout, LayoutError, views
from functional_strides._src.core.overlap import overlap as overlap
from functional_strides._src.core.overlap import solver as solver
from functional_strides._src.core.overlap.overlap import (
    has_internal_overlap,
    internal_overlap_witness,
    overlap_witness,
    overlaps,
)


def _check_internal(layout: Layout) -> None:
    """The answer matches brute force; a witness is a real, ordered collision."""
    witness = internal_overlap_witness(layout)
    assert (witness is not None) == fs.oracle.has_internal_overlap(layout), layout
    assert has_internal_overlap(layout) == (witness is not None)
    if witness is not None:
        _check_collision(layout, witness)


def _check_collision(layout: Layout, witness) -> None:
    x, y = witness
    assert len(x) == len(y) == layout.ndim, (layout, witness)
    assert all(0 <= i < n and 0 <= j < n for i, j, n in zip(x, y, layout.shape, strict=True)), witness
    assert x < y, (layout, witness)  # distinct, the row-major-first one first
    assert layout(*x) == layout(*y), (layout, witness)


def _check_pair(a: Layout, b: Layout) -> None:
    witness = overlap_witness(a, b)
    assert (witness is not None) == fs.oracle.overlaps(a, b), (a, b)
    assert overlaps(a, b) == (witness is not None)
    if witness is not None:
        x, y = witness
        assert len(x) == a.ndim and len(y) == b.ndim
        assert all(0 <= i < n for i, n in zip(x, a.shape, strict=True)), (a, witness)
        assert all(0 <= i < n for i, n in zip(y, b.shape, strict=True)), (b, witness)
        assert a(*x) == b(*y), (a, b, witness)


# -- exhaustive sweeps over small layouts --------------------------------------------------------
def test_every_small_layout_matches_brute_force():
    """All layouts of rank <= 3 with extents 0..4 and strides 0..6 (44 136 layouts)."""
    dims = [(n, s) for n in range(5) for s in range(7)]
    count = 0
    for rank in range(4):
        for combo in itertools.product(dims, repeat=rank):
            _check_internal(Layout(tuple(n for n, _ in combo), tuple(s for _, s in combo)))
            count += 1
    assert count == 1 + 35 + 35**2 + 35**3


def test_every_pair_of_small_1d_layouts_matches_brute_force():
    """All pairs of 1-D layouts with extents 0..4, strides 0..4 and offsets 0..4."""
    ones = [Layout((n,), (s,), o) for n in range(5) for s in range(5) for o in range(5)]
    for a, b in itertools.product(ones, repeat=2):
        _check_pair(a, b)


def test_seeded_sample_of_larger_layouts_matches_brute_force():
    """Ranks 3..6 with strides of similar size: the cases the reductions leave to the search."""
    rng = random.Random(20240517)
    outcomes = set()
    for _ in range(600):
        shape = tuple(rng.randint(2, 7) for _ in range(rng.randint(3, 6)))
        base = rng.randint(5, 300)
        strides = tuple(base + rng.randint(-base // 2, 2 * base) for _ in shape)
        layout = Layout(shape, strides)
        _check_internal(layout)
        outcomes.add(has_internal_overlap(layout))
    assert outcomes == {True, False}


def test_seeded_sample_of_layout_pairs_matches_brute_force():
    rng = random.Random(7)
    outcomes = set()
    for _ in range(1500):
        pair = []
        for _ in range(2):
            shape = tuple(rng.randint(1, 6) for _ in range(rng.randint(0, 3)))
            strides = tuple(rng.randint(0, rng.choice([4, 40, 200])) for _ in shape)
            pair.append(Layout(shape, strides, rng.randint(0, 400)))
        _check_pair(*pair)
        outcomes.add(overlaps(*pair))
    assert outcomes == {True, False}


def test_search_in_small_chunks_and_with_python_integers(monkeypatch):
    """The same answers when candidates are produced a few at a time, and for strides beyond
    int64 (the search then runs on Python integers)."""
    monkeypatch.setattr(solver, "_CHUNK", 5)
    rng = random.Random(11)
    for big in (0, 2**70):
        outcomes = set()
        for _ in range(150):
            shape = tuple(rng.randint(2, 5) for _ in range(rng.randint(3, 5)))
            strides = tuple(big + rng.randint(20, 90) for _ in shape)
            overlap._internal_witness.cache_clear()
            witness = internal_overlap_witness(Layout(shape, strides))
            indices = [sum(i * s for i, s in zip(coord, strides, strict=True))
                       for coord in itertools.product(*map(range, shape))]
            assert (witness is not None) == (len(set(indices)) != len(indices)), (shape, strides)
            if witness is not None:
                _check_collision(Layout(shape, strides), witness)
            outcomes.add(witness is None)
            a = Layout(shape[:2], strides[:2], big)
            b = Layout(shape[2:], strides[2:], big + rng.randint(0, 400))
            shared = {a(*x) for x in itertools.product(*map(range, a.shape))} & \
                {b(*y) for y in itertools.product(*map(range, b.shape))}
            assert overlaps(a, b) == bool(shared), (a, b)
        assert outcomes == {True, False}


# -- hypothesis ----------------------------------------------------------------------------------
@given(layout=layouts())
def test_internal_overlap_matches_oracle(layout):
    _check_internal(layout)
    assert internal_overlap_witness(Layout(layout.shape, layout.strides, layout.offset + 7)) == \
        internal_overlap_witness(layout)  # the offset plays no part


@st.composite
def _wide_layouts(draw, max_rank=6, max_numel=3000):
    """Layouts of rank up to 6 with strides up to 500: many collisions lie beyond the fast proofs."""
    shape = []
    for _ in range(draw(st.integers(0, max_rank))):
        n = draw(st.integers(1, 7))
        if math.prod(shape) * n <= max_numel:
            shape.append(n)
    strides = [draw(st.integers(0, draw(st.sampled_from([8, 60, 500])))) for _ in shape]
    return Layout(tuple(shape), tuple(strides), draw(st.integers(0, 30)))


@given(layout=_wide_layouts())
def test_internal_overlap_of_wide_layouts_matches_oracle(layout):
    _check_internal(layout)


@given(a=layouts(), b=layouts())
def test_overlaps_matches_oracle(a, b):
    _check_pair(a, b)
    assert overlaps(a, b) == overlaps(b, a)


@given(a=_wide_layouts(max_rank=4, max_numel=400), b=_wide_layouts(max_rank=4, max_numel=400))
def test_overlaps_of_wide_layouts_matches_oracle(a, b):
    _check_pair(a, b)


@given(layout=layouts(), dim=st.integers(0, 3), size=st.integers(1, 5), step=st.integers(1, 4))
def test_unfold_windows_overlap_iff_step_below_size(layout, dim, size, step):
    """Neighbouring windows of ``unfold`` share elements exactly when ``step < size``."""
    if dim >= layout.ndim or size > layout.shape[dim]:
        return
    windows = views.unfold(layout, dim, size, step)
    _check_internal(windows)
    base_overlaps = has_internal_overlap(layout)
    n_windows = windows.shape[dim]
    if not base_overlaps and layout.strides[dim] > 0 and n_windows > 1 and layout.numel:
        assert has_internal_overlap(windows) == (step < size)


# -- fast paths ----------------------------------------------------------------------------------
def _forbid_search(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the exact search ran where a fast path decides")
    monkeypatch.setattr(overlap, "_solve", refuse)
    overlap._internal_witness.cache_clear()


@pytest.mark.parametrize("shape, strides, expected", [
    ((0, 5), (0, 0), None),                          # empty: nothing is addressed
    ((3, 0, 4), (1, 1, 1), None),
    ((), (), None),                                  # one element
    ((1, 1, 7), (0, 0, 1), None),                    # size-1 dims carry any stride
    ((4, 5), (5, 1), None),                          # contiguous
    ((5, 4), (1, 5), None),                          # transposed
    ((3, 4), (40, 3), None),                         # sliced with steps, gaps
    ((3, 4), (4, 0), ((0, 0), (0, 1))),              # expanded: stride 0 on a dim of size 4
    ((2, 1, 3), (0, 9, 1), ((0, 0, 0), (1, 0, 0))),
], ids=["empty-stride0", "empty-middle", "rank0", "size1-dims", "contiguous", "transposed",
        "sliced", "expanded", "expanded-leading"])
def test_fast_paths_decide_without_search(monkeypatch, shape, strides, expected):
    _forbid_search(monkeypatch)
    assert internal_overlap_witness(Layout(shape, strides)) == expected


def test_equal_strides_and_pairs_collide_immediately():
    overlap._internal_witness.cache_clear()
    assert internal_overlap_witness(Layout((2, 3), (1, 1))) == ((0, 1), (1, 0))
    # c = (s_j/g, -s_i/g) is the shortest collision of a pair: here (3, -2) over strides (2, 3)
    assert internal_overlap_witness(Layout((4, 3), (2, 3))) == ((0, 2), (3, 0))
    assert internal_overlap_witness(Layout((3, 3), (2, 3))) is None  # needs |c_0| = 3 > 2


def test_overlaps_fast_paths(monkeypatch):
    monkeypatch.setattr(overlap, "_solve", lambda *a, **k: pytest.fail("search ran"))
    a = Layout((4, 4), (4, 1), 0)
    assert overlap_witness(a, Layout((4, 4), (4, 1), 16)) is None       # disjoint ranges
    assert overlap_witness(a, Layout((0, 4), (4, 1), 0)) is None        # empty
    assert overlap_witness(a, Layout((4, 4), (4, 1), 0)) == ((0, 0), (0, 0))  # the same view


def test_overlaps_reads_concrete_offsets_and_refuses_traced_ones():
    a = Layout((4,), (1,), jnp.asarray(2))  # a concrete JAX scalar: its value is known
    assert overlaps(a, Layout((4,), (1,))) and not overlaps(a, Layout((2,), (1,)))
    assert overlaps(Layout((4,), (1,), np.int64(5)), Layout((4,), (1,))) is False
    seen = []

    def traced(k):
        with pytest.raises(LayoutError, match=re.escape("the offset of a (layout (4,):(1,)+<traced>) is not "
                                                        "one known integer")):
            overlaps(Layout((4,), (1,), k), Layout((4,), (1,)))
        seen.append(has_internal_overlap(Layout((4,), (1,), k)))  # internal overlap ignores it
        return k

    jax.jit(traced)(jnp.int32(2))
    assert seen == [False]


def test_negative_strides_are_solved_too():
    """The solver on plain tuples with negative strides (NumPy views, fs.flip) against brute force."""
    rng = random.Random(3)
    for _ in range(300):
        shape = tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 4)))
        strides = tuple(rng.randint(-9, 9) for _ in shape)
        witness = overlap._internal_witness(shape, strides)
        idx = sum(np.arange(n).reshape([-1 if d == e else 1 for e in range(len(shape))]) * s
                  for d, (n, s) in enumerate(zip(shape, strides, strict=True)))
        flat = np.broadcast_to(idx, shape).ravel()
        assert (witness is not None) == (len(np.unique(flat)) != flat.size), (shape, strides)
        if witness is not None:
            x, y = witness
            assert x != y and sum((i - j) * s for i, j, s in zip(x, y, strides, strict=True)) == 0


# -- layouts of 2^24 elements, checked against known facts ---------------------------------------
def _pair_collides(n: int, m: int, a: int, b: int) -> bool:
    """(n, m):(a, b) collides iff the shortest kernel vector (b/g, -a/g) fits the extents."""
    g = math.gcd(a, b)
    return b // g <= n - 1 and a // g <= m - 1


@pytest.mark.parametrize("strides", [(4095, 1), (4097, 4095), (4095, 4097), (6144, 4096), (4096 * 3, 4097),
                                     (1, 1), (8191, 2), (8190, 4)])
def test_2d_layouts_of_2_24_elements(strides):
    layout = Layout((4096, 4096), strides)
    witness = internal_overlap_witness(layout)
    assert (witness is not None) == _pair_collides(4096, 4096, *strides)
    if witness is not None:
        _check_collision(layout, witness)


def test_adversarial_2_24_examples():
    found = internal_overlap_witness(Layout((4096, 4096), (4095, 1)))
    assert found == ((0, 4095), (1, 0))  # 4095 * 1 == 1 * 4095
    # injective and not nested: the shortest collision (4095, -4097) exceeds extent 4096
    assert not has_internal_overlap(Layout((4096, 4096), (4097, 4095)))
    # the same map with a dim split (a bijective re-indexing): still injective, now rank 3 and 4
    assert not has_internal_overlap(Layout((4096, 64, 64), (4097, 64 * 4095, 4095)))
    assert not has_internal_overlap(Layout((64, 64, 64, 64), (64 * 4095, 4095, 64 * 4097, 4097)))
    # 65521 - 9 * 65537 + 8 * 65539 == 0, within the extents 256
    layout = Layout((256, 256, 256), (65521, 65537, 65539))
    _check_collision(layout, internal_overlap_witness(layout))
    # 2^24 elements over a storage of 301 slots must collide (pigeonhole)
    layout = Layout((2,) * 24, tuple(range(1, 25)))
    _check_collision(layout, internal_overlap_witness(layout))


def _conway_guy(n: int) -> list[int]:
    """n integers with distinct subset sums, far below powers of two (Conway-Guy sequence)."""
    u = [0, 1]
    for k in range(1, n):
        u.append(2 * u[k] - u[k - round(math.sqrt(2 * k))])
    return [u[n] - u[i] for i in range(n)]


def test_distinct_subset_sums_of_rank_24():
    """Extents 2 and strides with distinct subset sums: injective, 2^24 elements, nothing nests
    (the largest stride is below half of 2^23), so only the exact search can prove it."""
    strides = tuple(sorted(_conway_guy(24)))
    assert max(strides) < 2**22
    assert not has_internal_overlap(Layout((2,) * 24, strides), max_work=-1)  # exact, whatever it costs
    bumped = Layout((2,) * 24, strides[:-1] + (strides[-1] + 1,))
    witness = internal_overlap_witness(bumped, max_work=-1)
    assert witness is not None
    _check_collision(bumped, witness)


@pytest.mark.parametrize("size, step", [(256, 128), (256, 256), (256, 255), (300, 301), (2, 1)])
def test_unfold_of_a_long_signal(size, step):
    signal = Layout.contiguous((2**24 // size * step + size,))
    frames = views.unfold(signal, 0, size, step)
    assert frames.numel >= 2**24
    witness = internal_overlap_witness(frames)
    assert (witness is not None) == (step < size)
    if witness is not None:
        assert witness == ((0, step), (1, 0))


@pytest.mark.parametrize("kernel, step", [(4, 2), (4, 4), (3, 4), (5, 3)])
def test_im2col_windows_of_a_large_image(kernel, step):
    image = Layout.contiguous((4096, 4096))
    patches = views.unfold(views.unfold(image, 0, kernel, step), 1, kernel, step)
    witness = internal_overlap_witness(patches)
    assert (witness is not None) == (step < kernel)
    if witness is not None:
        _check_collision(patches, witness)


def test_large_pairs_of_views():
    n = 4096
    left, right = Layout((n, 2048), (n, 1), 0), Layout((n, 2048), (n, 1), 2048)
    assert not overlaps(left, right)                                  # x[:, :2048] vs x[:, 2048:]
    x, y = overlap_witness(Layout((n, 2049), (n, 1), 0), right)       # x[:, :2049] vs x[:, 2048:]
    assert x[1] == 2048 and y[1] == 0 and x[0] == y[0]                # only column 2048 is shared
    assert not overlaps(Layout((2**23,), (2,), 0), Layout((2**23,), (2,), 1))  # even vs odd
    diagonal = Layout((n,), (n + 1,), 0)
    assert not overlaps(diagonal, Layout((n - 1,), (n + 1,), 1))     # diagonal vs superdiagonal
    x, y = overlap_witness(diagonal, Layout((n, n - 1), (n, 1), 1))  # diagonal vs x[:, 1:]
    assert diagonal(*x) == Layout((n, n - 1), (n, 1), 1)(*y)
    transposed = Layout((n, n), (1, n), 0)
    x, y = overlap_witness(transposed, Layout((n - 1, n), (n, 1), n))  # x.T vs x[1:]
    assert transposed(*x) == n + y[0] * n + y[1]
    frames = Layout((2**16, 256), (128, 1), 0)
    assert overlaps(frames, Layout((2**16, 256), (128, 1), 64))      # frames vs frames shifted


# -- parity with PyTorch and NumPy ---------------------------------------------------------------
@given(layout=layouts() | _wide_layouts())
def test_agrees_with_torch_where_torch_decides(layout):
    torch = import_torch()
    storage = torch.empty(max(layout.required_storage_size, 1))
    view = storage.as_strided(layout.shape, layout.strides, layout.offset)
    verdict = torch._debug_has_internal_overlap(view)
    if verdict in (0, 1):
        assert has_internal_overlap(layout) == bool(verdict)


def test_decides_where_torch_says_too_hard():
    torch = import_torch()
    cases = [((3, 4), (1, 1)), ((4, 3), (2, 3)), ((3, 3), (2, 3)), ((4096, 4096), (4097, 4095))]
    for shape, strides in cases:
        layout = Layout(shape, strides)
        tensor = torch.empty(layout.required_storage_size).as_strided(shape, strides)
        assert torch._debug_has_internal_overlap(tensor) == 2  # MemOverlap::TooHard
        expected = _pair_collides(*shape, *strides)
        assert has_internal_overlap(layout) == expected
        if layout.numel < 5000:
            assert fs.oracle.has_internal_overlap(layout) == expected


def _numpy_view(buffer: np.ndarray, layout: Layout) -> np.ndarray:
    return np_as_strided(buffer[layout.offset:], layout.shape, layout.strides)  # uint8: bytes == elements


@given(a=layouts() | _wide_layouts(max_numel=200), b=layouts() | _wide_layouts(max_numel=200))
def test_agrees_with_numpy_shares_memory(a, b):
    buffer = np.zeros(max(a.required_storage_size, b.required_storage_size, a.offset, b.offset) + 1, np.uint8)
    assert overlaps(a, b) == np.shares_memory(_numpy_view(buffer, a), _numpy_view(buffer, b), max_work=None)


@given(layout=layouts() | _wide_layouts())
def test_agrees_with_numpy_internal_overlap(layout):
    tests = pytest.importorskip("numpy._core._multiarray_tests", reason="NumPy's test helpers are not built")
    buffer = np.zeros(layout.required_storage_size + layout.offset + 1, np.uint8)
    assert has_internal_overlap(layout) == bool(tests.internal_overlap(_numpy_view(buffer, layout)))


# -- worked examples -----------------------------------------------------------------------------
def test_worked_examples():
    """Over ``arange`` storages the values are the indices: overlap iff a value repeats."""
    checked = 0
    for case in seed_cases():
        for step in case["expect"]["steps"]:
            layout = Layout(step["shape"], step["strides"], step["offset"])
            _check_internal(layout)
            checked += 1
        want = case["expect"]
        if "arange" in case["storage"] and "values" in want:
            layout = Layout(want["shape"], want["strides"], want["offset"])
            assert has_internal_overlap(layout) == (len(set(want["values"])) != len(want["values"]))
    assert checked > 0

"""Tests of functional_strides._src.core.canonical: canonical form and structured read plans.

Every plan is checked by its defining property: the canonical form, and a box read
simulated in NumPy from the plan's pitches/steps/origin, address exactly the storage indices
that the oracle enumerates for the original layout.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import sliced_permuted_expanded

from functional_strides import oracle
from functional_strides._src.core.canonical import Box, box, canonicalize, inner_box_start, split_windows
from functional_strides._src.core.layout import Layout

_PAD = -1  # marks padding in simulated reads: never a storage index


@st.composite
def layouts(draw, max_rank=4, max_extent=5, max_stride=12):
    shape = tuple(draw(st.lists(st.integers(0, max_extent), max_size=max_rank)))
    strides = tuple(draw(st.integers(0, max_stride)) for _ in shape)
    return Layout(shape, strides, draw(st.integers(0, 6)))


@st.composite
def canonical_dims(draw, max_rank=4, min_extent=2):
    """Dims as canonicalize emits them: extents >= 2, strides >= 1, strides non-increasing
    (``min_extent=1``: also extent-1 dims, as the windows plans build)."""
    dims = draw(st.lists(st.tuples(st.integers(min_extent, 6), st.integers(1, 40)), max_size=max_rank))
    return tuple(sorted(dims, key=lambda d: -d[1]))


def canonical_indices(layout: Layout) -> np.ndarray:
    """Storage index of every element, read through the canonical form (NumPy)."""
    c = canonicalize(layout)
    idx = c.layout().indices().transpose(c.perm)
    kept = c.kept
    full = [layout.shape[d] if d in kept else 1 for d in range(layout.ndim)]
    return np.broadcast_to(idx.reshape(full), layout.shape)


def read_box(storage: np.ndarray, offset: int, b: Box) -> np.ndarray:
    """The box read of the lowering, spelled in NumPy from the plan (padding is _PAD)."""
    if len(b.dims) < 2:
        stop = offset + (b.reach if b.dims else 1)
        return storage[offset:stop:b.pitches[0] if b.dims else 1].reshape(b.shape)
    base, starts = b.origin(offset)
    rows, pitch = b.dims[0][0], b.pitches[0]
    region = storage[base:base + rows * pitch]
    x = np.concatenate([region, np.full(rows * pitch - region.size, _PAD)]).reshape(rows, pitch)
    for p, sub in zip(b.grid, b.pitches[1:], strict=True):
        x = x[..., :p * sub]
        x = x.reshape(*x.shape[:-1], p, sub)
    x = x.reshape(x.shape[:-1])  # the last pitch is 1
    levels = zip(starts, b.dims, b.steps, strict=True)
    return x[tuple(slice(a, a + (n - 1) * t + 1, t) for a, (n, _), t in levels)]


# -- canonicalize ---------------------------------------------------------------------------

@given(layout=layouts())
def test_canonical_form_addresses_the_same_storage_indices(layout):
    expected = oracle.element_indices(layout).reshape(layout.shape)
    if layout.is_empty:
        assert canonicalize(layout).empty and canonicalize(layout).dims == ()
        return
    np.testing.assert_array_equal(canonical_indices(layout), expected)


@given(layout=layouts())
def test_canonical_form_invariants(layout):
    c = canonicalize(layout)
    if c.empty:
        return
    assert all(n >= 2 and s >= 1 for n, s in c.dims)
    assert [s for _, s in c.dims] == sorted((s for _, s in c.dims), reverse=True)
    assert sorted(c.perm) == list(range(len(c.dims)))
    assert c.numel * math.prod(layout.shape[d] for d in c.broadcast) == layout.numel
    # groups partition the read dims; each group is a run of user dims that merge
    assert sorted(c.kept + c.broadcast) == [d for d, n in enumerate(layout.shape) if n > 1]
    for (n, s), group in zip(c.dims, c.groups, strict=True):
        assert n == math.prod(layout.shape[d] for d in group) and s == layout.strides[group[-1]]
        pairs = zip(group, group[1:], strict=False)
        assert all(layout.strides[a] == layout.shape[b] * layout.strides[b] for a, b in pairs)
    # neighbouring groups in user order never merge further
    user = [c.groups[a] for a in c.perm]
    for g, h in zip(user, user[1:], strict=False):
        assert layout.strides[g[-1]] != layout.shape[h[0]] * layout.strides[h[0]]
    assert all(layout.strides[d] == 0 for d in c.broadcast)


@pytest.mark.parametrize(
    ("layout", "dims", "broadcast", "perm"),
    [
        (Layout((2, 3, 4), (12, 4, 1), 5), ((24, 1),), (), (0,)),
        (Layout((4, 4), (1, 4)), ((4, 4), (4, 1)), (), (1, 0)),
        (Layout((1, 5, 1), (9, 2, 0)), ((5, 2),), (), (0,)),
        (Layout((3, 4), (0, 1)), ((4, 1),), (0,), (0,)),
        (Layout((32, 56, 56, 64), (200704, 56, 1, 3136)),
         ((32, 200704), (64, 3136), (3136, 1)), (), (0, 2, 1)),
        (Layout((16, 16, 1024, 64), (2**20, 64, 1024, 1)),
         ((16, 2**20), (1024, 1024), (16, 64), (64, 1)), (), (0, 2, 1, 3)),
        (Layout((), ()), (), (), ()),
    ],
    ids=["contiguous", "transpose", "size-1 dims", "expanded row", "nchw-to-nhwc", "heads", "rank 0"],
)
def test_canonical_examples(layout, dims, broadcast, perm):
    c = canonicalize(layout)
    assert (c.dims, c.broadcast, c.perm) == (dims, broadcast, perm)


def test_canonical_keeps_a_traced_offset_untouched():
    marker = object()
    layout = object.__new__(Layout)
    for name, value in (("shape", (2, 3)), ("strides", (1, 2)), ("offset", marker)):
        object.__setattr__(layout, name, value)
    assert canonicalize(layout).offset is marker


# -- box ------------------------------------------------------------------------------------

@given(dims=canonical_dims(min_extent=1), offset=st.integers(0, 50), slack=st.integers(0, 3))
def test_box_read_addresses_exactly_the_layout(dims, offset, slack):
    b = box(dims)
    layout = Layout(tuple(n for n, _ in dims), tuple(s for _, s in dims), offset)
    if b is None:
        return
    storage = np.arange(layout.required_storage_size + slack)
    got = read_box(storage, offset, b)
    np.testing.assert_array_equal(got, layout.indices())
    assert all(sub <= pitch and s % sub == 0 for sub, pitch, (_, s) in
               zip(b.pitches[1:], b.pitches, b.dims[1:], strict=False))


@given(dims=canonical_dims())
def test_box_is_none_for_overlapping_dims(dims):
    layout = Layout(tuple(n for n, _ in dims), tuple(s for _, s in dims))
    if oracle.has_internal_overlap(layout):
        assert box(dims) is None


@given(case=sliced_permuted_expanded())
def test_slicing_permutation_and_expansion_always_give_a_box(case):
    layout, storage_size = case
    c = canonicalize(layout)
    if c.empty:
        return
    b = box(c.dims)
    assert b is not None, f"no box for {layout} (canonical dims {c.dims})"
    np.testing.assert_array_equal(read_box(np.arange(storage_size), c.offset, b), c.layout().indices())


@given(dims=canonical_dims(min_extent=1), offset=st.integers(0, 50))
def test_box_origin_is_aligned_or_the_offset(dims, offset):
    b = box(dims)
    if b is None or len(dims) < 2:
        return
    base, starts = b.origin(offset)
    assert starts[0] == 0
    assert base == offset or (base % dims[0][1] == 0 and base <= offset)
    assert base + sum(a * p for a, p in zip(starts[1:], b.pitches[1:], strict=True)) == offset


def test_box_examples():
    assert box(()) == Box((), (), ())
    assert box(((5, 3),)) == Box(((5, 3),), (3,), (1,))
    every_other = box(((2048, 8192), (2048, 2)))
    assert (every_other.pitches, every_other.steps) == ((8192, 1), (1, 2))
    assert every_other.origin(4097) == (0, (0, 4097))
    assert box(((2, 20), (2, 6), (2, 2))).pitches == (20, 6, 1)
    assert box(((3, 4), (3, 2))) is None  # (3-1)*2 >= 4: the rows overlap


# -- windows --------------------------------------------------------------------------------

@given(dims=canonical_dims())
def test_split_windows_recomposes_the_dims(dims):
    w = split_windows(dims)
    if box(dims) is not None:
        assert w is None
        return
    assert (*w.outer, (w.count, w.step), *w.inner) == dims
    assert box(w.inner) is not None and len(w.inner) >= 1
    assert inner_box_start(dims) == len(w.outer) + 1
    assert w.shifts == math.ceil(w.reach / w.step) and w.shifts * w.step >= w.reach


def test_split_windows_of_unfold():
    w = split_windows(((16381, 256), (1024, 1)))  # a 4M-sample signal framed 1024/256
    assert (w.outer, w.count, w.step, w.inner, w.shifts) == ((), 16381, 256, ((1024, 1),), 4)
    assert w.shifted.dims == ((16384, 256), (256, 1)) and w.stacked.dims == ((1024, 1),)
    # 3x3 patches of an 8x8 image, (6, 6, 3, 3):(8, 1, 8, 1), sorted by stride
    patches = split_windows(((6, 8), (3, 8), (6, 1), (3, 1)))
    assert (patches.outer, patches.count, patches.step, patches.inner) == (((6, 8), (3, 8)), 6, 1, ((3, 1),))

"""Tiled views: CuTe layouts applied to ``StridedArray``\\ s, checked against NumPy block reshapes."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import given
from hypothesis import strategies as st

import functional_strides as fs
from functional_strides import LayoutError, cute
from functional_strides.cute import Layout


def _identity(f):
    return f


@given(st.lists(st.integers(1, 4), min_size=0, max_size=3), st.integers(0, 5), st.data())
def test_to_and_from_layout_round_trip_and_agree_on_coordinates(shape, offset, data):
    strides = tuple(data.draw(st.lists(st.integers(0, 9), min_size=len(shape), max_size=len(shape))))
    flat = fs.Layout(tuple(shape), strides, offset)
    c = cute.from_layout(flat)
    assert cute.to_layout(c, offset) == flat
    for k in range(cute.size(c)):
        crd = np.unravel_index(k, shape, order="F") if shape else ()
        assert c(k) + offset == flat(*(int(i) for i in crd))   # CuTe's 1-D index is colexicographic


def test_to_layout_flattens_the_hierarchy_in_mode_order():
    c = Layout(((2, 3), 4), ((1, 2), 6))
    flat = cute.to_layout(c, offset=3)
    assert (flat.shape, flat.strides, flat.offset) == ((2, 3, 4), (1, 2, 6), 3)
    assert all(c(((i, j), k)) + 3 == flat(i, j, k) for i in range(2) for j in range(3) for k in range(4))


def test_to_layout_errors():
    with pytest.raises(LayoutError, match=re.escape("a ComposedLayout (swizzle) is not a strided layout")):
        cute.to_layout(cute.composition(cute.Swizzle(1, 0, 1), Layout(4)))
    with pytest.raises(LayoutError, match=re.escape("addresses storage indices -1 to 2")):
        cute.to_layout(Layout(4, -1), offset=2)  # a negative stride needs room below the offset
    flat = cute.to_layout(Layout(4, -1), offset=3)
    assert (flat.shape, flat.strides, flat.offset) == ((4,), (-1,), 3)
    assert flat.indices().tolist() == [3, 2, 1, 0]


def _blocks(a, tiles):
    """NumPy oracle: ``a`` of shape (m*t0, n*t1, ...) as (m, n, ..., t0, t1, ...) blocks."""
    r = len(tiles)
    split = [x for d, t in enumerate(tiles) for x in (a.shape[d] // t, t)]
    b = a.reshape(*split, *a.shape[r:])
    rest, tile = list(range(0, 2 * r, 2)), list(range(1, 2 * r, 2))
    return b.transpose(*rest, *range(2 * r, b.ndim), *tile)


@pytest.mark.parametrize("transform", [jax.jit, _identity], ids=["jit", "eager"])
@examples(5)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3)), min_size=1, max_size=3),
       st.integers(0, 2), st.integers(0, 3), st.booleans())
def test_tile_is_the_blocked_array(transform, dims, extra, offset, transposed):
    tiles = tuple(t for _, t in dims)
    shape = tuple(m * t for m, t in dims) + (2,) * extra
    transposed = transposed and len(shape) >= 2
    stored = shape[:-2] + shape[-2:][::-1] if transposed else shape
    base = np.arange(offset + int(np.prod(stored)), dtype=np.float32)
    x = fs.as_strided(base, stored, fs.contiguous_strides(stored), offset)
    if transposed:   # a non-contiguous source
        x = x.mT
    a = np.asarray(x)
    assert a.shape == shape
    y = cute.tile(x, tiles)
    assert y.storage is x.storage and y.storage_offset() == x.storage_offset()
    want = _blocks(a, tiles)
    got = transform(lambda v: jnp.asarray(v))(y)
    np.testing.assert_array_equal(np.asarray(got).reshape(want.shape), want)


@examples(7)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_logical_divide_of_an_array(m, n, tm, tn):
    a = np.arange(m * tm * n * tn).reshape(m * tm, n * tn)
    y = cute.logical_divide(fs.from_array(a), (tm, tn))
    want = a.reshape(m, tm, n, tn).transpose(1, 0, 3, 2)   # (tile_0, rest_0, tile_1, rest_1)
    np.testing.assert_array_equal(np.asarray(y), want)
    divided = cute.logical_divide(cute.from_layout(fs.from_array(a).layout), (tm, tn))
    assert cute.from_layout(y.layout) == cute.flatten(divided)


def test_tiled_transpose():
    a = np.arange(24.0).reshape(4, 6)
    x = fs.from_array(a)
    tiles = cute.tile(x, (2, 3))                       # (2, 2, 2, 3): tile (i, j) is a[2i:2i+2, 3j:3j+3]
    np.testing.assert_array_equal(np.asarray(tiles[1, 0]), a[2:4, 0:3])
    # transpose = swap the tile grid and transpose inside each tile: still a view of the same storage
    t = tiles.permute(1, 0, 3, 2)
    out = np.asarray(t).transpose(0, 2, 1, 3).reshape(6, 4)
    np.testing.assert_array_equal(out, a.T)


def test_tile_with_a_strided_layout_tile():
    a = np.arange(16).reshape(16)
    y = cute.tile(fs.from_array(a), (Layout(4, 2),))   # tiles of every other element
    # the rest modes (2, 2):(1, 8) (the complement of 4:2 in 16) stay two dims: start 1 and start 8
    assert y.shape == (2, 2, 4) and y.stride() == (1, 8, 2)
    want = [[[0, 2, 4, 6], [8, 10, 12, 14]], [[1, 3, 5, 7], [9, 11, 13, 15]]]
    np.testing.assert_array_equal(np.asarray(y), want)


def test_logical_divide_keeps_working_on_layouts():
    assert cute.logical_divide(Layout(16), Layout(4, 2)) == Layout((4, (2, 2)), (2, (1, 8)))


@pytest.mark.parametrize(("shape", "tiler", "message"), [
    ((4, 6), (3, 3), "tile 3 does not divide dim 0 of extent 4"),
    ((4, 6), (2, 2, 2), "one tile (an int or a cute.Layout) for each of the first 1..2 dims"),
    ((0, 6), (2, 2), "is empty"),
    ((4, 6), (5,), "tile 5 does not divide dim 0 of extent 4"),
], ids=["not-dividing", "too-long", "empty", "too-big"])
def test_tile_errors(shape, tiler, message):
    x = fs.from_array(np.zeros(shape))
    with pytest.raises(LayoutError, match=re.escape(message)):
        cute.tile(x, tiler)


def test_tile_refuses_plain_arrays():
    with pytest.raises(LayoutError, match=re.escape("x must be a StridedArray (got ndarray)")):
        cute.tile(np.zeros((4, 4)), (2, 2))


def test_tiles_write_through():
    x = fs.from_array(jnp.zeros((4, 4)))
    y = cute.tile(x, (2, 2))
    z = y.at[1, 1].set(jnp.ones((2, 2)))
    np.testing.assert_array_equal(np.asarray(z.storage).reshape(4, 4)[2:, 2:], np.ones((2, 2)))


# -- the flat code's dim merging is CuTe's coalesce ------------------------------------------------
@st.composite
def _view_cases(draw):
    shape = tuple(draw(st.lists(st.sampled_from([1, 1, 2, 3, 4]), min_size=1, max_size=4)))
    strides = tuple(draw(st.lists(st.integers(0, 12), min_size=len(shape), max_size=len(shape))))
    if draw(st.booleans()):   # often a dense block, permuted or sliced
        strides = fs.contiguous_strides(shape)
        if draw(st.booleans()) and len(shape) > 1:
            strides = tuple(s * draw(st.sampled_from([1, 2])) for s in strides)
    numel = int(np.prod(shape))
    factors = [f for p in (2, 3) for f in [p] * _multiplicity(numel, p)]
    cut = sorted(draw(st.lists(st.integers(0, len(factors)), max_size=3)))
    parts = [int(np.prod(factors[a:b])) for a, b in zip([0, *cut], [*cut, len(factors)], strict=True)]
    ones = draw(st.lists(st.integers(0, len(parts)), max_size=2))
    for i in ones:
        parts.insert(i, 1)
    return shape, strides, tuple(parts)


def _multiplicity(n, p):
    k = 0
    while n % p == 0 and n > 1:
        n //= p
        k += 1
    return k


@given(_view_cases())
def test_view_strides_equal_torch(case):
    torch = import_torch()
    shape, strides, new_shape = case
    span = sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1
    t = torch.as_strided(torch.zeros(span), shape, strides)
    try:
        want = tuple(t.view(new_shape).stride())
    except RuntimeError:
        want = None
    assert fs.views.view_strides(shape, strides, new_shape) == want


def test_canonical_form_uses_coalesce():
    from functional_strides._src.core.canonical import canonicalize
    flat = fs.Layout((2, 1, 3, 4), (12, 5, 4, 1))
    c = canonicalize(flat)
    merged = cute.coalesce(cute.Layout(flat.shape[::-1], flat.strides[::-1]))
    assert c.dims == ((24, 1),) and merged == Layout(24, 1)

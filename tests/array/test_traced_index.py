"""Traced indices (``select``/``narrow``/``[]`` inside ``jit``/``vmap``) on dims and strides
past int32: the offset arithmetic takes the width the values need (int32 when they fit, int64
under ``jax_enable_x64``), refuses with ``StorageError`` when they need 64 bits and x64 is off,
and never overflows in Python or wraps silently. Huge storages are never allocated: expanded
(stride-0) dims of tiny storages, layouts without storage, and ``jax.ShapeDtypeStruct``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples
from hypothesis import given
from hypothesis import strategies as st

import functional_strides as fs
from functional_strides import Layout, StorageError, StridedArray, views
from functional_strides._src.lowering.reads import materialize

BIG = 2**31 + 5  # an extent past int32
X64_MESSAGE = r"jax\.config\.update\('jax_enable_x64', True\)"

TRANSFORMS = [pytest.param(jax.jit, id="jit"),
              pytest.param(lambda f: lambda i: jax.vmap(f)(jnp.stack([i, i]))[0], id="vmap")]


def _clamp(i: int, n: int, high: int) -> int:
    """Reference: a negative index counts from the end, then clamp into [0, high]."""
    return min(max(i + n if i < 0 else i, 0), high)


def _expanded() -> StridedArray:
    """A (3, 2^31+5) view of a 3-element storage: dim 1 expanded (stride 0)."""
    return fs.from_array(jnp.arange(3.0)).reshape(3, 1).expand(3, BIG)


# -- expanded dims past int32: every entry point, the values exact ---------------------------

ENTRY_POINTS = {
    "select": (lambda x, i: x.select(1, i), [0.0, 1.0, 2.0]),
    "narrow": (lambda x, i: x.narrow(1, i, 2), [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]),
    "getitem-int": (lambda x, i: x[:, i], [0.0, 1.0, 2.0]),
    "getitem-int-then-slice": (lambda x, i: x[1:, i], [1.0, 2.0]),
    "getitem-slice-of-select": (lambda x, i: x.select(1, i)[1:], [1.0, 2.0]),
    "select-dim0-then-slice": (lambda x, i: x.select(0, i)[BIG - 3:], None),
}


@pytest.mark.sampled(4)
@pytest.mark.parametrize("name", list(ENTRY_POINTS))
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("index", [0, 7, -1, -(2**31), 2**31 - 1])
def test_traced_index_on_an_expanded_dim_past_int32(name, transform, index):
    op, expected = ENTRY_POINTS[name]
    x = _expanded()
    got = transform(lambda i: jnp.asarray(op(x, i)))(jnp.int32(index))
    if expected is None:  # row clamp(index) of x, its last 3 elements
        expected = [float(_clamp(index, 3, 2))] * 3
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_expanded_dim_keeps_a_static_offset():
    # the clamped index of a stride-0 dim adds nothing: the view keeps its Python-int offset
    x = _expanded()
    seen = []
    jax.eval_shape(lambda i: seen.extend([x.select(1, i).storage_offset(),
                                          x.narrow(1, i, 5).storage_offset()]), jnp.int32(3))
    assert seen == [0, 0] and all(type(k) is int for k in seen)
    for index_dtype in (jnp.int8, jnp.uint8, jnp.uint32, jnp.int16):
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda i: jnp.asarray(x[:, i]))(index_dtype(5))),
                                      [0.0, 1.0, 2.0])


# -- the clamp computed in int32 whatever the extent -------------------------------------------

@given(n=st.sampled_from([1, 2, 5, 2**31 - 1, 2**31, 2**31 + 1, BIG, 2**32 + 3, 2**40]),
       high=st.integers(0, 2**31 - 1), index=st.integers(-(2**31), 2**31 - 1))
@examples(20)
def test_narrow_clamps_in_int32_for_any_extent(n, high, index):
    # narrow(0, i, n - high) of a stride-1 dim: offset = clamp(i) in [0, high], which fits int32
    # even where the extent does not
    high = min(high, n)
    layout = Layout((n,), (1,))
    got = _narrow_offset(layout, n - high, jnp.int32(index))
    assert got.dtype == jnp.int32
    assert int(got) == _clamp(index, n, high)


def _narrow_offset(layout, length, i):
    return jax.jit(lambda i: jnp.asarray(views.narrow(layout, 0, i, length).offset))(i)


@pytest.mark.parametrize("index", [-5, -1, 0, 1, 3, 9])
def test_narrow_index_dtypes(index):
    layout = Layout((8,), (3,), 2)  # offsets 2 + 3 * clamp(i) for narrow(0, i, 4): clamp into [0, 4]
    expected = 2 + 3 * _clamp(index, 8, 4)
    for dtype in (jnp.int8, jnp.int16, jnp.int32):
        assert int(jax.jit(lambda i: views.narrow(layout, 0, i, 4).offset)(dtype(index))) == expected
    if index >= 0:
        for dtype in (jnp.uint8, jnp.uint32):
            assert int(jax.jit(lambda i: views.narrow(layout, 0, i, 4).offset)(dtype(index))) == expected
    # an unsigned index never counts from the end: past the end it clamps to the last start
    assert int(jax.jit(lambda i: views.narrow(layout, 0, i, 4).offset)(jnp.uint32(2**32 - 1))) == 2 + 3 * 4


# -- large strides: int32 when the offsets fit, StorageError without x64 otherwise -------------

LARGE = {
    "select": lambda lay, i: views.select(lay, 0, i),
    "narrow": lambda lay, i: views.narrow(lay, 0, i, 1),
    "getitem": lambda lay, i: views.getitem(lay, (i,)),
}


@pytest.mark.parametrize("name", list(LARGE))
def test_large_strides_that_fit_int32(name):
    layout = Layout((2, 3), (2**30 - 1, 1), 5)  # offsets up to 5 + 2^30 - 1
    got = jax.jit(lambda i: LARGE[name](layout, i).offset)(jnp.int32(1))
    assert got.dtype == jnp.int32 and int(got) == 5 + 2**30 - 1


@pytest.mark.parametrize("name", list(LARGE))
@pytest.mark.parametrize("layout", [Layout((4, 2), (2**30, 1)), Layout((2, 2), (2**30, 1), 2**30),
                                    Layout((3, 2), (2**31, 1))], ids=str)
def test_large_strides_without_x64_raise_storage_error(name, layout):
    with pytest.raises(StorageError, match=rf"{name}: a traced index or offset into layout .* {X64_MESSAGE}"):
        jax.jit(lambda i: LARGE[name](layout, i).offset)(jnp.int32(1))
    with pytest.raises(StorageError, match=X64_MESSAGE):
        jax.vmap(lambda i: LARGE[name](layout, i).offset)(jnp.arange(2, dtype=jnp.int32))


def test_large_strides_through_a_storage_without_x64():
    # the same refusal when the view is read from a storage past int32 (never allocated)
    big = jax.ShapeDtypeStruct((3 * 2**30 + 2,), jnp.float32)

    def read(s, i):
        return jnp.asarray(StridedArray(s, Layout((4, 2), (2**30, 1))).select(0, i))

    with pytest.raises(StorageError, match=X64_MESSAGE):
        jax.jit(read).lower(big, jax.ShapeDtypeStruct((), jnp.int32))


@pytest.mark.parametrize("name", list(LARGE))
def test_large_strides_with_x64_use_int64(name):
    layout = Layout((4, 2), (2**30, 1), 3)
    with jax.enable_x64(True):
        f = jax.jit(lambda i: LARGE[name](layout, i).offset)
        for index in (3, -1, 2**31 - 1, -(2**31)):
            got = f(jnp.int32(index))
            assert got.dtype == jnp.int64
            assert int(got) == 3 + 2**30 * _clamp(index, 4, 3 if name != "narrow" else 3)
        assert int(f(jnp.int64(2**40))) == 3 + 3 * 2**30  # a wide index clamps in its own width
        batched = jax.vmap(lambda i: LARGE[name](layout, i).offset)(jnp.asarray([2, -1], jnp.int32))
        assert batched.dtype == jnp.int64 and batched.tolist() == [3 + 2 * 2**30, 3 + 3 * 2**30]
        # and the read lowers with 64-bit indices over a storage past int32
        big = jax.ShapeDtypeStruct((3 * 2**30 + 5,), jnp.float32)
        text = jax.jit(lambda s, i: jnp.asarray(StridedArray(s, layout).select(0, i))).lower(
            big, jax.ShapeDtypeStruct((), jnp.int32)).as_text()
        assert "i64" in text


def test_extent_past_int32_with_x64():
    layout = Layout((BIG,), (1,))
    with jax.enable_x64(True):
        select = jax.jit(lambda i: views.select(layout, 0, i).offset)
        assert [int(select(jnp.int32(i))) for i in (-1, -(2**31), 7)] == [BIG - 1, BIG - 2**31, 7]
        assert int(select(jnp.int64(-BIG - 3))) == 0
    with pytest.raises(StorageError, match=X64_MESSAGE):  # offsets up to BIG - 1 need int64
        jax.jit(lambda i: views.select(layout, 0, i).offset)(jnp.int32(0))


# -- static shifts of a traced offset (slices, narrow, diagonal of a dynamic view) -------------

@pytest.mark.parametrize("op", [
    pytest.param(lambda lay: views.getitem(lay, (slice(1, None),)), id="getitem-slice"),
    pytest.param(lambda lay: views.narrow(lay, 0, 1, 1), id="narrow"),
    pytest.param(lambda lay: views.select(lay, 0, 1), id="select"),
    pytest.param(lambda lay: views.diagonal(Layout((2, 2), (lay.strides[0], 1), lay.offset), -1),
                 id="diagonal"),
])
def test_static_shift_of_a_traced_offset(op):
    fits = Layout((2,), (2**30,))
    got = jax.jit(lambda k: op(Layout(fits.shape, fits.strides, k)).offset)(jnp.int32(7))
    assert got.dtype == jnp.int32 and int(got) == 7 + 2**30
    wide = Layout((2,), (2**31,))
    with pytest.raises(StorageError, match=X64_MESSAGE):
        jax.jit(lambda k: op(Layout(wide.shape, wide.strides, k)).offset)(jnp.int32(7))
    with jax.enable_x64(True):
        got = jax.jit(lambda k: op(Layout(wide.shape, wide.strides, k)).offset)(jnp.int32(7))
        assert got.dtype == jnp.int64 and int(got) == 7 + 2**31


def test_chained_traced_indices():
    x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
    got = jax.jit(lambda i, j: jnp.asarray(x[i][j, 1:]))(jnp.int32(1), jnp.int32(-1))
    np.testing.assert_array_equal(np.asarray(got), np.arange(24.0).reshape(2, 3, 4)[1, -1, 1:])


# -- lowering: a wide offset never wraps into range -----------------------------------------------

@pytest.mark.parametrize(("offset", "clamped"), [(2**32 + 1, 8), (-(2**32) + 1, 0), (2**31 + 2, 8)])
def test_int64_offset_past_the_storage_is_clamped_in_its_own_width(offset, clamped):
    storage = jnp.arange(10.0)
    with jax.enable_x64(True):
        read = jax.jit(lambda k: materialize(storage, Layout((2,), (1,), k)))(jnp.int64(offset))
        written = jax.jit(lambda k: StridedArray(storage, Layout((2,), (1,), k)).at[...].add(1.0).storage)(
            jnp.int64(offset))
        inside = jax.jit(lambda k: materialize(storage, Layout((2,), (1,), k)))(jnp.int64(3))
    # int32 truncation would have read storage[1], storage[2] for 2^32 + 1
    np.testing.assert_array_equal(np.asarray(read), [clamped, clamped + 1.0])
    expected = np.arange(10.0)
    expected[clamped:clamped + 2] += 1.0
    np.testing.assert_array_equal(np.asarray(written), expected)
    np.testing.assert_array_equal(np.asarray(inside), [3.0, 4.0])


def test_traced_offset_with_a_span_past_int32_needs_x64():
    # 5 * 2^30 wraps to 2^30 in int32: the element would silently read storage[k + 2^30]
    big = jax.ShapeDtypeStruct((2**30 + 10,), jnp.float32)

    def read(s, k):
        return materialize(s, Layout((6,), (2**30,), k))

    with pytest.raises(StorageError, match=X64_MESSAGE):
        jax.jit(read).lower(big, jax.ShapeDtypeStruct((), jnp.int32))

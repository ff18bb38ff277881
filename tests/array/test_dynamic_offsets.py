"""The offset is a pytree leaf: views passed into ``jit`` compile once per (shape, strides,
storage shape and dtype), keep the structured lowering through ``dynamic_slice``, clamp a
traced offset into the storage, and map under ``vmap`` with shared or per-item offsets."""

import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import sliced_permuted_expanded

import functional_strides as fs
from functional_strides import Layout, StorageError, StridedArray, oracle

READ_METHODS = ("structured", "row_gather", "gather")
WRITE_METHODS = ("block", "structured", "row_scatter", "scatter")


def test_moving_window_compiles_once():
    """A window at an array offset (a pytree leaf) compiles once for every offset."""
    base = fs.from_array(jnp.arange(10000.0))
    f = jax.jit(chex.assert_max_traces(n=1)(lambda v: jnp.asarray(v).sum()))
    for i in range(50):
        window = base.as_strided((64,), (1,), jnp.asarray(i))
        assert float(f(window)) == float(np.arange(i, i + 64).sum())
    assert f._cache_size() == 1


def test_int_offsets_are_static_and_key_the_compile():
    """A Python int offset is static metadata, like shape and strides: each one compiles."""
    base = fs.from_array(jnp.arange(100.0))
    f = jax.jit(lambda v: jnp.asarray(v).sum())
    for i in (0, 1, 2, 1):
        assert float(f(base[i:i + 8])) == float(np.arange(i, i + 8).sum())
    assert f._cache_size() == 3
    assert jax.tree_util.tree_leaves(base[2:10]) == [base.storage]
    assert len(jax.tree_util.tree_leaves(base.as_strided((8,), (1,), jnp.asarray(2)))) == 2


def test_new_strides_or_storage_shape_retrace():
    chex.clear_trace_counter()
    f = jax.jit(chex.assert_max_traces(n=3)(lambda v: jnp.asarray(v)))
    x = fs.from_array(jnp.arange(64.0).reshape(8, 8))
    at = lambda v, offset: v.as_strided(v.shape, v.stride(), jnp.asarray(offset))  # noqa: E731
    f(at(x[1:5, 2:6], 10))
    f(at(x[3:7, 0:4], 24))               # another array offset: same program
    f(at(x.t()[1:5, 2:6], 17))            # other strides: one more
    f(at(fs.from_array(jnp.arange(65.0))[:64].view(8, 8)[1:5, 2:6], 10))  # other storage shape: one more
    assert f._cache_size() == 3


def test_layout_as_static_argument_keys_on_the_offset():
    f = jax.jit(lambda s, lay: jnp.asarray(StridedArray(s, lay)), static_argnums=1)
    s = jnp.arange(10.0)
    assert f(s, Layout((2, 2), (3, 1), 1)).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert f(s, Layout((2, 2), (3, 1), 2)).tolist() == [[2.0, 3.0], [5.0, 6.0]]
    assert f._cache_size() == 2


@given(case=sliced_permuted_expanded())
def test_traced_offset_keeps_the_structured_lowering(case):
    layout, size = case
    storage = jnp.arange(size, dtype=jnp.float32)
    x = StridedArray(storage, layout)
    assert fs.read_plan(x.layout) == fs.read_plan(Layout(layout.shape, layout.strides, jnp.int32(0)))
    f = jax.jit(lambda v: jnp.asarray(v))
    np.testing.assert_array_equal(np.asarray(f(x)), oracle.materialize(np.asarray(storage), layout))
    text = f.lower(x).compile().as_text()
    assert "gather" not in text and "scatter" not in text


@pytest.mark.parametrize("method", READ_METHODS)
@pytest.mark.parametrize("layout", [
    Layout((3, 4), (1, 3), 2), Layout((4, 5), (2, 1), 1), Layout((2, 3, 8), (30, 9, 1), 3),
    Layout((5, 3), (0, 2), 4)], ids=str)
def test_traced_offset_reads_every_path(layout, method):
    size = layout.required_storage_size + 3
    storage = jnp.arange(size, dtype=jnp.float32)
    try:
        fs.read_plan(Layout(layout.shape, layout.strides, 0), method)
    except fs.LayoutError:
        pytest.skip(f"{method} does not apply to {layout}")
    read = jax.jit(lambda s, o: fs.materialize(s, Layout(layout.shape, layout.strides, o), method=method))
    for offset in range(size - layout.span):
        expected = oracle.materialize(np.asarray(storage), Layout(layout.shape, layout.strides, offset))
        np.testing.assert_array_equal(np.asarray(read(storage, jnp.int32(offset))), expected)


@pytest.mark.parametrize("offset", [-5, -1, 7, 8, 100])
def test_traced_offset_is_clamped_into_the_storage(offset):
    storage = jnp.arange(12.0)
    layout = Layout((2, 3), (4, 1))  # span 7: offsets 0..4 fit
    clamped = Layout(layout.shape, layout.strides, min(max(offset, 0), 12 - layout.span - 1))
    read = jax.jit(lambda o: jnp.asarray(StridedArray(storage, Layout(layout.shape, layout.strides, o))))
    np.testing.assert_array_equal(np.asarray(read(jnp.int32(offset))),
                                  oracle.materialize(np.asarray(storage), clamped))
    write = jax.jit(lambda o: StridedArray(storage, Layout(layout.shape, layout.strides, o)).at[...].set(-1))
    np.testing.assert_array_equal(np.asarray(write(jnp.int32(offset)).storage),
                                  oracle.scatter(np.asarray(storage), clamped, -1.0, "set"))


@pytest.mark.sampled(3)
@pytest.mark.parametrize("offset", [3, 2**31 - 1, 2**31, 2**32 - 1])
@pytest.mark.parametrize("method", ["auto", "scatter", "strided_copy"])
def test_a_traced_unsigned_offset_past_the_signed_range_clamps_to_the_end(offset, method):
    """A uint32 offset past int32 clamps as a large offset does (to the last start that fits),
    on reads and on every write path, rather than wrapping to a negative one (clamped to 0)."""
    storage = jnp.arange(20.0)
    shape, strides = (3, 4), (2, 1)  # span 8: starts 0..12 fit
    clamped = Layout(shape, strides, min(offset, 12))
    read = jax.jit(lambda o: fs.materialize(storage, Layout(shape, strides, o)))
    np.testing.assert_array_equal(np.asarray(read(jnp.uint32(offset))),
                                  oracle.materialize(np.asarray(storage), clamped))
    write = jax.jit(lambda o: fs.write(storage, Layout(shape, strides, o), 1.0, mode="add", method=method))
    np.testing.assert_array_equal(np.asarray(write(jnp.uint32(offset))),
                                  oracle.scatter(np.asarray(storage), clamped, np.float32(1.0), "add"))


def test_bounds_checked_when_made_and_span_checked_under_a_trace():
    storage = jnp.arange(10.0)
    with pytest.raises(StorageError, match=re.escape("require a storage of 12 elements")):
        StridedArray(storage, Layout((2, 2), (5, 1), 5))
    with pytest.raises(StorageError, match=re.escape("spans 12 storage elements")):
        jax.jit(lambda o: jnp.asarray(StridedArray(storage, Layout((2, 2), (10, 1), o))))(jnp.int32(0))
    with pytest.raises(StorageError, match=re.escape("spans 12 storage elements")):
        jax.jit(lambda o: StridedArray(storage, Layout((2, 2), (10, 1), o)).at[...].add(1.0))(jnp.int32(0))


@pytest.mark.sampled(4)
@pytest.mark.parametrize("mode", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("method", WRITE_METHODS)
@pytest.mark.parametrize("layout", [
    Layout((3, 4), (1, 3), 2), Layout((4, 5), (2, 1), 1), Layout((3, 4), (5, 1), 1), Layout((6,), (1,), 3)],
    ids=str)
def test_traced_offset_writes_every_path(layout, method, mode):
    size = layout.required_storage_size + 4
    storage = jnp.arange(size, dtype=jnp.float32)
    src = jnp.arange(1.0, layout.numel + 1.0).reshape(layout.shape)
    local = Layout(layout.shape, layout.strides, 0)
    try:
        fs.write_plan(local, local.span + 1, mode=mode, method=method)
    except fs.LayoutError:
        pytest.skip(f"{method} does not apply to {mode} through {layout}")
    overlap = "last" if mode == "set" else "error"
    write = jax.jit(lambda s, o, v: fs.write(s, Layout(layout.shape, layout.strides, o), v, mode=mode,
                                                     method=method, overlap=overlap))
    for offset in (0, size - layout.span - 1, 1):
        expected = oracle.scatter(np.asarray(storage), Layout(layout.shape, layout.strides, offset),
                                  np.asarray(src), mode)
        np.testing.assert_allclose(np.asarray(write(storage, jnp.int32(offset), src)), expected)


def test_writes_through_moving_views_compile_once():
    base = fs.from_array(jnp.zeros((6, 8)))
    f = jax.jit(chex.assert_max_traces(n=1)(lambda v: v.at[:, ::2].add(1.0)))
    for r in range(4):
        out = f(base.as_strided((2, 8), (8, 1), jnp.asarray(8 * r)))  # rows r, r + 1, an array offset
        expected = np.zeros(48)
        expected[Layout((2, 4), (8, 2), 8 * r).indices()] += 1.0
        np.testing.assert_array_equal(np.asarray(out.storage), expected)
        assert out.storage_offset() == 8 * r and out.shape == (2, 8)


def test_vmap_over_batched_storage_with_one_offset():
    storage = jnp.arange(4 * 30.0).reshape(4, 30)
    x = StridedArray(storage, Layout((3, 4), (1, 6), 2), batched=True)
    got = jax.vmap(lambda v: jnp.asarray(v.t()[1:]))(x)
    for b in range(4):
        np.testing.assert_array_equal(np.asarray(got[b]),
                                      oracle.materialize(np.asarray(storage[b]), x.t()[1:].layout))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(x.t()[1:]))
    # the same batch through jit: one compilation for another shared offset
    f = jax.jit(chex.assert_max_traces(n=1)(lambda v: jnp.asarray(v)))
    for offset in (0, 2, 5):  # an array offset shared by the batch: a leaf
        y = StridedArray(storage, Layout((3, 4), (1, 6), jnp.asarray(offset)), batched=True)
        np.testing.assert_array_equal(np.asarray(f(y)), np.asarray(jax.vmap(
            lambda s, o=offset: jnp.asarray(StridedArray(s, Layout((3, 4), (1, 6), o))))(storage)))
    written = jax.vmap(lambda v: v.at[0].set(-1.0))(x)
    assert written.batch_shape == (4,)
    np.testing.assert_array_equal(np.asarray(written.storage[3]),
                                  oracle.scatter(np.asarray(storage[3]), x[0].layout, -1.0, "set"))


@given(offsets=st.lists(st.integers(0, 90), min_size=1, max_size=6))
def test_vmap_over_views_that_differ_only_in_offset(offsets):
    signal = fs.from_array(jnp.arange(100.0))
    frames = jax.vmap(lambda k: signal.as_strided((3, 4), (2, 1), k))(jnp.asarray(offsets))
    assert frames.batch_shape == (len(offsets),) and frames.shape == (3, 4)
    assert frames.storage_offset().tolist() == offsets
    dense = np.asarray(frames)
    for b, k in enumerate(offsets):
        expected = oracle.materialize(np.arange(100.0), Layout((3, 4), (2, 1), k))
        np.testing.assert_array_equal(dense[b], expected)
    # views, writes and jit act per item, each at its own offset
    firsts = np.asarray(jax.jit(lambda v: jnp.asarray(v[:, 0]))(frames))
    np.testing.assert_array_equal(firsts, dense[:, :, 0])
    added = frames.at[1].add(1.0)
    for b, k in enumerate(offsets):
        np.testing.assert_array_equal(np.asarray(added.storage[b]), oracle.scatter(
            np.arange(100.0), Layout((4,), (1,), k + 2), 1.0, "add"))
    # per-item offsets given directly: every one is checked
    per_item = StridedArray(frames.storage, Layout((3, 4), (2, 1), jnp.asarray(offsets)), batched=True)
    np.testing.assert_array_equal(np.asarray(per_item), dense)
    with pytest.raises(StorageError, match="storage offset 99"):
        StridedArray(frames.storage, Layout((3, 4), (2, 1), jnp.asarray([99] * len(offsets))), batched=True)


def test_concrete_scalar_offsets_print_and_read_as_ints():
    y = jax.jit(lambda v: v[3:])(fs.from_array(jnp.arange(10.0)))
    assert y.storage_offset() == 3 and isinstance(y.storage_offset(), int)
    assert str(y.layout) == "(7,):(1,)+3"
    assert np.asarray(y).tolist() == list(range(3, 10))


def test_views_as_scan_carries_and_fori_loop_windows():
    y = fs.from_array(jnp.arange(10.0))[2:]
    carried, _ = jax.lax.scan(lambda c, _: (c.at[0].add(1.0), None), y, None, length=3)
    assert carried.storage.tolist() == [0.0, 1.0, 5.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    assert carried.storage_offset() == 2 and carried.shape == (8,)
    base = fs.from_array(jnp.arange(20.0))
    total = jax.lax.fori_loop(0, 5, lambda i, acc: acc + jnp.asarray(base.narrow(0, i, 4)), jnp.zeros(4))
    assert total.tolist() == [10.0, 15.0, 20.0, 25.0]

"""Negative strides in the core: bounds at both ends, reads and writes through reversed dims
on every lowering path (against the oracle), exact overlap, ``fs.flip``/``fliplr``/``flipud``
against PyTorch's values and refusals, and PyTorch entry points that still refuse them."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts, storage_for

import functional_strides as fs
from functional_strides import Layout, LayoutError, OutOfRangeError, StorageError, oracle
from functional_strides._src.core.overlap.overlap import internal_overlap_witness, overlap_witness
from functional_strides._src.lowering import reads as lowering
from functional_strides._src.lowering import writes as scatter


def _array(layout: Layout, slack: int = 0) -> fs.StridedArray:
    return fs.StridedArray(jnp.asarray(storage_for(layout, slack)), layout)


def _methods(layout: Layout) -> list[str]:
    out = []
    for m in lowering.METHODS[1:]:
        try:
            lowering.read_plan(layout, m)
        except LayoutError:
            continue
        out.append(m)
    return out


# -- bounds at both ends ------------------------------------------------------------------------

def test_bounds_are_checked_at_both_ends_with_both_named():
    storage = jnp.arange(12.0)
    with pytest.raises(StorageError, match=re.escape(
            "StridedArray: size [3, 4], stride [-4, 1] and storage offset 8 require a storage of 12 "
            "elements")):
        fs.StridedArray(storage[:11], Layout((3, 4), (-4, 1), 8))
    with pytest.raises(StorageError, match=re.escape(
            "Layout: layout (3,4):(-4,1)+7 addresses storage indices -1 to 10: the lowest, offset + "
            "sum((size-1)*stride for negative strides) = -1, is below 0. Raise the offset to at least 8")):
        Layout((3, 4), (-4, 1), 7)
    batched = jnp.zeros((2, 12))
    with pytest.raises(StorageError, match=re.escape(
            "layout (3,4):(-4,1)+7 addresses storage indices -1 to 10: the lowest")):
        fs.StridedArray(batched, Layout((3, 4), (-4, 1), jnp.array([8, 7])), batched=True)
    assert fs.StridedArray(storage, Layout((3, 4), (-4, 1), 8)).tolist()[0] == [8.0, 9.0, 10.0, 11.0]


def test_a_traced_offset_is_clamped_to_the_lowest_index_of_the_window():
    storage = jnp.arange(12.0)
    read = jax.jit(lambda k: jnp.asarray(fs.StridedArray(storage, Layout((3,), (-2,), k))))
    assert read(jnp.int32(5)).tolist() == [5.0, 3.0, 1.0]
    assert read(jnp.int32(1)).tolist() == [4.0, 2.0, 0.0]   # clamped: the lowest index is 0
    assert read(jnp.int32(40)).tolist() == [11.0, 9.0, 7.0]  # clamped: the highest is 11


# -- reads and writes on every path -----------------------------------------------------------

@examples(20, deadline=None)
@given(layouts(negative=True), st.integers(0, 3))
def test_reads_through_negative_strides_match_the_oracle_on_every_path(layout, slack):
    storage = storage_for(layout, slack)
    expect = oracle.materialize(storage, layout)
    got = np.asarray(lowering.materialize(jnp.asarray(storage), layout))  # eager: signed gather
    np.testing.assert_array_equal(got, expect)
    for method in _methods(layout):
        np.testing.assert_array_equal(
            np.asarray(lowering.materialize(jnp.asarray(storage), layout, method=method)), expect,
            err_msg=f"{layout} via {method}")


@examples(13, deadline=None)
@given(layouts(negative=True, min_rank=1), st.sampled_from(["set", "add", "mul", "max"]),
       st.sampled_from(["auto", "block", "structured", "row_scatter", "scatter"]))
def test_writes_through_negative_strides_match_the_oracle(layout, mode, method):
    storage = storage_for(layout, 2)
    src = np.arange(1, layout.numel + 1, dtype=np.float32).reshape(layout.shape) * 10
    if mode == "mul":  # products of powers of two are exact in any order, and never overflow here
        src = 2.0 ** (np.arange(layout.numel, dtype=np.float32).reshape(layout.shape) % 2)
    expect = oracle.scatter(storage, layout, src, mode)
    try:
        got = scatter.write(jnp.asarray(storage), layout, src, mode=mode, overlap="last", method=method)
    except LayoutError as e:
        assert "does not apply" in str(e)
        return
    np.testing.assert_array_equal(np.asarray(got), expect, err_msg=f"{layout} {mode} via {method}")
    traced = jax.jit(lambda s, k: scatter.write(s, Layout(layout.shape, layout.strides, k), src, mode=mode,
                                                overlap="last"))
    if layout.numel:
        np.testing.assert_array_equal(np.asarray(traced(jnp.asarray(storage), jnp.int32(layout.offset))),
                                      expect)


def test_at_writes_through_a_flipped_view_reach_the_base_in_mirrored_order():
    base = fs.from_array(jnp.arange(6.0).reshape(2, 3))
    flipped = base.flip(1)
    out = flipped.at[0].set(jnp.array([10.0, 20.0, 30.0]))
    assert out.tolist() == [[10.0, 20.0, 30.0], [5.0, 4.0, 3.0]]
    assert base.with_storage(out.storage).tolist() == [[30.0, 20.0, 10.0], [3.0, 4.0, 5.0]]
    assert flipped.at[:, ::2].add(1.0).storage.tolist() == [1.0, 1.0, 3.0, 4.0, 4.0, 6.0]


# -- overlap stays exact -----------------------------------------------------------------------

@examples(27, deadline=None)
@given(layouts(negative=True, max_stride=5), layouts(negative=True, max_stride=5))
def test_overlap_with_negative_strides_is_exact(a, b):
    w = internal_overlap_witness(a)
    assert (w is not None) == oracle.has_internal_overlap(a)
    if w is not None:
        assert w[0] != w[1] and a(*w[0]) == a(*w[1])
    pair = overlap_witness(a, b)
    assert (pair is not None) == oracle.overlaps(a, b)
    if pair is not None:
        assert a(*pair[0]) == b(*pair[1])
    assert fs.Layout(a.shape, a.strides, a.offset).overlaps(b) == oracle.overlaps(a, b)


# -- flip, fliplr, flipud against PyTorch --------------------------------------------------------

@st.composite
def _flip_cases(draw):
    layout = draw(layouts(negative=draw(st.booleans())))
    r = layout.ndim
    dims = draw(st.lists(st.integers(-max(r, 1) - 1, max(r, 1)), max_size=max(r, 1) + 1))
    return layout, dims


@examples(27, deadline=None)
@given(_flip_cases())
def test_flip_values_match_torch_and_layout_matches_numpy(case):
    torch = import_torch()
    layout, dims = case
    x = _array(layout)
    t = torch.from_numpy(np.array(np.asarray(x), copy=True))
    try:
        expect = torch.flip(t, dims)
    except (IndexError, RuntimeError) as e:
        kind = OutOfRangeError if isinstance(e, IndexError) else LayoutError
        with pytest.raises(kind):
            fs.flip(x, dims)
        return
    y = fs.flip(x, dims)
    assert fs.shares_storage(x, y) and y.shape == tuple(expect.shape)
    np.testing.assert_array_equal(np.asarray(y), expect.numpy())
    if layout.numel and x.ndim:  # the view NumPy's np.flip makes of the same buffer
        buf = np.asarray(x.storage)
        a = np.lib.stride_tricks.as_strided(buf[layout.offset:], layout.shape,
                                            tuple(s * buf.itemsize for s in layout.strides))
        f = np.flip(a, axis=tuple(dims))
        assert y.stride() == tuple(s // buf.itemsize for s in f.strides)
        assert y.storage_offset() == (f.__array_interface__["data"][0] - buf.__array_interface__["data"][0]
                                      ) // buf.itemsize
    assert x.flip(*dims).layout == y.layout if dims else x.flip().layout == x.layout


@pytest.mark.parametrize("dims, error, match", [
    (0, fs.LayoutTypeError, "flip: dims must be a tuple of ints, not int (got dims=0"),
    (None, fs.LayoutTypeError, "flip: dims must be a tuple of ints, not NoneType"),
    ([0.5], fs.LayoutTypeError, "flip: dims[0] must be an int, not float"),
    ([0, 0], LayoutError, "flip: dim 0 appears multiple times in the list of dims (got dims=[0, 0]"),
    ([0, -2], LayoutError, "flip: dim 0 appears multiple times in the list of dims (got dims=[0, -2]"),
    ([2], OutOfRangeError, "flip: dimension out of range (expected to be in range of [-2, 1], but got 2)"),
], ids=["int", "none", "float", "twice", "twice-wrapped", "range"])
def test_flip_refuses_what_torch_refuses(dims, error, match):
    torch = import_torch()
    with pytest.raises((TypeError, RuntimeError, IndexError)):
        torch.flip(torch.zeros(2, 3), dims)
    with pytest.raises(error, match=re.escape(match)):
        fs.flip(jnp.zeros((2, 3)), dims)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (0, 2)])
@pytest.mark.parametrize("name", ["fliplr", "flipud"])
def test_fliplr_flipud_match_torch(name, shape):
    torch = import_torch()
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    try:
        expect = getattr(torch, name)(torch.from_numpy(values.copy())).numpy()
    except RuntimeError as e:
        with pytest.raises(LayoutError, match=re.escape(f"{name}: {str(e).rstrip('.')}")):
            getattr(fs, name)(jnp.asarray(values))
        with pytest.raises(LayoutError):
            getattr(fs.from_array(jnp.asarray(values)), name)()
        return
    got = getattr(fs, name)(jnp.asarray(values))
    np.testing.assert_array_equal(np.asarray(got), expect)
    np.testing.assert_array_equal(np.asarray(getattr(fs.from_array(jnp.asarray(values)), name)()), expect)


def test_flip_composed_with_views_matches_torch_values():
    torch = import_torch()
    t = torch.arange(60.0).reshape(3, 4, 5)
    x = fs.from_array(jnp.arange(60.0).reshape(3, 4, 5))
    chains = [
        (lambda a: a.flip(0, 2)[1:, ::2].permute(2, 0, 1)),
        (lambda a: a.flip(1).unsqueeze(0).expand(2, 3, 4, 5)[:, :, 1:3]),
        (lambda a: a.flip(2).transpose(0, 2).flip(1).unfold(0, 2, 2)),
        (lambda a: a.flip(0).flatten(1).flip(1).diagonal(0, 0, 1)),
        (lambda a: a.flip(1).reshape(12, 5)),  # a copy: no view of a reversed dim merges
    ]
    for chain in chains:
        np.testing.assert_array_equal(np.asarray(chain(x)), chain(t).numpy())
    assert not fs.shares_storage(x, x.flip(1).reshape(12, 5))
    assert fs.shares_storage(x, x.flip(0).reshape(3, 20))  # the reversed dim stays whole


def test_flip_of_a_traced_view_moves_the_offset_under_jit():
    storage = jnp.arange(10.0)
    f = jax.jit(lambda k: jnp.asarray(fs.StridedArray(storage, Layout((2, 3), (3, 1), k)).flip((0, 1))))
    assert f(jnp.int32(1)).tolist() == [[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]]


def test_traced_indices_into_a_flipped_view_move_the_offset_backwards():
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4)).flip(0, 1)
    row = jax.jit(lambda i: jnp.asarray(x[i]))
    cols = jax.jit(lambda i: jnp.asarray(x.narrow(1, i, 2)))
    for i in (0, 2, -1):
        assert row(jnp.int32(i)).tolist() == x[i].tolist()
    assert cols(jnp.int32(1)).tolist() == x.narrow(1, 1, 2).tolist() == [[10.0, 9.0], [6.0, 5.0], [2.0, 1.0]]


# -- PyTorch entry points keep PyTorch's refusals ---------------------------------------------------

def test_pytorch_entry_points_still_refuse_negative_strides():
    torch = import_torch()
    t = torch.arange(6.0)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(RuntimeError, match="Negative strides are not supported"):
        torch.as_strided(t, (3,), (-1,), 2)
    x = fs.from_array(jnp.arange(6.0))
    with pytest.raises(LayoutError, match="getitem: step must be greater than zero"):
        x[::-1]
    with pytest.raises(LayoutError, match="as_strided: negative strides are refused"):
        fs.as_strided(x, (3,), (-1,), 2)
    with pytest.raises(LayoutError, match="as_strided: negative strides are refused"):
        x.flip(0).as_strided((3,), (-1,), 2)


# -- explain shows them ---------------------------------------------------------------------------

def test_explain_draws_a_flipped_view_and_names_its_forward_twin():
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4)).flip(0)[:, 1::2]
    e = fs.explain(x, show=False)
    assert e.section("title").startswith("layout (3,2):(-4,2)+9 (StridedArray); storage of 12 elements")
    assert e.indices.tolist() == [9, 11, 5, 7, 1, 3] == np.asarray(x).astype(int).ravel().tolist()
    facts = e.section("facts")
    assert "contiguous (row-major, PyTorch's is_contiguous): no" in facts
    assert "non-overlapping and dense (a permutation of dims is contiguous): no" in facts
    plans = " ".join(e.section("plans").split())
    assert "negative strides on dims [0] (read forwards from the lowest index, then reversed" in plans
    assert "fs.flip(fs.as_strided(storage, (3, 2), (4, 2), 1), (0,)) is the same view" in plans
    assert fs.flip(fs.as_strided(x.storage, (3, 2), (4, 2), 1), (0,)).layout == x.layout
    assert "read plan (fs.read_plan): structured" in plans

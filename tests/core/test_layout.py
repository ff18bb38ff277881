"""Tests of the Layout record: validation, queries, index map, pytree behaviour."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch
from hypothesis import given
from hypothesis import strategies as st

import functional_strides as fs
from functional_strides import Layout, LayoutError, OutOfRangeError, StorageError
from functional_strides._src.core.layout import address_range


def small_layouts(max_rank=4, max_extent=4):
    return st.integers(0, max_rank).flatmap(
        lambda r: st.tuples(
            st.tuples(*[st.integers(0, max_extent)] * r),
            st.tuples(*[st.integers(0, 6)] * r),
            st.integers(0, 5),
        )
    ).map(lambda t: Layout(*t))


@pytest.mark.parametrize(
    "args, match",
    [
        (((2, 3), (1,)), "shape (2, 3) has rank 2 but strides (1,) has rank 1"),
        (((2, -3), (3, 1)), "shape[1]=-3 is negative"),
        (((2, 3), (3, -1)), "addresses storage indices -2 to 3: the lowest, offset + "
                            "sum((size-1)*stride for negative strides) = -2, is below 0"),
        (((2, 3), (3, 1), -1), "invalid storage offset -1"),
        (((2.0, 3), (3, 1)), "shape[0]=2.0 is a float, not an integer"),
        (((2, 3), (3, 1.5)), "strides[1]=1.5 is a float, not an integer"),
        (((True, 3), (3, 1)), "shape[0] is a bool"),
        (((2, 3), (3, 1), 1.0), "offset 1.0 is not an integer"),
        (((2, 3), (3, 1), True), "offset is a bool"),
        (("ab", (3, 1)), "shape[0]='a' is a str, not an integer"),
        ((None, ()), "shape must be a sequence of integers"),
    ],
    ids=["rank", "neg-size", "neg-stride-below-0", "neg-offset", "float-size", "float-stride", "bool-size",
         "float-offset", "bool-offset", "str-shape", "none-shape"],
)
def test_validation_errors(args, match):
    with pytest.raises(LayoutError, match=re.escape(match)) as info:
        Layout(*args)
    # a wrong Python type is also a TypeError (as in PyTorch); a wrong value is not
    wrong_type = any(w in match for w in ("not an integer", "is a bool", "must be a sequence"))
    assert isinstance(info.value, TypeError) == wrong_type


@pytest.mark.parametrize("shape, strides, offset", [
    ((3, 4), (-4, 1), 8), ((3, 4), (4, -1), 3), ((2, 3, 4), (-12, 1, -3), 21), ((5,), (-2,), 8),
    ((0, 4), (-4, 1), 0), ((1, 4), (-9, 1), 0),
], ids=["rows", "cols", "mixed", "strided", "empty", "size-1"])
def test_negative_strides_are_admitted_with_the_lowest_index_at_or_above_0(shape, strides, offset):
    lay = Layout(shape, strides, offset)
    idx = lay.indices()
    if idx.size:  # element (0, ..., 0) sits at the offset; the lowest index is >= 0
        assert idx.min() >= 0 and lay.required_storage_size == idx.max() + 1
        assert lay.span == idx.max() - idx.min() and lay.offset + lay.low_reach == idx.min()
        assert (idx.min(), idx.max()) == address_range(shape, strides, offset)
    else:
        assert lay.required_storage_size == 0 and lay.span == 0
    a = np.lib.stride_tricks.as_strided(np.arange(60)[offset:], shape, tuple(8 * s for s in strides))
    if idx.size:  # NumPy's flags on the same view (its data pointer at the offset)
        assert lay.is_contiguous() == a.flags.c_contiguous
    if idx.size and lay.low_reach < 0:  # one less offset reaches index -1
        with pytest.raises(StorageError, match=re.escape(f"addresses storage indices -1 to {idx.max() - 1}")):
            Layout(shape, strides, offset - 1)


@pytest.mark.parametrize("shape, strides, contiguous, dense", [
    ((3, 4), (-4, 1), False, False), ((3, 4), (4, -1), False, False), ((4,), (-1,), False, False),
    ((2, 3), (-3, -1), False, False), ((1, 3), (-5, 1), True, True), ((3, 1), (1, -2), True, True),
], ids=["rows", "cols", "1d", "both", "size-1-reversed", "size-1-reversed-inner"])
def test_contiguity_with_negative_strides(shape, strides, contiguous, dense):
    """A reversed dim of extent >= 2 is neither C-contiguous (NumPy's flag agrees) nor dense;
    the stride of a size-1 dim never matters (PyTorch's and NumPy's rule)."""
    lay = Layout(shape, strides, -Layout(shape, strides, 100).low_reach)
    assert (lay.is_contiguous(), lay.is_non_overlapping_and_dense()) == (contiguous, dense)
    a = np.lib.stride_tricks.as_strided(np.arange(24)[lay.offset:], shape, tuple(8 * s for s in strides))
    assert a.flags.c_contiguous == contiguous


def test_normalises_numpy_ints_and_lists():
    lay = Layout([np.int64(2), 3], np.array([3, 1]), np.int32(4))
    assert lay.shape == (2, 3) and lay.strides == (3, 1) and lay.offset == 4
    assert type(lay.offset) is int and all(type(v) is int for v in lay.shape + lay.strides)
    assert hash(lay) == hash(Layout((2, 3), (3, 1), 4)) and lay == Layout((2, 3), (3, 1), 4)


def test_contiguous_constructor_matches_torch_rule():
    assert Layout.contiguous((1, 0, 1)).strides == (1, 1, 1)
    assert Layout.contiguous((2, 3, 4)).strides == (12, 4, 1)
    assert Layout.contiguous((2, 3, 4), order="F").strides == (1, 2, 6)
    assert Layout.contiguous(()).strides == ()
    with pytest.raises(LayoutError, match="order must be 'C' or 'F'"):
        Layout.contiguous((2,), order="K")


def test_queries():
    lay = Layout((2, 3), (3, 1), 1)
    assert (lay.ndim, lay.numel, lay.is_empty, lay.span, lay.required_storage_size) == (2, 6, False, 5, 7)
    assert Layout((2, 0), (3, 1), 5).required_storage_size == 0
    assert Layout((), (), 4).required_storage_size == 5 and Layout((), ()).numel == 1
    assert str(Layout((4,), (2,), 3)) == "(4,):(2,)+3"


@pytest.mark.parametrize(
    "shape, strides, expected",
    [((2, 1, 3), (3, 99, 1), True), ((3, 2), (1, 3), False), ((0, 5), (7, 3), True),
     ((1,), (5,), True), ((), (), True), ((4,), (2,), False), ((2, 2), (2, 1), True),
     ((2, 2), (0, 1), False)],
)
def test_is_contiguous(shape, strides, expected):
    assert Layout(shape, strides).is_contiguous() is expected


@pytest.mark.parametrize(
    "shape, strides, expected",
    [((3, 2), (1, 3), True), ((3, 2), (2, 1), True), ((3, 2), (1, 2), False),
     ((4,), (2,), False), ((4,), (1,), True), ((2, 3), (0, 1), False), ((1, 5), (9, 1), True),
     ((0, 3), (5, 7), True)],
)
def test_is_non_overlapping_and_dense(shape, strides, expected):
    assert Layout(shape, strides).is_non_overlapping_and_dense() is expected


def test_predicates_match_torch():
    torch = import_torch()
    from torch._prims_common import is_non_overlapping_and_dense_or_false

    rng = np.random.default_rng(0)
    for _ in range(400):
        r = int(rng.integers(0, 4))
        shape = tuple(int(v) for v in rng.integers(0, 4, r))
        strides = tuple(int(v) for v in rng.integers(0, 7, r))
        lay = Layout(shape, strides)
        t = torch.empty(max(lay.required_storage_size, 1)).as_strided(shape, strides)
        assert lay.is_contiguous() == t.is_contiguous(), lay
        assert lay.is_non_overlapping_and_dense() == is_non_overlapping_and_dense_or_false(t), lay


@given(small_layouts())
def test_indices_and_call_match_oracle(lay):
    ref = fs.oracle.element_indices(lay).reshape(lay.shape)
    np.testing.assert_array_equal(lay.indices(), ref)
    assert lay.indices().dtype == np.int64
    for coord in np.ndindex(*lay.shape):
        assert lay(*coord) == ref[coord]
        break
    if lay.numel:
        last = tuple(n - 1 for n in lay.shape)
        assert lay(*last) == ref[last]
        assert lay.required_storage_size == ref.max() + 1


def test_call_errors():
    lay = Layout((2, 3), (3, 1))
    with pytest.raises(OutOfRangeError, match="expected 2 coordinates, got 1"):
        lay(1)
    with pytest.raises(IndexError, match=re.escape("coordinate 3 of dim 1 is out of range [0, 3)")):
        lay(0, 3)


def test_pytree_int_offset_is_static_and_array_offset_a_leaf():
    lay = Layout((2, 3), (3, 1), 2)
    leaves, treedef = jax.tree.flatten(lay)
    assert leaves == []  # a Python int offset is metadata, like shape and strides
    assert jax.tree.unflatten(treedef, leaves) == lay
    assert jax.tree.structure(Layout((2, 3), (3, 1), np.int64(2))) == treedef  # a NumPy integer too
    assert jax.tree.structure(Layout((2, 3), (3, 1), 3)) != treedef  # another int offset: another treedef
    arrays = jax.tree.structure(Layout((2, 3), (3, 1), jnp.int32(3)))
    assert arrays.num_leaves == 1 and jax.tree.structure(Layout((2, 3), (3, 1), jnp.int32(7))) == arrays
    assert jax.tree.structure(Layout((2, 3), (3, 1), np.asarray(4))) == arrays  # any array: a leaf
    assert jax.tree.structure(Layout((2, 3), (1, 2), 2)) != treedef  # strides do not share either
    assert hash(lay) == hash(Layout((2, 3), (3, 1), 2))  # still hashable (a static argument)


def test_pytree_dynamic_offset_is_leaf():
    lay = Layout((2, 3), (3, 1), jnp.int32(2))
    leaves, treedef = jax.tree.flatten(lay)
    assert len(leaves) == 1 and int(leaves[0]) == 2
    again = jax.tree.unflatten(treedef, [jnp.int32(5)])
    assert again.shape == (2, 3) and int(again.offset) == 5
    assert str(lay) == "(2,3):(3,1)+2"  # a concrete scalar prints its value
    seen = []
    jax.jit(lambda v: seen.append(str(v)) or v.offset)(lay)
    assert seen == ["(2,3):(3,1)+<traced>"]


def test_layout_is_jit_static_argument():
    calls = []

    @jax.jit
    def f(layout, x):
        calls.append(1)
        return x * layout.numel + layout.offset

    assert int(f(Layout((2, 3), (3, 1), 1), 1)) == 7
    assert int(f(Layout((2, 3), (3, 1), 1), 2)) == 13
    assert len(calls) == 1


def test_oracle_refuses_what_lies_outside_the_storage_at_both_ends():
    """The reference semantics never wrap an index around (NumPy's negative indexing) nor
    drop a dim whose stride is missing: it names the indices and raises."""
    from functional_strides import oracle

    with pytest.raises(fs.StorageError, match=r"indices -2 to 2, outside a storage of 6"):
        oracle.scatter(np.zeros(6), ((3,), (-2,), 2), 1.0)
    with pytest.raises(fs.StorageError, match=r"indices 1 to 8, outside a storage of 6"):
        oracle.materialize(np.arange(6.0), ((2, 2), (1, 6), 1))
    with pytest.raises(fs.LayoutError, match=r"differ in length"):
        oracle.element_indices(((2, 3), (1,), 0))
    with pytest.raises(fs.LayoutError, match=r"unknown mode 'div'"):
        oracle.scatter(np.zeros(6), ((0,), (1,), 0), 1.0, mode="div")
    assert oracle.scatter(np.zeros(6), ((3,), (-2,), 4), 1.0, mode="add").tolist() == [1, 0, 1, 0, 1, 0]

"""``clone()`` and the ``*_scatter`` ops against the NumPy oracle, without PyTorch.

The parity tests compare these ops with PyTorch and skip where PyTorch is missing; these
tests check the same results from the definitions alone, so they run (and fail on a wrong
result) everywhere:

* ``clone()``: fresh storage of ``numel`` elements at offset 0, the values of the view, and
  PyTorch's ``preserve_format`` strides, written out below from ATen
  (``_compute_non_overlapping_and_dense`` and ``infer_dense_strides``);
* ``fs.select_scatter`` / ``fs.slice_scatter`` / ``fs.diagonal_scatter`` /
  ``fs.as_strided_scatter``: PyTorch's ``clone_preserve_strides(input)`` (the input's own
  shape, strides and offset over its storage, or a ``clone()`` when a stride-0 dim of extent
  > 1 makes elements share slots), with ``src`` written through the view computed here from
  the op's definition, by :func:`functional_strides.oracle.scatter` (last write wins).

The whole storage of every result is compared, so a write that lands in the wrong slot, or
an op that returns its input, fails here.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts, strided_arrays

import functional_strides as fs
from functional_strides import Layout, LayoutError, OutOfRangeError, StorageError, oracle

# -- the rules, written from ATen --------------------------------------------------------------


def aten_non_overlapping_and_dense(shape, strides) -> bool:
    """c10 ``_compute_non_overlapping_and_dense``; an empty tensor keeps its strides too."""
    if 0 in shape:
        return True
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    perm = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2 else 0))
    need = 1
    for d in perm:
        if shape[d] < 2:
            return True
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def aten_infer_dense_strides(shape, strides) -> tuple[int, ...]:
    """ATen ``infer_dense_strides``: insertion sort of the dims (reversed order to start),
    stride-0 dims never move, equal strides put the smaller extent inside."""
    nd = len(shape)
    perm = list(reversed(range(nd)))

    def should_swap(a, b):
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return -1 if strides[a] < strides[b] else 1
        return 1 if shape[a] > shape[b] else 0

    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out, step = [0] * nd, 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def clone_strides(shape, strides) -> tuple[int, ...]:
    """``torch.Tensor.clone()`` strides (``memory_format=torch.preserve_format``)."""
    if aten_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    return aten_infer_dense_strides(shape, strides)


def expected_clone(storage: np.ndarray, layout: Layout) -> tuple[np.ndarray, Layout]:
    """(storage, layout) of the clone: the view's values laid out with ``clone_strides``."""
    out = Layout(layout.shape, clone_strides(layout.shape, layout.strides), 0)
    fresh = np.zeros(math.prod(layout.shape), storage.dtype)
    values = oracle.materialize(storage, layout)
    return oracle.scatter(fresh, out, values), out


def writable_base(storage: np.ndarray, layout: Layout) -> tuple[np.ndarray, Layout]:
    """``clone_preserve_strides``: the input itself, or its clone when expanded."""
    if any(n > 1 and s == 0 for n, s in zip(layout.shape, layout.strides, strict=True)):
        return expected_clone(storage, layout)
    return storage, layout


# -- views written through, from their definitions ------------------------------------------

def _wrap(i: int, n: int) -> int:
    return i + n if i < 0 else i


def select_layout(lay: Layout, dim: int, index: int) -> Layout:
    d = _wrap(dim, lay.ndim)
    i = _wrap(index, lay.shape[d])
    return Layout(lay.shape[:d] + lay.shape[d + 1:], lay.strides[:d] + lay.strides[d + 1:],
                  lay.offset + i * lay.strides[d])


def slice_layout(lay: Layout, dim: int, start, end, step: int) -> Layout:
    d = _wrap(dim, lay.ndim)
    n = lay.shape[d]
    lo = 0 if start is None else min(max(_wrap(start, n), 0), n)
    hi = n if end is None else min(max(_wrap(end, n), 0), n)
    count = max(0, -(-(hi - lo) // step))
    return Layout(lay.shape[:d] + (count,) + lay.shape[d + 1:],
                  lay.strides[:d] + (lay.strides[d] * step,) + lay.strides[d + 1:],
                  lay.offset + (lo * lay.strides[d] if count else 0))


def diagonal_layout(lay: Layout, k: int, dim1: int, dim2: int) -> Layout:
    d1, d2 = _wrap(dim1, lay.ndim), _wrap(dim2, lay.ndim)
    n1, n2, s1, s2 = lay.shape[d1], lay.shape[d2], lay.strides[d1], lay.strides[d2]
    length = max(0, min(n1, n2 - k) if k >= 0 else min(n1 + k, n2))
    start = (k * s2 if k >= 0 else -k * s1) if length else 0
    keep = [d for d in range(lay.ndim) if d not in (d1, d2)]
    return Layout(tuple(lay.shape[d] for d in keep) + (length,),
                  tuple(lay.strides[d] for d in keep) + (s1 + s2,), lay.offset + start)


def _parts(x: fs.StridedArray) -> tuple[np.ndarray, Layout]:
    return np.asarray(x.storage), Layout(x.shape, x.stride(), x.storage_offset())


def _src(shape) -> np.ndarray:
    """Values no storage of these tests holds (storages are arange(N) with N < 100)."""
    return (100.0 + np.arange(math.prod(shape), dtype=np.float32)).reshape(shape)


def check_scatter(result: fs.StridedArray, x: fs.StridedArray, target, src: np.ndarray) -> None:
    """``result`` is ``src`` written through ``target(base_layout)`` into the writable base."""
    storage, layout = _parts(x)
    base_storage, base = writable_base(storage, layout)
    expected = oracle.scatter(base_storage, target(base), src)
    assert (result.shape, result.stride(), result.storage_offset()) == (base.shape, base.strides, base.offset)
    assert result.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(result.storage), expected)
    np.testing.assert_array_equal(np.asarray(result), oracle.materialize(expected, base))
    assert not np.array_equal(np.asarray(result.storage), base_storage) or target(base).is_empty


def _dense_numpy(x: fs.StridedArray, index, src: np.ndarray) -> np.ndarray:
    """The same write on a NumPy copy of the values (for inputs without shared slots)."""
    dense = np.array(np.asarray(x), copy=True)
    dense[index] = src
    return dense


# -- clone ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, strides, expected", [
    ((3, 3), (1, 6), (1, 3)),        # not dense: dense strides in the input's stride order
    ((3, 3), (3, 1), (3, 1)),
    ((3, 3), (1, 3), (1, 3)),        # transposed and dense: kept
    ((1, 3), (7, 2), (3, 1)),
    ((1, 3), (7, 1), (7, 1)),        # dense: a size-1 dim keeps its arbitrary stride
    ((3, 1), (2, 9), (1, 3)),
    ((2, 2), (0, 1), (2, 1)),        # expanded: stride 0 keeps its place
    ((2, 3), (1, 2), (1, 2)),        # dense, column-major
    ((2, 3), (3, 2), (3, 1)),
    ((2, 2, 2), (1, 1, 4), (2, 1, 4)),  # equal strides: the smaller extent goes inside
    ((0, 3), (5, 7), (5, 7)),        # empty: strides kept
    ((3, 0), (1, 1), (1, 1)),
    ((), (), ()),
    ((4,), (2,), (1,)),
], ids=str)
def test_clone_fixed_cases(shape, strides, expected):
    storage = np.arange(40, dtype=np.float32)
    x = fs.as_strided(jnp.asarray(storage), shape, strides, 1)
    y = x.clone()
    assert clone_strides(shape, strides) == expected
    assert (y.shape, y.stride(), y.storage_offset()) == (shape, expected, 0)
    assert y.storage.shape == (math.prod(shape),)
    want, _ = expected_clone(storage, Layout(shape, strides, 1))
    np.testing.assert_array_equal(np.asarray(y.storage), want)
    np.testing.assert_array_equal(np.asarray(y), oracle.materialize(storage, Layout(shape, strides, 1)))


@given(x=strided_arrays(layouts(max_stride=9)))
def test_clone_matches_oracle(x):
    storage, layout = _parts(x)
    want_storage, want = expected_clone(storage, layout)
    y = x.clone()
    assert (y.shape, y.stride(), y.storage_offset()) == (want.shape, want.strides, 0)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(y.storage), want_storage)
    np.testing.assert_array_equal(np.asarray(y), oracle.materialize(storage, layout))
    # the clone's layout addresses each of its numel slots once
    assert sorted(oracle.element_indices(want).tolist()) == list(range(layout.numel))


@given(layout=layouts(max_stride=9))
def test_clone_strides_rule_matches_torch(layout):
    # the leg that checks the rule above is PyTorch's (skipped without PyTorch)
    torch = import_torch()
    t = torch.arange(layout.required_storage_size + 1.0).as_strided(layout.shape, layout.strides)
    assert clone_strides(layout.shape, layout.strides) == tuple(t.clone().stride())


def test_clone_under_jit_matches_eager():
    x = fs.as_strided(jnp.arange(30.0), (3, 4), (1, 6), 2)
    y = jax.jit(lambda a: a.clone())(x)
    want_storage, want = expected_clone(np.arange(30.0, dtype=np.float32), x.layout)
    assert (y.stride(), y.storage_offset()) == (want.strides, 0)
    np.testing.assert_array_equal(np.asarray(y.storage), want_storage)


# -- select_scatter --------------------------------------------------------------------------------

@st.composite
def _select_args(draw):
    x = draw(strided_arrays(layouts(min_rank=1, max_stride=9)))
    dim = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[dim]
    index = draw(st.integers(-n - 1, n))  # one past each end too
    return x, dim, index


@given(args=_select_args())
def test_select_scatter_matches_oracle(args):
    x, dim, index = args
    n = x.shape[dim]
    src_shape = x.shape[:dim % x.ndim] + x.shape[dim % x.ndim + 1:]
    src = _src(src_shape)
    if not -n <= index < n:
        with pytest.raises(OutOfRangeError, match="index"):
            fs.select_scatter(x, jnp.asarray(src), dim, index)
        return
    got = fs.select_scatter(x, jnp.asarray(src), dim, index)
    check_scatter(got, x, lambda b: select_layout(b, dim, index), src)


@pytest.mark.parametrize("dim, index", [(0, 0), (0, 2), (0, -1), (1, 3), (1, -4), (-1, 1)])
def test_select_scatter_fixed_cases_match_numpy(dim, index):
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4))[:, :]
    src = _src(x.select(dim, index).shape)
    got = fs.select_scatter(x, jnp.asarray(src), dim, index)
    key = (slice(None),) * (dim % 2) + (index,)
    np.testing.assert_array_equal(np.asarray(got), _dense_numpy(x, key, src))
    assert (got.stride(), got.storage_offset()) == ((4, 1), 0)


def test_select_scatter_keeps_offset_and_strides_of_a_view():
    base = fs.from_array(jnp.arange(24.0))
    x = base.as_strided((3, 2), (1, 5), 4)  # transposed window at offset 4
    got = fs.select_scatter(x, jnp.asarray([-1.0, -2.0]), 0, 1)
    assert (got.shape, got.stride(), got.storage_offset()) == ((3, 2), (1, 5), 4)
    want = np.arange(24.0)
    want[[5, 10]] = [-1.0, -2.0]
    np.testing.assert_array_equal(np.asarray(got.storage), want)


def test_select_scatter_casts_src_to_input_dtype():
    x = fs.from_array(jnp.zeros((2, 3), jnp.int32))
    got = fs.select_scatter(x, jnp.asarray([1.0, 2.0, 3.0]), 0, 1)
    assert got.dtype == jnp.int32
    assert got.tolist() == [[0, 0, 0], [1, 2, 3]]


# -- slice_scatter ----------------------------------------------------------------------------------

@st.composite
def _slice_args(draw):
    x = draw(strided_arrays(layouts(min_rank=1, max_stride=9)))
    dim = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[dim]
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    return x, dim, draw(bound), draw(bound), draw(st.integers(1, 3))


@given(args=_slice_args())
def test_slice_scatter_matches_oracle(args):
    x, dim, start, end, step = args
    target = slice_layout(x.layout, dim, start, end, step)
    src = _src(target.shape)
    got = fs.slice_scatter(x, jnp.asarray(src), dim, start, end, step)
    check_scatter(got, x, lambda b: slice_layout(b, dim, start, end, step), src)
    if not oracle.has_internal_overlap(x.layout):
        key = (slice(None),) * (dim % x.ndim) + (slice(start, end, step),)
        np.testing.assert_array_equal(np.asarray(got), _dense_numpy(x, key, src))


@pytest.mark.parametrize("bad", [{"step": 0}, {"step": -1}, {"dim": 2}, {"dim": -3}], ids=str)
def test_slice_scatter_refusals(bad):
    x = fs.from_array(jnp.zeros((3, 4)))
    args = {"dim": 1, "start": 0, "end": 4, "step": 1, **bad}
    with pytest.raises(LayoutError):
        fs.slice_scatter(x, jnp.ones((3, 4)), **args)


# -- diagonal_scatter --------------------------------------------------------------------------------

@st.composite
def _diagonal_args(draw):
    x = draw(strided_arrays(layouts(min_rank=2, max_stride=9)))
    dim1, dim2 = draw(st.permutations(range(x.ndim)))[:2]
    if draw(st.booleans()):
        dim1 -= x.ndim
    k = draw(st.integers(-4, 4))
    return x, k, dim1, dim2


@given(args=_diagonal_args())
def test_diagonal_scatter_matches_oracle(args):
    x, k, dim1, dim2 = args
    target = diagonal_layout(x.layout, k, dim1, dim2)
    src = _src(target.shape)
    got = fs.diagonal_scatter(x, jnp.asarray(src), k, dim1, dim2)
    check_scatter(got, x, lambda b: diagonal_layout(b, k, dim1, dim2), src)


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 4])
def test_diagonal_scatter_fixed_cases_match_numpy(k):
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
    rows, cols = np.nonzero(np.eye(3, 4, k))
    src = _src((len(rows),))
    got = fs.diagonal_scatter(x, jnp.asarray(src), k)
    np.testing.assert_array_equal(np.asarray(got), _dense_numpy(x, (rows, cols), src))


def test_diagonal_scatter_refuses_equal_dims():
    with pytest.raises(LayoutError, match="dim"):
        fs.diagonal_scatter(jnp.zeros((3, 3)), jnp.ones(3), 0, 1, -1)


# -- as_strided_scatter ------------------------------------------------------------------------------

@st.composite
def _as_strided_args(draw):
    x = draw(strided_arrays(layouts(max_stride=9)))
    size = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    stride = tuple(draw(st.integers(0, 4)) for _ in size)
    offset = draw(st.one_of(st.none(), st.integers(0, 6)))
    return x, size, stride, offset


@given(args=_as_strided_args())
def test_as_strided_scatter_matches_oracle(args):
    x, size, stride, offset = args
    storage, layout = _parts(x)
    base_storage, base = writable_base(storage, layout)
    target = Layout(size, stride, base.offset if offset is None else offset)
    src = _src(size)
    if target.required_storage_size > len(base_storage):
        with pytest.raises(StorageError):
            fs.as_strided_scatter(x, jnp.asarray(src), size, stride, offset)
        return
    got = fs.as_strided_scatter(x, jnp.asarray(src), size, stride, offset)
    check_scatter(got, x, lambda b: Layout(size, stride, b.offset if offset is None else offset), src)


def test_as_strided_scatter_on_expanded_input_writes_into_a_clone():
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4))[:1].expand(3, 4)
    got = fs.as_strided_scatter(x, jnp.asarray([-1.0, -2.0]), (2,), (1,), 1)
    assert (got.stride(), got.storage_offset(), got.storage.shape) == ((4, 1), 0, (12,))
    want = np.tile(np.arange(4.0), (3, 1))
    want[0, 1:3] = [-1.0, -2.0]
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("op, args, src_shape", [
    (fs.select_scatter, (0, 1), (2,)),
    (fs.slice_scatter, (1, 0, 2), (3, 3)),
    (fs.diagonal_scatter, (0,), (3,)),
    (fs.as_strided_scatter, ((2,), (1,)), (3,)),
], ids=["select", "slice", "diagonal", "as_strided"])
def test_scatter_ops_refuse_wrong_src_shape(op, args, src_shape):
    with pytest.raises(LayoutError, match=r"src shape"):
        op(jnp.zeros((2, 3)), jnp.ones(src_shape), *args)

"""``functional_strides.numpy`` against NumPy itself.

Random chains of NumPy's view functions (negative steps included) run on a NumPy view of a
buffer and on the same ``StridedArray``; after every step both must agree on shape, element
strides, offset (the data pointer's distance from the buffer start), values, and whether the
step made a view or a copy (``np.shares_memory``), and one must raise exactly when the other
does. Then NumPy's own test cases of ``as_strided``, ``sliding_window_view`` and
``broadcast_to`` (numpy/lib/tests/test_stride_tricks.py), restated.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided as np_as_strided
from numpy.lib.stride_tricks import sliding_window_view as np_sliding_window_view
from strategies import layouts

import functional_strides as fs
import functional_strides.numpy as fnp
from functional_strides import Layout, LayoutError, OutOfRangeError, StorageError, ViewError

# -- the pair: a NumPy view and our StridedArray of one buffer -----------------------------------

@dataclass
class Pair:
    np_base: np.ndarray      # the buffer NumPy's view lives in (1-D)
    np_view: np.ndarray
    ours: fs.StridedArray


def _np_view(base: np.ndarray, layout: Layout) -> np.ndarray:
    item = base.itemsize
    return np_as_strided(base[layout.offset:] if base.size else base, layout.shape,
                         tuple(s * item for s in layout.strides))


def _pair(layout: Layout, dtype=np.int32) -> Pair:
    base = np.arange(max(layout.required_storage_size, 1) + 2, dtype=dtype)
    return Pair(base, _np_view(base, layout), fs.StridedArray(jnp.asarray(base), layout))


def _offset(a: np.ndarray, base: np.ndarray) -> int:
    return (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize


def assert_same(pair: Pair, new_np: np.ndarray, new_ours: fs.StridedArray, what: str) -> Pair:
    """Compare one step; return the pair to continue the chain from. (NumPy gives fresh empty
    arrays strides 0; strides of views with no element address nothing and are not compared.)"""
    if isinstance(new_np, np.generic):  # NumPy's scalar index returns a scalar: a copy
        new_np = np.array(new_np)
    assert new_ours.shape == new_np.shape, what
    if new_np.size:
        assert new_ours.strides == new_np.strides, what
        assert new_ours.stride() == tuple(s // new_np.itemsize for s in new_np.strides), what
    assert new_ours.itemsize == new_np.itemsize and new_ours.nbytes == new_np.nbytes, what
    np.testing.assert_array_equal(np.asarray(new_ours), new_np, err_msg=what)
    if new_np.size == 0:
        return Pair(pair.np_base, new_np, new_ours)
    view = np.shares_memory(new_np, pair.np_view)
    kept = new_ours.storage is pair.ours.storage
    said = {True: "views", False: "copies"}
    assert kept == view, f"{what}: NumPy {said[bool(view)]}, ours {said[kept]}"
    if view:
        assert new_ours.storage_offset() == _offset(new_np, pair.np_base), what
        return Pair(pair.np_base, new_np, new_ours)
    # a copy: a fresh dense buffer, whose first element NumPy's copy starts at
    assert new_ours.storage.shape == (new_np.size,) and new_ours.storage_offset() == 0, what
    return Pair(new_np, new_np, new_ours)


# -- the ops, drawn for the current shape -------------------------------------------------------

def _axis(data, ndim: int, *, extra: int = 0):
    return data.draw(st.integers(-ndim - extra, ndim - 1 + extra)) if ndim else 0


def _key(data, shape):
    parts = []
    for n in shape:
        kind = data.draw(st.sampled_from(["slice", "slice", "int", "none", "full"]))
        if kind == "int" and n:
            parts.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "none":
            parts.append(None)
            parts.append(slice(None))
        elif kind == "slice":
            step = data.draw(st.sampled_from([1, 2, -1, -2, 3, -3, None]))
            start = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            parts.append(slice(start, stop, step))
        else:
            parts.append(slice(None))
    if parts and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(parts) - 1))
        parts = parts[:at] + [Ellipsis]
    return tuple(parts)


def _factors(data, numel: int) -> tuple[int, ...]:
    shape, left = [], numel
    for _ in range(data.draw(st.integers(0, 3))):
        divisors = [d for d in range(1, left + 1) if left % d == 0] if left else [0, 1]
        d = data.draw(st.sampled_from(divisors))
        shape.append(d)
        left = left // d if d else left
    shape.append(left if numel else 0)
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(shape) - 1))
        shape[i] = -1 if shape[i] != 0 else 0
    return tuple(shape)


def draw_op(data, shape: tuple[int, ...]):
    """``(name, numpy_call, our_call)`` for one op valid (mostly) on ``shape``."""
    nd = len(shape)
    name = data.draw(st.sampled_from(
        ["transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims", "diagonal", "flip", "rot90",
         "reshape", "ravel", "getitem", "getitem", "broadcast_to", "sliding_window_view"]))
    if name == "transpose":
        axes = None if data.draw(st.booleans()) else tuple(data.draw(st.permutations(range(nd))))
        return (f"transpose({axes})", lambda a: np.transpose(a, axes), lambda x: fnp.transpose(x, axes))
    if name == "swapaxes":
        a, b = _axis(data, nd, extra=1), _axis(data, nd)
        return (f"swapaxes({a}, {b})", lambda x: np.swapaxes(x, a, b), lambda x: fnp.swapaxes(x, a, b))
    if name == "moveaxis":
        k = data.draw(st.integers(0, nd))
        src = tuple(data.draw(st.permutations(range(nd))))[:k]
        dst = tuple(data.draw(st.permutations(range(nd))))[:k]
        return (f"moveaxis({src}, {dst})", lambda x: np.moveaxis(x, src, dst),
                lambda x: fnp.moveaxis(x, src, dst))
    if name == "squeeze":
        ones = [d for d, n in enumerate(shape) if n == 1]
        axis = None if not ones or data.draw(st.booleans()) else data.draw(st.sampled_from(ones))
        if nd and data.draw(st.integers(0, 9)) == 0:
            axis = _axis(data, nd)  # maybe not of size 1: both raise
        return (f"squeeze({axis})", lambda x: np.squeeze(x, axis), lambda x: fnp.squeeze(x, axis))
    if name == "expand_dims":
        axis = tuple({_axis(data, nd + 2) for _ in range(data.draw(st.integers(1, 2)))})
        return (f"expand_dims({axis})", lambda x: np.expand_dims(x, axis), lambda x: fnp.expand_dims(x, axis))
    if name == "diagonal":
        k = data.draw(st.integers(-3, 3))
        a, b = _axis(data, nd), _axis(data, nd)
        return (f"diagonal({k}, {a}, {b})", lambda x: np.diagonal(x, k, a, b),
                lambda x: fnp.diagonal(x, k, a, b))
    if name == "flip":
        axes = st.lists(st.integers(-nd, nd - 1), max_size=2).map(tuple) if nd else st.none()
        axis = data.draw(st.one_of(st.none(), st.just(_axis(data, nd)), axes))
        return (f"flip({axis})", lambda x: np.flip(x, axis), lambda x: fnp.flip(x, axis))
    if name == "rot90":
        k = data.draw(st.integers(-2, 5))
        axes = (_axis(data, nd), _axis(data, nd))
        return (f"rot90({k}, {axes})", lambda x: np.rot90(x, k, axes), lambda x: fnp.rot90(x, k, axes))
    if name == "reshape":
        target = _factors(data, math.prod(shape))
        order = data.draw(st.sampled_from("CFA"))
        return (f"reshape({target}, {order!r})", lambda x: np.reshape(x, target, order=order),
                lambda x: fnp.reshape(x, target, order=order))
    if name == "ravel":
        order = data.draw(st.sampled_from("CFAK"))
        return f"ravel({order!r})", lambda x: np.ravel(x, order), lambda x: fnp.ravel(x, order)
    if name == "broadcast_to":
        lead = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
        target = lead + tuple(data.draw(st.sampled_from([n, 2, 3])) if n == 1 else n for n in shape)
        return (f"broadcast_to({target})", lambda x: np.broadcast_to(x, target),
                lambda x: fnp.broadcast_to(x, target))
    if name == "sliding_window_view":
        if not nd:
            return "sliding_window_view((), None)", lambda x: np_sliding_window_view(x, ()), \
                lambda x: fnp.sliding_window_view(x, ())
        axis = _axis(data, nd)
        w = data.draw(st.integers(0, 3))
        return (f"sliding_window_view({w}, {axis})", lambda x: np_sliding_window_view(x, w, axis),
                lambda x: fnp.sliding_window_view(x, w, axis))
    key = _key(data, shape)
    return f"getitem({key})", lambda x: x[key], lambda x: fnp.getitem(x, key)


_EXPECTED = {IndexError: OutOfRangeError, ValueError: LayoutError}


@examples(50, deadline=None)
@given(layouts(negative=True, max_rank=3, max_extent=4, max_stride=6), st.data())
def test_random_chains_match_numpy(layout, data):
    pair = _pair(layout)
    chain = []
    for _ in range(data.draw(st.integers(1, 4))):
        if pair.np_view.size > 400:
            break
        name, np_call, our_call = draw_op(data, pair.np_view.shape)
        chain.append(name)
        what = f"{layout} then {' -> '.join(chain)}"
        try:
            new_np = np_call(pair.np_view)
        except (ValueError, IndexError) as e:
            kind = OutOfRangeError if isinstance(e, IndexError) else LayoutError
            with pytest.raises(kind):
                our_call(pair.ours)
            return
        new_ours = our_call(pair.ours)
        pair = assert_same(pair, new_np, new_ours, what)


def test_a_documented_chain():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = fs.from_array(jnp.asarray(a))
    key = np.s_[::-1, 1:, ::-2]
    for got, expect in [
        (fnp.getitem(x, key), a[key]),
        (fnp.moveaxis(fnp.getitem(x, key), 0, -1), np.moveaxis(a[key], 0, -1)),
        (fnp.rot90(fnp.getitem(x, key), 1, (1, 2)), np.rot90(a[key], 1, (1, 2))),
    ]:
        assert got.shape == expect.shape and got.strides == expect.strides
        assert got.storage_offset() == _offset(expect, a)
        np.testing.assert_array_equal(np.asarray(got), expect)


# -- reshape and ravel: view exactly when NumPy views ---------------------------------------------

@pytest.mark.parametrize("key, shape, order", [
    (np.s_[:, ::2], (6,), "C"), (np.s_[::-1], (12,), "C"), (np.s_[::-1], (3, 2, 2), "C"),
    (np.s_[:, ::-1], (12,), "C"), (np.s_[...], (4, 3), "F"), (np.s_[:, :2], (2, 3), "F"),
    (np.s_[None, ::-1, None], (3, 1, 4), "C"), (np.s_[::2, 1:2], (2, 1, 1), "C"),
], ids=["strided", "rows-reversed", "split-reversed", "cols-reversed", "F", "F-sliced", "new-1s", "ones"])
def test_reshape_views_exactly_when_numpy_does(key, shape, order):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = fnp.getitem(jnp.asarray(a), key)
    expect = np.reshape(a[key], shape, order=order)
    got = fnp.reshape(x, shape, order=order)
    assert assert_same(Pair(a.reshape(-1), a[key], x), expect, got, str(key)) is not None
    if np.shares_memory(expect, a):
        assert fnp.reshape(x, shape, order=order, copy=False).layout == got.layout
    else:
        with pytest.raises(ViewError, match="reshape: Unable to avoid creating a copy while reshaping"):
            fnp.reshape(x, shape, order=order, copy=False)
    assert not fs.shares_storage(fnp.reshape(x, shape, order=order, copy=True), x)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("key", [np.s_[...], np.s_[::-1], np.s_[:, ::-1], np.s_[::2], np.s_[:, 1:3]],
                         ids=["whole", "rows-rev", "cols-rev", "rows-step", "cols"])
@pytest.mark.parametrize("transposed", [False, True])
def test_ravel_matches_numpy(order, key, transposed):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v, x = a[key], fnp.getitem(jnp.asarray(a), key)
    if transposed:
        v, x = v.T, fnp.transpose(x)
    assert_same(Pair(a.reshape(-1), v, x), np.ravel(v, order), fnp.ravel(x, order), f"{key} {order}")


@pytest.mark.parametrize("call, message", [
    (lambda x: fnp.reshape(x, (5,)), "reshape: cannot reshape array of size 12 into shape (5,)"),
    (lambda x: fnp.reshape(x, (-1, -1)), "reshape: can only specify one unknown dimension"),
    (lambda x: fnp.reshape(x, 12, order="K"), "reshape: order must be one of 'C', 'F', or 'A'"),
    (lambda x: fnp.ravel(x, "Z"), "ravel: order must be one of 'C', 'F', 'A', or 'K'"),
    (lambda x: fnp.getitem(x, np.s_[::0]), "getitem: slice step cannot be zero"),
    (lambda x: fnp.getitem(x, (0, 0, 0)), "getitem: too many indices for array: array is 2-dimensional"),
    (lambda x: fnp.getitem(x, 3), "getitem: index 3 is out of bounds for axis 0 with size 3"),
    (lambda x: fnp.getitem(x, [0, 1]), "getitem: index [0, 1] is an advanced index"),
    (lambda x: fnp.transpose(x, (0, 0)), "transpose: repeated axis in transpose"),
    (lambda x: fnp.transpose(x, (0,)), "transpose: axes don't match array"),
    (lambda x: fnp.squeeze(x, 0), "squeeze: cannot select an axis to squeeze out which has size not equal"),
    (lambda x: fnp.diagonal(x, 0, 1, -1), "diagonal: axis1 and axis2 cannot be the same"),
    (lambda x: fnp.rot90(x, 1, (0,)), "rot90: len(axes) must be 2"),
    (lambda x: fnp.moveaxis(x, (0, 1), (0,)), "moveaxis: `source` and `destination` arguments must have"),
    (lambda x: fnp.swapaxes(x, 0, 2), "swapaxes: axis2 2 is out of bounds for array of dimension 2"),
], ids=["size", "two-unknowns", "order-K", "ravel-order", "step-0", "too-many", "index", "advanced",
        "repeated", "axes-length", "squeeze", "diag-same", "rot90-axes", "moveaxis", "axis-range"])
def test_refusals_name_numpys_reason(call, message):
    with pytest.raises(LayoutError, match=re.escape(message)):
        call(jnp.arange(12).reshape(3, 4))


def test_batched_arrays_view_and_copy_item_by_item():
    storage = np.arange(24, dtype=np.float32).reshape(2, 12)
    x = fs.StridedArray(jnp.asarray(storage), Layout((3, 4), (4, 1)), batched=True)
    items = [storage[b].reshape(3, 4) for b in range(2)]
    for fn, np_fn in [(lambda v: fnp.ravel(fnp.getitem(v, np.s_[::-1, ::2])),
                       lambda a: np.ravel(a[::-1, ::2])),
                      (lambda v: fnp.reshape(fnp.transpose(v), 12), lambda a: np.reshape(a.T, 12)),
                      (lambda v: fnp.reshape(fnp.transpose(v), (2, 6), order="F"),
                       lambda a: np.reshape(a.T, (2, 6), order="F")),
                      (lambda v: fnp.getitem(v, (1, -1)), lambda a: np.array(a[1, -1])),
                      (lambda v: fnp.rot90(v, 3), lambda a: np.rot90(a, 3))]:
        got = fn(x)
        assert got.batch_shape == (2,)
        np.testing.assert_array_equal(np.asarray(got), np.stack([np_fn(a) for a in items]))


# -- StridedArray.strides / itemsize / nbytes ------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.int32, np.float32, np.complex64, np.bool_])
def test_byte_strides_itemsize_nbytes_are_numpys(dtype):
    a = np.zeros((3, 4, 5), dtype)
    x = fs.from_array(jnp.asarray(a))
    for v, y in [(a, x), (a[::-1, :, ::2], fnp.getitem(x, np.s_[::-1, :, ::2])), (a.T, fnp.transpose(x)),
                 (np.broadcast_to(a[:1], (2, 3, 4, 5)), fnp.broadcast_to(x[:1], (2, 3, 4, 5)))]:
        assert (y.strides, y.itemsize, y.nbytes) == (v.strides, v.itemsize, v.nbytes)
    assert x.stride() == (20, 5, 1)  # PyTorch's stride() keeps counting elements


# -- NumPy's own stride-trick cases (numpy/lib/tests/test_stride_tricks.py), restated ------------

# NumPy's cases use int64 (8 bytes); JAX without x64 stores int32, so their byte strides are
# restated per element: ``_b(16)`` is two int64 elements, two int32 elements here.
def _int64(n: int) -> fs.StridedArray:
    return fs.from_array(np.arange(n, dtype=np.int32))


def _b(*strides: int) -> tuple[int, ...]:
    return tuple(s // 8 * 4 for s in strides)


def test_numpy_as_strided_cases():
    a = fs.from_array(np.array([1, 2, 3, 4], dtype=np.int64))
    assert fnp.as_strided(a).tolist() == [1, 2, 3, 4]
    assert fnp.as_strided(a, shape=(2,), strides=(2 * a.itemsize,)).tolist() == [1, 3]
    assert fnp.as_strided(a, shape=(3, 4), strides=(0, a.itemsize)).tolist() == [[1, 2, 3, 4]] * 3
    for dtype in [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                  np.float32, np.float64, np.complex64]:
        x = fs.from_array(np.arange(10, dtype=dtype))
        y = fnp.as_strided(x, shape=(5,), strides=(x.itemsize * 2,))
        assert y.shape == (5,) and y.dtype == jnp.asarray(np.zeros(1, dtype)).dtype  # JAX's width


@pytest.mark.parametrize("size, view_size, step", [(10, 5, 1), (10, 5, 2), (20, 10, 2), (100, 10, 10)])
def test_numpy_as_strided_1d_positive_strides(size, view_size, step):
    x = _int64(size)
    y = fnp.as_strided(x, shape=(view_size,), strides=_b(8 * step))
    assert y.tolist() == np.arange(size)[::step][:view_size].tolist()


@pytest.mark.parametrize("n, w", [(10, 3), (20, 5), (100, 10)])
def test_numpy_as_strided_sliding_window_1d(n, w):
    y = fnp.as_strided(_int64(n), shape=(n - w + 1, w), strides=_b(8, 8))
    assert y.tolist()[0] == list(range(w)) and y.tolist()[-1] == list(range(n - w, n))


@pytest.mark.parametrize("shape", [(3, 4), (5, 6), (10, 10)])
def test_numpy_as_strided_default_strides(shape):
    x = fs.from_array(np.arange(math.prod(shape), dtype=np.int32).reshape(shape))
    assert fnp.as_strided(x).tolist() == np.arange(math.prod(shape)).reshape(shape).tolist()


@pytest.mark.parametrize("size", [0, 1, 2, 10, 100])
def test_numpy_as_strided_zero_stride_broadcasting(size):
    y = fnp.as_strided(fs.from_array(np.array([42], dtype=np.int32)), shape=(size,), strides=(0,))
    assert y.shape == (size,) and all(v == 42 for v in y.tolist())


@pytest.mark.parametrize("size, shape, strides", [
    (10, (5,), (32,)), (10, (10,), (16,)), (20, (15,), (16,)), (10, (20,), (8,)), (10, (100,), (8,)),
    (20, (5, 5), (80, 8)), (20, (3, 10), (64, 8)),
    (10, (5,), (-8,)), (10, (10,), (-8,)), (20, (5,), (-16,)),
    (10, (2, 3, 4), (96, 32, -8)), (20, (3, 4), (64, -8)), (30, (2, 3, 4), (-96, 32, 8)),
])
def test_numpy_as_strided_out_of_bounds_raise(size, shape, strides):
    """NumPy (2.5's ``check_bounds=True``) refuses these; here every call is checked."""
    with pytest.raises(StorageError, match="as_strided: (size|layout)"):
        fnp.as_strided(_int64(size), shape=shape, strides=_b(*strides))


def test_numpy_as_strided_views_of_a_larger_buffer():
    a = _int64(1000)
    y = fnp.as_strided(fnp.getitem(a, np.s_[:2]), shape=(2,), strides=_b(400))
    assert y.tolist() == [0, 50]
    assert fnp.as_strided(fnp.getitem(a, np.s_[100:102]), shape=(2,), strides=_b(80)).tolist() == [100, 110]
    nested = fnp.getitem(fnp.getitem(a, np.s_[10:100]), np.s_[5:10])
    assert fnp.as_strided(nested, shape=(2,), strides=_b(160)).tolist() == [15, 35]
    with pytest.raises(StorageError, match=re.escape("addresses storage indices -1 to 5")):
        fnp.as_strided(fnp.getitem(a, np.s_[5:7]), shape=(2,), strides=_b(-48))
    with pytest.raises(StorageError, match="require a storage of 121 elements"):
        fnp.as_strided(fnp.getitem(_int64(100), np.s_[95:97]), shape=(2,), strides=_b(200))
    assert fnp.as_strided(fnp.getitem(a, np.s_[10:20]), shape=(5,), strides=_b(16)).shape == (5,)
    assert fnp.as_strided(fnp.getitem(_int64(200), np.s_[::2]), shape=(10,), strides=_b(16)).shape == (10,)


@pytest.mark.parametrize("start, stop, stride, ok", [
    (0, 10, 552, True), (90, 95, 72, True), (90, 95, 80, False), (5, 7, -40, True), (5, 7, -48, False),
])
def test_numpy_as_strided_view_parametrized(start, stop, stride, ok):
    b = fnp.getitem(_int64(100), np.s_[start:stop])
    if ok:
        assert fnp.as_strided(b, shape=(2,), strides=_b(stride)).shape == (2,)
    else:
        with pytest.raises(StorageError):
            fnp.as_strided(b, shape=(2,), strides=_b(stride))


def test_as_strided_refuses_strides_that_split_elements():
    """NumPy accepts a byte stride of 553 for int64 (``(0, 10, 552 + 1, True)`` in its tests);
    a storage of whole elements cannot, and says so."""
    with pytest.raises(LayoutError, match=re.escape("strides (553,) (bytes) must be multiples of the "
                                                    "itemsize 4")):
        fnp.as_strided(_int64(100), shape=(2,), strides=(553,))
    with pytest.raises(LayoutError, match="mismatch in length of strides and shape"):
        fnp.as_strided(_int64(10), shape=(2, 3), strides=_b(8))


def _grid(rows: int, cols: int) -> fs.StridedArray:
    i, j = np.ogrid[:rows, :cols]
    return fs.from_array(10 * i + j)


def test_numpy_sliding_window_view_cases():
    assert fnp.sliding_window_view(np.arange(5), 2).tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]
    assert fnp.sliding_window_view(_grid(3, 4), (2, 2)).tolist() == [
        [[[0, 1], [10, 11]], [[1, 2], [11, 12]], [[2, 3], [12, 13]]],
        [[[10, 11], [20, 21]], [[11, 12], [21, 22]], [[12, 13], [22, 23]]]]
    assert fnp.sliding_window_view(_grid(3, 4), 3, 0).tolist() == [
        [[0, 10, 20], [1, 11, 21], [2, 12, 22], [3, 13, 23]]]
    assert fnp.sliding_window_view(_grid(3, 4), (2, 3), (1, 1)).tolist() == [
        [[[0, 1, 2], [1, 2, 3]]], [[[10, 11, 12], [11, 12, 13]]], [[[20, 21, 22], [21, 22, 23]]]]
    assert fnp.sliding_window_view(_grid(4, 4), (2, 3)).tolist() == [
        [[[0, 1, 2], [10, 11, 12]], [[1, 2, 3], [11, 12, 13]]],
        [[[10, 11, 12], [20, 21, 22]], [[11, 12, 13], [21, 22, 23]]],
        [[[20, 21, 22], [30, 31, 32]], [[21, 22, 23], [31, 32, 33]]]]


@pytest.mark.parametrize("args, message", [
    (((-1, 3),), "cannot contain negative values"),
    (((1,),), "must provide window_shape for all dimensions of `x`"),
    (((1, 3, 4), (0, 1)), "Must provide matching length window_shape and axis"),
    (((5, 5),), "window shape cannot be larger than input array"),
])
def test_numpy_sliding_window_view_errors(args, message):
    with pytest.raises(LayoutError, match=re.escape(message)):
        fnp.sliding_window_view(_grid(4, 4), *args)


@pytest.mark.parametrize("array, shape, expected", [
    (np.array(0), (0,), np.zeros(0)), (np.array(0), (1,), np.zeros(1)), (np.array(0), (3,), np.zeros(3)),
    (np.ones(1), (1,), np.ones(1)), (np.ones(1), (2,), np.ones(2)),
    (np.ones(1), (1, 2, 3), np.ones((1, 2, 3))),
    (np.arange(3), (3,), np.arange(3)), (np.arange(3), (1, 3), np.arange(3).reshape(1, -1)),
    (np.arange(3), (2, 3), np.array([[0, 1, 2], [0, 1, 2]])),
    (np.ones(0), 0, np.ones(0)), (np.ones(1), 1, np.ones(1)), (np.ones(1), 2, np.ones(2)),
    (np.ones(1), (0,), np.ones(0)), (np.ones((1, 2)), (0, 2), np.ones((0, 2))),
    (np.ones((2, 1)), (2, 0), np.ones((2, 0))),
])
def test_numpy_broadcast_to_succeeds(array, shape, expected):
    got = fnp.broadcast_to(array, shape)
    np.testing.assert_array_equal(np.asarray(got), expected)
    if array.size:  # NumPy's fresh empty arrays have strides 0, ours dense ones
        expect = np.broadcast_to(array, shape)
        assert got.stride() == tuple(s // expect.itemsize for s in expect.strides)


@pytest.mark.parametrize("orig, target", [
    ((0,), ()), ((1,), ()), ((3,), ()), ((3,), (1,)), ((3,), (2,)), ((3,), (4,)), ((1, 2), (2, 1)),
    ((1, 1), (1,)), ((1,), -1), ((1,), (-1,)), ((1, 2), (-1, 2)),
])
def test_numpy_broadcast_to_raises(orig, target):
    with pytest.raises(ValueError):
        np.broadcast_to(np.zeros(orig), target)
    with pytest.raises(LayoutError):
        fnp.broadcast_to(np.zeros(orig), target)


@pytest.mark.parametrize("shape0, shape1", [
    ((1,), (3,)), ((1, 3), (3, 3)), ((3, 1), (3, 3)), ((1, 3), (3, 1)), ((1, 1), (3, 3)), ((1, 0), (0, 0)),
    ((3,), (3, 3)), ((3,), (3, 1)), ((1, 1), (3,)), ((1,), (0, 1)), ((), (3, 3)),
])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("flipped", [False, True])
def test_numpy_broadcast_same_as_ufunc(shape0, shape1, transposed, flipped):
    """NumPy's ``assert_same_as_ufunc``: broadcasting ``x1`` to the common shape gives the
    values ``x0 + x1`` has (with ``x0`` zeros), transposed and flipped (negative strides) too."""
    if flipped and () in (shape0, shape1):
        return
    x0 = np.zeros(shape0, dtype=int)
    x1 = np.arange(math.prod(shape1), dtype=np.int32).reshape(shape1)
    ours = fs.from_array(jnp.asarray(x1))
    if transposed:
        x0, x1, ours = x0.T, x1.T, fnp.transpose(ours)
    if flipped:
        x0, x1, ours = x0[::-1], x1[::-1], fnp.flip(ours, 0)
    y = x0 + x1
    got = fnp.broadcast_to(ours, y.shape)
    np.testing.assert_array_equal(np.asarray(got), y)
    if y.size:
        assert got.strides == np.broadcast_to(x1, y.shape).strides


def test_oracle_reads_negative_strides_as_numpy_does():
    """The oracle (pure NumPy index arithmetic, no JAX) against NumPy's own strided view."""
    from functional_strides import oracle

    base = np.arange(40)
    for layout in [Layout((3, 4), (-8, 2), 17), Layout((2, 3, 2), (1, -6, 20), 12), Layout((5,), (-7,), 30)]:
        np.testing.assert_array_equal(oracle.materialize(base, layout), _np_view(base, layout))
    with pytest.raises(fs.StorageError, match="indices -2 to 6"):
        oracle.materialize(base[:10], (((3,), (-4,), 6)))


def test_a_strided_ndarray_keeps_its_strides_as_numpy_sees_them():
    """A NumPy input is imported with its own strides (``fs.from_numpy``), so the view NumPy
    returns and ours have the same element strides and values."""
    a = np.arange(24, dtype=np.int32).reshape(4, 6)[::2, ::-1]
    for ours, theirs in [(fnp.transpose(a), np.transpose(a)), (fnp.getitem(a, np.s_[:, 1:]), a[:, 1:]),
                         (fnp.swapaxes(a, 0, 1), np.swapaxes(a, 0, 1))]:
        assert ours.strides == theirs.strides and ours.tolist() == theirs.tolist()

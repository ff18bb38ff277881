"""NumPy's answers where NumPy arrays meet this library: ``fnp.shares_memory`` and
``fnp.may_share_memory`` (NumPy's own answer for two NumPy arrays, NumPy's ``max_work=``
for views of one storage, checked against NumPy on the same views of one buffer);
``fnp.as_strided`` without strides (NumPy lays a C-contiguous input out row-major); imports
of arrays whose unused strides are no whole number of elements (``fs.from_dlpack``,
``fs.from_numpy``, against ``np.from_dlpack``)."""

from __future__ import annotations

import re

import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch
from hypothesis import given
from hypothesis import strategies as st

import functional_strides as fs
import functional_strides.numpy as fnp
from functional_strides import Layout, LayoutError, LayoutTypeError

TooHardError = np.exceptions.TooHardError  # NumPy's; functional_strides.TooHardError derives from it

as_strided_np = np.lib.stride_tricks.as_strided


# -- shares_memory and may_share_memory ------------------------------------------------------------

NUMPY_PAIRS = {
    "same": lambda a: (a, a),
    "every_other": lambda a: (a, a[::2]),
    "interleaved": lambda a: (a[::2], a[1::2]),
    "disjoint_halves": lambda a: (a[:6], a[6:]),
    "reversed": lambda a: (a, a[::-1]),
    "copy": lambda a: (a, a.copy()),
    "windows": lambda a: (as_strided_np(a, (3, 4), (4 * a.itemsize, a.itemsize)), a[-1:]),
    "empty": lambda a: (a, a[3:3]),
}


def _same_answer(ours, numpy) -> None:
    """``ours()`` and ``numpy()`` give the same bool, or both raise NumPy's TooHardError."""
    try:
        want = numpy()
    except TooHardError:
        with pytest.raises(TooHardError, match="max_work=0"):
            ours()
        return
    assert ours() is want


@pytest.mark.parametrize("pair", NUMPY_PAIRS)
@pytest.mark.parametrize("max_work", [None, -1, 0, 1, 100])
def test_two_numpy_arrays_get_numpys_answers(pair, max_work):
    a, b = NUMPY_PAIRS[pair](np.arange(12, dtype=np.int32))
    for ours, theirs in ((fnp.shares_memory, np.shares_memory), (fnp.may_share_memory, np.may_share_memory)):
        try:
            want = theirs(a, b, max_work=max_work)
        except TooHardError:
            with pytest.raises(TooHardError):
                ours(a, b, max_work=max_work)
        else:
            assert ours(a, b, max_work=max_work) is want
        assert ours(a, b) is theirs(a, b)


def _views(base: np.ndarray, *views: np.ndarray) -> list[fs.StridedArray]:
    """NumPy views of the 1-D ``base`` as views of one StridedArray storage holding its values
    (element strides, and the offset of each view's data pointer in ``base``)."""
    storage = jnp.asarray(base)
    start = base.__array_interface__["data"][0]
    return [fs.StridedArray(storage, Layout(v.shape, tuple(s // base.itemsize for s in v.strides),
                                            (v.__array_interface__["data"][0] - start) // base.itemsize))
            for v in views]


@given(starts=st.tuples(st.integers(0, 5), st.integers(0, 5)),
       steps=st.tuples(st.integers(1, 4), st.integers(1, 4)),
       flips=st.tuples(st.booleans(), st.booleans()))
def test_views_of_one_storage_answer_as_numpy_on_the_same_views(starts, steps, flips):
    base = np.arange(12, dtype=np.int32)
    a, b = (base[s::k][::-1] if f else base[s::k] for s, k, f in zip(starts, steps, flips, strict=True))
    x, y = _views(base, a, b)
    assert np.asarray(x).tolist() == a.tolist() and np.asarray(y).tolist() == b.tolist()
    for max_work in (None, -1, 0):
        _same_answer(lambda w=max_work: fnp.shares_memory(x, y, max_work=w),
                     lambda w=max_work: np.shares_memory(a, b, max_work=w))
        assert fnp.may_share_memory(x, y, max_work=max_work) is np.may_share_memory(a, b, max_work=max_work)
    # a positive bound: the exact answer here (NumPy's may give up past it)
    assert fnp.shares_memory(x, y, max_work=7) is np.shares_memory(a, b)
    assert fnp.may_share_memory(x, y, max_work=7) is np.shares_memory(a, b)


def test_values_that_are_no_views_share_nothing():
    a = np.arange(6)
    x = fs.from_numpy(a)  # a copy, in JAX's memory
    assert fnp.shares_memory(a, x) is False and fnp.may_share_memory(x, a) is False
    assert fnp.shares_memory(jnp.arange(3), jnp.arange(3)) is False
    assert fnp.may_share_memory(x, x.contiguous().clone()) is False and fnp.may_share_memory(x, x) is True


@pytest.mark.parametrize("max_work", [1.5, "exact", True])
def test_max_work_must_be_an_int_or_none(max_work):
    x = fs.from_array(jnp.arange(4))
    for fn in (fnp.shares_memory, fnp.may_share_memory):
        message = re.escape(f"max_work must be None or an int (got max_work={max_work!r})")
        with pytest.raises(LayoutTypeError, match=message):
            fn(x, x, max_work=max_work)


# -- as_strided without strides ---------------------------------------------------------------------

@pytest.mark.parametrize("make, shape", [
    (lambda: np.arange(12.0, dtype=np.float32), (3, 4)),
    (lambda: np.arange(12.0, dtype=np.float32).reshape(3, 4), (2, 5)),
    (lambda: np.arange(24, dtype=np.int16).reshape(2, 3, 4)[1], (6,)),    # C-contiguous, offset 12
    (lambda: np.arange(12.0, dtype=np.float32).reshape(3, 4)[1:2], (2, 2)),  # (1,4):(16,4): C-contiguous
    (lambda: np.arange(12.0, dtype=np.float32).reshape(3, 4).T, (2, 2)),  # not: its own strides
    (lambda: np.arange(12.0, dtype=np.float32).reshape(3, 4).T, None),
    (lambda: np.arange(12.0, dtype=np.float32)[::2], (3,)),
], ids=["flat", "matrix", "offset", "column", "transposed", "no_shape", "strided"])
def test_as_strided_without_strides_matches_numpy(make, shape):
    a = make()
    want = as_strided_np(a, shape=shape)
    got = fnp.as_strided(a, shape=shape)
    assert (got.shape, got.strides) == (want.shape, want.strides)
    assert got.tolist() == want.tolist()
    got_jax = fnp.as_strided(fs.from_numpy(a), shape=shape)
    assert got_jax.strides == want.strides and got_jax.tolist() == want.tolist()


def test_as_strided_of_a_non_contiguous_input_refuses_a_shape_of_another_rank_as_numpy_does():
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4).T
    with pytest.raises(ValueError, match="mismatch in length of strides and shape"):
        as_strided_np(a, shape=(2,))
    with pytest.raises(LayoutError, match=re.escape("as_strided: mismatch in length of strides and shape "
                                                    "(got shape=(2,), strides=(4, 16))")):
        fnp.as_strided(a, shape=(2,))


def test_as_strided_without_strides_is_bounds_checked():
    with pytest.raises(fs.StorageError):
        fnp.as_strided(np.arange(6.0, dtype=np.float32), shape=(3, 4))


# -- imports whose unused strides are no whole number of elements --------------------------------

ODD_STRIDES = {
    "size_one_dim": lambda: as_strided_np(np.arange(8, dtype=np.float32), (1, 4), (3, 4)),
    "size_one_last": lambda: as_strided_np(np.arange(8, dtype=np.float32), (4, 1), (4, 7)),
    "empty": lambda: as_strided_np(np.arange(8, dtype=np.float32), (0, 4), (3, 5)),
    "empty_rank_1": lambda: as_strided_np(np.arange(8, dtype=np.int16), (0,), (3,)),
    "all_size_one": lambda: as_strided_np(np.arange(8, dtype=np.float64), (1, 1), (5, 3)),
}


@pytest.mark.parametrize("name", ODD_STRIDES)
def test_unused_strides_never_refuse_an_import(name):
    a = ODD_STRIDES[name]()
    via_numpy = np.from_dlpack(a)  # NumPy accepts them too
    for x in (fs.from_dlpack(a), fs.from_numpy(a)):
        assert x.shape == a.shape and x.tolist() == a.tolist() == via_numpy.tolist()
        used = [d for d, n in enumerate(a.shape) if n > 1 and a.size]
        assert all(x.strides[d] == a.strides[d] for d in used)
        assert all(x.stride(d) == 0 for d in range(a.ndim) if a.strides[d] % a.itemsize)


def test_a_used_stride_that_is_no_whole_number_of_elements_is_still_refused():
    a = as_strided_np(np.arange(8, dtype=np.float32), (2, 2), (3, 4))
    with pytest.raises(LayoutError, match=re.escape("(dims [0]: strides [3] bytes)")):
        fs.from_dlpack(a)


def test_the_same_array_behind_another_producer_imports_alike():
    torch = import_torch()
    a = ODD_STRIDES["size_one_dim"]()
    ours, theirs = fs.from_dlpack(a), fs.from_dlpack(torch.from_dlpack(a))
    assert ours.shape == theirs.shape and ours.tolist() == theirs.tolist()

"""The Ascend vocabulary (``functional_strides.ascend``), tested on the seed documents' worked examples."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from _support import seed_cases
from hypothesis import given
from hypothesis import strategies as st

import functional_strides as fs
from functional_strides import LayoutError, StorageError
from functional_strides.ascend import (
    MAX_DIM_NUM,
    AclTensor,
    as_strided,
    get_shape,
    get_stride,
    make_layout,
    make_shape,
    make_stride,
    to_contiguous_strides,
)


def _case(case_id: str) -> dict[str, Any]:
    """The seed documents' worked example ``case_id`` (tests/data/seed_examples.json)."""
    (case,) = [case for case in seed_cases() if case["id"] == case_id]
    return case


def _storage(spec: dict[str, Any]) -> np.ndarray:
    dtype = np.dtype(spec.get("dtype", "float16"))
    return np.arange(spec["arange"], dtype=dtype) if "arange" in spec else np.asarray(spec["values"], dtype)


# -- ATB AsStrided (seed 002) --------------------------------------------------------------------
@pytest.mark.parametrize("case_id", ["S002-1", "S002-2", "S000-1", "S000-2", "S003-1"])
def test_as_strided_seed_examples(case_id):
    case = _case(case_id)
    (op,) = case["ops"]
    args, want = op["args"], case["expect"]
    x = _storage(case["storage"]).astype(np.float16)
    y = as_strided(x, args["size"], args["stride"], [args["storage_offset"]])
    assert (y.shape, y.stride(), y.storage_offset()) == (tuple(want["shape"]), tuple(want["strides"]),
                                                          want["offset"])
    np.testing.assert_array_equal(np.asarray(y).reshape(-1), np.asarray(want["values"], np.float16))


def test_as_strided_seed_out_of_bounds():
    case = _case("S002-3")
    (op,) = case["ops"]
    args = op["args"]
    x = _storage(case["storage"])                     # int64, accepted
    assert case["expect"]["error"] == "LayoutError"
    with pytest.raises(StorageError, match="past the end|storage"):
        as_strided(x, args["size"], args["stride"], [args["storage_offset"]])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(size=[1] * 9, stride=[1] * 9, offset=[0]), "size has 9 dims (1 to 8 allowed)"),
    (dict(size=[], stride=[], offset=[0]), "size has 0 dims (1 to 8 allowed)"),
    (dict(size=[2, 0], stride=[1, 1], offset=[0]), "size entries must be > 0 (got size=[2, 0])"),
    (dict(size=[2, 2], stride=[1, -1], offset=[0]), "stride entries must be >= 0 (got stride=[1, -1])"),
    (dict(size=[2, 2], stride=[1], offset=[0]), "stride has 1 entries for 2 dims of size"),
    (dict(size=[2], stride=[1], offset=[0, 1]), "offset must hold exactly one value (got offset=[0, 1])"),
    (dict(size=[2], stride=[1], offset=[-1]), "offset must be >= 0 (got offset=[-1])"),
], ids=["nine-dims", "no-dims", "zero-size", "negative-stride", "rank", "two-offsets", "negative-offset"])
def test_as_strided_limits(kwargs, message):
    x = np.arange(9, dtype=np.float16)
    with pytest.raises(LayoutError, match=re.escape(message)):
        as_strided(x, **kwargs)


def test_as_strided_dtypes():
    with pytest.raises(LayoutError, match=re.escape("x has dtype float32; AsStridedOperation takes float16")):
        as_strided(np.zeros(4, np.float32), [2], [1], 0)
    y = as_strided(np.arange(6, dtype=np.int64), [2, 2], [1, 2], 1)   # int offset accepted as well
    assert np.asarray(y).tolist() == [[1, 3], [2, 4]]


@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_as_strided_matches_the_core_and_numpy(size, data):
    stride = data.draw(st.lists(st.integers(0, 4), min_size=len(size), max_size=len(size)))
    span = sum((n - 1) * s for n, s in zip(size, stride, strict=True)) + 1
    offset = data.draw(st.integers(0, 3))
    x = np.arange(span + offset, dtype=np.float16)
    y = as_strided(x, size, stride, [offset])
    want = np.lib.stride_tricks.as_strided(x[offset:], size, [s * x.itemsize for s in stride])
    np.testing.assert_array_equal(np.asarray(y), want)
    assert y.layout == fs.as_strided(x, size, stride, offset).layout


# -- aclTensor (seed 004) ------------------------------------------------------------------------
def test_set_view_shape_seed_example():
    case = _case("S004-1")
    want = case["expect"]
    t = AclTensor((10, 20)).with_view_shape(case["ops"][-1]["args"]["shape"])
    assert (t.view_shape, t.strides) == (tuple(want["shape"]), tuple(want["strides"]))
    assert t.offset == want["offset"]
    assert t.storage_shape == (10, 20) and t.numel() == 200 and not t.is_empty()
    v = t.view(_storage(case["storage"]).reshape(10, 20))
    np.testing.assert_array_equal(np.asarray(v).reshape(-1), np.arange(200))


def test_empty_view_seed_example():
    case = _case("S004-2")
    shape = tuple(case["ops"][-1]["args"]["shape"])
    t = AclTensor((1, 2, 16, 16)).with_view_shape((1, 2, 16, 16)).with_view_shape(shape)
    assert t.storage_shape == (1, 2, 16, 16) and t.view_shape == shape
    assert t.is_empty() and t.numel() == 0
    # opbase's ToContiguousStrides zeroes strides left of a 0 extent; PyTorch's (the seed's) does not
    assert t.strides == (0, 1, 1) and tuple(case["expect"]["strides"]) == (1, 1, 1)


def test_set_view_shape_to_one_to_five():
    t = AclTensor((120,)).with_view_shape([1, 2, 3, 4, 5])
    assert t.strides == (120, 60, 20, 5, 1) and t.numel() == 120


@given(st.lists(st.integers(1, 5), min_size=0, max_size=5))
def test_to_contiguous_strides_matches_the_core_without_zero_extents(shape):
    assert to_contiguous_strides(shape) == fs.contiguous_strides(tuple(shape))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: AclTensor((1,) * (MAX_DIM_NUM + 1)), "view_shape has 26 dims"),
    (lambda: AclTensor((4,)).with_view_shape((1,) * 26), "shape has 26 dims"),
    (lambda: AclTensor((2, 3), (3,)), "view_shape (2, 3) has 2 dims but strides (3,) has 1"),
    (lambda: AclTensor((2, 3), (3, 1), 1, (6,)),
     "addresses 7 storage elements but storage_shape (6,) holds 6"),
    (lambda: AclTensor((2, -3)), "view_shape must be a sequence of non-negative ints"),
    (lambda: AclTensor((2, 3), None, -1), "invalid storage offset -1"),
], ids=["max-dims", "set-view-max-dims", "rank", "past-storage", "negative-extent", "negative-offset"])
def test_acl_tensor_errors(make, message):
    with pytest.raises(LayoutError, match=re.escape(message)):
        make()


def test_acl_tensor_is_immutable():
    t = AclTensor((2, 3))
    with pytest.raises(AttributeError):
        t.view_shape = (6,)


# -- Ascend C Layout (seed 003) ------------------------------------------------------------------
def test_layout_seed_example():
    case = _case("S003-1")
    args = case["ops"][0]["args"]
    layout = make_layout(make_shape(*args["size"]), make_stride(*args["stride"]))
    assert get_shape(layout) == (4, 2) and get_stride(layout) == (4, 1)
    offsets = [layout((i, j)) for i in range(4) for j in range(2)]
    assert offsets == case["expect"]["values"] == [0, 1, 4, 5, 8, 9, 12, 13]
    # the same layout read from a storage through the flat core
    x = fs.cute.to_layout(layout)
    assert (x.shape, x.strides) == tuple(map(tuple, (case["expect"]["shape"], case["expect"]["strides"])))


def test_make_layout_errors():
    with pytest.raises(LayoutError, match="not congruent"):
        make_layout(make_shape(4, 2), make_stride(1))
    with pytest.raises(LayoutError, match=re.escape("shape entry -4 is below 0")):
        make_shape(-4, 2)

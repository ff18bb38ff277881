"""Differential tests of every view op against PyTorch.

The same strided tensor is built on both sides, ``torch.as_strided(torch.arange(N), size,
stride, offset)`` and ``fs.as_strided(jnp.arange(N), ...)``, the same op with the same
arguments is applied to both, and the results must agree: refused by both (PyTorch's
``RuntimeError``/``IndexError``/``ValueError`` against our ``LayoutError``, an ``IndexError``
on both sides when PyTorch raises one), or equal ``shape``, ``stride()``,
``storage_offset()``, values, and whether the result shares the input's storage.
"""

from __future__ import annotations

import math
import re
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch
from hypothesis import given
from hypothesis import strategies as st
from strategies import OP_NAMES, Op, layouts, op_chains, ops, strided_arrays

import functional_strides as fs
import functional_strides.testing as fst
from functional_strides import Layout, LayoutError, ViewError
from functional_strides._src.testing.torch_parity import _torch_apply

torch = import_torch()



# -- helpers -----------------------------------------------------------------------------------
def _pair(storage_size: int, shape, strides, offset) -> tuple[Any, fs.StridedArray]:
    """The same strided tensor over ``arange(storage_size)`` (float32) in torch and here."""
    base = torch.arange(storage_size, dtype=torch.float32)
    ours = fs.as_strided(jnp.arange(storage_size, dtype=jnp.float32), shape, strides, offset)
    return torch.as_strided(base, shape, strides, offset), ours


def _pair_of(x: fs.StridedArray, *, exact: bool = False) -> tuple[Any, fs.StridedArray]:
    """The pair for ``x``'s layout. Unless ``exact``, the storage is rounded up to a power
    of two (at least 128 elements): materialisation compiles once per (shape, storage size),
    so fewer storage sizes keep the suite fast. ``as_strided`` keeps the exact size so that
    its bounds checks meet tight storages."""
    size = int(x.storage.shape[0])
    return _pair(size if exact else _bucket(size), x.shape, x.stride(), x.storage_offset())


def _bucket(size: int) -> int:
    return max(128, 1 << (size - 1).bit_length())


def _ours_apply(op: Op, x: fs.StridedArray, functional: bool) -> tuple[Any, BaseException | None]:
    """Run ``op`` here (method or module-level function); ``x.T`` must warn iff rank != 2
    and ``x.mT`` iff rank 0, as PyTorch's deprecations do."""
    module = fs if functional and op.name != "getitem" else None
    try:
        if (op.name == "T" and x.ndim != 2) or (op.name == "mT" and x.ndim == 0):
            with pytest.warns(UserWarning, match=rf"x\.{op.name}"):
                return op.apply(x, module=module), None
        return op.apply(x, module=module), None
    except LayoutError as e:
        return None, e


def _shares(t_out: Any, t_in: Any) -> bool:
    return t_out.untyped_storage().data_ptr() == t_in.untyped_storage().data_ptr()


def _assert_same_tensor(t_out: Any, ours: fs.StridedArray, t_in: Any, x: fs.StridedArray,
                        what: str) -> None:
    assert isinstance(ours, fs.StridedArray), what
    assert ours.shape == tuple(t_out.shape), what
    assert ours.stride() == t_out.stride(), what
    assert ours.storage_offset() == t_out.storage_offset(), what
    assert ours.is_contiguous() == t_out.is_contiguous(), what
    assert fs.shares_storage(ours, x) == _shares(t_out, t_in), what
    np.testing.assert_array_equal(np.asarray(ours), t_out.numpy(), err_msg=what)


def _check_step(op: Op, t_in: Any, x: fs.StridedArray, functional: bool = False):
    """Apply ``op`` to both sides and compare; returns (torch result, our result) or
    (None, None) when both refused."""
    what = f"{x.layout}{op}"
    t_out, t_err = _torch_apply(op, t_in)
    ours, err = _ours_apply(op, x, functional)
    if t_err is not None:
        assert err is not None, f"{what}: PyTorch raised {t_err!r}, we returned {ours!r}"
        if isinstance(t_err, IndexError):
            assert isinstance(err, IndexError), f"{what}: PyTorch raised {t_err!r}, we raised {err!r}"
        return None, None
    assert err is None, f"{what}: PyTorch returned {t_out!r}, we raised {err!r}"
    if op.returns_tuple:
        assert isinstance(ours, tuple) and len(ours) == len(t_out), what
        for i, (tp, op_) in enumerate(zip(t_out, ours, strict=True)):
            _assert_same_tensor(tp, op_, t_in, x, f"{what} piece {i}")
    else:
        _assert_same_tensor(t_out, ours, t_in, x, what)
    return t_out, ours


# -- hypothesis: one op at a time, every op -------------------------------------------------------
@pytest.mark.sampled(4)
@pytest.mark.parametrize("name", OP_NAMES)
@given(x=strided_arrays(), data=st.data())
def test_op_matches_torch(name: str, x: fs.StridedArray, data: st.DataObject) -> None:
    op = data.draw(ops(x.shape, name, storage_size=int(x.storage.shape[0])), label="op")
    functional = data.draw(st.booleans(), label="module-level function")
    t, ours = _pair_of(x, exact=name == "as_strided")
    _check_step(op, t, ours, functional)


@given(chain=op_chains(min_len=2, max_len=4))
def test_op_chain_matches_torch(chain: tuple[fs.StridedArray, list[Op]]) -> None:
    x, steps = chain
    _, ours = _pair_of(x)  # as_strided steps may then fit where the chain expected a refusal
    fst.assert_chain_matches_torch(ours, steps)


@given(x=strided_arrays(), data=st.data())
def test_valid_chains_match_torch_through_module_functions(x: fs.StridedArray, data: st.DataObject) -> None:
    _, ours = _pair_of(x)
    chain = data.draw(fst.view_chains(ours, min_len=1, max_len=4), label="chain")
    fst.assert_chain_matches_torch(ours, chain, functional=True)


# -- targeted cases ------------------------------------------------------------------------------------
_VIEW_CASES = [
    # (storage size, shape, strides, offset, target shape, expected strides or None if refused)
    pytest.param(24, (2, 1, 3, 2), (12, 12, 4, 2), 0, (2, 1, 1, 6), (12, 12, 12, 2), id="size1-absorbed"),
    pytest.param(3, (3, 4), (1, 0), 0, (3, 2, 2), (1, 0, 0), id="expanded-split"),
    pytest.param(3, (3, 4), (1, 0), 0, (12,), None, id="expanded-merge-refused"),
    pytest.param(24, (2, 3, 2), (12, 4, 2), 0, (12,), (2,), id="step2-merges"),
    pytest.param(24, (2, 3, 2), (12, 4, 2), 0, (2, 6), (12, 2), id="step2-partial-merge"),
    pytest.param(24, (6, 4), (1, 6), 0, (6, 2, 2), (1, 12, 6), id="transposed-split"),
    pytest.param(24, (6, 4), (1, 6), 0, (2, 12), None, id="transposed-merge-refused"),
    pytest.param(24, (6, 4), (1, 6), 0, (-1,), None, id="transposed-flat-refused"),
    pytest.param(0, (0, 3), (3, 1), 0, (3, 0), (1, 1), id="size0-as-if-resized"),
    pytest.param(5, (2, 0, 3), (7, 1, 9), 2, (2, 0, 3), (7, 1, 9), id="size0-same-shape-keeps"),
    pytest.param(5, (2, 0, 3), (7, 1, 9), 2, (0, -1, 2), None, id="size0-ambiguous"),
    pytest.param(5, (2, 0, 3), (7, 1, 9), 2, (1, 0, 1), (1, 1, 1), id="size0-ones"),
    pytest.param(8, (), (), 3, (1, 1), (1, 1), id="rank0-to-ones"),
    pytest.param(8, (1, 1), (5, 7), 3, (), (), id="ones-to-rank0"),
    pytest.param(12, (3, 4), (4, 1), 0, (5,), None, id="wrong-numel"),
    pytest.param(12, (3, 4), (4, 1), 0, (-1, -1), None, id="two-inferred"),
    pytest.param(12, (4, 3), (1, 4), 0, (4, 3, 1), (1, 4, 4), id="append-size1"),
    pytest.param(12, (4, 3), (1, 4), 0, (1, 4, 3), (4, 1, 4), id="prepend-size1"),
]


@pytest.mark.parametrize("storage_size,shape,strides,offset,target,expected", _VIEW_CASES)
def test_view_tricky_cases(storage_size, shape, strides, offset, target, expected) -> None:
    t, x = _pair(storage_size, shape, strides, offset)
    t_out, ours = _check_step(Op("view", (target,)), t, x)
    if expected is None:
        assert t_out is None
        with pytest.raises(LayoutError):
            x.view(target)
    else:
        assert ours.stride() == t_out.stride() == expected
        assert ours.storage_offset() == offset


def test_view_refusal_is_view_error() -> None:
    _, x = _pair(24, (6, 4), (1, 6), 0)
    message = "view: shape [2, 12] is not compatible with layout (6,4):(1,6)+0"
    with pytest.raises(ViewError, match=re.escape(message)):
        x.view(2, 12)


@pytest.mark.parametrize("storage_size,shape,strides,offset,target", [
    pytest.param(24, (6, 4), (1, 6), 0, (2, 12), id="transposed"),
    pytest.param(3, (3, 4), (1, 0), 0, (12,), id="expanded"),
    pytest.param(30, (2, 3), (10, 2), 1, (6,), id="strided-rows"),
    pytest.param(24, (6, 4), (1, 6), 0, (6, 2, 2), id="view-possible"),
    pytest.param(0, (0, 3), (3, 1), 0, (3, 0), id="empty"),
])
@pytest.mark.parametrize("how", ["reshape", "flatten"])
def test_reshape_and_flatten_copy_only_when_view_fails(storage_size, shape, strides, offset, target, how):
    t, x = _pair(storage_size, shape, strides, offset)
    op = Op("reshape", (target,)) if how == "reshape" else Op("flatten", ())
    t_out, ours = _check_step(op, t, x)
    view_ok = fs.views.view_strides(shape, strides, tuple(t_out.shape)) is not None
    assert fs.shares_storage(ours, x) == view_ok
    assert _shares(t_out, t) == view_ok


@pytest.mark.parametrize("key", [
    0, -1, (slice(None), 1), (Ellipsis, 0), (None, Ellipsis, None), (1, None, slice(1, None, 2)),
    slice(-10, 10, 3), (slice(5, 1),), (Ellipsis,), (None,), (Ellipsis, None), (-2, -1),
    (slice(None), slice(None), 0), np.int64(1), (slice(np.int32(0), np.int64(2)), np.int16(-1)),
], ids=repr)
def test_getitem_keys(key: Any) -> None:
    t, x = _pair(40, (2, 3, 4), (1, 8, 2), 3)
    t_out, ours = _check_step(Op("getitem", (key,)), t, x)
    assert t_out is not None


@pytest.mark.parametrize("key", [2, -3, (0, 0, 0, 0), (slice(None), 3), (slice(None, None, -1),),
                                 (slice(None, None, 0),)], ids=repr)
def test_getitem_refusals(key: Any) -> None:
    t, x = _pair(40, (2, 3, 4), (1, 8, 2), 3)
    t_out, ours = _check_step(Op("getitem", (key,)), t, x)
    assert t_out is None and ours is None


@pytest.mark.parametrize("op", [
    Op("split", (2, 1)), Op("split", ([1, 0, 2], -2)), Op("split", (5, 1)),
    Op("chunk", (2, 1)), Op("chunk", (3, 0)), Op("chunk", (5, 2)), Op("unbind", (1,)),
    Op("unbind", (-1,)),
], ids=str)
def test_multi_output_pieces(op: Op) -> None:
    t, x = _pair(50, (2, 3, 4), (1, 8, 2), 3)
    t_out, ours = _check_step(op, t, x)
    assert t_out is not None and len(ours) == len(t_out)


@pytest.mark.parametrize("op", [
    Op("unfold", (0, 2, 1)), Op("unfold", (-1, 3, 2)), Op("unfold", (1, 0, 1)),
    Op("diagonal", ()), Op("diagonal", (1, 0, 2)), Op("diagonal", (-2, 2, 1)), Op("diagonal", (9, 0, 1)),
    Op("movedim", ((0, 1), (2, 0))), Op("movedim", (-1, 0)), Op("squeeze", ((0, 1),)),
    Op("expand", ((2, 2, 3, 4),)), Op("broadcast_to", ((3, 2, 3, 4),)), Op("narrow", (2, -2, 2)),
    Op("select", (1, -1)), Op("unflatten", (2, (2, -1))), Op("T"), Op("mT"),
], ids=str)
def test_targeted_ops(op: Op) -> None:
    t, x = _pair(50, (2, 3, 4), (1, 8, 2), 3)
    t_out, _ = _check_step(op, t, x)
    assert t_out is not None


@pytest.mark.parametrize("op", [
    Op("t"), Op("mT"), Op("select", (0, 0)), Op("unbind", (0,)), Op("narrow", (0, 0, 1)),
    Op("split", (1,)), Op("chunk", (1,)), Op("diagonal", ()), Op("getitem", (0,)),
    Op("unfold", (0, 1, 1)), Op("unfold", (-1, 0, 2)), Op("unfold", (0, 2, 1)),
    Op("flatten", ()), Op("unflatten", (0, (1,))), Op("squeeze", (0,)), Op("unsqueeze", (-1,)),
    Op("movedim", (0, -1)), Op("permute", ((),)), Op("transpose", (0, -1)), Op("expand", ((2, 3),)),
    Op("getitem", ((None, Ellipsis),)), Op("view", ((1, -1),)), Op("T"),
], ids=str)
def test_rank0(op: Op) -> None:
    t, x = _pair(5, (), (), 2)
    _check_step(op, t, x)


@pytest.mark.parametrize("shape,strides", [((1, 0, 1), (1, 1, 1)), ((0,), (1,)), ((3, 0), (0, 0))])
@pytest.mark.parametrize("op", [
    Op("view", ((-1,),)), Op("view", ((0, 5),)), Op("reshape", ((0, -1),)), Op("flatten", ()),
    Op("contiguous"), Op("unfold", (0, 0, 1)), Op("split", (0, -1)), Op("chunk", (3, -1)),
    Op("diagonal", ()), Op("unbind", (-1,)), Op("getitem", ((Ellipsis, slice(1, None)),)),
], ids=str)
def test_size0(shape, strides, op: Op) -> None:
    t, x = _pair(0, shape, strides, 0)
    _check_step(op, t, x)


@given(layout=layouts(kinds=("contiguous", "permuted", "sliced")))
def test_contiguous_matches_torch(layout: Layout) -> None:
    t, x = _pair(_bucket(layout.required_storage_size), layout.shape, layout.strides, layout.offset)
    t_out, ours = _check_step(Op("contiguous"), t, x)
    assert ours.is_contiguous() and (ours is x) == (t_out is t)
    assert math.prod(ours.shape) == layout.numel

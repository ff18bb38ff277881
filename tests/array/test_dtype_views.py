"""dtype views against PyTorch: ``x.view(dtype)``, ``fs.view_as_real`` and
``fs.view_as_complex`` give PyTorch's shape, strides, offset and bytes, and refuse exactly
when PyTorch refuses, on random layouts over random bytes (bool, 8/16/32-bit integers,
float16, bfloat16, float32, complex64)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts

import functional_strides as fs
from functional_strides import Layout, LayoutError, LayoutTypeError, ViewError
from functional_strides._src.array.dtype_views import bitcast_storage, view_dtype_layout

DTYPES = ("bool", "int8", "uint8", "int16", "float16", "bfloat16", "int32", "uint32", "float32", "complex64")


def _np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@st.composite
def _cases(draw, dtypes=DTYPES):
    """(layout, source dtype name, storage bytes): layouts often shaped for a dtype view (last
    stride 1, the other strides and the offset multiples of 2, 4 or 8)."""
    layout = draw(layouts(max_rank=3, max_extent=4))
    if layout.ndim and draw(st.booleans()):
        k = draw(st.sampled_from((1, 2, 4)))
        shape = (*layout.shape[:-1], layout.shape[-1] * draw(st.sampled_from((1, 2, 4))))
        layout = Layout(shape, (*(s * k for s in layout.strides[:-1]), 1), layout.offset * k)
    src = draw(st.sampled_from(dtypes))
    size = _np_dtype(src).itemsize * (layout.required_storage_size + draw(st.integers(0, 3)))
    data = np.random.default_rng(draw(st.integers(0, 2**16))).integers(0, 256, size, dtype=np.uint8)
    if src == "bool":
        data %= 2  # PyTorch's bool bytes are 0 or 1
    return layout, src, data


def _pair(layout: Layout, src: str, data: np.ndarray):
    torch = import_torch()
    t = torch.zeros(len(data), dtype=torch.uint8)  # stride (1,) even when empty, unlike from_numpy
    t.copy_(torch.from_numpy(data.copy()))
    t = t.view(getattr(torch, src))
    t = torch.as_strided(t, layout.shape, layout.strides, layout.offset)
    x = fs.StridedArray(jnp.asarray(data.view(_np_dtype(src))), layout)
    return t, x


def _torch_bytes(t) -> np.ndarray:
    if t.numel() == 0:  # an empty view may keep a last stride other than 1
        return np.zeros(0, np.uint8)
    torch = import_torch()
    return t.clone(memory_format=torch.contiguous_format).reshape(-1).view(torch.uint8).numpy()


def _our_bytes(x) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x)).reshape(-1).view(np.uint8)


def _compare(t_fn, our_fn):
    torch = import_torch()
    try:
        expected, t_err = t_fn(), None
    except RuntimeError as e:
        expected, t_err = None, e
    if t_err is not None:
        with pytest.raises(LayoutError):
            our_fn()
        return None
    ours = our_fn()
    assert ours.shape == tuple(expected.shape)
    assert ours.stride() == expected.stride()
    assert ours.storage_offset() == expected.storage_offset()
    assert np.dtype(ours.dtype).name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(_our_bytes(ours), _torch_bytes(expected))
    assert expected.dtype != torch.bool or set(_our_bytes(ours)) <= {0, 1}
    return ours


@examples(27, deadline=None)
@given(case=_cases(), new=st.sampled_from(DTYPES))
def test_view_dtype_matches_torch(case, new):
    torch = import_torch()
    layout, src, data = case
    t, x = _pair(layout, src, data % 2 if new == "bool" else data)  # bool bytes are 0 or 1
    ours = _compare(lambda: t.view(getattr(torch, new)), lambda: x.view(_np_dtype(new)))
    if ours is not None:
        assert fs.shares_storage(ours, x) == (new == case[1])
        assert x.view(getattr(torch, new)).stride() == ours.stride()  # torch's dtype objects accepted
        assert x.view(new).layout == ours.layout  # and dtype names


@examples(13, deadline=None)
@given(case=_cases(dtypes=("complex64",)))
def test_view_as_real_matches_torch(case):
    torch = import_torch()
    t, x = _pair(*case)
    _compare(lambda: torch.view_as_real(t), lambda: fs.view_as_real(x))


@examples(20, deadline=None)
@given(case=_cases(dtypes=("float32", "float32", "int32", "bfloat16")))
def test_view_as_complex_matches_torch(case):
    torch = import_torch()
    t, x = _pair(*case)
    _compare(lambda: torch.view_as_complex(t), lambda: fs.view_as_complex(x))


@pytest.mark.parametrize(("layout", "new", "msg"), [
    (Layout((2, 3), (1, 2), 1), "int16",
     "view: self.stride(-1) must be 1 to view float32 as int16 (different element sizes), but got 2"),
    (Layout((2, 3), (6, 1), 2), "float64", None),
    (Layout((2, 4), (5, 1), 1), "uint64", None),
    (Layout((), (), 2), "int16", "view: self.dim() cannot be 0 to view float32 as int16 (different element"),
], ids=["stride", "size", "offset", "rank0"])
def test_refusals_name_the_condition(layout, new, msg):
    x = fs.StridedArray(jnp.zeros(24, jnp.float32), layout)
    if msg is None:  # 64-bit targets: the rule is checked on the layout alone (no x64 here)
        torch = import_torch()
        t = torch.zeros(24).as_strided(layout.shape, layout.strides, layout.offset)
        with pytest.raises(RuntimeError) as expected:
            t.view(getattr(torch, new))
        rule = re.sub(r"Float as \w+", f"float32 as {new}", str(expected.value))
        with pytest.raises(ViewError, match="^view: " + re.escape(rule)):
            view_dtype_layout(layout, np.float32, new)
        return
    with pytest.raises(ViewError, match="^" + re.escape(msg)):
        x.view(new)


def test_64_bit_targets_need_x64_and_unknown_dtypes_are_type_errors():
    x = fs.from_array(jnp.zeros(4, jnp.float32))
    if not jax.config.jax_enable_x64:
        with pytest.raises(LayoutTypeError, match="jax_enable_x64"):
            x.view(np.float64)
    torch = import_torch()
    with pytest.raises(LayoutTypeError, match="torch.complex32 has no JAX counterpart"):
        x.view(torch.complex32)
    with pytest.raises(LayoutError, match="float16 pairs would make complex32"):
        fs.view_as_complex(jnp.zeros((3, 2), jnp.float16))


def test_dtype_views_under_jit_and_with_a_traced_offset():
    x = fs.from_array(jnp.arange(8.0, dtype=jnp.float32).reshape(2, 4))

    @jax.jit
    def halves(storage, offset):
        v = fs.StridedArray(storage, Layout((2, 2), (4, 1), offset))  # a traced offset
        return jnp.asarray(v.view(jnp.uint16))  # downsizing: the offset doubles under the trace

    bits = np.arange(8.0, dtype=np.float32).view(np.uint16)
    np.testing.assert_array_equal(np.asarray(halves(x.storage, 1)), np.stack([bits[2:6], bits[10:14]]))
    with pytest.raises(ViewError, match="the storage offset is traced"):
        jax.jit(lambda s, o: jnp.asarray(fs.StridedArray(s, Layout((2, 2), (2, 1), o)).view(jnp.float32)))(
            jnp.zeros(8, jnp.uint16), 0)


@given(n=st.integers(0, 9), pair=st.sampled_from([("float32", "int8"), ("int8", "float32"), ("bool", "uint8"),
                                                  ("complex64", "float32"), ("float32", "complex64"),
                                                  ("uint8", "bool"), ("bfloat16", "float16")]))
@examples(10, deadline=None)
def test_bitcast_storage_reads_the_bytes_as_numpy_does(n, pair):
    old, new = map(_np_dtype, pair)
    raw = np.random.default_rng(n).integers(0, 2 if np.bool_ in (old, new) else 256, n * old.itemsize,
                                            dtype=np.uint8)
    out = np.asarray(bitcast_storage(jnp.asarray(raw.view(old)), new))
    keep = len(raw) // new.itemsize * new.itemsize
    np.testing.assert_array_equal(out.view(np.uint8), raw[:keep])

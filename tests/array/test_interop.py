"""Imports and exports that keep the layout: ``from_numpy`` against NumPy (element strides,
values, the reached span of the buffer), ``from_torch`` / ``to_torch`` round trips on random
torch views (size, stride, storage offset, bytes; bool, int, bfloat16, complex dtypes), and
``from_dlpack`` from every kind of producer, strides kept."""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts

import functional_strides as fs
from functional_strides import Layout, LayoutError, LayoutTypeError

NP_DTYPES = ("float32", "int8", "uint16", "bool", "complex64", "bfloat16")
TORCH_DTYPES = ("float32", "int16", "uint8", "bool", "complex64", "bfloat16", "float16", "float8_e4m3fn")


def _np_dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if name.startswith(("bfloat16", "float8")) else np.dtype(name)


def _random_bytes(seed: int, n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` elements of ``dtype`` with random bytes (bool: 0 or 1)."""
    raw = np.random.default_rng(seed).integers(0, 2 if dtype == np.bool_ else 256, n * dtype.itemsize,
                                               dtype=np.uint8)
    return raw.view(dtype)


def _bytes(values) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values)).reshape(-1).view(np.uint8)


# -- from_numpy ------------------------------------------------------------------------------
@st.composite
def _numpy_views(draw):
    """(array, base, index in base of the lowest element the array reaches): an ``as_strided``
    view of a random base buffer, its strides drawn by ``layouts()`` (transposed, sliced,
    broadcast, overlapping), some dims then reversed (negative strides)."""
    layout = draw(layouts(max_rank=4, max_extent=4))
    dtype = _np_dtype(draw(st.sampled_from(NP_DTYPES)))
    base = _random_bytes(draw(st.integers(0, 2**16)), layout.required_storage_size + 3, dtype)
    a = np.lib.stride_tricks.as_strided(base[layout.offset:], layout.shape,
                                        [s * dtype.itemsize for s in layout.strides], writeable=False)
    flips = tuple(slice(None, None, -1) if draw(st.booleans()) else slice(None) for _ in layout.shape)
    return a[flips], base, layout.offset  # some dims reversed: negative strides


@examples(20, deadline=None)
@given(case=_numpy_views())
def test_from_numpy_keeps_element_strides_values_and_the_reached_span(case):
    a, base, start = case
    x = fs.from_numpy(a)
    assert x.shape == a.shape and np.dtype(x.dtype) == a.dtype
    assert x.stride() == tuple(s // a.itemsize for s in a.strides) and x.strides == a.strides
    np.testing.assert_array_equal(_bytes(x), _bytes(a))
    if a.size:  # the storage is base[start : start + span + 1]: the gaps between elements included
        span = sum((n - 1) * abs(s) for n, s in zip(x.shape, x.stride(), strict=True))
        back = sum((n - 1) * -s for n, s in zip(x.shape, x.stride(), strict=True) if s < 0)
        assert x.storage_offset() == back and x.storage.shape == (span + 1,)
        np.testing.assert_array_equal(_bytes(x.storage), _bytes(base[start:start + span + 1]))
    else:
        assert x.storage.shape == (0,)


def test_from_numpy_of_a_view_into_a_larger_base_copies_only_its_span():
    base = np.arange(1000, dtype=np.float32).reshape(10, 100)
    a = base[2:4, 10:20:3]
    x = fs.from_numpy(a)
    assert x.stride() == (100, 3) and x.storage_offset() == 0
    assert x.storage.tolist() == list(range(210, 320))  # 110 elements of the 1000
    assert x.tolist() == a.tolist()


_ROW = np.arange(3.0, dtype=np.float32)


@pytest.mark.parametrize("a", [np.float32(2.5), np.array(7, np.int16), np.zeros((0, 3), np.float32),
                               np.zeros((3, 0), np.float32).T, np.broadcast_to(_ROW, (4, 3)),
                               np.arange(6, dtype=">f4").reshape(2, 3).T],
                         ids=["scalar", "0-d", "empty", "empty-T", "broadcast", "big-endian"])
def test_from_numpy_of_scalars_empty_and_broadcast_arrays(a):
    x = fs.from_numpy(a)
    a = np.asarray(a)
    assert x.shape == a.shape and x.stride() == tuple(s // a.itemsize for s in a.strides)
    assert x.tolist() == a.tolist()


def test_from_numpy_refuses_strides_that_are_no_whole_elements():
    packed = np.zeros(4, dtype=[("a", "i1"), ("b", "<f4")])["b"]  # itemsize 4, stride 5 bytes
    message = (r"from_numpy: byte strides \(5,\) of the array of shape \(4,\) and dtype float32 are not all "
               r"multiples of its itemsize 4 \(dims \[0\]")
    with pytest.raises(LayoutError, match=message):
        fs.from_numpy(packed)
    assert fs.from_numpy(np.ascontiguousarray(packed)).stride() == (1,)


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), np.array([object()]), [1, 2], jnp.arange(3)],
                         ids=["str", "object", "list", "jax"])
def test_from_numpy_refuses_what_is_not_a_numeric_ndarray(bad):
    with pytest.raises(LayoutTypeError, match="from_numpy: "):
        fs.from_numpy(bad)


# -- from_torch / to_torch ---------------------------------------------------------------------
@st.composite
def _torch_views(draw):
    """A torch view: ``as_strided`` of a storage of random bytes, with a layout drawn by
    ``layouts()`` (offset included), a few spare elements after it, and a random dtype."""
    torch = import_torch()
    layout = draw(layouts(max_rank=4, max_extent=4))
    name = draw(st.sampled_from(TORCH_DTYPES))
    dtype = _np_dtype(name)
    data = _random_bytes(draw(st.integers(0, 2**16)), layout.required_storage_size + 2, dtype)
    raw = torch.zeros(data.nbytes, dtype=torch.uint8)
    raw.copy_(torch.from_numpy(data.view(np.uint8).copy()))
    base = raw.view(getattr(torch, name))
    return torch.as_strided(base, layout.shape, layout.strides, layout.offset), data


def _torch_bytes(t) -> np.ndarray:
    torch = import_torch()
    flat = t.clone(memory_format=torch.contiguous_format).reshape(-1) if t.numel() else t.new_zeros(0)
    return flat.view(torch.uint8).numpy()


def _meta(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


@examples(20, deadline=None)
@given(case=_torch_views())
def test_torch_round_trip_keeps_size_stride_offset_and_bytes(case):
    t, data = case
    x = fs.from_torch(t)
    assert (x.shape, x.stride(), x.storage_offset()) == _meta(t)
    assert np.dtype(x.dtype) == data.dtype
    np.testing.assert_array_equal(_bytes(x), _torch_bytes(t))
    # the storage: the elements of t's storage from its start up to the highest one t reaches
    need = x.layout.required_storage_size
    np.testing.assert_array_equal(_bytes(x.storage), _bytes(data[:need]))
    back = fs.to_torch(x)
    assert _meta(back) == _meta(t) and back.dtype == t.dtype
    np.testing.assert_array_equal(_torch_bytes(back), _torch_bytes(t))
    assert back.untyped_storage().data_ptr() != t.untyped_storage().data_ptr() or not need


@examples(13, deadline=None)
@given(layout=layouts(max_rank=4, max_extent=4), slack=st.integers(0, 3))
def test_to_torch_then_from_torch_is_the_identity_on_our_side(layout, slack):
    storage = jnp.arange(layout.required_storage_size + slack, dtype=jnp.float32)
    x = fs.StridedArray(storage, layout)
    t = fs.to_torch(x)
    assert _meta(t) == (x.shape, x.stride(), x.storage_offset())
    assert t.untyped_storage().nbytes() == storage.size * 4
    y = fs.from_torch(t)
    assert y.layout == x.layout
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_from_torch_drops_grad_and_refuses_conj_sparse_and_unknown_dtypes():
    torch = import_torch()
    w = torch.ones(2, 3, requires_grad=True)
    assert fs.from_torch(w.t()).stride() == (1, 3)
    z = torch.zeros(3, dtype=torch.complex64)
    with pytest.raises(LayoutError, match="conjugate or negative bit set"):
        fs.from_torch(z.conj())
    assert fs.from_torch(z.conj().resolve_conj()).shape == (3,)
    with pytest.raises(LayoutError, match="only strided tensors have strides"):
        fs.from_torch(torch.eye(2).to_sparse())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex32 is experimental, quantized types deprecated
        chalf = torch.zeros(2, dtype=torch.complex32)
        quantized = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)
    with pytest.raises(LayoutTypeError, match="no NumPy/JAX counterpart"):
        fs.from_torch(chalf)
    with pytest.raises(LayoutTypeError, match="quantized tensors"):
        fs.from_torch(quantized)
    with pytest.raises(LayoutTypeError, match="expected a torch.Tensor"):
        fs.from_torch(np.zeros(2))


def test_to_torch_refuses_batched_and_traced_arrays():
    import jax

    batched = fs.StridedArray(jnp.zeros((2, 6)), Layout((2, 3), (3, 1)), batched=True)
    with pytest.raises(LayoutError, match="batched"):
        fs.to_torch(batched)
    with pytest.raises(LayoutError, match="traced"):
        jax.jit(lambda s: fs.to_torch(fs.StridedArray(s, Layout((2,), (1,)))).sum())(jnp.zeros(4))


# -- from_dlpack -------------------------------------------------------------------------------
class _Producer:
    """A DLPack producer that is neither NumPy, PyTorch nor JAX (as CuPy would be)."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def test_from_dlpack_keeps_the_producers_strides():
    torch = import_torch()
    t = torch.arange(24.0).reshape(4, 6)[1:, ::2].t()  # strides (2, 6), offset 6: jax#17784's case
    for producer, offset in ((t, 6), (_Producer(t), 0)):
        x = fs.from_dlpack(producer)
        assert (x.shape, x.stride(), x.storage_offset()) == ((3, 3), (2, 6), offset)
        assert x.tolist() == t.tolist()
    legacy = fs.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    assert (legacy.shape, legacy.stride(), legacy.storage_offset()) == ((3, 3), (2, 6), 0)
    assert legacy.tolist() == t.tolist()
    bf16 = torch.arange(6.0, dtype=torch.bfloat16).reshape(2, 3).t()  # NumPy cannot read it: torch does
    y = fs.from_dlpack(_Producer(bf16))
    assert y.stride() == (1, 3) and y.dtype == jnp.bfloat16 and y.tolist() == bf16.float().tolist()
    a = np.arange(12, dtype=np.int32).reshape(3, 4).T
    assert fs.from_dlpack(a).stride() == (1, 4) and fs.from_dlpack(_Producer(a)).stride() == (1, 4)
    view = fs.from_array(jnp.arange(6.0)).unfold(0, 2, 2)
    assert fs.from_dlpack(view) is view and fs.from_dlpack(jnp.ones((2, 3))).stride() == (3, 1)
    with pytest.raises(LayoutTypeError, match="no DLPack producer"):
        fs.from_dlpack([1, 2])


def test_negative_strides_import_from_numpy_and_dlpack_and_are_refused_by_to_torch():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[::-1, 1::2]
    for producer in (a, _Producer(a)):
        x = fs.from_dlpack(producer)
        assert (x.stride(), x.storage_offset(), x.tolist()) == ((-4, 2), 8, a.tolist())
    with pytest.raises(LayoutError, match="to_torch: PyTorch has no negative strides"):
        fs.to_torch(x)
    assert fs.to_torch(x.contiguous()).tolist() == a.tolist()


def test_without_torch_only_the_examples_that_need_it_are_skipped():
    """conftest.py skips, when PyTorch is missing, the doctest examples that mention torch and
    those that use names they bind; the others still run."""
    import doctest
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("root_conftest", root / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    text = (root / "docs" / "imports.md").read_text()
    examples = doctest.DocTestParser().get_examples(text)
    needs = conftest._torch_examples(examples)
    sources = [ex.source for ex in needs]
    assert any("import torch" in s for s in sources) and any(s.startswith("x.shape") for s in sources)
    assert not any("from_numpy" in s or "channels_last" in s for s in sources)
    assert len(needs) < len(examples) / 2

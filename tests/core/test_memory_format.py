"""Memory formats against PyTorch: ``is_contiguous``, ``contiguous`` and ``clone`` with
``memory_format`` give PyTorch's answers, strides (size-0 and size-1 dims included), offsets,
values and refusals, on random rank 3..6 layouts (channels-last ones drawn often)."""

from __future__ import annotations

import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import examples, import_torch
from hypothesis import given
from hypothesis import strategies as st
from strategies import layouts, storage_for

import functional_strides as fs
from functional_strides import Layout, LayoutError, LayoutTypeError
from functional_strides._src.core.memory_format import copy_strides, format_strides, is_contiguous_as

FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")


@st.composite
def _layouts_4d_5d(draw) -> Layout:
    """Rank 3..6 layouts (mostly 4 and 5), extents 0..3; about a third are channels-last
    (NHWC / NDHWC dense strides, size-1 dims sometimes with any stride)."""
    rank = draw(st.sampled_from((3, 4, 4, 5, 5, 6)))
    if rank in (4, 5) and draw(st.integers(0, 2)) == 0:
        shape = tuple(draw(st.integers(0, 3)) for _ in range(rank))
        strides = list(format_strides(shape, fs.channels_last if rank == 4 else fs.channels_last_3d))
        for d, n in enumerate(shape):
            if n == 1 and draw(st.booleans()):
                strides[d] = draw(st.integers(0, 9))
        return Layout(shape, tuple(strides), draw(st.integers(0, 3)))
    return draw(layouts(min_rank=rank, max_rank=rank, max_extent=3))


def _pair(layout: Layout):
    torch = import_torch()
    storage = storage_for(layout, 2)
    t = torch.as_strided(torch.from_numpy(storage.copy()), layout.shape, layout.strides, layout.offset)
    return t, fs.as_strided(jnp.asarray(storage), layout.shape, layout.strides, layout.offset)


def _outcome(fn):
    try:
        return fn(), None
    except (RuntimeError, LayoutError) as e:
        return None, e


def _check_same(t_out, ours, x, t):
    assert ours.shape == tuple(t_out.shape)
    assert ours.stride() == t_out.stride()
    assert ours.storage_offset() == t_out.storage_offset()
    np.testing.assert_array_equal(np.asarray(ours), t_out.numpy())
    assert (ours is x) == (t_out is t)  # contiguous() returns self when it can, clone() never


@examples(13, deadline=None)
@given(layout=_layouts_4d_5d(), name=st.sampled_from(FORMATS))
def test_is_contiguous_matches_torch(layout, name):
    torch = import_torch()
    t, x = _pair(layout)
    expected = t.is_contiguous(memory_format=getattr(torch, name))
    assert x.is_contiguous(memory_format=getattr(fs, name)) == expected
    assert x.is_contiguous(memory_format=getattr(torch, name)) == expected  # torch's objects accepted


@examples(13, deadline=None)
@given(layout=_layouts_4d_5d(), name=st.sampled_from(FORMATS), op=st.sampled_from(("contiguous", "clone")))
def test_contiguous_and_clone_match_torch(layout, name, op):
    torch = import_torch()
    t, x = _pair(layout)
    t_out, t_err = _outcome(lambda: getattr(t, op)(memory_format=getattr(torch, name)))
    ours, err = _outcome(lambda: getattr(x, op)(memory_format=getattr(fs, name)))
    assert (t_err is None) == (err is None), (t_err, err)
    if t_err is None:
        _check_same(t_out, ours, x, t)
        module_level = getattr(fs, op)(x, memory_format=getattr(fs, name))
        assert module_level.stride() == ours.stride()


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 1, 1, 1), (2, 0, 3, 4),
                                   (0, 3, 2, 2), (2, 3, 0, 2)], ids=str)
def test_channels_last_strides_of_size_0_and_1_dims_match_torch(shape):
    torch = import_torch()
    expected = torch.empty(shape, memory_format=torch.channels_last).stride()
    assert format_strides(shape, fs.channels_last) == expected
    shape5 = (*shape, 2)
    assert (format_strides(shape5, fs.channels_last_3d)
            == torch.empty(shape5, memory_format=torch.channels_last_3d).stride())


def test_formats_print_and_pickle_as_torch_names():
    assert [repr(getattr(fs, n)) for n in FORMATS] == [f"torch.{n}" for n in FORMATS]
    assert all(pickle.loads(pickle.dumps(getattr(fs, n))) is getattr(fs, n) for n in FORMATS)


@pytest.mark.parametrize(("fmt", "shape", "msg"), [
    (fs.channels_last, (2, 3, 4),
     "contiguous: required rank 4 tensor to use channels_last format (got shape (2, 3, 4)"),
    (fs.channels_last_3d, (2, 3, 4, 5), "contiguous: required rank 5 tensor to use channels_last_3d format"),
    (fs.preserve_format, (3, 2),
     "contiguous: preserve memory format is unsupported by the contiguous operator"),
], ids=["cl-rank3", "cl3d-rank4", "preserve"])
def test_refusals_name_the_rule(fmt, shape, msg):
    x = fs.from_array(jnp.zeros(shape)).mT if len(shape) == 2 else fs.from_array(jnp.zeros(shape))
    with pytest.raises(LayoutError, match="^" + msg.replace("(", r"\(").replace(")", r"\)")):
        x.contiguous(memory_format=fmt)


@pytest.mark.parametrize("bad", [3, "channels_last", None], ids=repr)
def test_a_non_format_is_a_type_error(bad):
    x = fs.from_array(jnp.zeros((2, 3)))
    for call in (lambda: x.is_contiguous(memory_format=bad), lambda: x.contiguous(memory_format=bad),
                 lambda: x.clone(memory_format=bad)):
        with pytest.raises(LayoutTypeError, match="argument 'memory_format' must be a memory format"):
            call()


def test_contiguous_channels_last_under_jit_keeps_values():
    x = fs.from_array(jnp.arange(48.0).reshape(2, 3, 2, 4))
    y = jax.jit(lambda s: fs.StridedArray(s, x.layout).contiguous(memory_format=fs.channels_last))(x.storage)
    assert y.stride() == (24, 1, 12, 3)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    # the storage holds NHWC order: storage index h*12 + w*3 + c of item n
    np.testing.assert_array_equal(np.asarray(y.storage).reshape(2, 2, 4, 3),
                                  np.asarray(x).transpose(0, 2, 3, 1))


@given(layout=layouts(min_rank=4, max_rank=4, max_extent=3))
@examples(10, deadline=None)
def test_copy_strides_are_a_dense_permutation(layout):
    for fmt in (fs.contiguous_format, fs.channels_last, fs.preserve_format):
        out = Layout(layout.shape, copy_strides(layout, fmt))
        assert out.is_non_overlapping_and_dense()
        assert is_contiguous_as(out, fmt) or fmt is fs.preserve_format

"""PyTorch parity of the *_scatter ops and of writes through chains of views."""

import numpy as np
import pytest
from _support import import_torch
from hypothesis import assume, given
from hypothesis import strategies as st

import functional_strides as fs
from functional_strides import Layout

torch = import_torch()
import jax.numpy as jnp  # noqa: E402


@st.composite
def inputs(draw, min_rank=1, max_rank=3):
    """A (possibly non-contiguous) input: a view of an arange storage."""
    rank = draw(st.integers(min_rank, max_rank))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    kind = draw(st.sampled_from(["contiguous", "permuted", "strided", "offset"]))
    layout = Layout.contiguous(shape)
    if kind == "permuted":
        perm = draw(st.permutations(range(rank)))
        base = Layout.contiguous(tuple(shape[p] for p in perm))
        inverse = np.argsort(perm)
        layout = Layout(shape, tuple(base.strides[i] for i in inverse))
    elif kind == "strided":
        layout = Layout(shape, tuple(s * 2 for s in layout.strides))
    elif kind == "offset":
        layout = Layout(shape, layout.strides, 3)
    n = layout.required_storage_size + 2
    storage = np.arange(n, dtype=np.float32)
    ours = fs.StridedArray(jnp.asarray(storage), layout)
    theirs = torch.as_strided(torch.from_numpy(storage.copy()), layout.shape, layout.strides, layout.offset)
    return ours, theirs


def _same(ours, theirs):
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


def _raises_iff(fn_ours, fn_theirs):
    try:
        expected = fn_theirs()
    except (RuntimeError, IndexError, ValueError) as err:
        with pytest.raises(fs.LayoutError):
            fn_ours()
        return str(err)
    _same(fn_ours(), expected)
    return None


@given(data=st.data())
def test_slice_scatter(data):
    ours, theirs = data.draw(inputs())
    dim = data.draw(st.integers(-ours.ndim, ours.ndim - 1))
    n = ours.size(dim)
    start = data.draw(st.none() | st.integers(-n - 1, n + 1))
    end = data.draw(st.none() | st.integers(-n - 1, n + 1))
    step = data.draw(st.integers(1, 3))
    shape = list(theirs.shape)
    sl = slice(start, end, step)
    shape[dim] = len(range(*sl.indices(n)))
    src = np.arange(100, 100 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    _raises_iff(lambda: fs.slice_scatter(ours, jnp.asarray(src), dim, start, end, step),
                lambda: torch.slice_scatter(theirs, torch.from_numpy(src), dim, start, end, step))


@given(data=st.data())
def test_select_scatter(data):
    ours, theirs = data.draw(inputs())
    dim = data.draw(st.integers(-ours.ndim - 1, ours.ndim))
    index = data.draw(st.integers(-5, 5))
    shape = [n for d, n in enumerate(theirs.shape) if ours.ndim and d != dim % max(ours.ndim, 1)]
    src = np.arange(100, 100 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    _raises_iff(lambda: fs.select_scatter(ours, jnp.asarray(src), dim, index),
                lambda: torch.select_scatter(theirs, torch.from_numpy(src), dim, index))


@given(data=st.data())
def test_diagonal_scatter(data):
    ours, theirs = data.draw(inputs(min_rank=2))
    offset = data.draw(st.integers(-4, 4))
    dim1 = data.draw(st.integers(-ours.ndim, ours.ndim - 1))
    dim2 = data.draw(st.integers(-ours.ndim, ours.ndim - 1))
    try:
        shape = tuple(theirs.diagonal(offset, dim1, dim2).shape)
    except (RuntimeError, IndexError):
        shape = (1,)
    src = np.arange(100, 100 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    _raises_iff(lambda: fs.diagonal_scatter(ours, jnp.asarray(src), offset, dim1, dim2),
                lambda: torch.diagonal_scatter(theirs, torch.from_numpy(src), offset, dim1, dim2))


@given(data=st.data())
def test_as_strided_scatter(data):
    ours, theirs = data.draw(inputs())
    rank = data.draw(st.integers(0, 3))
    size = tuple(data.draw(st.integers(0, 4)) for _ in range(rank))
    stride = tuple(data.draw(st.integers(0, 5)) for _ in range(rank))
    offset = data.draw(st.none() | st.integers(0, 4))
    layout = Layout(size, stride, 0 if offset is None else offset)
    # PyTorch's result is defined (independent of its loop order) when no slot is written twice.
    assume(not fs.oracle.has_internal_overlap(layout))
    src = np.arange(100, 100 + layout.numel, dtype=np.float32).reshape(size)
    _raises_iff(lambda: fs.as_strided_scatter(ours, jnp.asarray(src), size, stride, offset),
                lambda: torch.as_strided_scatter(theirs, torch.from_numpy(src), size, stride, offset))


def test_as_strided_scatter_last_wins_on_overlap():
    src = jnp.arange(1.0, 13.0).reshape(4, 3)
    out = fs.as_strided_scatter(jnp.zeros(6), src, (4, 3), (1, 1))
    np.testing.assert_array_equal(np.asarray(out), fs.oracle.scatter(np.zeros(6), Layout((4, 3), (1, 1)),
                                                                      np.asarray(src), "set"))
    expected = torch.as_strided_scatter(torch.zeros(6), torch.arange(1.0, 13.0).reshape(4, 3), (4, 3), (1, 1))
    np.testing.assert_array_equal(np.asarray(out), expected.numpy())


def test_as_strided_scatter_out_of_bounds():
    with pytest.raises(fs.StorageError, match="require a storage of 8 elements"):
        fs.as_strided_scatter(jnp.arange(4.0), jnp.zeros(2), (2,), (3,), 4)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.as_strided_scatter(torch.arange(4.0), torch.zeros(2), (2,), (3,), 4)


def test_scatter_shape_mismatch_is_refused():
    with pytest.raises(fs.LayoutError, match=r"expected src to have a size equal to the slice"):
        fs.select_scatter(jnp.zeros((3, 4)), jnp.zeros(3), 0, 1)


VIEW_STEPS = {
    "permute": lambda x, r: x.permute(*r.permutation(x.ndim).tolist()),
    "transpose": lambda x, r: x.transpose(0, -1),
    "narrow": lambda x, r: x.narrow(0, 1, x.shape[0] - 1) if x.shape[0] > 1 else x,
    "select": lambda x, r: x.select(-1, 0) if x.ndim > 1 else x,
    "unsqueeze": lambda x, r: x.unsqueeze(1),
    "slice": lambda x, r: x[::2],
    "diagonal": lambda x, r: x.diagonal(0, 0, 1) if x.ndim >= 2 else x,
    "view": lambda x, r: x.flatten() if x.is_contiguous() else x,
}


@pytest.mark.sampled(4)
@pytest.mark.parametrize("seed", range(40))
def test_writes_through_view_chains_match_torch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(2, 5, 3))
    base_np = np.arange(int(np.prod(shape)), dtype=np.float32)
    ours_base = fs.from_array(base_np).view(shape)
    theirs_base = torch.from_numpy(base_np.copy()).view(shape)
    ours, theirs = ours_base, theirs_base
    for name in rng.choice(sorted(VIEW_STEPS), size=3):
        step_rng = np.random.default_rng(seed * 31 + len(name))
        ours = VIEW_STEPS[name](ours, step_rng)
        theirs = VIEW_STEPS[name](theirs, np.random.default_rng(seed * 31 + len(name)))
        assert ours.stride() == theirs.stride() and ours.storage_offset() == theirs.storage_offset()
    src = rng.standard_normal(ours.shape).astype(np.float32)
    mode = ["set", "add"][seed % 2]
    written = ours.at[...].set(jnp.asarray(src)) if mode == "set" else ours.at[...].add(jnp.asarray(src))
    if mode == "set":
        theirs.copy_(torch.from_numpy(src))
    else:
        theirs.add_(torch.from_numpy(src))
    np.testing.assert_allclose(np.asarray(ours_base.with_storage(written.storage)), theirs_base.numpy(),
                               rtol=1e-6)

"""Functional writes through views: set/add/mul/min/max, *_scatter ops, transforms."""

import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch
from hypothesis import given
from hypothesis import strategies as st
from jax.test_util import check_grads

import functional_strides as fs
from functional_strides import Layout, LayoutError, OverlapError, StridedArray

TRANSFORMS = [pytest.param(jax.jit, id="jit"), pytest.param(lambda f: f, id="eager")]
#: the ``x.at[idx]`` method of each write mode
_AT = {"add": "add", "mul": "multiply", "min": "min", "max": "max"}


@st.composite
def layouts(draw, max_rank=3, max_extent=4, max_stride=6):
    rank = draw(st.integers(0, max_rank))
    shape = tuple(draw(st.integers(0, max_extent)) for _ in range(rank))
    strides = tuple(draw(st.integers(0, max_stride)) for _ in range(rank))
    return Layout(shape, strides, draw(st.integers(0, 4)))


def _storage(layout, extra=3, dtype=np.float32):
    return (np.arange(layout.required_storage_size + extra) * 10).astype(dtype)


def _src(layout, dtype=np.float32):
    return (np.arange(layout.numel) + 1).astype(dtype).reshape(layout.shape)


def _write(transform, storage, layout, src, mode, overlap="error"):
    def f(s, v):
        view = StridedArray(s, layout)
        out = view.at[...].set(v, overlap=overlap) if mode == "set" else getattr(view.at[...], _AT[mode])(v)
        return out.storage

    return np.asarray(transform(f)(jnp.asarray(storage), jnp.asarray(src)))


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("mode", ["add", "mul", "min", "max"])
@given(layout=layouts())
def test_combining_writes_match_oracle(transform, mode, layout):
    storage, src = _storage(layout), _src(layout)
    if mode == "mul":  # keep products of many overlapping contributions finite
        src = 1.0 + (src % 3) * 0.25
    expected = fs.oracle.scatter(storage, layout, src, mode)
    np.testing.assert_allclose(_write(transform, storage, layout, src, mode), expected, rtol=1e-6)


@pytest.mark.parametrize("transform", TRANSFORMS)
@given(layout=layouts())
def test_set_matches_oracle_or_refuses_overlap(transform, layout):
    storage, src = _storage(layout), _src(layout)
    expected = fs.oracle.scatter(storage, layout, src, "set")
    if fs.oracle.has_internal_overlap(layout):
        with pytest.raises(OverlapError, match="share a storage slot"):
            _write(transform, storage, layout, src, "set")
    else:
        np.testing.assert_array_equal(_write(transform, storage, layout, src, "set"), expected)
    np.testing.assert_array_equal(_write(transform, storage, layout, src, "set", overlap="last"), expected)


def test_overlap_error_names_colliding_coordinates():
    view = fs.from_array(jnp.zeros(4)).expand(3, 4)
    with pytest.raises(OverlapError) as info:
        view.at[...].set(1.0)
    msg = str(info.value)
    found = re.search(r"coordinates \((\d+), (\d+)\) and \((\d+), (\d+)\) both address index (\d+)", msg)
    assert found, msg
    a, b, index = found.groups()[:2], found.groups()[2:4], int(found.group(5))
    a, b = tuple(map(int, a)), tuple(map(int, b))
    assert a != b and view.layout(*a) == view.layout(*b) == index
    assert "overlap='last'" in msg and "add()" in msg


def test_last_wins_is_row_major_for_windows():
    frames = fs.from_array(jnp.zeros(6)).unfold(0, 3, 1)  # (4,3):(1,1)
    out = frames.at[...].set(jnp.arange(1.0, 13.0).reshape(4, 3), overlap="last")
    # slot k is last written by frame min(k, 3), element k - frame
    np.testing.assert_array_equal(np.asarray(out.storage), [1.0, 4.0, 7.0, 10.0, 11.0, 12.0])


def test_overlap_add_reconstructs_signal():
    signal = jnp.sin(jnp.linspace(0.0, 6.0, 64))
    frames_view = fs.from_array(jnp.zeros(64)).unfold(0, 16, 4)
    frames = jnp.asarray(fs.from_array(signal).unfold(0, 16, 4))
    summed = frames_view.at[...].add(frames).storage
    counts = frames_view.at[...].add(jnp.ones_like(frames)).storage
    np.testing.assert_allclose(np.asarray(summed / counts), np.asarray(signal), rtol=1e-6)


def test_with_storage_sees_writes_from_other_views():
    base = fs.from_array(jnp.arange(12.0)).view(3, 4)
    col = base[:, 1]
    w = col.at[...].set(jnp.array([-1.0, -2.0, -3.0]))
    seen = base.with_storage(w.storage)
    np.testing.assert_array_equal(np.asarray(seen)[:, 1], [-1.0, -2.0, -3.0])
    np.testing.assert_array_equal(np.asarray(seen)[:, 0], [0.0, 4.0, 8.0])
    assert w.layout == col.layout and w.storage.shape == (12,)
    with pytest.raises(fs.StorageError, match="require a storage of 12 elements"):
        base.with_storage(jnp.zeros(10))


@pytest.mark.parametrize(
    "src, match",
    [(jnp.zeros(4), "src of shape (4,) is not broadcastable to the view's shape (3,)"),
     (jnp.zeros((2, 3)), "src of shape (2, 3) is not broadcastable to the view's shape (3,)")],
)
def test_src_shape_errors(src, match):
    col = fs.from_array(jnp.zeros((3, 4)))[:, 1]
    with pytest.raises(LayoutError, match=re.escape(match)):
        col.at[...].set(src)


def test_dtype_rules_follow_jnp_at():
    ints = fs.from_array(jnp.zeros(6, jnp.int32))[::2]
    with pytest.raises(LayoutError,
                       match=re.escape("cannot cast src of dtype float32 to the storage dtype int32")):
        ints.at[...].set(jnp.float32(1.5))
    with pytest.raises(LayoutError, match="result_type"):
        ints.at[...].add(1.5)
    assert ints.at[...].set(jnp.int8(3)).storage.tolist() == [3, 0, 3, 0, 3, 0]
    assert ints.at[...].set(True).storage.dtype == jnp.int32
    halves = fs.from_array(jnp.zeros(4, jnp.float16))
    assert halves.at[...].add(1.5).storage.dtype == jnp.float16  # Python scalars are weakly typed
    with pytest.raises(LayoutError, match="float32 to the storage dtype float16"):
        halves.at[...].set(jnp.float32(1.0))


def test_bad_mode_and_overlap_arguments():
    view = fs.from_array(jnp.zeros(4))
    with pytest.raises(LayoutError, match=r"unknown overlap 'first'; use one of \('error', 'last'\)"):
        view.at[...].set(1.0, overlap="first")
    with pytest.raises(LayoutError, match="unknown mode"):
        fs.write(view.storage, view.layout, 1.0, mode="div")


def test_write_is_one_scatter_with_in_graph_indices():
    # 512 elements: below COPY_WRITE_MIN_ELEMENTS, so XLA's scatter on every platform
    view = fs.from_array(jnp.zeros((32, 32))).t()[::2]
    hlo = jax.jit(lambda s, v: StridedArray(s, view.layout).at[...].set(v).storage).lower(
        view.storage, jnp.ones(view.shape)).compile().as_text()
    assert len(re.findall(r"= \S+ scatter\(", hlo)) == 1, hlo
    assert "constant(" not in hlo or not re.search(r"s32\[\d{3,}", " ".join(
        line for line in hlo.splitlines() if "constant(" in line))


def test_jit_does_not_retrace_for_equal_layouts():
    layout = Layout((3, 2), (1, 4), 1)
    f = jax.jit(chex.assert_max_traces(n=1)(lambda s, v: StridedArray(s, layout).at[...].add(v).storage))
    for k in range(3):
        f(jnp.arange(12.0) + k, jnp.ones((3, 2)))
    chex.clear_trace_counter()


def test_vmap_over_bases_and_sources():
    layout = Layout((3, 3), (1, 1), 0)  # overlapping windows
    bases = jnp.arange(20.0).reshape(4, 5)
    srcs = jnp.arange(36.0).reshape(4, 3, 3)
    out = jax.vmap(lambda b, v: StridedArray(b, layout).at[...].add(v).storage)(bases, srcs)
    for i in range(4):
        np.testing.assert_allclose(
            np.asarray(out[i]), fs.oracle.scatter(np.asarray(bases[i]), layout, np.asarray(srcs[i]), "add"))
    out2 = jax.vmap(lambda v: StridedArray(bases[0], layout).at[...].set(v, overlap="last").storage)(srcs)
    for i in range(4):
        np.testing.assert_array_equal(
            np.asarray(out2[i]), fs.oracle.scatter(np.asarray(bases[0]), layout, np.asarray(srcs[i]), "set"))


@pytest.mark.sampled(2)
@pytest.mark.parametrize(
    "layout, mode",
    [(Layout((3, 4), (1, 2), 1), "set"), (Layout((4, 3), (2, 1), 0), "add"),
     (Layout((4, 3), (2, 1), 0), "set"), (Layout((2, 5), (0, 1), 2), "add")],
    ids=["strided-set", "windows-add", "windows-set-last", "expanded-add"],
)
def test_grads_through_writes(layout, mode):
    def f(b, v):
        view = StridedArray(b, layout)
        out = view.at[...].set(v, overlap="last") if mode == "set" else view.at[...].add(v)
        return jnp.sum(jnp.sin(out.storage) * jnp.linspace(0.1, 1.0, 12))

    with jax.enable_x64(True):  # float64 keeps the finite differences of check_grads accurate
        base = jnp.linspace(-1.0, 1.0, 12)
        src = jnp.linspace(0.5, 1.5, layout.numel).reshape(layout.shape)
        check_grads(f, (base, src), order=1, modes=("fwd", "rev"))  # eagerly
        check_grads(jax.jit(f), (base, src), order=2, modes=("fwd", "rev"))


def test_add_gradients_match_torch_autograd():
    torch = import_torch()
    weights = np.linspace(0.5, 2.0, 10).astype(np.float32)
    src = np.linspace(-1.0, 1.0, 12).astype(np.float32).reshape(4, 3)
    tb = torch.zeros(10, requires_grad=True)
    ts = torch.tensor(src, requires_grad=True)
    out = tb.clone()
    out.as_strided((4, 3), (2, 1)).add_(ts)
    (out * torch.from_numpy(weights)).sum().backward()
    gb, gs = jax.grad(lambda b, v: jnp.sum(fs.as_strided(b, (4, 3), (2, 1)).at[...].add(v).storage * weights),
                      argnums=(0, 1))(jnp.zeros(10), jnp.asarray(src))
    np.testing.assert_allclose(np.asarray(gb), tb.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gs), ts.grad.numpy(), rtol=1e-6)

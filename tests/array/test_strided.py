"""StridedArray: construction, metadata, materialisation under jit/vmap/grad, dtypes."""

import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import draws, import_torch
from absl.testing import parameterized
from jax.test_util import check_grads

import functional_strides as fs
from functional_strides import Layout, StorageError, StridedArray

LAYOUTS = [
    Layout((6, 5), (10, 1), 22),  # a block of a 10x10 grid
    Layout((4, 3), (20, 2), 22),  # every other row and column
    Layout((3, 4), (1, 3), 0),  # transpose
    Layout((3, 4), (1, 1), 0),  # overlapping windows
    Layout((2, 3, 4), (0, 4, 1), 5),  # expanded leading dim
    Layout((2, 0, 3), (3, 3, 1), 0),  # empty
    Layout((), (), 7),  # rank 0
    Layout((2, 3), (3, 1), 4),  # contiguous with offset
]


class MaterializeTest(chex.TestCase, parameterized.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(*[(i,) for i in range(len(LAYOUTS))])
    def test_contiguous_matches_oracle(self, i):
        layout = LAYOUTS[i]
        storage = np.arange(100, dtype=np.float32)
        out = self.variant(lambda s: jnp.asarray(StridedArray(s, layout).contiguous()))(jnp.asarray(storage))
        expected = fs.oracle.materialize(storage, layout)
        chex.assert_trees_all_equal(np.asarray(out), expected)


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint8", "int16", "int32", "float16", "bfloat16", "float32", "complex64"]
)
@pytest.mark.parametrize("transform",
                         [pytest.param(jax.jit, id="jit"), pytest.param(lambda f: f, id="eager")])
def test_every_dtype(dtype, transform):
    storage = (np.arange(40) % 7).astype(jnp.dtype(dtype))
    layout = Layout((3, 4), (1, 5), 3)
    out = transform(lambda s: jnp.asarray(StridedArray(s, layout)))(jnp.asarray(storage))
    assert out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), fs.oracle.materialize(storage, layout))


def test_contiguous_returns_self_whatever_offset():
    x = StridedArray(jnp.arange(20.0), Layout((2, 3), (3, 1), 5))
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.stride() == (2, 1) and y.storage_offset() == 0 and not fs.shares_storage(x, y)
    np.testing.assert_array_equal(np.asarray(y), np.arange(5, 11).reshape(2, 3).T)


def test_asarray_protocols():
    x = fs.from_array(np.arange(12).reshape(3, 4)).t()
    np.testing.assert_array_equal(np.asarray(x), np.arange(12).reshape(3, 4).T)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)), np.arange(12).reshape(3, 4).T)
    assert np.asarray(x, dtype=np.float32).dtype == np.float32


def test_metadata_methods():
    x = StridedArray(jnp.zeros(30, jnp.float32), Layout((2, 3, 4), (12, 4, 1), 3))
    assert x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(-1) == 4 and x.size(1) == 3
    assert x.stride() == (12, 4, 1) and x.stride(0) == 12 and x.storage_offset() == 3
    assert (x.ndim, x.dim(), x.numel(), len(x), x.dtype) == (3, 3, 24, 2, jnp.float32)
    with pytest.raises(IndexError, match=re.escape("expected to be in range of [-3, 2], but got 3")):
        x.size(3)
    scalar = StridedArray(jnp.zeros(3), Layout((), (), 2))
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        scalar.stride(0)
    with pytest.raises(TypeError, match="len"):
        len(scalar)
    with pytest.raises(AttributeError, match="immutable"):
        x.storage = jnp.zeros(3)


def test_construction_errors():
    with pytest.raises(StorageError, match=re.escape("storage must be 1-D (got shape (3, 3))")):
        StridedArray(jnp.zeros((3, 3)), Layout((3,), (1,)))
    msg = ("size [2, 2], stride [2, 3] and storage offset 5 require a storage of 11 elements "
           "(offset + sum((size-1)*stride) + 1), but the storage has 9 elements")
    with pytest.raises(StorageError, match=re.escape(msg)):
        StridedArray(jnp.arange(9), Layout((2, 2), (2, 3), 5))
    with pytest.raises(StorageError, match="as_strided: size"):
        fs.as_strided(jnp.arange(9), (2, 2), (2, 3), 5)
    with pytest.raises(fs.LayoutError, match="negative strides are refused"):
        fs.as_strided(jnp.arange(9), (2, 2), (2, -3))
    with pytest.raises(fs.LayoutError, match="invalid storage offset -1"):
        fs.as_strided(jnp.arange(9), (2, 2), (2, 3), -1)
    with pytest.raises(fs.LayoutError, match="mismatch in length of strides and shape"):
        fs.as_strided(jnp.arange(9), (2, 2), (2,))
    with pytest.raises(fs.LayoutTypeError, match="must be a functional_strides.Layout"):
        StridedArray(jnp.arange(9), ((3,), (1,), 0))
    # Empty views need no storage at all, as in PyTorch.
    assert StridedArray(jnp.zeros(0), Layout((0, 4), (100, 1), 50)).numel() == 0


def test_as_strided_offset_is_absolute_and_inherited():
    base = fs.from_array(jnp.arange(20)).narrow(0, 3, 10)
    assert base.storage_offset() == 3
    assert base.as_strided((2,), (2,)).storage_offset() == 3
    assert base.as_strided((2,), (2,), 0).storage_offset() == 0
    np.testing.assert_array_equal(np.asarray(base.as_strided((3,), (4,))), [3, 7, 11])


def test_jit_does_not_retrace_for_equal_layouts():
    f = jax.jit(chex.assert_max_traces(n=1)(lambda x: x.t().contiguous().storage))
    for k in range(3):
        x = StridedArray(jnp.arange(20.0) + k, Layout((2, 3), (3, 1), 4))
        f(x)
    chex.clear_trace_counter()


def test_jit_retraces_when_strides_change():
    traces = []

    @jax.jit
    def f(x):
        traces.append(x.layout)
        return x.contiguous().storage

    storage = jnp.arange(20.0)
    f(StridedArray(storage, Layout((2, 3), (3, 1))))
    f(StridedArray(storage, Layout((2, 3), (3, 1))))
    f(StridedArray(storage, Layout((2, 3), (1, 2))))
    assert len(traces) == 2


def test_dynamic_offset_moves_window_without_retrace():
    storage = jnp.arange(32.0)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def window(offset):
        return jnp.asarray(StridedArray(storage, Layout((2, 3), (4, 1), offset)))

    for k in (0, 3, 9):
        np.testing.assert_array_equal(np.asarray(window(jnp.int32(k))),
                                      fs.oracle.materialize(np.arange(32.0), Layout((2, 3), (4, 1), k)))
    # A traced offset past the end is clamped to the last that fits (32 - 7 = 25), as
    # lax.dynamic_slice clamps.
    np.testing.assert_array_equal(np.asarray(window(jnp.int32(28))),
                                  fs.oracle.materialize(np.arange(32.0), Layout((2, 3), (4, 1), 25)))
    chex.clear_trace_counter()


def test_concrete_dynamic_offset_is_bounds_checked():
    with pytest.raises(StorageError, match="require a storage of 42 elements"):
        StridedArray(jnp.arange(32.0), Layout((2, 3), (4, 1), jnp.int32(35)))


def test_vmap_over_storages():
    layout = Layout((3, 2), (1, 4), 1)
    batch = jnp.arange(60.0).reshape(5, 12)
    out = jax.vmap(lambda s: StridedArray(s, layout).contiguous().storage)(batch)
    expected = np.stack([fs.oracle.materialize(np.asarray(b), layout).reshape(-1) for b in batch])
    np.testing.assert_array_equal(np.asarray(out), expected)
    # vmap of a function taking a StridedArray: the storage leaf is mapped.
    xs = StridedArray._wrap(batch, layout)
    out2 = jax.vmap(lambda x: jnp.asarray(x.t()))(xs)
    np.testing.assert_array_equal(np.asarray(out2), expected.reshape(5, 3, 2).transpose(0, 2, 1))


@pytest.mark.sampled(2)
@pytest.mark.parametrize(
    "layout",
    [Layout((3, 4), (1, 1), 0), Layout((4, 3), (0, 2), 1), Layout((2, 3), (1, 2), 2), Layout((5,), (2,), 0)],
    ids=["windows", "expanded", "transposed", "strided"],
)
def test_grad_through_contiguous(layout):
    def f(s):
        return jnp.sum(jnp.sin(jnp.asarray(StridedArray(s, layout).contiguous())) ** 2)

    with jax.enable_x64(True):  # float64 keeps the finite differences of check_grads accurate
        check_grads(jax.jit(f), (jnp.linspace(-1.0, 1.0, 12),), order=2, modes=("fwd", "rev"))
        check_grads(f, (jnp.linspace(-1.0, 1.0, 12),), order=1, modes=("rev",))  # eagerly
    storage = jnp.linspace(-1.0, 1.0, 12)
    # The gradient counts how often each storage slot is read (gather transpose accumulates).
    g = jax.grad(lambda s: jnp.sum(jnp.asarray(StridedArray(s, layout))))(storage)
    counts = np.bincount(fs.oracle.element_indices(layout), minlength=12)
    np.testing.assert_array_equal(np.asarray(g), counts.astype(np.float32))


def test_grad_matches_torch_as_strided_backward():
    torch = import_torch()
    weights = np.linspace(0.5, 2.0, 12, dtype=np.float32).reshape(4, 3)
    t = torch.arange(10.0, requires_grad=True)
    (torch.as_strided(t, (4, 3), (2, 1), 1) * torch.from_numpy(weights)).sum().backward()
    g = jax.grad(lambda s: jnp.sum(jnp.asarray(fs.as_strided(s, (4, 3), (2, 1), 1)) * weights))(
        jnp.arange(10.0))
    np.testing.assert_allclose(np.asarray(g), t.grad.numpy(), rtol=1e-6)


def test_eager_materialize_compiles_once_per_shape():
    storage = jnp.arange(200.0)
    rng = np.random.default_rng(1)
    from functional_strides._src.lowering import reads as lowering

    eager = lowering._eager_copy if lowering._copy_kernel.supports(jnp.float32) else lowering._eager_gather
    before = eager._cache_size()
    for _ in range(100):
        strides = tuple(int(v) for v in rng.integers(1, 9, 2))
        offset = int(rng.integers(0, 40))
        np.asarray(fs.as_strided(storage, (8, 8), strides, offset).t())
    assert eager._cache_size() - before <= 1


def test_int32_overflow_without_x64_is_a_clear_error():
    from functional_strides._src.lowering import reads as lowering

    big = Layout((2,), (2**31,), 0)
    with pytest.raises(StorageError, match=re.escape("past int32's 2147483647")):
        lowering.index_dtype(big, 10)


def test_overlap_queries_are_wired():
    frames = fs.from_array(jnp.arange(10.0)).unfold(0, 4, 2)
    assert frames.layout.has_internal_overlap() and not frames[0].layout.has_internal_overlap()
    assert fs.overlaps(frames[0], frames[1]) and not fs.overlaps(frames[0], frames[2])
    assert fs.overlaps(frames[0].layout, frames[1].layout)
    other = fs.from_array(jnp.arange(10.0))
    assert not fs.overlaps(frames[0], other)  # different storages never overlap
    with pytest.raises(fs.LayoutError, match="expects two StridedArray or two Layout"):
        fs.overlaps(frames[0], frames[1].layout)


def test_clone_matches_torch_preserve_format():
    torch = import_torch()
    rng = np.random.default_rng(3)
    for _ in range(draws(100)):
        r = int(rng.integers(0, 5))
        shape = tuple(int(v) for v in rng.integers(0, 4, r))
        strides = tuple(int(v) for v in rng.integers(0, 6, r))
        offset = int(rng.integers(0, 3))
        n = Layout(shape, strides, offset).required_storage_size + 1
        ours = fs.as_strided(jnp.arange(float(n)), shape, strides, offset).clone()
        theirs = torch.arange(float(n)).as_strided(shape, strides, offset).clone()
        assert ours.stride() == theirs.stride() and ours.storage_offset() == 0, (shape, strides)
        np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())
        assert ours.storage.shape == (max(ours.numel(), 0),)


def test_dynamic_offsets_are_checked_and_widened():
    with pytest.raises(fs.LayoutError, match="is not an integer"):
        Layout((3,), (1,), jnp.float32(2.0))
    with pytest.raises(fs.LayoutError, match="is not an integer"):
        Layout((3,), (1,), "2")
    with pytest.raises(fs.LayoutError, match="is not an integer"):
        Layout((3,), (1,), None)
    assert Layout((3,), (1,), jnp.int8(5)).offset.dtype == jnp.int32
    out = jax.jit(lambda k: jnp.asarray(
        StridedArray(jnp.arange(300.0), Layout((3,), (1,), k)).narrow(0, 2, 1)))(jnp.int8(127))
    assert out.tolist() == [129.0]


def test_eager_read_ignores_stride_of_size1_dims():
    x = StridedArray(jnp.arange(10.0), Layout((2, 1), (2, 2**31)))
    assert np.asarray(x).tolist() == [[0.0], [2.0]]


def test_traced_indices_select_with_a_dynamic_offset():
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
    rows = jax.vmap(lambda i: jnp.asarray(x[i]))(jnp.arange(-3, 3))
    np.testing.assert_array_equal(np.asarray(rows), np.arange(12.0).reshape(3, 4)[np.arange(-3, 3)])
    cols = jax.jit(lambda i: jnp.asarray(x.select(1, i)))(jnp.int8(-1))
    assert cols.tolist() == [3.0, 7.0, 11.0]
    # clamped like jnp's traced indexing, never reading outside the view
    assert jax.jit(lambda i: jnp.asarray(x[i]))(7).tolist() == [8.0, 9.0, 10.0, 11.0]
    narrow = jax.jit(lambda i: jnp.asarray(x.narrow(1, i, 2)))
    assert narrow(5).tolist() == [[2.0, 3.0], [6.0, 7.0], [10.0, 11.0]]
    assert narrow(1).tolist() == [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]]


def test_python_protocols_and_helpful_refusals():
    x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
    assert float(x[1, 2]) == 6.0 and int(x[1, 2]) == 6 and x[1].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert x.numpy().shape == (3, 4) and bool(x[0, 1]) and x[2, 3].item() == 11.0
    with pytest.raises(fs.LayoutError, match="truth value of an array with more than one element"):
        bool(x)
    with pytest.raises(fs.LayoutError, match="only one-element arrays"):
        x.item()
    with pytest.raises(TypeError, match=re.escape("x.at[key].set(value)")):
        x[0] = 1.0
    assert x.view(jnp.int32).stride() == (4, 1)  # a dtype view (see test_dtype_views.py)
    with pytest.raises(fs.ViewError, match=re.escape("self.stride(-1) must be 1 to view float32 as int16")):
        x.t().view(jnp.int16)
    with pytest.raises(fs.LayoutError, match="not a view index"):
        x[np.ones((3, 4), bool)]
    # a 1-D storage has no batch axis to map: vmap splits it into scalars, which the library refuses
    with pytest.raises(fs.StorageError, match="batched=True"):
        jax.vmap(lambda a: jnp.asarray(a))(fs.from_array(jnp.ones((2, 12))))

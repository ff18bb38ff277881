"""Adversarial cases: odd layouts, odd argument types and transforms that a user porting
PyTorch code hits. Each test states the expected (PyTorch or documented) behaviour and
gives its reproduction in a comment."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch

import functional_strides as fs
from functional_strides import Layout, LayoutError, StridedArray

BIG = 2**31  # a stride just past int32


def _torch():
    return import_torch()


# -- reading and writing with a size-1 dim of huge stride --------------------------------

def test_eager_read_ignores_huge_stride_of_size1_dim():
    # jnp.asarray(StridedArray(jnp.arange(10.), Layout((2, 1), (2, 2**31))))
    # raises OverflowError("Python integer 2147483648 out of bounds for int32") from the
    # eager gather (lowering.materialize: np.asarray(layout.strides, int32)). A size-1 dim's
    # stride never addresses storage; PyTorch reads [[0.], [2.]] and so does jit here.
    x = StridedArray(jnp.arange(10.0), Layout((2, 1), (2, BIG)))
    np.testing.assert_array_equal(np.asarray(x), [[0.0], [2.0]])


def test_eager_write_ignores_huge_stride_of_size1_dim():
    # StridedArray(jnp.arange(10.), Layout((2, 1), (2, 2**31))).at[...].add(1.0) raises
    # OverflowError ("Python integer 2147483648 out of bounds for int32") on the eager
    # scatter path (scatter.write builds int32 strides); under jax.jit the same write works.
    # Expected storage: [1, 1, 3, 3, 4, ..., 9].
    x = StridedArray(jnp.arange(10.0), Layout((2, 1), (2, BIG)))
    out = x.at[...].add(1.0).storage
    np.testing.assert_array_equal(np.asarray(out), [1, 1, 3, 3, 4, 5, 6, 7, 8, 9])


# -- dynamic (traced) offsets -------------------------------------------------------------

def test_dynamic_offset_of_narrow_int_dtype_does_not_wrap():
    # k = jnp.int8(127); x = StridedArray(jnp.arange(300.), Layout((3,), (1,), k))
    # jax.jit(lambda k: jnp.asarray(x.narrow(0, 2, 1)))(k) returns [nan]: the view adds 2 to
    # an int8 offset, which wraps to -127, and the read fills out of range. Element 0 of the
    # narrowed view is storage[129].
    storage = jnp.arange(300.0)

    @jax.jit
    def read(k):
        return jnp.asarray(StridedArray(storage, Layout((3,), (1,), k)).narrow(0, 2, 1))

    np.testing.assert_array_equal(np.asarray(read(jnp.int8(127))), [129.0])


@pytest.mark.parametrize("offset", [jnp.float32(2.7), "2", None],
                         ids=["float-array", "str", "None"])
def test_layout_refuses_non_integer_offset(offset):
    # Layout((3,), (1,), jnp.float32(2.7)) is accepted and read as offset 2 (silently
    # truncated); Layout((3,), (1,), "2") reads offset 2; Layout((3,), (1,), None) is
    # accepted and crashes later with TypeError. The docstring allows "a non-negative int, or
    # an integer JAX scalar"; anything else should raise LayoutError at construction.
    with pytest.raises(LayoutError, match="offset"):
        Layout((3,), (1,), offset)


# -- clone() and the *_scatter ops: result layout as PyTorch's ----------------------------

@pytest.mark.parametrize("shape, strides", [((3, 3), (1, 6)), ((1, 3), (1, 7)), ((3, 0), (1, 3))])
def test_clone_strides_match_torch(shape, strides):
    # torch.arange(24.).as_strided((3, 3), (1, 6)).clone().stride() == (1, 3) (empty_like with
    # preserve_format uses dense strides in the input's stride order when the input is not
    # dense); fs.as_strided(jnp.arange(24.), (3, 3), (1, 6)).clone().stride() == (3, 1).
    # Empty inputs keep their strides in PyTorch ((3, 0):(1, 3) -> (1, 3); here (1, 1)).
    torch = _torch()
    expected = torch.arange(24.0).as_strided(shape, strides).clone().stride()
    got = fs.as_strided(jnp.arange(24.0), shape, strides).clone().stride()
    assert got == tuple(expected)


def test_slice_scatter_keeps_input_offset_and_strides_like_torch():
    # x = torch.arange(12.).reshape(3, 4)
    # torch.slice_scatter(x[1:], torch.ones(2, 2), 1, 1, 3).storage_offset() == 4 and
    # torch.slice_scatter(x[:, ::2], torch.ones(3, 1), 1, 1).stride() == (4, 2): the *_scatter
    # ops return clone_preserve_strides(input). fs.slice_scatter gives offset 0 and (2, 1).
    torch = _torch()
    x = torch.arange(12.0).reshape(3, 4)
    fx = fs.from_array(jnp.arange(12.0).reshape(3, 4))
    t1 = torch.slice_scatter(x[1:], torch.ones(2, 2), 1, 1, 3)
    f1 = fs.slice_scatter(fx[1:], jnp.ones((2, 2)), 1, 1, 3)
    t2 = torch.slice_scatter(x[:, ::2], torch.ones(3, 1), 1, 1)
    f2 = fs.slice_scatter(fx[:, ::2], jnp.ones((3, 1)), 1, 1)
    assert (f1.storage_offset(), f1.stride()) == (t1.storage_offset(), t1.stride())
    assert (f2.storage_offset(), f2.stride()) == (t2.storage_offset(), t2.stride())
    np.testing.assert_array_equal(np.asarray(f1), t1.numpy())
    np.testing.assert_array_equal(np.asarray(f2), t2.numpy())


def test_as_strided_scatter_on_expanded_input_matches_torch_values():
    # x = torch.arange(12.).reshape(3, 4)[:1].expand(3, 4)
    # torch.as_strided_scatter(x, torch.ones(2), (2,), (1,), 1) clones the (internally
    # overlapping) input to a contiguous tensor first, so only row 0 changes:
    # [[0,1,1,3],[0,1,2,3],[0,1,2,3]]. fs.as_strided_scatter writes into the shared row and
    # returns the expanded layout, so every row reads [0,1,1,3].
    torch = _torch()
    x = torch.arange(12.0).reshape(3, 4)[:1].expand(3, 4)
    expected = torch.as_strided_scatter(x, torch.ones(2), (2,), (1,), 1)
    fx = fs.from_array(jnp.arange(12.0).reshape(3, 4))[:1].expand(3, 4)
    got = fs.as_strided_scatter(fx, jnp.ones(2), (2,), (1,), 1)
    np.testing.assert_array_equal(np.asarray(got), expected.numpy())


# -- writes: src values and dtypes ----------------------------------------------------------

@pytest.mark.parametrize("src", [300, "abc", None], ids=["int-overflow", "str", "None"])
def test_set_refuses_bad_src_with_layout_error(src):
    # fs.from_array(jnp.zeros(4, jnp.int8)).at[...].set(300) raises a raw OverflowError ("Python
    # integer 300 out of bounds for int8"; PyTorch: RuntimeError "value cannot be converted
    # to type int8_t without overflow"); .at[...].set("abc") a raw TypeError; .at[...].set(None) a raw
    # ValueError. The documented error for a src that does not fit is LayoutError.
    x = fs.from_array(jnp.zeros(4, jnp.int8))
    with pytest.raises(LayoutError, match="src"):
        x.at[...].set(src)


def test_add_on_bool_storage_is_logical_or_like_torch():
    # b = torch.zeros(4, dtype=torch.bool); b[::2].add_(True) -> [True, False, True, False].
    # fs.from_array(jnp.zeros(4, bool)).at[::2].add(True) raises a raw TypeError from
    # jax ("add does not accept dtype bool").
    x = fs.from_array(jnp.zeros(4, bool))[::2]
    out = x.at[...].add(True).storage
    np.testing.assert_array_equal(np.asarray(out), [True, False, True, False])


def test_mul_through_overlapping_view_is_differentiable():
    # v -> sum(StridedArray(2*jnp.ones(5), Layout((3, 3), (1, 1))).at[...].multiply(v).storage)
    # under jax.grad used to raise NotImplementedError ("scatter_mul gradients are only
    # implemented if unique_indices=True"). Slot j is 2 * prod of the v elements that address
    # it, so d/dv[i, k] = slot(i + k) / v[i, k] (no v is zero here).
    def loss(v):
        x = StridedArray(2 * jnp.ones(5), Layout((3, 3), (1, 1)))
        return jnp.sum(x.at[...].multiply(v).storage)

    v = jnp.arange(1.0, 10.0).reshape(3, 3)
    slots = 2.0 * np.ones(5)
    for i in range(3):
        for k in range(3):
            slots[i + k] *= float(v[i, k])
    expected = np.array([[slots[i + k] / float(v[i, k]) for k in range(3)] for i in range(3)])
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(v)), expected, rtol=1e-6)


# -- batched storages ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["contiguous", "clone", "reshape"])
def test_zero_size_batch_copies(op):
    # b = StridedArray(jnp.zeros((0, 12)), Layout((3, 4), (4, 1)), batched=True).t()
    # b.contiguous() / b.clone() / b.reshape(12) raise ZeroDivisionError ("integer modulo by
    # zero") from dense.reshape(*batch_shape, -1). Expected: a batched array with storage of
    # shape (0, 12); jnp.asarray(b) already gives shape (0, 4, 3).
    b = StridedArray(jnp.zeros((0, 12)), Layout((3, 4), (4, 1)), batched=True).t()
    out = b.reshape(12) if op == "reshape" else getattr(b, op)()
    assert out.storage.shape == (0, 12)
    assert out.batch_shape == (0,)


def test_with_storage_on_batched_array_refuses_unbatched_storage():
    # b = StridedArray(jnp.zeros((2, 12)), Layout((3, 4), (4, 1)), batched=True)
    # b.with_storage(jnp.zeros(12)) silently returns an unbatched array; its docstring says
    # StorageError when the storage is not "batched like this array's".
    b = StridedArray(jnp.zeros((2, 12)), Layout((3, 4), (4, 1)), batched=True)
    with pytest.raises(fs.StorageError):
        b.with_storage(jnp.zeros(12))


# -- error kinds and messages --------------------------------------------------------------------

def test_getitem_with_traced_int_selects_dynamically():
    # x = fs.from_array(jnp.arange(24.).reshape(2, 3, 4))
    # jax.jit(lambda i: jnp.asarray(x[i]))(jnp.int32(1)) used to raise jax's raw
    # TracerIntegerConversionError. A traced index now selects through a dynamic offset.
    x = fs.from_array(jnp.arange(24.0).reshape(2, 3, 4))
    out = jax.jit(lambda i: jnp.asarray(x[i]))(jnp.int32(1))
    np.testing.assert_array_equal(np.asarray(out), np.arange(12.0, 24.0).reshape(3, 4))


def test_unflatten_names_non_integer_sizes():
    # fs.from_array(jnp.zeros((2, 3, 4))).unflatten(2, (2.0, 2)) raises "provided sizes
    # [2.0, 2] don't multiply up to the size of dim 2 (4)": they do multiply to 4; the fault
    # is the float. unflatten(2, 4) raises a raw TypeError ("'int' object is not iterable").
    x = fs.from_array(jnp.zeros((2, 3, 4)))
    with pytest.raises(LayoutError, match=r"must be an int|not an integer"):
        x.unflatten(2, (2.0, 2))
    with pytest.raises(LayoutError, match="sizes"):
        x.unflatten(2, 4)


def test_overlap_error_under_jit_names_a_concrete_index():
    # jax.jit(lambda k: StridedArray(jnp.arange(10.), Layout((2, 3), (1, 1), k)).at[...].set(1.))
    # (jnp.int32(1)) raises OverlapError "... both address index JitTracer(int32[]) ...".
    # Eager, the same message says "index 2". Under jit it should name the index relative to
    # the offset (e.g. "offset + 1") rather than print a tracer.
    s = jnp.arange(10.0)
    with pytest.raises(fs.OverlapError) as info:
        jax.jit(lambda k: StridedArray(s, Layout((2, 3), (1, 1), k)).at[...].set(1.0).storage)(jnp.int32(1))
    assert "Tracer" not in str(info.value)


def test_scatter_src_shape_message_gives_the_real_shape():
    # fs.slice_scatter(jnp.zeros((3, 4)), [[1., 1.]] * 2, 1, 1, 3) is refused with "src shape
    # (), slice shape (3, 2)": a nested list of shape (2, 2) is reported as shape ().
    with pytest.raises(LayoutError, match=r"\(2, 2\)"):
        fs.slice_scatter(jnp.zeros((3, 4)), [[1.0, 1.0]] * 2, 1, 1, 3)

"""Bad inputs answered with the library's errors (docs/errors.md): values a dtype cannot hold,
written through a ref's in-place methods or imported without 64-bit types; ``None`` where an
array belongs; plans asked of a ``StridedArray``; non-numeric dtype views; per-item offsets
without a batch; shape-polymorphic exports; traced extents; negative ``as_strided`` strides; the
command line's output folder; ``x[True]``/``x[False]``, accepted as PyTorch and NumPy
accept them; and two views of one ``jax.Ref`` passed to ``jax.jit``, JAX's error, with the
documented fix."""

from __future__ import annotations

import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import import_torch as torch_or_skip

import functional_strides as fs
from functional_strides import LayoutError, LayoutTypeError, StorageError


def _ref_view(dtype=jnp.int32, n=3) -> fs.StridedArray:
    return fs.from_ref(jax.new_ref(jnp.zeros(n, dtype)))


# -- 1. values a dtype cannot hold --------------------------------------------------------------
OVERFLOWS = [
    ("fill_", lambda x: x.fill_(np.int64(2**40 + 5)), 2**40 + 5),
    ("setitem", lambda x: x.__setitem__(0, np.uint32(2**32 - 1)), 2**32 - 1),
    ("clamp_", lambda x: x.clamp_(max=np.int64(2**31)), 2**31),
    ("fill_", lambda x: x.fill_(np.float64(3e9)), 3e9),
]


@pytest.mark.parametrize("op, call, value", OVERFLOWS, ids=[f"{o}-{v}" for o, _, v in OVERFLOWS])
def test_numpy_scalars_written_in_place_are_checked_as_pytorch_checks_numbers(op, call, value):
    x = _ref_view()
    with pytest.raises(LayoutError, match=re.escape(f"{op}: value cannot be converted to type int without "
                                                    "overflow")) as info:
        call(x)
    assert "int32" in str(info.value) and str(value).split(".")[0].split("e")[0] in str(info.value)
    np.testing.assert_array_equal(np.asarray(x.storage[...]), [0, 0, 0])  # nothing written


def test_numpy_scalars_refused_exactly_where_pytorch_refuses_them():
    torch = torch_or_skip()
    for value in (np.int64(2**40 + 5), np.uint32(2**32 - 1), np.int64(-2**31), np.int64(7), np.float64(2.5)):
        t = torch.zeros(3, dtype=torch.int32)
        x = _ref_view()
        try:
            t.fill_(value)
            refused = False
        except RuntimeError:
            refused = True
        if refused:
            with pytest.raises(LayoutError, match="without overflow"):
                x.fill_(value)
        else:
            x.fill_(value)
            np.testing.assert_array_equal(np.asarray(x.storage[...]), t.numpy())
    t, x = torch.zeros(2, dtype=torch.int8), _ref_view(jnp.int8, 2)
    t.add_(np.int64(200))  # numbers in arithmetic wrap, NumPy scalars as Python ones
    x.add_(np.int64(200))
    np.testing.assert_array_equal(np.asarray(x.storage[...]), t.numpy())


IMPORTS = {
    "from_numpy": lambda a: fs.from_numpy(a),
    "from_array": lambda a: fs.from_array(a),
    "from_dlpack": lambda a: fs.from_dlpack(a),
}


@pytest.mark.parametrize("name", IMPORTS)
@pytest.mark.parametrize("values", [[2**40 + 5, 7], [-2**40, 1]], ids=["high", "low"])
def test_int64_imports_that_would_wrap_without_x64_are_refused(name, values):
    if jax.config.read("jax_enable_x64"):
        pytest.skip("64-bit types are on: nothing wraps")
    a = np.array(values, np.int64)
    with pytest.raises(LayoutError, match=re.escape("jax_enable_x64")) as info:
        IMPORTS[name](a)
    assert str(values[0]) in str(info.value) and "int64" in str(info.value)
    ok = IMPORTS[name](np.array([2**31 - 1, -2**31], np.int64))  # in range: imported, as int32
    assert np.asarray(ok).tolist() == [2**31 - 1, -2**31]


def test_int64_tensors_from_torch_that_would_wrap_are_refused():
    torch = torch_or_skip()
    if jax.config.read("jax_enable_x64"):
        pytest.skip("64-bit types are on: nothing wraps")
    with pytest.raises(LayoutError, match="from_torch: the int64 array holds 1099511627781"):
        fs.from_torch(torch.tensor([2**40 + 5, 7]))
    assert fs.from_torch(torch.tensor([5, 7])).tolist() == [5, 7]


# -- 4. raw or misleading errors -----------------------------------------------------------------
def test_none_where_an_array_belongs():
    for call, op in ((lambda: fs.from_array(None), "from_array"),
                     (lambda: fs.as_strided(None, (2,), (1,)), "as_strided")):
        with pytest.raises(LayoutTypeError, match=re.escape(f"{op}: x is None")):
            call()


def test_read_plan_and_write_plan_take_a_strided_array_or_a_layout_alike():
    x = fs.from_array(jnp.zeros((64, 64))).t()
    assert fs.read_plan(x) == fs.read_plan(x.layout)
    assert fs.write_plan(x) == fs.write_plan(x.layout, 64 * 64) == fs.write_plan(x.layout)
    frames = fs.from_array(jnp.zeros(20)).as_strided((3, 4), (4, 1), 2)
    assert fs.write_plan(frames) == fs.write_plan(frames.layout, 20)
    assert fs.write_plan(frames.layout) == fs.write_plan(frames.layout, 14)  # the least storage
    for plan in (fs.read_plan, fs.write_plan):
        with pytest.raises(LayoutTypeError, match="expected a functional_strides.Layout or a StridedArray"):
            plan((3, 4))


@pytest.mark.parametrize("dtype", [np.dtype("U1"), "O", "M8[s]", np.dtype([("a", "f4")])], ids=str)
def test_a_dtype_view_to_a_dtype_jax_lacks_is_refused(dtype):
    with pytest.raises(LayoutTypeError, match="view: JAX has no arrays of dtype"):
        fs.from_array(jnp.zeros(4)).view(dtype)


def test_per_item_offsets_without_a_batch_are_refused_where_they_are_used():
    layout = fs.Layout((2,), (1,), jnp.array([1]))  # valid for a batch of one storage
    message = "the layout's offset has shape (1,) (one offset per item of a batch)"
    for call in (lambda: fs.materialize(jnp.arange(4.0), layout),
                 lambda: jax.jit(lambda s: fs.materialize(s, layout))(jnp.arange(4.0)),
                 lambda: fs.write(jnp.arange(4.0), layout, 1.0),
                 lambda: jax.jit(lambda s: fs.write(s, layout, 1.0))(jnp.arange(4.0))):
        with pytest.raises(StorageError, match=re.escape(message)):
            call()
    batched = fs.StridedArray(jnp.arange(8.0).reshape(1, 8), layout, batched=True)
    assert jnp.asarray(batched).tolist() == [[1.0, 2.0]]


def test_shape_polymorphic_exports_are_refused_naming_the_symbolic_dimension():
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), jnp.float32)
    for f in (lambda s: fs.StridedArray(s, fs.Layout((2, 2), (1, 2))).contiguous(),
              lambda s: fs.materialize(s, fs.Layout((2, 2), (1, 2)))):
        with pytest.raises(LayoutTypeError, match="symbolic dimension n") as info:
            jax.export.export(jax.jit(f))(spec)
        assert "export once per size" in str(info.value)


def test_a_traced_extent_is_refused_without_suggesting_int():
    with pytest.raises(LayoutTypeError, match="must be an int known at trace time") as info:
        jax.jit(lambda s, k: fs.from_array(s).narrow(0, 0, k).contiguous())(jnp.arange(10.0), 3)
    assert "int(...)" not in str(info.value) and "static_argnums" in str(info.value)
    out = jax.jit(lambda s, k: fs.from_array(s).narrow(0, 0, k).contiguous(), static_argnums=1)(
        jnp.arange(10.0), 3)
    assert out.tolist() == [0.0, 1.0, 2.0]


def test_negative_as_strided_strides_name_the_ways_that_make_them():
    with pytest.raises(LayoutError, match=re.escape("x.flip(dims)")) as info:
        fs.as_strided(jnp.arange(4.0), (2,), (-1,), 3)
    assert "fs.numpy.as_strided" in str(info.value) and "not supported" not in str(info.value)
    assert fs.from_array(jnp.arange(4.0)).flip(0).stride() == (-1,)


def test_fork_error_has_the_public_module():
    assert fs.ForkError.__module__ == "functional_strides" and issubclass(fs.ForkError, LayoutError)


def test_explain_to_a_missing_folder_is_one_line_and_status_2(tmp_path):
    missing = tmp_path / "no" / "such" / "x.png"
    proc = subprocess.run([sys.executable, "-m", "functional_strides", "explain", "(4,4):(1,4)",
                           "--png", str(missing)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr


# -- x[True], x[False]: accepted, as PyTorch and NumPy accept them ------------------------------
def _bases():
    base = fs.from_array(jnp.arange(60.0)).view(3, 4, 5)
    return {"contiguous": base, "permuted": base.permute(2, 0, 1), "sliced": base[:, ::2],
            "permuted_slice": base.transpose(0, 2)[::2], "expanded": base.expand(2, 3, 4, 5)[:, :, 0],
            "scalar": base[0, 0, 0]}


@pytest.mark.parametrize("name", list(_bases()))
@pytest.mark.parametrize("key", [True, False, np.True_])
def test_a_bool_index_adds_a_dim_as_pytorch_and_numpy_do(name, key):
    x = _bases()[name]
    got = x[key]
    want = np.asarray(x)[bool(key)]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.storage is not x.storage  # a copy, as advanced indexing is in both


@pytest.mark.parametrize("name", list(_bases()))
def test_a_bool_index_has_pytorchs_strides(name):
    torch = torch_or_skip()
    x = _bases()[name]
    storage = torch.from_numpy(np.arange(60.0, dtype=np.float32))
    t = storage.as_strided(x.shape, x.stride(), x.storage_offset())
    for key in (True, False):
        got, want = x[key], t[key]
        assert (got.shape, got.stride(), got.storage_offset()) == (tuple(want.shape), want.stride(),
                                                                   want.storage_offset())
        np.testing.assert_array_equal(np.asarray(got), want.numpy())


# -- two views of one ref as arguments of jit ------------------------------------------------------
def test_two_views_of_one_ref_passed_to_jit_are_jax_s_error_and_the_fix_works():
    """docs/errors.md: JAX refuses two references to one ref among a jitted function's
    arguments before tracing it (the library's flatten sees one view at a time); passing the
    ref once and building the views inside works, and so does closing over the views."""
    x = fs.from_ref(jax.new_ref(jnp.zeros(8)))
    traced = []

    def f(a, b):
        traced.append(1)
        a.add_(1.0)
        b.add_(2.0)

    message = re.escape("only one reference to a mutable array may be passed as an argument to a function")
    with pytest.raises(ValueError, match=message) as info:
        jax.jit(f)(x[:4], x[4:])
    assert not isinstance(info.value, LayoutError) and "a.storage" in str(info.value)
    with pytest.raises(ValueError, match=message):  # a view and its ref
        jax.jit(lambda v, r: v.add_(1.0) and None)(x[::2], x.storage)
    assert traced == [] and x.tolist() == [0.0] * 8  # never traced, nothing written

    jax.jit(lambda v: f(v[:4], v[4:]))(x)  # the fix: the ref once, the views built inside
    assert x.tolist() == [1.0] * 4 + [2.0] * 4
    jax.jit(lambda r: f(fs.from_ref(r)[::2], fs.from_ref(r)[1::2]))(x.storage)
    assert x.tolist() == [2.0, 3.0] * 2 + [3.0, 4.0] * 2
    a, b = x[:4], x[4:]
    jax.jit(lambda: f(a, b))()  # views closed over, not passed
    assert x.tolist() == [3.0, 4.0] * 2 + [5.0, 6.0] * 2

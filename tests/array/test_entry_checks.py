"""What ``fs.materialize``, ``fs.write``, ``StridedArray(...)`` and ``.at[]`` refuse at the
door, with the library's errors, before anything is lowered: storages that are not 1-D
arrays, layouts that are not ``Layout``, views whose bytes overflow int64 (which would end
the process inside XLA), integers that would change their value on the way into the
storage; and ``view_as_complex`` of a view passed into ``jit``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import REPO

import functional_strides as fs
from functional_strides import Layout, LayoutError, LayoutTypeError, StorageError, StridedArray

ENTRY_POINTS = {
    "materialize": lambda storage, layout: fs.materialize(storage, layout),
    "write": lambda storage, layout: fs.write(storage, layout, 1.0),
    "materialize_jit": lambda storage, layout: jax.jit(lambda s: fs.materialize(s, layout))(storage),
    "write_jit": lambda storage, layout: jax.jit(lambda s: fs.write(s, layout, 1.0))(storage),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_two_dimensional_storage_is_refused_naming_its_shape(entry):
    message = re.escape("storage must be 1-D (got shape (10, 10); layout (2,):(1,)+0); pass "
                        "storage.reshape(-1)")
    with pytest.raises(StorageError, match=message):
        ENTRY_POINTS[entry](jnp.zeros((10, 10)), Layout((2,), (1,)))


@pytest.mark.parametrize("entry", ["materialize", "write"])
@pytest.mark.parametrize("storage, kind", [
    (None, "None"), (object(), "object"),
    (jax.ShapeDtypeStruct((4,), jnp.float32), "ShapeDtypeStruct(float32[4])"),
    ([1.0, 2.0, 3.0], "list"),
], ids=["None", "object", "ShapeDtypeStruct", "list"])
def test_a_storage_that_is_no_array_is_refused(entry, storage, kind):
    message = re.escape(f"storage must be a 1-D JAX or NumPy array, not {kind}")
    with pytest.raises(LayoutTypeError, match=message):
        ENTRY_POINTS[entry](storage, Layout((2,), (1,)))


@pytest.mark.parametrize("entry", ["materialize", "write"])
def test_a_layout_that_is_no_layout_is_refused(entry):
    with pytest.raises(LayoutTypeError, match="layout must be a functional_strides.Layout, not tuple"):
        ENTRY_POINTS[entry](jnp.zeros(4), ((2,), (1,), 0))


def test_the_constructor_refuses_what_is_no_array():
    for storage, kind in ((None, "None"), (object(), "object"), ("abc", "str")):
        with pytest.raises(LayoutTypeError, match=re.escape(f"not {kind} (layout (2,):(1,)+0)")):
            StridedArray(storage, Layout((2,), (1,)))


def test_numpy_storages_are_still_read_and_written():
    storage = np.arange(6.0, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(fs.materialize(storage, Layout((2, 3), (1, 2)))),
                                  np.arange(6.0).reshape(3, 2).T)
    np.testing.assert_array_equal(np.asarray(fs.write(storage, Layout((3,), (2,)), 9.0)),
                                  [9, 1, 9, 3, 9, 5])


# -- views past int64 bytes: refused before XLA sees them (XLA aborts the process) ------------

OVERFLOW = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import functional_strides as fs
    x = fs.from_array(jnp.zeros(4, jnp.float32))
    b = fs.StridedArray(jnp.zeros((2, 4)), fs.Layout((2**59, 4), (0, 1)), batched=True)
    cases = {
        "contiguous": lambda: x.expand(2**60, 4).contiguous(),
        "asarray": lambda: jnp.asarray(x.expand(2**60, 4)),
        "clone": lambda: x.expand(2**61, 4).clone(),
        "jit": lambda: jax.jit(lambda s: fs.StridedArray(s, fs.Layout((2**60, 4), (0, 1))).contiguous())(
            x.storage),
        "add": lambda: x.expand(2**60, 4).at[...].add(1.0),
        "write": lambda: fs.write(x.storage, fs.Layout((2**62, 2), (0, 1)), 1.0, mode="add"),
        "eager_write_int8": lambda: fs.write(jnp.zeros(2, jnp.int8), fs.Layout((2**62, 2), (0, 1)), 1,
                                             mode="add"),
        "batched": lambda: b.contiguous(),
    }
    for name, case in cases.items():
        try:
            case()
        except fs.StorageError as e:
            assert "more than any array can hold (9223372036854775807 bytes" in str(e), str(e)
            print(name, "refused")
""")


@pytest.mark.slow
def test_views_whose_bytes_overflow_int64_are_refused_before_lowering():
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", OVERFLOW], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # -6: SIGABRT inside XLA
    names = ["contiguous", "asarray", "clone", "jit", "add", "write", "eager_write_int8", "batched"]
    assert proc.stdout.split() == [word for name in names for word in (name, "refused")]


def test_the_message_names_the_elements_and_bytes():
    x = fs.from_array(jnp.zeros(4, jnp.float32)).expand(2**60, 4)
    with pytest.raises(StorageError, match=re.escape(
            f"materialize: the view {x.layout} has {2**62} elements of 4 bytes ({2**64} bytes), more than "
            "any array can hold")):
        x.contiguous()
    fs.from_array(jnp.zeros(4, jnp.int8)).expand(2**10, 4).contiguous()  # far below: read as ever


# -- integers that would change their value on the way in ---------------------------------------

@pytest.mark.skipif(jax.config.jax_enable_x64, reason="the narrowing of 64-bit integers happens with x64 off")
@pytest.mark.parametrize("value, dtype", [
    (np.int64(2**40 + 5), "int32"),
    (np.array([0, 2**40 + 5]), "int32"),
    (np.int64(2**40 + 5), "float32"),              # narrowed to int32 before the cast to float
    (np.uint64(2**63), "uint32"),
    (np.uint32(2**32 - 1), "int32"),
    (np.int64(-1), "uint8"),
    (np.int16(300), "uint8"),
], ids=["int64_scalar", "int64_array", "int64_into_float", "uint64", "uint32_into_int32",
        "negative_into_uint8", "int16_into_uint8"])
def test_numpy_integers_that_do_not_fit_are_refused(value, dtype):
    x = fs.from_array(jnp.zeros(4, dtype))
    with pytest.raises(LayoutError, match="out of the range of|without loss"):
        x.at[0].set(value)
    with pytest.raises(LayoutError, match="out of the range of|without loss"):
        fs.write(x.storage, Layout((2,), (1,)), value)


@pytest.mark.skipif(jax.config.jax_enable_x64, reason="the narrowing of 64-bit integers happens with x64 off")
def test_the_refusal_of_a_numpy_int64_names_its_values_and_the_range():
    x = fs.from_array(jnp.zeros(4, jnp.int32))
    with pytest.raises(LayoutError, match=re.escape(
            "at[].set: src holds integers from 1099511627781 to 1099511627781 (dtype int64), out of the "
            "range of int32 (the storage dtype: -2147483648 to 2147483647)")):
        x.at[0].set(np.int64(2**40 + 5))
    f = fs.from_array(jnp.zeros(4, jnp.float32))
    with pytest.raises(LayoutError, match=re.escape("what JAX makes of int64 with jax_enable_x64 off")):
        f.at[0].set(np.int64(2**40 + 5))
    with pytest.raises(LayoutError, match=re.escape("Python integer 1099511627781 out of bounds for int32")):
        x.at[0].set(2**40 + 5)  # a Python int, refused as before


def test_jax_integers_of_a_wider_range_are_refused_traced_or_not():
    x = fs.from_array(jnp.zeros(4, jnp.int32))
    big = jnp.full(4, 2**32 - 1, jnp.uint32)
    message = "cannot cast src of dtype uint32 to the storage dtype int32 without loss"
    with pytest.raises(LayoutError, match=message):
        x.at[...].set(big)
    with pytest.raises(LayoutError, match="without loss"):
        jax.jit(lambda s, v: fs.StridedArray(s, Layout((4,), (1,))).at[...].set(v).storage)(x.storage, big)


@pytest.mark.parametrize("value, dtype, want", [
    (np.int64(7), "int32", 7),
    (np.arange(4)[-1], "int32", 3),
    (np.int64(-2**31), "int32", -2**31),
    (np.uint8(200), "int32", 200),
    (np.int64(5), "float32", 5.0),
    (jnp.int8(-3), "int32", -3),
    (7, "uint8", 7),
], ids=["int64_in_range", "arange_item", "int32_min", "uint8_into_int32", "int64_into_float", "jax_int8",
        "python_int"])
def test_integers_that_fit_are_written(value, dtype, want):
    got = fs.from_array(jnp.zeros(4, dtype)).at[1].set(value)
    assert got.tolist() == [0, want, 0, 0]
    arr = np.arange(4)  # int64 NumPy values, the common case
    assert fs.from_array(jnp.zeros(4, jnp.int32)).at[...].set(arr).tolist() == [0, 1, 2, 3]


# -- view_as_complex of a view passed into jit ------------------------------------------------------

def test_view_as_complex_under_jit_is_refused_as_documented_and_works_with_a_static_offset():
    r = fs.from_array(jnp.arange(8.0).reshape(4, 2))
    at_array_offset = r.as_strided(r.shape, r.stride(), jnp.asarray(0))  # the offset a leaf: traced
    with pytest.raises(LayoutError, match="view_as_complex: the storage offset is traced"):
        jax.jit(lambda v: fs.view_as_complex(v).contiguous())(at_array_offset)
    passed = jax.jit(lambda v: fs.view_as_complex(v).contiguous().storage)(r)  # an int offset: static
    np.testing.assert_array_equal(np.asarray(passed), [0 + 1j, 2 + 3j, 4 + 5j, 6 + 7j])
    assert "traced offset" in fs.view_as_complex.__doc__ and "jit" in fs.view_as_complex.__doc__
    inside = jax.jit(
        lambda s: fs.view_as_complex(StridedArray(s, Layout((4, 2), (2, 1)))).contiguous().storage)
    np.testing.assert_array_equal(np.asarray(inside(r.storage)), [0 + 1j, 2 + 3j, 4 + 5j, 6 + 7j])

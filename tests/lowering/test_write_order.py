"""One order of contributions for every write path.

Where several elements of a view share a storage slot, an add or a multiply combines them
into the stored value one by one, in the view's row-major order, as the oracle's loop does
(``oracle.scatter``): ``((s + c0) + c1) + ...``. In a low-precision dtype another order rounds
differently (bfloat16 ``256 + 1 + 1`` is 256 one by one and 258 with the ones summed first),
so every path, eager and under ``jit``, is compared with the oracle bit for bit: through
stride-0 dims (``expand``), overlapping windows (``unfold``) and both at once, in either
nesting.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from _support import every_path

import functional_strides as fs
from functional_strides import Layout, LayoutError, oracle

LOW = [jnp.bfloat16, jnp.float16, jnp.float4_e2m1fn, jnp.float8_e4m3fn]
LAYOUTS = {
    "expand": (Layout((2, 8), (0, 1), 0), 8),
    "expand_3": (Layout((3,), (0,), 0), 4),
    "frames": (Layout((3, 4), (2, 1), 0), 8),
    "frames_then_expand": (Layout((3, 4, 3), (2, 1, 0), 0), 8),
    "expand_then_frames": (Layout((3, 3, 4), (0, 2, 1), 1), 9),
    "expanded_column": (Layout((4, 3, 2), (2, 0, 1), 0), 8),
}


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _inputs(dtype, layout: Layout, n: int, mode: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    big = float(ml_dtypes.finfo(dtype).max) ** 0.5 if mode == "mul" else 64.0
    stored = np.clip(rng.standard_normal(n) * big, -big, big).astype(np.float32)
    values = (rng.standard_normal(layout.shape) * (1.3 if mode == "mul" else 1.0)).astype(np.float32)
    return jnp.asarray(stored, dtype), jnp.asarray(values, dtype)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("dtype", LOW, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_every_path_combines_in_the_oracles_order(dtype, name):
    """``add`` and ``mul`` on every path that applies, bit for bit the oracle's, eagerly and
    (every path of both modes in one program) under ``jit``."""
    layout, n = LAYOUTS[name]
    inputs = {mode: _inputs(dtype, layout, n, mode) for mode in ("add", "mul")}
    want = {mode: _bits(oracle.scatter(np.asarray(s), layout, np.asarray(v), mode=mode))
            for mode, (s, v) in inputs.items()}
    planned = []
    for mode, (storage, values) in inputs.items():
        np.testing.assert_array_equal(_bits(fs.write(storage, layout, values, mode=mode)), want[mode],
                                      err_msg=f"{mode} eager")
        for method in fs.WRITE_METHODS:
            try:
                fs.write_plan(layout, n, mode=mode, method=method)
            except LayoutError:
                continue  # the path does not apply to this view
            planned.append((mode, method))
    def write(pair, inputs):
        storage, values = inputs[pair[0]]
        return fs.write(storage, layout, values, mode=pair[0], method=pair[1])

    got = every_path(write, planned, inputs)
    # the strided write takes adds of float32/64 and integers only: it alone may refuse the dtype
    assert {m for _, m in set(planned) - set(got)} <= {"strided_copy"}, (planned, list(got))
    for (mode, method), out in got.items():
        np.testing.assert_array_equal(_bits(out), want[mode], err_msg=f"{mode} {method}")
    for mode in inputs:
        assert {(mode, "auto"), (mode, "scatter")} <= set(got), list(got)


def test_the_documented_examples():
    """bfloat16 ``256 + 1 + 1`` through ``expand(2, 8)`` stays 256 (each 1 rounds away), and
    float4 ``3 + 1 + 1 + 1`` is 4 (3 + 1 = 4, then 4 + 1 rounds back to 4), eagerly and in jit."""
    base = fs.from_array(jnp.full((8,), 256, jnp.bfloat16))

    def add(storage):
        return fs.from_array(storage).unsqueeze(0).expand(2, 8).at[...].add(jnp.ones((2, 8), jnp.bfloat16))

    assert add(base.storage).storage.tolist() == [256.0] * 8
    assert jax.jit(lambda s: add(s).storage)(base.storage).tolist() == [256.0] * 8
    four = jnp.asarray([3.0, 0.0], jnp.float4_e2m1fn)
    lay = Layout((3,), (0,), 0)
    ones = jnp.ones((3,), jnp.float4_e2m1fn)
    assert np.asarray(fs.write(four, lay, ones, mode="add"), np.float32).tolist() == [4.0, 0.0]
    got = jax.jit(lambda s: fs.write(s, lay, ones, mode="add"))(four)
    assert np.asarray(got, np.float32).tolist() == [4.0, 0.0]


def test_stride0_adds_fold_into_the_stored_values_in_float32_too():
    """The rule is the same in float32: through an expand of a large row, the stored values
    are read, the contributions folded in one by one, and the row set back (a ``block``
    write of the folded values), bit for bit as the oracle."""
    layout = Layout((3, 4096), (0, 1), 0)
    assert fs.write_plan(layout, 4096, mode="add") == "block"
    rng = np.random.default_rng(3)
    storage = rng.standard_normal(4096).astype(np.float32) * 1e4
    values = rng.standard_normal(layout.shape).astype(np.float32)
    want = oracle.scatter(storage, layout, values, mode="add")
    got = jax.jit(lambda s, v: fs.write(s, layout, v, mode="add"))(jnp.asarray(storage), jnp.asarray(values))
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.sampled(3)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float32])
@pytest.mark.parametrize("k", [2, 8, 9, 100])
def test_the_fold_and_its_gradient(dtype, k):
    """Folds of a few contributions (unrolled) and of many (a loop), values and gradients."""
    layout = Layout((k, 5), (0, 2), 1)
    storage, values = _inputs(dtype, layout, 11, "add", seed=k)
    want = oracle.scatter(np.asarray(storage), layout, np.asarray(values), mode="add")
    got = jax.jit(lambda s, v: fs.write(s, layout, v, mode="add"))(storage, values)
    np.testing.assert_array_equal(_bits(got), _bits(want))
    grads = jax.grad(lambda s, v: fs.write(s, layout, v, mode="mul").astype(jnp.float32).sum(),
                     argnums=(0, 1))(storage.astype(jnp.float32), values.astype(jnp.float32))
    s32, v32 = np.asarray(storage, np.float32), np.asarray(values, np.float32)
    slots = 1 + 2 * np.arange(5)
    want_ds = np.ones(11, np.float32)
    want_ds[slots] = np.prod(v32, axis=0)
    np.testing.assert_allclose(np.asarray(grads[0]), want_ds, rtol=1e-5)
    prod = np.prod(v32, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        want_dv = np.where(v32 != 0, s32[slots] * prod / v32, 0.0)
    np.testing.assert_allclose(np.asarray(grads[1]), want_dv, rtol=1e-4, atol=1e-6)


def test_min_and_max_through_stride0_dims_still_take_the_structured_path():
    """Order does not change an extreme: min/max through an expand keep every path."""
    layout = Layout((2, 8), (0, 1), 0)
    assert fs.write_plan(layout, 8, mode="max", method="structured") == "structured"
    values = jnp.arange(16.0).reshape(2, 8) - 4.0
    got = jax.jit(lambda s: fs.write(s, layout, values, mode="max", method="structured"))(jnp.zeros(8))
    np.testing.assert_array_equal(np.asarray(got), oracle.scatter(np.zeros(8, np.float32), layout,
                                                                  np.asarray(values), mode="max"))

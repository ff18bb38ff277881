"""Sub-byte storages (int4, uint4, int2, float4_e2m1fn) work on every read and write path, and
dtype views to or from them are refused with the library's error.

Every path that applies is compared with the oracle, eagerly and under ``jit``; the write
modes' identities (``min``/``max`` pad rows with the dtype's extreme) must exist for these
dtypes, whose NumPy kind is ``"V"``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import every_path

import functional_strides as fs
from functional_strides import Layout, LayoutTypeError, oracle

SUB_BYTE = [jnp.int4, jnp.uint4, jnp.int2, jnp.float4_e2m1fn]
LAYOUTS = [Layout((4, 4), (1, 4), 0), Layout((3, 4), (2, 1), 1), Layout((4,), (5,), 0),
           Layout((2, 4), (0, 1), 2), Layout((2, 3), (8, 2), 1)]
IDS = [str(lay) for lay in LAYOUTS]


def _storage(dtype) -> jax.Array:
    return jnp.asarray(np.arange(20) % 2 if dtype == jnp.int2 else np.arange(20) % 6, dtype)


def _same(got, want) -> None:
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), np.asarray(want).astype(np.float32))


@pytest.mark.sampled(3)
@pytest.mark.parametrize("dtype", SUB_BYTE, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_reads_on_every_path(dtype, layout):
    storage = _storage(dtype)
    want = oracle.materialize(np.asarray(storage), layout)
    _same(fs.materialize(storage, layout), want)
    got = every_path(lambda m, s: fs.materialize(s, layout, method=m), fs.READ_METHODS, storage)
    for out in got.values():
        _same(out, want)
    assert len(got) >= 2


MODES = ("set", "add", "mul", "min", "max")


@pytest.mark.sampled(3)
@pytest.mark.parametrize("dtype", SUB_BYTE, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_writes_on_every_path(dtype, layout):
    """Every mode on every path that applies, eagerly and (all of them in one program) under
    ``jit``."""
    storage = _storage(dtype)
    values = jnp.asarray(np.ones(layout.shape), dtype)
    overlap = {mode: "last" if mode == "set" else "error" for mode in MODES}
    want = {mode: oracle.scatter(np.asarray(storage), layout, np.asarray(values), mode=mode)
            for mode in MODES}
    for mode in MODES:
        _same(fs.write(storage, layout, values, mode=mode, overlap=overlap[mode]), want[mode])
    pairs = [(mode, method) for mode in MODES for method in fs.WRITE_METHODS]
    got = every_path(lambda pair, s, v: fs.write(s, layout, v, mode=pair[0], method=pair[1],
                                                 overlap=overlap[pair[0]]), pairs, storage, values)
    for (mode, method), out in got.items():
        np.testing.assert_array_equal(np.asarray(out).astype(np.float32), want[mode].astype(np.float32),
                                      err_msg=f"{mode} {method}")
    for mode in MODES:
        assert sum(m == mode for m, _ in got) >= 2, (mode, list(got))


@pytest.mark.parametrize(("old", "new"), [(jnp.int8, jnp.int4), (jnp.int4, jnp.int8), (jnp.uint8, jnp.uint4),
                                          (jnp.float4_e2m1fn, jnp.uint8), (jnp.int16, jnp.int2)])
def test_dtype_views_to_or_from_sub_byte_dtypes_are_refused(old, new):
    x = fs.from_array(jnp.zeros(8, old))
    with pytest.raises(LayoutTypeError, match=r"sub-byte dtype \(\d bits an element\)"):
        x.view(new)

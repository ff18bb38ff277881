"""One bad value, one error: the same class and message whether it comes as a Python
``int``, a NumPy ``np.int64`` or a concrete 0-d JAX array.

Integer-like values arrive in all three forms (shapes read off arrays, loop counters,
results of ``jnp`` arithmetic outside ``jit``); each entry point must refuse a negative
offset, an out-of-range dim or index, or a bad size identically whatever the Python type,
and accept the valid value identically too.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import functional_strides as fs
from functional_strides import Layout, LayoutError, OutOfRangeError, StorageError

KINDS = {
    "int": int,
    "np.int64": np.int64,
    "np.int32": np.int32,
    "jax-0d": lambda v: jnp.asarray(v, jnp.int32),
}


def _x():
    return fs.from_array(jnp.arange(12.0).reshape(3, 4))


# (id, call taking the value, bad value, error class, valid value)
CASES = [
    ("Layout-offset", lambda v: Layout((2,), (1,), v), -1, StorageError, 0),
    ("Layout-extent", lambda v: Layout((v,), (1,)), -1, LayoutError, 2),
    ("Layout-stride-rank", lambda v: Layout((2, v), (1,)), 3, LayoutError, None),
    ("as_strided-offset", lambda v: fs.as_strided(jnp.arange(12.0), (2,), (1,), v), -1, LayoutError, 10),
    ("as_strided-offset-past-end", lambda v: fs.as_strided(jnp.arange(12.0), (2,), (1,), v), 11,
     StorageError, 10),
    ("as_strided-size", lambda v: fs.as_strided(jnp.arange(12.0), (v,), (1,)), -1, LayoutError, 12),
    ("as_strided-size-past-end", lambda v: fs.as_strided(jnp.arange(12.0), (v,), (1,)), 13,
     StorageError, 12),
    ("as_strided-stride", lambda v: fs.as_strided(jnp.arange(12.0), (2,), (v,)), -1, LayoutError, 11),
    ("x.as_strided-offset", lambda v: _x().as_strided((2,), (1,), v), -1, LayoutError, 10),
    ("narrow-dim", lambda v: _x().narrow(v, 0, 1), 2, OutOfRangeError, 1),
    ("narrow-negative-dim", lambda v: _x().narrow(v, 0, 1), -3, OutOfRangeError, -2),
    ("narrow-start", lambda v: _x().narrow(1, v, 1), 4, OutOfRangeError, 3),
    ("narrow-negative-start", lambda v: _x().narrow(1, v, 1), -5, OutOfRangeError, -4),
    ("narrow-length", lambda v: _x().narrow(1, 0, v), -1, LayoutError, 4),
    ("narrow-length-past-end", lambda v: _x().narrow(1, 0, v), 5, OutOfRangeError, 4),
    ("select-dim", lambda v: _x().select(v, 0), 2, OutOfRangeError, 1),
    ("select-negative-dim", lambda v: _x().select(v, 0), -3, OutOfRangeError, -2),
    ("select-index", lambda v: _x().select(0, v), 3, OutOfRangeError, 2),
    ("select-negative-index", lambda v: _x().select(0, v), -4, OutOfRangeError, -3),
    ("getitem-index", lambda v: _x()[v], 3, OutOfRangeError, 2),
    ("getitem-negative-index", lambda v: _x()[v], -4, OutOfRangeError, -3),
    ("getitem-index-dim1", lambda v: _x()[:, v], 4, OutOfRangeError, 3),
    ("getitem-slice-step", lambda v: _x()[::v], 0, LayoutError, 2),
    ("view-size", lambda v: _x().view(v, 3), 5, LayoutError, 4),
    ("view-negative-size", lambda v: _x().view(v, 3), -2, LayoutError, -1),
    ("unfold-size", lambda v: _x().unfold(1, v, 1), 5, LayoutError, 4),
    ("unfold-step", lambda v: _x().unfold(1, 2, v), 0, LayoutError, 1),
]


def _values(case):
    return case.values if hasattr(case, "values") else case


def _id(case) -> str:
    return _values(case)[0]


VALID = [_values(c) for c in CASES if _values(c)[4] is not None]


def _outcome(call, value):
    try:
        result = call(value)
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return type(exc), str(exc)
    if isinstance(result, Layout):
        return "ok", (result.shape, result.strides, int(result.offset))
    return "ok", (result.shape, result.stride(), int(result.storage_offset()), np.asarray(result).tolist())


@pytest.mark.parametrize("name, call, bad, error, good", CASES, ids=[_id(c) for c in CASES])
def test_bad_value_same_error_whatever_its_type(name, call, bad, error, good):
    outcomes = {kind: _outcome(call, make(bad)) for kind, make in KINDS.items()}
    cls, message = outcomes["int"]
    assert cls != "ok" and issubclass(cls, error), outcomes["int"]
    for kind, got in outcomes.items():
        assert got == (cls, message), f"{name}: {kind} gives {got}, int gives {(cls, message)}"


@pytest.mark.parametrize("name, call, bad, error, good", VALID, ids=[_id(c) for c in VALID])
def test_valid_value_same_result_whatever_its_type(name, call, bad, error, good):
    outcomes = {kind: _outcome(call, make(good)) for kind, make in KINDS.items()}
    assert outcomes["int"][0] == "ok", outcomes["int"]
    for kind, got in outcomes.items():
        assert got == outcomes["int"], f"{name}: {kind} gives {got}, int gives {outcomes['int']}"

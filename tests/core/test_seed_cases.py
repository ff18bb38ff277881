"""Worked examples with verified values: ``tests/data/seed_examples.json`` (the verified copy
of the project's seed examples, its SHA-256 recorded beside it).

Each case gives a 1-D storage (``{"arange": N}`` or explicit ``values`` with a ``dtype``), a
chain of ops with PyTorch-style keyword arguments, the layout after every op (``steps``)
and either the final values (row-major) or the error raised at ``at_step``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest
from _support import SEED_EXAMPLES, seed_cases

import functional_strides as fs
from functional_strides import LayoutError, StridedArray

_DISPATCH = {
    "as_strided": lambda x, a: x.as_strided(a["size"], a["stride"], a.get("storage_offset")),
    "view": lambda x, a: x.view(a["shape"]),
    "reshape": lambda x, a: x.reshape(a["shape"]),
    "permute": lambda x, a: x.permute(a["dims"]),
    "flatten": lambda x, a: x.flatten(a.get("start_dim", 0), a.get("end_dim", -1)),
    "transpose": lambda x, a: x.transpose(a["dim0"], a["dim1"]),
    "contiguous": lambda x, a: x.contiguous(),
}


def _cases() -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in seed_cases()]


def _storage(spec: dict[str, Any]) -> np.ndarray:
    dtype = np.dtype(spec.get("dtype", "float32"))
    if "arange" in spec:
        return np.arange(spec["arange"], dtype=dtype)
    return np.asarray(spec["values"], dtype=dtype)


def _check_layout(x: StridedArray, base: StridedArray, want: dict[str, Any], where: str) -> None:
    assert x.shape == tuple(want["shape"]), where
    assert x.stride() == tuple(want["strides"]), where
    assert x.storage_offset() == want["offset"], where
    assert x.is_contiguous() == want["is_contiguous"], where
    assert fs.shares_storage(x, base) == want["shares_storage_with_base"], where


@pytest.mark.parametrize("case", _cases())
def test_seed_case(case: dict[str, Any]) -> None:
    storage = _storage(case["storage"])
    base = fs.from_array(jnp.asarray(storage))
    expect = case["expect"]
    steps = expect["steps"]
    fail_at = expect.get("at_step") if "error" in expect else None
    x = base
    for i, op in enumerate(case["ops"]):
        where = f"{case['id']} step {i} {op['op']}({op['args']})"
        if i == fail_at:
            assert expect["error"] == "LayoutError"
            with pytest.raises(LayoutError):
                _DISPATCH[op["op"]](x, op["args"])
            return
        x = _DISPATCH[op["op"]](x, op["args"])
        _check_layout(x, base, steps[i], where)
    assert fail_at is None, f"{case['id']}: expected a LayoutError at step {fail_at}"
    assert len(steps) == len(case["ops"])
    _check_layout(x, base, expect, f"{case['id']} result")
    want = np.asarray(expect["values"], dtype=storage.dtype).reshape(expect["shape"])
    got = np.asarray(x)
    assert got.dtype == jnp.asarray(storage).dtype
    np.testing.assert_array_equal(got, want)


def test_every_op_in_the_cases_is_dispatched() -> None:
    cases = seed_cases()
    assert cases
    used = {op["op"] for case in cases for op in case["ops"]}
    assert used <= set(_DISPATCH), used - set(_DISPATCH)


def test_seed_examples_are_the_verified_copy() -> None:
    """The data file is byte for byte the copy whose values were verified: its SHA-256 is
    recorded beside it (``seed_examples.json.sha256``, written when the copy was taken), so an
    edit to the data is caught in a clone that has nothing else to compare with."""
    recorded = SEED_EXAMPLES.with_name(SEED_EXAMPLES.name + ".sha256").read_text().split()[0]
    digest = hashlib.sha256(SEED_EXAMPLES.read_bytes()).hexdigest()
    assert digest == recorded, (
        f"{SEED_EXAMPLES} has SHA-256 {digest}, not the recorded {recorded}: the verified examples "
        "were edited; restore the file (git checkout) or record a newly verified copy's digest")


def test_seed_examples_parse_and_have_unique_ids() -> None:
    ids = [case["id"] for case in seed_cases()]
    assert len(ids) >= 10 and len(set(ids)) == len(ids), ids

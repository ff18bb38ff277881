"""Smoke run of the writes benchmark (no timing assertions)."""

import importlib.util
import json
import math
from pathlib import Path

import pytest

from functional_strides._src.native.copy_kernel import native

pytestmark = pytest.mark.slow  # a benchmark's smoke run

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_writes.py"


def test_bench_writes_small_run(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_writes", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "writes.json"
    assert module.main(["--small", "--repeat", "1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["case"] for r in rows] == [c[0] for c in module.cases(small=True)]
    for r in rows:
        for key in ("ours_s", "at_s", "ours_donated_s", "at_donated_s"):
            assert math.isfinite(r[key]) and r[key] > 0, (key, r)
            assert 0 < r[key.replace("_s", "_min_s")] <= r[key], (key, r)
        assert r["rounds"] >= 1
        # the handler's own time in ours' donated calls (None where the XLA path wrote), each
        # less than its call
        kernel = r["ours_donated_kernel_s"]
        assert kernel is None or 0 < kernel < 10 * r["ours_donated_s"], r
        assert r["run"]["small"] is True and "--small" in r["run"]["command"]
    if native is not None:  # the small overlap-add is written by the handler
        assert rows[-1]["ours_donated_kernel_s"] is not None
    assert "ours/.at[]" in capsys.readouterr().out


def test_bench_writes_expected_values_match_a_loop(tmp_path):
    """The NumPy reference every column is checked against: a plain loop over the view."""
    import itertools

    import numpy as np

    spec = importlib.util.spec_from_file_location("bench_writes", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, layout, size, mode in module.cases(small=True):
        want = np.arange(size, dtype=np.float32)
        for i in itertools.product(*map(range, layout.shape)):
            slot = layout.offset + sum(k * s for k, s in zip(i, layout.strides, strict=True))
            want[slot] = 1.0 if mode == "set" else want[slot] + 1.0
        np.testing.assert_array_equal(module.expected(layout, size, mode), want, err_msg=name)

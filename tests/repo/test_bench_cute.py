"""Smoke run of the CuTe algebra benchmark (no timing assertions)."""

import importlib.util
import json
import math
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a benchmark's smoke run

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_cute.py"


def test_bench_cute_small_run(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_cute", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "cute.json"
    assert module.main(["--small", "--repeat", "1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["case"] for r in rows] == [c[0] for c in module.cases()]
    keys = ("ours_s", "pycute_s") if module.pycute is not None else ("ours_s",)
    for r in rows:
        for key in keys:
            assert math.isfinite(r[key]) and r[key] > 0, (key, r)
    printed = capsys.readouterr().out
    assert "ours/pycute" in printed
    assert module.pycute is not None or "pycute is not installed" in printed

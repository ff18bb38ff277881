"""Smoke run of the KV-cache benchmark (no timing assertions): every column runs, agrees with
NumPy, and reports its time per step and memory; the in-place columns' temporaries stay far
below the cache."""

import importlib.util
import json
import math
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a benchmark's smoke run

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_kv_cache.py"


def test_bench_kv_cache_small_run(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_kv_cache", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out, table = tmp_path / "kv.json", tmp_path / "kv.md"
    assert module.main(["--small", "--repeat", "1", "--json", str(out), "--markdown", str(table)]) == 0
    result = json.loads(out.read_text())
    assert result["meta"]["small"] is True and "--small" in result["meta"]["command"]
    for case in result["cases"].values():
        assert set(case["columns"]) == set(module.COLUMNS) and all(case["agrees_with_numpy"].values())
        for col, rec in case["columns"].items():
            assert math.isfinite(rec["step_s"]) and 0 < rec["step_min_s"] <= rec["step_s"], (col, rec)
            assert rec["peak_bytes"] >= rec["temp_bytes"] >= 0, (col, rec)
        assert case["columns"]["ref"]["temp_bytes"] < case["cache_bytes"]
        assert case["columns"]["ref"]["alias_bytes"] == case["cache_bytes"]
    assert "| `ref` |" in table.read_text() and "| `ref` |" in capsys.readouterr().out

"""Smoke run of ``benchmarks/bench_imports.py --small``: it runs, every column's values are
right (exit status 0), and every case prints its ratios. Times are never compared."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _support import import_torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_imports.py"


@pytest.mark.slow
def test_small_run_checks_values_and_prints_every_case():
    import_torch()
    proc = subprocess.run([sys.executable, str(SCRIPT), "--small", "--repeat", "1"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for case in ("numpy_view", "torch_view", "to_torch", "channels_last", "dtype_view"):
        assert f"{case} (256x256 float32)" in proc.stdout
    assert proc.stdout.count("ratio   1.00") >= 5

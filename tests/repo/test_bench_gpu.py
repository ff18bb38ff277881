"""``benchmarks/gpu.sh`` (``bench_gpu.py``) without a GPU: it says so and exits 3; its dry
run on the CPU runs the cases, checks their values and reports each column's fraction of the
copy bandwidth; bad arguments are refused. Times are checked to be positive, never compared."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import jax
import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "gpu.sh"


def _gpu_visible() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
@pytest.mark.skipif(_gpu_visible(), reason="a GPU is visible: the script would measure it")
def test_without_a_gpu_it_says_so_and_exits_3(tmp_path):
    out = tmp_path / "r.json"
    proc = _run("--json", str(out))
    assert proc.returncode == 3, proc.stderr
    assert "no GPU visible to JAX" in proc.stderr and "--dry-run" in proc.stderr
    assert not out.exists()


@pytest.mark.slow
def test_dry_run_reports_fractions_of_the_copy_bandwidth(tmp_path):
    out = tmp_path / "r.json"
    proc = _run("--dry-run", "--small", "--cases", "transpose", "frame_signal", "--repeat", "2",
                "--peak-mib", "1", "--json", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "copy bandwidth:" in proc.stdout and "(of copy bw)" in proc.stdout
    result = json.loads(out.read_text())
    assert result["meta"]["dry_run"] == (not _gpu_visible())
    assert result["copy_bandwidth"]["bytes_per_s"] > 0
    assert set(result["cases"]) == {"transpose", "frame_signal"}
    for name, rec in result["cases"].items():
        assert all(rec["agrees_with_numpy"].values()), name
        columns = {"ours", "gather", "copy"} | ({"native"} if name == "transpose" else set())
        assert set(rec["times_s"]) == columns
        for col, t in rec["times_s"].items():
            frac = rec["fraction_of_copy_bandwidth"][col]
            assert t > 0 and math.isfinite(frac) and frac > 0, (name, col)
            moved = 2 * rec["out_elements"] * 4
            assert frac == pytest.approx(moved / t / result["copy_bandwidth"]["bytes_per_s"])


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), [
    (("--repeat", "0"), "--repeat must be >= 1 (got 0)"),
    (("--peak-mib", "0"), "--peak-mib must be >= 1 (got 0)"),
    (("--cases", "nope"), "invalid choice: 'nope'"),
])
def test_bad_arguments_are_refused(args, message):
    proc = _run(*args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr

"""Smoke runs of the benchmark scripts that have no test of their own (``--small`` or
``--quick``): each runs to the end, checks its values where it compares them, and prints or
stores every row it promises."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _support import copy_kernel as require_copy_kernel

pytestmark = pytest.mark.slow

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(script: str, *args: str, timeout: float = 240) -> str:
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=BENCHMARKS.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _rows(text: str, names: list[str]) -> dict[str, list[float]]:
    """The numbers printed on the line of each name."""
    found = {}
    for name in names:
        line = next(line for line in text.splitlines() if line.startswith(name))
        found[name] = [float(v) for v in re.findall(r"\d+\.\d+", line[len(name):])]
    return found


def test_bench_mul_grad_small():
    text = _run("bench_mul_grad.py", "--small", "--repeat", "1")
    rows = _rows(text, ["unfold 1024/256", "unfold 64/16", "hankel 32x32"])
    assert all(len(v) == 4 and min(v) > 0 for v in rows.values()), rows


def test_write_choices_fold_quick():
    text = _run("write_choices.py", "--quick", "--repeats", "1", "--fold")
    lines = [line for line in text.splitlines() if "unrolled" in line and "scatter" in line]
    assert len(lines) >= 3, text
    for line in lines:
        times = [float(v) for v in re.findall(r"(?:loop|unrolled|scatter)\s+(\d+\.\d+)", line)]
        assert len(times) == 3 and min(times) > 0, line


def test_lowering_choices_quick(tmp_path):
    """The far-apart elements' table and the strided copy's own tables (split, idle, pages,
    routes; stored as JSON) at their smallest sizes."""
    require_copy_kernel()
    out = tmp_path / "strided_copy.json"
    text = _run("lowering_choices.py", "--quick", "--repeats", "2", "--only", "far", "split", "idle", "pages",
                "routes", "--json", str(out))
    rows = [line for line in text.splitlines() if re.match(r"\s*\(\d+,\):\(\d+,\)\+0\s", line)]
    assert len(rows) >= 3, text
    assert all(len(re.findall(r"\d+\.\d+", row)) == 4 for row in rows), rows
    result = json.loads(out.read_text())
    assert {"split", "idle", "pages", "routes"} <= set(result) and result["runs"]["split"]["small"]
    for table in ("split", "pages", "routes"):
        assert result[table], table
        for row in result[table]:
            assert all(c["min_s"] > 0 and c["ratio_min"] > 0 for c in row["columns"].values()), row
    assert {"strided_copy", "xla"} <= set(result["routes"][0]["columns"])
    for name in ("sleep", "xla transpose", "ours"):
        assert result["idle"][name]["idle_cpu"] >= 0, result["idle"]
    assert result["idle"]["threads_after"] == result["idle"]["threads_before"]  # no thread of ours


def test_bench_derivatives_quick(tmp_path):
    """Every case's six programs, each checked against its plain-JAX twin, in the table with
    its times and ratio (and the backward/forward ratios on the gradient rows), and in the JSON."""
    out = tmp_path / "derivatives.json"
    text = _run("bench_derivatives.py", "--quick", "--json", str(out))
    cases = ["transpose", "permute3", "heads", "nchw-nhwc", "permute5", "slice-steps", "diagonal", "expand",
             "unfold", "im2col", "overlap-add"]
    programs = ["read", "read grad", "read jvp", "vmap grad", "write", "write grad"]
    for case in cases:
        for program in programs:
            line = next((line for line in text.splitlines()
                         if re.match(rf"{re.escape(case)}\s+2\^\d+\s+{program}\s+\d", line)), None)
            assert line is not None, (case, program, text)
            values = [float(v) for v in re.findall(r"\d+\.\d+", line)]
            assert len(values) == (5 if program.endswith("grad") and program != "vmap grad" else 3), line
            assert min(values) > 0, line
    assert "worst ours/jax ratios" in text, text
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == len(cases) * len(programs)
    assert all(r["ours_s"] > 0 and r["jax_s"] > 0 and r["ratio"] > 0 for r in rows), rows


def test_bench_permutes_small(tmp_path):
    """The sweep's drawn cases (one size, every style and dtype of two ranks), every column
    checked against NumPy's values, in the table, in the closing list and in the JSON; the same
    seed draws the same cases."""
    out = tmp_path / "permutes.json"
    args = ("--small", "--sizes", "12", "--ranks", "3", "4", "--json", str(out))
    text = _run("bench_permutes.py", *args)
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2 * (2 * 3 + 3)  # ranks x (pow2, odd in three dtypes; three styles in float32)
    assert {r["dtype"] for r in rows} == {"float32", "bfloat16", "int8"}
    assert {r["style"] for r in rows} == {"pow2", "odd", "last64", "last128", "batch1"}
    torch = {"torch"} if importlib.util.find_spec("torch") else set()  # the column needs PyTorch
    for r in rows:
        assert not r["wrong"] and r["perm"] != sorted(r["perm"]), r
        assert set(r["seconds"]) == {"ours", "xla", "gather", "numpy"} | torch, r
        t = r["seconds"]
        assert r["vs_xla"] == pytest.approx(t["ours"] / min(t["xla"], t["gather"]))
        case = f"{'x'.join(map(str, r['shape']))} {tuple(r['perm'])}"
        line = next(line for line in text.splitlines() if case in line and line.startswith(r["dtype"]))
        assert r["plan"] in line, line
    assert "worst ours / min(xla, gather)" in text and "load average" in text, text
    again = tmp_path / "again.json"
    _run("bench_permutes.py", *args[:-1], str(again), "--dtypes", "int8")
    drawn = {(tuple(r["shape"]), tuple(r["perm"])) for r in rows if r["dtype"] == "int8"}
    assert {(tuple(r["shape"]), tuple(r["perm"])) for r in json.loads(again.read_text())["rows"]} == drawn
    square = tmp_path / "square.json"
    text = _run("bench_permutes.py", "--square", "64", "100", "--repeat", "1", "--json", str(square))
    rows = json.loads(square.read_text())["rows"]
    assert [r["shape"] for r in rows] == [[64, 64], [100, 100]] and all(not r["wrong"] for r in rows), rows
    assert all(r["vs_copy"] == pytest.approx(r["seconds"]["ours"] / r["seconds"]["copy"]) for r in rows)
    assert "ours / copy of the same bytes" in text, text


def test_bench_programs_small(tmp_path):
    """Every program spelled through the views (read by ``contiguous()`` and by XLA's own ops)
    and in plain JAX, checked against each other, in the table with both times and the two
    ratios to plain JAX, and in the JSON."""
    out = tmp_path / "programs.json"
    text = _run("bench_programs.py", "--small", "--json", str(out))
    rows = json.loads(out.read_text())["rows"]
    names = ["heads*2+1", "heads sum", "heads scores", "merge heads", "t() matmul", "nhwc conv", "nhwc mean",
             "t() + 1", "t() colsum"]
    assert [r["program"] for r in rows] == names
    for r in rows:
        assert r["agrees"] and r["ours_s"] > 0 and r["jax_s"] > 0 and r["xla_ops_s"] > 0, r
        line = next(line for line in text.splitlines() if line.startswith(r["program"] + " "))
        assert len(re.findall(r"\d+\.\d+", line)) == 4, line

"""Smoke run of ``benchmarks/bench_contiguous.py --small``: it runs, checks its values, and
writes complete results. Times are checked to be finite and positive, never compared."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import functional_strides as fs

REPO = Path(__file__).resolve().parents[2]
# most tests read what one subprocess run of the script printed and stored; the renderer's go with them
pytestmark = pytest.mark.slow

SCRIPT = REPO / "benchmarks" / "bench_contiguous.py"
CASES = ("nchw_to_nhwc", "transpose", "slice_every_other", "expand_row", "frame_signal",
         "attention_heads", "ncdhw_to_ndhwc", "ndhwc_to_ncdhw", "diagonal", "batch_small_views",
         "flip_transpose")
NO_NATIVE = {"frame_signal"}  # no single XLA op frames a signal
EAGER_OPS = ("permute", "view", "getitem", "unfold")
HAS_TORCH = importlib.util.find_spec("torch") is not None


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    paths = {"json": out / "r.json", "plot": out / "sweep.png", "markdown": out / "bench.md"}
    proc = _run("--small", "--repeat", "2", *(a for k, p in paths.items() for a in (f"--{k}", str(p))))
    return proc, paths


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def test_bench_contiguous_small_run(small_run, monkeypatch):
    """One ``--small`` run: every case, the sweep, the eager view ops, the targets, the page
    faults, the plot and the markdown, stamped with the run, each value where it belongs."""
    import functional_strides as fs
    from functional_strides._src.explain.explain import parse_layout

    proc, paths = small_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(paths["json"].read_text())
    # every case: positive times of the columns it has, ratios consistent with them, compile
    # statistics, NumPy's values, the path of the timed program, page faults per column
    assert set(result["cases"]) == set(CASES)
    for name, rec in result["cases"].items():
        times, ratios = rec["times_s"], rec["ratios"]
        expected = {"ours", "gather", "numpy", "copy"} | ({"torch"} if HAS_TORCH else set())
        expected |= set() if name in NO_NATIVE else {"native"}
        present = {c for c, t in times.items() if t is not None}
        assert present == expected, name
        assert all(_positive(times[c]) for c in present), (name, times)
        for col in present - {"ours"}:
            assert _positive(ratios[col]), (name, col, ratios)
            assert ratios[col] == pytest.approx(times["ours"] / times[col]), (name, col)
        assert _positive(rec["aa_ratio"]) and _positive(rec["aa_ratio_min"]), name
        assert _positive(rec["compile_s"]["ours"]), name
        assert _positive(rec["hlo_bytes"]) and _positive(rec["stablehlo_bytes"]), name
        assert all(isinstance(b, int) and b >= 0 for b in rec["temp_bytes"].values()), name
        assert rec["out_bytes"] == 4 * rec["out_elements"] > 0, name
        assert rec["agrees_with_numpy"] and all(rec["agrees_with_numpy"].values()), (name, rec)
        if rec["views"] == 1:  # the batch reports the vmapped dynamic-offset read ours builds
            assert rec["lowering_path"] == fs.read_plan(fs.Layout(*parse_layout(rec["layout"]))), name
        # the strided copy's own time, from JAX's profiler, where ours runs it
        assert (rec["kernel_s"] is not None) == (rec["lowering_path"] == "strided_copy"), name
        assert rec["kernel_s"] is None or 0 < rec["kernel_s"], name
        assert set(rec["faults_per_call"]) == present, name
        assert all(isinstance(f, float) and f >= 0 for f in rec["faults_per_call"].values()), name
    batch = result["cases"]["batch_small_views"]
    assert batch["views"] == 50 and batch["lowering_path"] == "vmap(50 offsets) of dynamic_slice+structured"
    # every record stamped with its run
    records = [*result["cases"].values(), *result["eager"].values(),
               *(p for points in result["sweep"].values() for p in points)]
    for rec in records:
        assert rec["run"]["command"].startswith("python benchmarks/bench_contiguous.py --small")
        assert rec["run"]["timestamp"].endswith("UTC") and rec["run"]["small"] is True
    # the sweep covers its sizes, the eager table the view ops
    for kind in ("transpose", "unfold"):
        points = result["sweep"][kind]
        assert [p["log2_elements"] for p in points] == list(range(10, 17))
        assert [p["out_elements"] for p in points] == [2**k for k in range(10, 17)]
        assert all(_positive(p["times_s"]["ours"]) and _positive(p["times_s"]["gather"]) for p in points)
    for op in EAGER_OPS:
        rec = result["eager"][op]
        assert _positive(rec["ours_s"]), op
        if HAS_TORCH:
            assert _positive(rec["torch_s"]) and rec["ratio"] == pytest.approx(rec["ours_s"] / rec["torch_s"])
    # the targets, each with its verdict
    targets = {t["target"]: t for t in result["targets"]}
    for name in CASES:
        t = targets[f"{name}: ours / min(gather, native, torch, numpy)"]
        assert t["limit"] == 1.0 and isinstance(t["met"], bool) and _positive(t["value"])
        assert isinstance(t["met_min"], bool) and _positive(t["value_min"])
        rec = result["cases"][name]
        best = min(rec["times_s"][c] for c in ("gather", "native", "torch", "numpy")
                   if rec["times_s"][c] is not None)
        assert t["value"] == pytest.approx(rec["times_s"]["ours"] / best)
        assert t["met"] == (t["value"] <= 1.0)
    for name in ("transpose", "nchw_to_nhwc", "attention_heads", "ncdhw_to_ndhwc", "ndhwc_to_ncdhw"):
        t = targets[f"{name}: ours / copy"]
        times = result["cases"][name]["times_s"]
        assert t["limit"] == 1.5 and t["value"] == pytest.approx(times["ours"] / times["copy"])
    for kind in ("transpose", "unfold"):  # the small sweep ends at 2^16
        assert f"sweep {kind} 2^16: ours / min(rivals)" in targets
    # the memory section: one fresh process per allocator setting
    memory = result["memory"]
    assert memory["elements"] == 2**16
    assert set(memory["settings"]) == {"default", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"}
    for setting, m in memory["settings"].items():
        for key in ("jnp_copy_ms", "np_fresh_ms", "np_reused_ms", "jnp_copy_gbs", "np_reused_gbs"):
            assert _positive(m[key]), (setting, key)
        assert m["jnp_copy_gbs"] == pytest.approx(2 * 4 * 2**16 / (m["jnp_copy_ms"] * 1e-3) / 1e9)
        assert all(m[k] >= 0 for k in ("jnp_copy_faults", "np_fresh_faults", "np_reused_faults"))
    # the machine names the CPU model
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    bc = importlib.import_module("bench_contiguous")
    assert result["meta"]["machine"] == bc.machine()
    assert f"({bc.cpu_model()})" in bc.machine() and bc.cpu_model()
    # the plot and the markdown
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = paths["markdown"].read_text()
    assert "--small" in text and "| case |" in text and "## Targets" in text
    assert all(f"| {name} |" in text for name in CASES)
    assert ">>>" not in text  # docs/*.md are collected as doctests
    assert "## Physical limits on this machine" in text


def test_cases_option_selects_and_rejects(tmp_path):
    out = tmp_path / "one.json"
    proc = _run("--small", "--repeat", "1", "--cases", "diagonal", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert list(result["cases"]) == ["diagonal"] and "sweep" not in result and "eager" not in result
    bad = _run("--cases", "no_such_case")
    assert bad.returncode == 2 and "invalid choice: 'no_such_case'" in bad.stderr


def test_partial_runs_merge_into_the_stored_json(tmp_path):
    """A second ``--cases`` run replaces only what it measured; each record keeps its run."""
    out = tmp_path / "merged.json"
    first = _run("--small", "--repeat", "1", "--cases", "diagonal", "transpose", "--json", str(out))
    assert first.returncode == 0, first.stderr[-2000:]
    before = json.loads(out.read_text())
    second = _run("--small", "--repeat", "1", "--cases", "transpose", "eager", "--json", str(out),
                  "--markdown", str(tmp_path / "merged.md"))
    assert second.returncode == 0, second.stderr[-2000:]
    after = json.loads(out.read_text())
    assert list(after["cases"]) == ["transpose", "diagonal"]  # the benchmark's case order
    assert after["cases"]["diagonal"] == before["cases"]["diagonal"]  # kept as stored
    assert "--cases diagonal transpose" in after["cases"]["diagonal"]["run"]["command"]
    assert "--cases transpose eager" in after["cases"]["transpose"]["run"]["command"]
    assert after["cases"]["transpose"]["times_s"] != before["cases"]["transpose"]["times_s"]
    assert set(after["eager"]) >= set(EAGER_OPS)
    assert all("--cases transpose eager" in r["run"]["command"] for r in after["eager"].values())
    targets = {t["target"] for t in after["targets"]}
    assert {"diagonal: compile s", "transpose: compile s", "eager view: ours / torch"} <= targets \
        or not HAS_TORCH
    assert "kept 1 stored records: case diagonal" in second.stdout
    text = (tmp_path / "merged.md").read_text()
    assert "| diagonal |" in text and "| transpose |" in text and "## Runs" in text
    assert text.count("--cases diagonal transpose") == 1 and text.count("--cases transpose eager") == 1


def _report():
    spec = importlib.util.spec_from_file_location("bench_report", REPO / "benchmarks" / "bench_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(tag: str) -> dict:
    times = {"ours": 2.0, "gather": 4.0, "native": None, "torch": None, "numpy": 1.0, "copy": 1.0}
    return {"description": tag, "layout": "(2,):(1,)+0", "views": 1, "out_elements": 2, "out_bytes": 8,
            "native_op": None, "lowering_path": "structured", "target_group": None, "times_s": times,
            "min_times_s": times, "ratios": {}, "aa_ratio": 1.0, "compile_s": {"ours": 0.1},
            "hlo_bytes": 1024, "temp_bytes": {"ours": 0}, "agrees_with_numpy": {"ours": True},
            "run": {"timestamp": f"2026-01-0{tag[-1]} 00:00 UTC", "command": tag}}


def test_a_miss_is_explained_only_by_a_rival_faster_than_xla_copy_at_our_speed():
    """The *measured limit* of a missed target: ours at XLA's copy of the output (within
    ``XLA_FLOOR_SLACK`` either way) and the rival faster than that copy; nothing otherwise."""
    report = _report()
    note = report.xla_floor_note
    at_floor = {"ours": 1.05, "gather": 3.0, "native": None, "torch": 2.0, "numpy": 0.5, "copy": 1.0}
    assert "numpy takes 500 ms, less than that copy" in note(at_floor)
    assert note({**at_floor, "ours": 1.5}) is None     # ours well above the copy: not at the floor
    assert note({**at_floor, "ours": 0.6}) is None     # ours well below it: the copy is no floor
    assert note({**at_floor, "numpy": 1.2}) is None    # the best rival does not beat the copy
    assert note({**at_floor, "copy": None}) is None
    record = {**_record("run1"), "times_s": {**at_floor}, "min_times_s": {**at_floor}}
    miss = next(t for t in report._case_targets("c", record) if t["target"].startswith("c: ours / min"))
    assert miss["met"] is False and miss["limit_note"] == note(at_floor)
    header, rows = report.target_rows([miss])
    assert header[-1] == "a miss's measured limit" and rows[0][-1] == miss["limit_note"]


def test_a_miss_within_the_call_floor_is_explained_by_it():
    """The other measured limit: ours less the floor of a jitted call (timed in the same
    rounds) no slower than the rival's whole call; nothing where that remainder is slower,
    where ours wins, or where no floor was measured."""
    report = _report()
    note = report.call_floor_note
    t = {"ours": 0.008, "gather": 0.05, "native": 0.015, "torch": 0.009, "numpy": 0.004, "copy": 0.001}
    assert note(t, 0.005) == ("the call's floor: ours 8 ms = the floor of a jitted call 5 ms + 3 ms; "
                              "numpy takes 4 ms in all")
    assert note(t, 0.003) is None           # 5 ms of work against numpy's 4 ms: not the floor
    assert note({**t, "ours": 0.0035}, 0.003) is None  # ours is the fastest: no miss
    assert note(t, None) is None
    assert note({**t, "ours": 0.012}, 0.005) == (    # the floor alone takes numpy's whole call
        "the call's floor: a jitted call of one element takes 5 ms, no less than numpy's whole call, "
        "4 ms (ours 12 ms)")
    record = {**_record("run1"), "times_s": t, "min_times_s": t, "floor_s": 0.005}
    miss = next(x for x in report._case_targets("c", record) if x["target"].startswith("c: ours / min"))
    assert miss["met"] is False and miss["limit_note"] == note(t, 0.005)
    header, rows = report.write_rows([{"case": "w", "mode": "set", "elements": 4, "ours_s": 0.02,
                                       "ours_donated_s": 0.012, "ours_donated_min_s": 0.012, "torch_s": 0.01,
                                       "torch_min_s": 0.01, "floor_donated_s": 0.004}])
    assert rows[0][-2:] == ["NO", note({"ours": 0.012, "torch": 0.01}, 0.004)]


def test_a_write_whose_kernel_beats_the_rival_is_explained_by_the_runtime_around_it():
    report = _report()
    note = report.runtime_note
    assert note(0.0021, 0.00189, 0.002, 0.0000045) == (
        "the runtime around the kernel: the strided write takes 1.89 ms of ours' 2.1 ms, no more than "
        "torch's 2 ms; the jitted call around it the other 0.21 ms; 0.0045 ms with warm caches (the floor)")
    assert note(0.0021, 0.00201, 0.002, None) is None  # the kernel alone is slower than PyTorch
    assert note(0.0019, 0.0018, 0.002, None) is None   # ours is faster: no miss
    assert note(0.0021, None, 0.002, None) is None     # no kernel time (the XLA path ran)
    row = {"case": "w", "mode": "add", "elements": 4, "ours_s": 0.02, "ours_donated_s": 0.0021,
           "ours_donated_min_s": 0.0021, "torch_s": 0.002, "torch_min_s": 0.002,
           "floor_donated_s": 0.0000045, "ours_donated_kernel_s": 0.00189}
    header, rows = report.write_rows([row])
    assert rows[0][header.index("kernel ms")] == "1.890"
    assert rows[0][-2:] == ["NO", note(0.0021, 0.00189, 0.002, 0.0000045)]
    header, rows = report.write_rows([{**row, "ours_donated_kernel_s": None}])  # a run without it
    assert rows[0][header.index("kernel ms")] == "-" and rows[0][-1] == "-"


def test_a_read_whose_kernel_beats_the_rival_is_explained_by_the_runtime_around_it():
    """A read's miss where the strided copy's handler alone (the median per call in ours'
    samples) takes no longer than the fastest rival's whole call; nothing where the kernel is
    slower, where ours wins, or where ours ran no kernel (an XLA path)."""
    report = _report()
    note = report.kernel_note
    t = {"ours": 0.027, "gather": 0.1, "native": 0.03, "torch": 0.029, "numpy": 0.018, "copy": 0.009}
    assert note(t, 0.012) == ("the runtime around the kernel: the strided copy takes 12 ms of ours' 27 ms, "
                              "no more than numpy's 18 ms; the jitted call around it the other 15 ms")
    assert note(t, 0.019) is None                  # the kernel alone is slower than numpy
    assert note({**t, "ours": 0.017}, 0.012) is None  # ours is the fastest: no miss
    assert note(t, None) is None                   # no kernel time: the XLA path ran
    record = {**_record("run1"), "times_s": t, "min_times_s": t, "floor_s": 0.001, "kernel_s": 0.012,
              "ratios": {c: t["ours"] / v for c, v in t.items() if c != "ours" and v}}
    miss = next(x for x in report._case_targets("c", record) if x["target"].startswith("c: ours / min"))
    assert miss["met"] is False and miss["limit_note"] == note(t, 0.012)
    header, rows = report.case_rows({"c": record})
    assert rows[0][header.index("kernel ms")] == "12.0"
    header, rows = report.case_rows({"c": {**record, "kernel_s": None}})
    assert rows[0][header.index("kernel ms")] == "-"


def test_the_cpu_model_is_read_from_cpuinfo(monkeypatch, tmp_path):
    """The machine of a run names the CPU model (results of two hosts differ by more than
    their noise): ``/proc/cpuinfo``'s model name, else ``platform.processor()``."""
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    bc = importlib.import_module("bench_contiguous")
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Example CPU 9000\n")
    real_open = open

    def fake_open(path, *args, **kwargs):
        return real_open(cpuinfo if path == "/proc/cpuinfo" else path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    assert bc.cpu_model() == "Example CPU 9000"


def test_the_timing_harness_interleaves_its_columns_and_names_custom_calls(monkeypatch):
    """``timing.time_columns``: one sample of every column per round, a rotating first column;
    ``timing.custom_calls`` names the custom calls of a compiled program by their target."""
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    timing = importlib.import_module("timing")
    order = []
    samples, rounds = timing.time_columns({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, 4)
    assert rounds == 4 and all(len(v) == 4 and min(v) > 0 for v in samples.values())
    assert order.count("a") >= 4 and order.count("b") >= 4  # warm-up, then a loop per sample
    assert timing.minima(samples)["a"] <= timing.medians(samples)["a"]
    hlo = ('  %x = f32[4]{0} parameter(0)\n'
           '  ROOT %ffi_call.3 = f32[2,2]{1,0} custom-call(%x), '
           'custom_call_target="functional_strides_strided_copy"\n'
           '  %other = f32[2]{0} custom-call(%x), custom_call_target="lapack_sgetrf"\n')
    assert timing.custom_calls(hlo, "functional_strides_") == {"ffi_call.3"}


def test_a_miss_to_a_rival_that_skips_the_fresh_outputs_faults_is_explained_by_them():
    report = _report()
    note = report.fault_note
    t = {"ours": 0.007, "gather": 0.009, "native": None, "torch": 0.007, "numpy": 0.0053, "copy": 0.0098}
    faults = {"ours": 543, "gather": 541, "torch": 541, "numpy": 0, "copy": 541}
    assert note(t, faults) == ("the fresh output: ours 7 ms with 543 page faults per call, numpy 5.3 ms "
                               "with 0 (its buffer already mapped); XLA's own copy of the output's bytes "
                               "takes 9.8 ms")
    assert note(t, {**faults, "numpy": 541}) is None   # the rival faults as much
    assert note({**t, "ours": 0.012}, faults) is None  # ours slower than XLA's copy
    assert note({**t, "numpy": 0.01}, faults) is None  # the rival does not beat that copy
    assert note(t, {**faults, "ours": 10}) is None     # too few faults to matter
    huge = {**faults, "ours": 33}                      # 64 MiB faulted in through 2 MiB pages
    assert note(t, huge, 64 * 2**20) == note(t, faults).replace("543 page", "33 page")
    assert note(t, huge, 2**20) is None                # under one huge page: 33 faults are few
    assert note(t, {**huge, "ours": 20}, 64 * 2**20) is None  # part of the output only
    assert note(t, None) is None
    record = {**_record("run1"), "times_s": t, "min_times_s": t, "faults_per_call": faults}
    miss = next(x for x in report._case_targets("c", record) if x["target"].startswith("c: ours / min"))
    assert miss["limit_note"] == note(t, faults)


def test_merge_results_replaces_only_what_was_measured(monkeypatch):
    report = _report()
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    bc = importlib.import_module("bench_contiguous")
    meta = {"small": False, "command": "old", "timestamp": "2026-01-01 00:00 UTC", "plot": "p.png"}
    stored = {"meta": meta, "cases": {"a": _record("run1"), "b": _record("run1"), "gone": _record("run1")},
              "eager": {"view": {"ratio": 2.0, "ratio_min": 2.0}},
              "sweep": {"transpose": [{"log2_elements": 10, "compile_s": {"ours": 0.1}, "hlo_bytes": 1}]}}
    new = {"meta": {"small": False, "command": "new"}, "cases": {"b": _record("run2")}}
    merged = bc.merge_results(stored, new, ["a", "b"], ["view"])
    assert list(merged["cases"]) == ["a", "b"]
    assert [merged["cases"][n]["run"]["command"] for n in "ab"] == ["run1", "run2"]
    assert merged["eager"]["view"]["run"]["command"] == "old"  # stored without a stamp: the file's meta
    assert merged["sweep"] == stored["sweep"] and merged["meta"]["plot"] == "p.png"
    assert {t["target"].split(":")[0] for t in merged["targets"]} == {"a", "b", "eager view"}
    old_run = ["eager view", "sweep transpose 2^10"]  # stored without stamps: the file's run
    assert [labels for _, labels in report.runs(merged)] == [old_run, ["a"], ["b"]]
    small = {"meta": {"small": True, "command": "s"}, "cases": {"b": _record("run3")}}
    assert list(bc.merge_results(stored, small, ["a", "b"], ["view"])["cases"]) == ["b"]


def test_docs_benchmarks_md_is_generated_from_the_stored_json(tmp_path):
    """docs/benchmarks.md is exactly what the stored results render to: regenerate it with
    ``python benchmarks/bench_report.py --markdown docs/benchmarks.md`` rather than edit it."""
    report = _report()
    committed = REPO / "docs" / "benchmarks.md"
    text = report.render_markdown(report.load_results(report.CONTIGUOUS_JSON),
                                  report.load_results(report.OVERLAP_JSON), committed,
                                  report.load_results(report.WRITES_JSON),
                                  report.load_results(report.SHARDED_JSON))
    assert text == committed.read_text(), (
        "docs/benchmarks.md differs from the stored results; run "
        "`python benchmarks/bench_report.py --markdown docs/benchmarks.md`")
    out = tmp_path / "docs" / "benchmarks.md"
    assert report.main(["--markdown", str(out)]) == 0
    def unlinked(t: str) -> list[str]:  # only the plot's relative link depends on where it is written
        return [line for line in t.splitlines() if not line.startswith("![time vs size](")]
    assert unlinked(out.read_text()) == unlinked(text)


def test_bench_offsets_small_run():
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_offsets.py"), "--small",
                           "--cases", "transpose", "frame_signal", "diagonal"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [r.split(" | ")[0][2:] for r in rows] == ["transpose", "frame_signal", "diagonal"]
    for row in rows:
        cells = row.strip("| ").split(" | ")
        assert cells[-1] == "yes" and cells[-2] in ("no/no", "yes/yes")
        assert all(_positive(float(c)) for c in cells[3:7])


# -- benchmarks/bench_overlap.py ------------------------------------------------------------------
def test_bench_overlap_small_run(tmp_path, capsys):
    """``--small`` runs both families and answers; ours and NumPy's answers agree (the script
    raises otherwise); times are finite and positive, never compared."""
    spec = importlib.util.spec_from_file_location("bench_overlap", REPO / "benchmarks" / "bench_overlap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out, md = tmp_path / "overlap.json", tmp_path / "overlap.md"
    assert module.main(["--small", "--repeat", "1", "--json", str(out), "--markdown", str(md)]) == 0
    text = md.read_text()
    assert "| family | case |" in text and ">>>" not in text
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert {r["family"] for r in rows} >= {"docstring", "structured", "random", "random6"}
    for family in ("structured", "random", "random6"):
        assert {r["answer"] for r in rows if r["family"] == family} == {True, False}, family
    for r in rows:
        assert _positive(r["ours_s"]) and _positive(r["numpy_s"]), r
        assert r["ratio"] == pytest.approx(r["ours_s"] / r["numpy_s"])
    groups = {(r["family"], r["answer"]) for r in rows}
    assert {(s["family"], s["answer"]) for s in result["summary"]} == groups
    assert "ours/numpy" in capsys.readouterr().out
    # every self-overlap query is cold: the ring of copies outgrows the answers' cache, and
    # each copy is a distinct key of it with the same answer
    from functional_strides._src.core.overlap import overlap as _overlap

    a = fs.Layout((40, 40, 40), (1201, 1999, 2803))
    ring = module._cold_ring(a)
    assert len(ring) > _overlap._internal_witness.cache_info().maxsize
    assert len({(r.shape, r.strides) for r in ring}) == len(ring)
    assert {fs.has_internal_overlap(r) for r in ring[:5]} == {fs.has_internal_overlap(a)}


# -- benchmarks/bench_sharded.py ------------------------------------------------------------------
def test_bench_sharded_small_run(tmp_path):
    """``--small`` on 8 simulated devices (its own process): ours moves fewer bytes than the
    naive gather where the view allows it, both agree with the oracle (the script fails
    otherwise), and the stored JSON renders as the report's section."""
    out = tmp_path / "sharded.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_sharded.py"), "--small",
                           "--repeat", "1", "--cases", "frames", "transpose", "slice", "--json", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    cases = result["cases"]
    assert list(cases) == ["frames", "transpose", "slice"] and result["meta"]["devices"] == 8
    assert set(cases["frames"]["ours"]["ops"]) == {"collective-permute"}
    assert cases["transpose"]["ours"]["ops"] == {"all-to-all": 1}
    assert cases["slice"]["ours"]["ops"] == {} and cases["slice"]["ours"]["moved_bytes"] == 0
    for rec in cases.values():
        assert rec["agrees_with_oracle"] and "all-gather" in rec["naive"]["ops"]
        assert rec["ours"]["moved_bytes"] < rec["naive"]["moved_bytes"]
    text = _report().render_markdown(_report().load_results(_report().CONTIGUOUS_JSON), None,
                                     REPO / "docs" / "benchmarks.md", sharded=result)
    assert "## Sharded storage: collectives per read and write" in text
    assert "| frames | `P('x',)` | halo |" in text

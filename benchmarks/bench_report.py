"""Tables, markdown, plot and target verdicts for ``bench_contiguous.py`` results.

Works on the JSON-ready result dicts only (no JAX): ``evaluate_targets`` gives the verdicts,
``write_markdown`` and ``write_plot`` render the tables and the figure of the docs.
``docs/benchmarks.md`` is a pure function of the stored JSON files; regenerate it without
measuring anything:

    python benchmarks/bench_report.py --markdown docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = _REPO / "benchmarks" / "results"
CONTIGUOUS_JSON = RESULTS_DIR / "bench_contiguous.json"
OVERLAP_JSON = RESULTS_DIR / "bench_overlap.json"
WRITES_JSON = RESULTS_DIR / "bench_writes.json"
SHARDED_JSON = RESULTS_DIR / "bench_sharded.json"
REGENERATE = "python benchmarks/bench_report.py --markdown docs/benchmarks.md"

#: Timed columns, in table order; ratios are ``ours / column``.
COLUMNS = ("ours", "gather", "native", "torch", "numpy", "copy")
SWEEP_TITLES = {"transpose": "2-D transpose", "unfold": "framed signal (unfold, window 256, hop 64)"}


# -- targets ------------------------------------------------------------------------------
def _target(name: str, value: float | None, limit: float, detail: str,
            value_min: float | None = None, limit_note: str | None = None) -> dict[str, Any]:
    """A target record; ``value_min`` is the same ratio from the minimum times (robust to
    other work on the machine, which only ever adds time); ``limit_note``: the measured limit
    that puts the target out of reach, when the run shows one (reported for a miss)."""
    return {"target": name, "value": value, "limit": limit,
            "met": None if value is None else bool(value <= limit), "detail": detail,
            "value_min": value_min,
            "met_min": None if value_min is None else bool(value_min <= limit),
            "limit_note": limit_note}


#: Cases that are large permutes: ours must also stay within PERMUTE_COPY_LIMIT x a plain copy
#: of the bytes.
PERMUTE_CASES = ("nchw_to_nhwc", "transpose", "attention_heads", "ncdhw_to_ndhwc", "ndhwc_to_ncdhw")
PERMUTE_COPY_LIMIT = 1.5
#: Columns ours must match or beat on every case and every sweep size from 2^16 up.
RIVALS = ("gather", "native", "torch", "numpy")


def _ratio_to_best(t: dict[str, float | None]) -> float:
    return t["ours"] / min(t[c] for c in RIVALS if t.get(c) is not None)


#: Ours within this factor of XLA's own copy of the output's bytes is at XLA's floor.
XLA_FLOOR_SLACK = 1.1


def _fastest_rival(t: dict[str, float | None]) -> tuple[str, float] | None:
    """The fastest of the ``RIVALS`` timed in ``t`` and its time; None where none was."""
    rivals = {c: t[c] for c in RIVALS if t.get(c) is not None}
    if not rivals:
        return None
    best = min(rivals, key=rivals.__getitem__)
    return best, rivals[best]


def xla_floor_note(t: dict[str, float | None]) -> str | None:
    """Why the fastest rival is out of reach, when the times ``t`` (seconds per column) show
    it: ours is within a factor ``XLA_FLOOR_SLACK`` (either way) of the ``copy`` column (a
    jitted ``jnp.copy`` of the output's bytes, measured in the same rounds: no XLA program
    makes this output faster, its fresh output buffer and the call included) and the rival is
    faster than that copy (NumPy and PyTorch write into memory their allocators already mapped,
    and call no runtime). None otherwise (the miss is not explained by this run)."""
    copy, fastest = t.get("copy"), _fastest_rival(t)
    if not copy or fastest is None:
        return None
    best, best_t = fastest
    if not 1 / XLA_FLOOR_SLACK <= t["ours"] / copy <= XLA_FLOOR_SLACK or best_t >= copy:
        return None  # ours well below the copy: the copy is no floor; or the rival does not beat it
    return (f"XLA's floor: ours {t['ours'] * 1e3:.3g} ms is {t['ours'] / copy:.2f}x XLA's copy of the "
            f"output's bytes ({copy * 1e3:.3g} ms); {best} takes {best_t * 1e3:.3g} ms, less than "
            "that copy")


def call_floor_note(t: dict[str, float | None], floor: float | None) -> str | None:
    """Why the fastest rival is out of reach, when the times ``t`` show it: ``floor`` (a
    jitted copy of one element timed in the same rounds: the fixed cost of calling any
    compiled program and getting a fresh buffer back) takes up the difference, i.e. ours
    minus that floor is no more than the rival's whole call (NumPy and PyTorch call no
    runtime), or the floor alone takes as long as the rival's whole call. None otherwise."""
    fastest = _fastest_rival(t)
    if not floor or fastest is None:
        return None
    best, best_t = fastest
    if t["ours"] <= best_t:
        return None
    if t["ours"] - floor > best_t:
        if floor < best_t:
            return None
        # no compiled program, however fast its work, reaches the rival
        return (f"the call's floor: a jitted call of one element takes {floor * 1e3:.3g} ms, no less "
                f"than {best}'s whole call, {best_t * 1e3:.3g} ms (ours {t['ours'] * 1e3:.3g} ms)")
    return (f"the call's floor: ours {t['ours'] * 1e3:.3g} ms = the floor of a jitted call "
            f"{floor * 1e3:.3g} ms + {(t['ours'] - floor) * 1e3:.3g} ms; {best} takes "
            f"{best_t * 1e3:.3g} ms in all")


#: Page faults per call from which a fresh output's faults count as a limit (or one per 2 MiB
#: page of the output, where it faults in through huge pages) ...
FAULTS_MIN = 64
HUGE_PAGE_BYTES = 2 * 2**20
#: ... when the rival takes at most this fraction of ours.
FAULTS_RIVAL_FRACTION = 0.25


def _faults_enough(out_bytes: int | None) -> int:
    """The faults per call from which an output of ``out_bytes`` counts as faulted in afresh:
    ``FAULTS_MIN``, or one per 2 MiB page of an output of at least one such page."""
    if out_bytes is None or out_bytes < HUGE_PAGE_BYTES:
        return FAULTS_MIN
    return min(FAULTS_MIN, out_bytes // HUGE_PAGE_BYTES)


def fault_note(t: dict[str, float | None], faults: dict[str, float] | None,
               out_bytes: int | None = None) -> str | None:
    """Why the fastest rival is out of reach, when the times ``t`` and the page faults per
    call show it: ours no slower than XLA's copy of the output's bytes (within
    ``XLA_FLOOR_SLACK``), which the rival beats, ours takes ``FAULTS_MIN`` faults a call or
    one per 2 MiB page of its ``out_bytes``, and the rival a small fraction of ours (it writes
    into memory already mapped, while a compiled program's output is a fresh buffer that the
    kernel maps and zeroes page by page). None otherwise."""
    copy, fastest = t.get("copy"), _fastest_rival(t)
    if not copy or fastest is None or not faults or faults.get("ours") is None:
        return None
    best, best_t = fastest
    ours_f, best_f = faults["ours"], faults.get(best)
    if (t["ours"] > copy * XLA_FLOOR_SLACK or best_t >= copy or best_f is None
            or ours_f < _faults_enough(out_bytes) or best_f > FAULTS_RIVAL_FRACTION * ours_f):
        return None
    return (f"the fresh output: ours {t['ours'] * 1e3:.3g} ms with {ours_f:.0f} page faults per call, "
            f"{best} {best_t * 1e3:.3g} ms with {best_f:.0f} (its buffer already mapped); XLA's own "
            f"copy of the output's bytes takes {copy * 1e3:.3g} ms")


def kernel_note(t: dict[str, float | None], kernel: float | None) -> str | None:
    """Why the fastest rival is out of reach, when the times ``t`` and ``kernel`` (the median
    strided copy's own time per call in ours) show it: the strided copy, which reads the view
    and writes the whole output, takes no longer than the rival's whole call, and the rest of
    ours is the jitted call around it (dispatch, the output buffer, the result handed back),
    which NumPy and PyTorch do not pay. None otherwise."""
    fastest = _fastest_rival(t)
    if not kernel or fastest is None:
        return None
    best, best_t = fastest
    if t["ours"] <= best_t or kernel > best_t:
        return None
    return _runtime_text("strided copy", kernel, t["ours"], best, best_t)


def _runtime_text(what: str, kernel: float, ours: float, rival: str, rival_s: float) -> str:
    """The note of a miss whose kernel (``what`` alone) is no slower than ``rival``."""
    return (f"the runtime around the kernel: the {what} takes {kernel * 1e3:.3g} ms of ours' "
            f"{ours * 1e3:.3g} ms, no more than {rival}'s {rival_s * 1e3:.3g} ms; the jitted call "
            f"around it the other {(ours - kernel) * 1e3:.3g} ms")


def limit_note(rec: dict[str, Any]) -> str | None:
    """The measured limit of a record's miss: XLA's copy of the output, the fresh output's
    page faults, the call's floor, else the runtime around the strided copy's kernel."""
    t = rec["times_s"]
    return (xla_floor_note(t) or fault_note(t, rec.get("faults_per_call"), rec.get("out_bytes"))
            or call_floor_note(t, rec.get("floor_s")) or kernel_note(t, rec.get("kernel_s")))


def _case_targets(name: str, rec: dict[str, Any]) -> list[dict[str, Any]]:
    t, tmin, out = rec["times_s"], rec["min_times_s"], []
    out.append(_target(f"{name}: ours / min(gather, native, torch, numpy)", _ratio_to_best(t), 1.0,
                       "ours <= the fastest of the naive gather, the native XLA op, PyTorch and NumPy",
                       _ratio_to_best(tmin), limit_note(rec)))
    if name in PERMUTE_CASES and t.get("copy"):
        out.append(_target(f"{name}: ours / copy", t["ours"] / t["copy"], PERMUTE_COPY_LIMIT,
                           f"a large permute within {PERMUTE_COPY_LIMIT:g}x a plain copy of the same bytes",
                           tmin["ours"] / tmin["copy"]))
    if rec["views"] == 1:  # stated for 2^24-element outputs; applied to every single view
        out.append(_target(f"{name}: compile s", rec["compile_s"]["ours"], 0.5,
                           "compile time < 0.5 s"))
        out.append(_target(f"{name}: HLO KB", rec["hlo_bytes"] / 1024, 50.0,
                           "optimised HLO text < 50 KB"))
    out.append(_target(f"{name}: temp / output bytes", rec["temp_bytes"]["ours"] / rec["out_bytes"],
                       1.0, "memory_analysis() temp bytes <= output bytes"))
    return out


def evaluate_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target with its measured value and whether it is met (reported, not enforced)."""
    targets = []
    for name, rec in result["cases"].items():
        targets += _case_targets(name, rec)
    for kind, points in result.get("sweep", {}).items():
        for rec in points:
            if rec["log2_elements"] >= 16:
                targets.append(_target(f"sweep {kind} 2^{rec['log2_elements']}: ours / min(rivals)",
                                       _ratio_to_best(rec["times_s"]), 1.0,
                                       "ours <= the fastest of gather, native, torch, numpy from 2^16 up",
                                       _ratio_to_best(rec["min_times_s"]), limit_note(rec)))
            if rec["log2_elements"] == 24:
                targets.append(_target(f"sweep {kind} 2^24: compile s", rec["compile_s"]["ours"], 0.5,
                                       "compile time < 0.5 s for 2^24-element outputs"))
                targets.append(_target(f"sweep {kind} 2^24: HLO KB", rec["hlo_bytes"] / 1024, 50.0,
                                       "optimised HLO text < 50 KB for 2^24-element outputs"))
    for name, rec in result.get("eager", {}).items():
        if rec["ratio"] is not None:
            targets.append(_target(f"eager {name}: ours / torch", rec["ratio"], 3.0,
                                   "eager view-op overhead <= 3 x torch's", rec.get("ratio_min")))
    return targets


# -- stored results ---------------------------------------------------------------------
def load_results(path: Path) -> dict[str, Any] | None:
    """The JSON stored at ``path``, or None when there is none."""
    return json.loads(path.read_text()) if path.is_file() else None


def run_stamp(meta: dict[str, Any]) -> dict[str, Any]:
    """The per-record metadata of a run (its ``meta``): when, where and how it measured."""
    keys = ("timestamp", "command", "small", "repeat", "machine", "cpu_count", "jax", "numpy", "torch",
            "torch_threads", "glibc_tunables", "transparent_hugepages", "settle_s", "load_average_start",
            "load_average_end")
    return {k: meta.get(k) for k in keys}


def runs(result: dict[str, Any]) -> list[tuple[dict[str, Any], list[str]]]:
    """The distinct runs behind the records of ``result``, oldest first, each with the names
    of the records it measured."""
    found: dict[str, tuple[dict[str, Any], list[str]]] = {}

    def add(label: str, rec: dict[str, Any]) -> None:
        stamp = rec.get("run") or run_stamp(result["meta"])
        key = json.dumps(stamp, sort_keys=True)
        found.setdefault(key, (stamp, []))[1].append(label)

    for name, rec in result["cases"].items():
        add(name, rec)
    for name, rec in result.get("eager", {}).items():
        add(f"eager {name}", rec)
    for kind, points in result.get("sweep", {}).items():
        for rec in points:
            add(f"sweep {kind} 2^{rec['log2_elements']}", rec)
    if result.get("memory"):
        add("memory", result["memory"])
    return sorted(found.values(), key=lambda item: (item[0]["timestamp"] or "", item[0]["command"] or ""))


def _compress(labels: list[str]) -> str:
    """``sweep transpose 2^10`` .. ``2^26`` listed as one range."""
    out, sweeps = [], {}
    for label in labels:
        if label.startswith("sweep "):
            kind, size = label[6:].rsplit(" ", 1)
            sweeps.setdefault(kind, []).append(int(size[2:]))
        else:
            out.append(label)
    out += [f"sweep {k} 2^{min(v)}..2^{max(v)}" for k, v in sweeps.items()]
    return ", ".join(out)


def run_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per run behind the stored records: when, where, how, and what it measured."""
    header = ["run", "date", "command", "machine", "versions", "memory", "load avg start / end", "records"]
    rows = []
    for i, (stamp, labels) in enumerate(runs(result), 1):
        versions = (f"jax {stamp['jax']}, numpy {stamp['numpy']}, torch {stamp['torch'] or 'not installed'}"
                    f" ({stamp['torch_threads']} threads)")
        env = f"GLIBC_TUNABLES={stamp['glibc_tunables']} " if stamp.get("glibc_tunables") else ""
        rows.append([str(i), stamp["timestamp"] or "-", f"`{env}{stamp['command']}`",
                     f"{stamp['machine']}; {stamp['cpu_count']} CPUs", versions, memory_setting(stamp),
                     f"{stamp['load_average_start']} / {stamp['load_average_end']}", _compress(labels)])
    return header, rows


def memory_setting(stamp: dict[str, Any]) -> str:
    """How a run's outputs got their pages: the default environment (no ``GLIBC_TUNABLES``)
    or the tunable, and the kernel's transparent huge page mode where recorded."""
    tunables = stamp.get("glibc_tunables")
    env = f"GLIBC_TUNABLES={tunables}" if tunables else "default (no GLIBC_TUNABLES)"
    mode = stamp.get("transparent_hugepages")
    return env + (f", THP {mode}" if mode else "") + (
        f", settle {stamp['settle_s'] * 1e3:g} ms" if stamp.get("settle_s") else "")


# -- reporting ----------------------------------------------------------------------------
def _ms(t: float | None) -> str:
    return "-" if t is None else f"{t * 1e3:.3f}" if t < 1e-2 else f"{t * 1e3:.1f}"


def _x(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def case_rows(cases: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the main table: times in ms, ratios ours/column in brackets."""
    header = ["case", "out elems", "path", "ours ms", "kernel ms"] + [
        f"{c} ms (ours/{c})" for c in COLUMNS[1:]] + ["A/A", "compile s", "HLO KB", "temp/out MiB", "ok"]
    rows = []
    for name, rec in cases.items():
        t, r = rec["times_s"], rec["ratios"]
        cells = [name, f"{rec['out_elements']:,}", rec["lowering_path"] or "-", _ms(t["ours"]),
                 _ms(rec.get("kernel_s")) if rec.get("kernel_s") else "-"]
        cells += ["-" if t[c] is None else f"{_ms(t[c])} ({_x(r[c])})" for c in COLUMNS[1:]]
        cells += [_x(rec["aa_ratio"]), f"{rec['compile_s']['ours']:.3f}", f"{rec['hlo_bytes'] / 1024:.1f}",
                  f"{rec['temp_bytes']['ours'] / 2**20:.2f}/{rec['out_bytes'] / 2**20:.2f}",
                  "yes" if all(rec["agrees_with_numpy"].values()) else "NO"]
        rows.append(cells)
    return header, rows


def description_rows(cases: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows describing each case: the view, its layout, the native op."""
    header = ["case", "view", "layout (shape):(strides)+offset", "native op"]
    rows = [[name, rec["description"], f"`{rec['layout']}`", rec["native_op"] or "none"]
            for name, rec in cases.items()]
    return header, rows


def sweep_rows(sweep: dict[str, list[dict[str, Any]]]) -> tuple[list[str], list[list[str]]]:
    header = (["layout", "elements", "path", "ours ms"] + [f"{c} ms" for c in COLUMNS[1:]]
              + ["A/A", "ours ns/elem"])
    rows = []
    for kind, points in sweep.items():
        for rec in points:
            t = rec["times_s"]
            rows.append([kind, f"2^{rec['log2_elements']}", rec["lowering_path"] or "-", _ms(t["ours"])]
                        + [_ms(t[c]) for c in COLUMNS[1:]]
                        + [_x(rec["aa_ratio"]), f"{t['ours'] / rec['out_elements'] * 1e9:.2f}"])
    return header, rows


def eager_rows(eager: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["view op", "code", "ours us", "torch us", "ours/torch"]
    rows = [[name, f"`{rec['code']}`", f"{rec['ours_s'] * 1e6:.2f}",
             "-" if rec["torch_s"] is None else f"{rec['torch_s'] * 1e6:.2f}", _x(rec["ratio"])]
            for name, rec in eager.items()]
    return header, rows


def fault_rows(cases: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Minor page faults per call of each column (a fresh output buffer faults once per page)."""
    cols = [c for c in COLUMNS if any(c in rec.get("faults_per_call", {}) for rec in cases.values())]
    header = ["case", "out MiB", "4 KiB pages"] + [f"{c} faults" for c in cols]
    rows = []
    for name, rec in cases.items():
        faults = rec.get("faults_per_call")
        if not faults:
            continue
        rows.append([name, f"{rec['out_bytes'] / 2**20:.1f}", f"{rec['out_bytes'] // 4096:,}"]
                    + ["-" if faults.get(c) is None else f"{faults[c]:,.0f}" for c in cols])
    return header, rows


def memory_rows(memory: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The copy probe under each allocator setting: what a fresh output costs."""
    header = ["allocator setting", "jnp.copy ms", "GB/s", "faults", "np fresh copy ms", "faults",
              "np copy into a reused buffer ms", "GB/s", "fault cost us/page"]
    rows = []
    for setting, m in memory["settings"].items():
        rows.append([f"`{setting}`", f"{m['jnp_copy_ms']:.2f}", f"{m['jnp_copy_gbs']:.1f}",
                     f"{m['jnp_copy_faults']:,.0f}", f"{m['np_fresh_ms']:.2f}",
                     f"{m['np_fresh_faults']:,.0f}",
                     f"{m['np_reused_ms']:.2f}", f"{m['np_reused_gbs']:.1f}",
                     "-" if m["fault_us"] is None else f"{m['fault_us']:.2f}"])
    return header, rows


def memory_markdown(memory: dict[str, Any]) -> str:
    """The section on the physical limits measured by the copy probe."""
    return "\n".join([
        "## Physical limits on this machine", "",
        f"A copy of {memory['elements']:,} float32 elements ({memory['elements'] * 4 / 2**20:.0f} MiB) in "
        "fresh processes, one per allocator setting (`bench_contiguous.py --cases memory`). A program's "
        "output is a fresh buffer: XLA:CPU (and PyTorch) get it from `malloc`, which maps new 4 KiB "
        "pages for large blocks, so every call takes one page fault per 4 KiB of output; NumPy "
        "advises the kernel to back its large arrays with 2 MiB pages (`madvise(MADV_HUGEPAGE)`) and "
        "faults ~500x less. The copy into a reused buffer (no faults) is the memory bandwidth; "
        "*fault cost* is (fresh - reused) / faults. With "
        "`GLIBC_TUNABLES=glibc.malloc.hugetlb=1` in the environment (glibc >= 2.35), `malloc` "
        "advises 2 MiB pages too and XLA's outputs fault as little as NumPy's.", "",
        format_markdown(*memory_rows(memory)), "",
    ])


def runtime_note(ours: float, kernel: float | None, torch: float | None, floor: float | None) -> str | None:
    """Why PyTorch's in-place write is out of reach, when the times (seconds) show it: the
    strided write's own custom call (``kernel``, in the donated calls of ours) takes no
    longer than PyTorch's whole write, and the rest of ours is the jitted call around it:
    dispatch, arguments and the result handed back, run with caches that the write has just
    filled with its own data (``floor``: the same with warm caches). None otherwise."""
    if not kernel or not torch or ours <= torch or kernel > torch:
        return None
    floor_text = f"; {floor * 1e3:.3g} ms with warm caches (the floor)" if floor else ""
    return _runtime_text("strided write", kernel, ours, "torch", torch) + floor_text


def write_rows(writes: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The stored ``bench_writes.py`` rows: ours against PyTorch's in-place write, donated."""
    header = ["case", "mode", "elements", "ours ms", "ours donated ms", "kernel ms", "torch ms", "floor ms",
              "ours/torch", "donated: ours/torch", "from minima", "target <= 1", "a miss's measured limit"]
    rows = []
    for w in writes:
        t = w.get("torch_s")
        ratio = w["ours_donated_s"] / t if t else None
        ratio_min = w["ours_donated_min_s"] / w["torch_min_s"] if t else None
        floor, kernel = w.get("floor_donated_s"), w.get("ours_donated_kernel_s")
        note = ""
        if ratio is not None and ratio > 1:
            note = (call_floor_note({"ours": w["ours_donated_s"], "torch": t}, floor)
                    or runtime_note(w["ours_donated_s"], kernel, t, floor) or "-")
        rows.append([w["case"], w["mode"], f"{w['elements']:,}", _ms(w["ours_s"]), _ms(w["ours_donated_s"]),
                     _ms(kernel), _ms(t), _ms(floor), _x(w["ours_s"] / t if t else None), _x(ratio),
                     _x(ratio_min), "-" if ratio is None else ("yes" if ratio <= 1 else "NO"), note])
    return header, rows


def writes_markdown(writes: list[dict[str, Any]]) -> str:
    """The section of the stored ``bench_writes.json``."""
    run = writes[0].get("run", {}) if writes else {}
    env = f"GLIBC_TUNABLES={run['glibc_tunables']} " if run.get("glibc_tunables") else ""
    settled = (f"each sample after {run['settle_s'] * 1e3:g} ms of untimed calls of its own column (a loop "
               "of that write)" if run.get("settle_s") else "each sample right after the other columns'")
    return "\n".join([
        "## Writes through views", "",
        f"`{env}{run.get('command', 'python benchmarks/bench_writes.py')}` ({run.get('timestamp', '-')}, "
        f"load {run.get('load_average_start')} / {run.get('load_average_end')}): a functional write "
        "through the view under `jit` (*ours*; *donated*: the storage donated, so XLA may update it "
        "in place) against PyTorch's in-place `copy_`/`add_` on the same view. *floor*: a donated "
        "jitted write of one slot, the fixed cost of calling any jitted write. *kernel*: the "
        "strided write's own time in a donated call of ours (the rest is the jitted call around "
        "it): the time JAX's profiler gives its custom call in ten traced calls, their median (in "
        "runs before 2026-12-06, the handler's own clock). "
        f"Medians of interleaved rounds, {settled}; *from minima*: the same ratio from the fastest "
        "rounds; *a miss's measured limit*: the call's floor, where ours "
        "less the floor is no slower than PyTorch, or the runtime around the kernel, where the "
        "kernel alone is no slower than PyTorch's whole write.", "",
        format_markdown(*write_rows(writes)), "",
    ])


def target_rows(targets: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["target", "measured (medians)", "met", "from minima", "met", "limit", "a miss's measured limit"]
    num = lambda v: "-" if v is None else f"{v:.3g}"  # noqa: E731
    verdict = {True: "yes", False: "NO", None: "-"}
    rows = [[t["target"], num(t["value"]), verdict[t["met"]], num(t.get("value_min")),
             verdict[t.get("met_min")], f"{t['limit']:g}",
             (t.get("limit_note") or "-") if t["met"] is False else ""] for t in targets]
    return header, rows


def format_markdown(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows])


def write_markdown(path: Path, result: dict[str, Any], overlap: dict[str, Any] | None = None,
                   writes: list[dict[str, Any]] | None = None,
                   sharded: dict[str, Any] | None = None) -> None:
    """``docs/benchmarks.md``: method, runs, tables and targets of ``result`` (the stored
    ``bench_contiguous.json``), then the ``bench_overlap.json`` and ``bench_sharded.json``
    sections when ``overlap`` and ``sharded`` are given. A pure function of its arguments
    (``path`` only places the plot's link)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_markdown(result, overlap, path, writes, sharded))


def render_markdown(result: dict[str, Any], overlap: dict[str, Any] | None, path: Path,
                    writes: list[dict[str, Any]] | None = None,
                    sharded: dict[str, Any] | None = None) -> str:
    """The text :func:`write_markdown` writes."""
    path = Path(path)
    meta = result["meta"]
    parts = [
        "# Benchmarks",
        "",
        "Generated from the stored results in `benchmarks/results/` (no measuring); regenerate "
        "with:",
        "",
        "```",
        REGENERATE,
        "```",
        "",
        "Measure again with `python benchmarks/bench_contiguous.py [--cases NAME ...]` (cases, "
        "`eager`, `sweep`): a run replaces the stored records it measured and keeps the others, "
        "each record stamped with the run that measured it (see *Runs*). Absolute times on a "
        "shared machine mean little; ratios measured side by side are what count.",
        "",
        "## `contiguous()`",
        "",
        "Columns: **ours** `jit(lambda s: StridedArray(s, layout).contiguous().storage"
        ".reshape(layout.shape))`; **gather** one `lax.gather` over in-graph iota indices, no "
        "structure used; **native** the XLA op on the dense input, where one exists; "
        "**torch** `torch.as_strided(...).contiguous()`; **numpy** "
        "`np.ascontiguousarray(as_strided(...))`; **copy** jitted `jnp.copy` of the "
        "output's bytes. Every JAX column returns the view's shape (a flat program output "
        "slows XLA:CPU's transposes ~1.5x, whoever computes them). Times are medians of up to "
        "the run's `--repeat` interleaved rounds after warm-up (fewer rounds for cases whose "
        "round exceeds the time budget; the JSON has the round counts and the minima), each "
        "sample right after the other columns' (or after the *settle* time of untimed calls of "
        "its own column where a run gives one); the *memory* column of *Runs* says how outputs "
        "got their pages (the default environment, unless a run says `GLIBC_TUNABLES`). *path*: "
        "`fs.read_plan` of the layouts the timed program reads, recorded while it is traced. "
        "Brackets: ours / column (below 1: ours is "
        "faster). *A/A*: ours / a second, separately compiled copy of the same program timed "
        "in the same rounds: the noise floor of the row's ratios (1.00x on a quiet machine). "
        "*kernel*: the strided copy's own time per call where ours runs it (the rest of ours is "
        "the jitted call around it): the time JAX's profiler gives its custom call in ten calls of "
        "ours traced after the timed rounds, their median (in runs before 2026-12-06, the "
        "handler's own clock read around ours' samples). Compile s, HLO KB and temp bytes are "
        "those of ours; *ok*: every column equals NumPy's result.",
        "",
        format_markdown(*case_rows(result["cases"])),
        "",
        "### Cases",
        "",
        format_markdown(*description_rows(result["cases"])),
        "",
        "`batch_small_views`: the views share shape and strides and differ in offset, so ours is "
        "one layout with a dynamic (traced) offset, `jax.vmap`-ped over the offsets in one "
        "jitted program (a `dynamic_slice` window per view, which `vmap` turns into one gather); "
        "the gather column loops over the views; torch and numpy run the loop eagerly; native is "
        "one batched transpose.",
    ]
    if result.get("eager"):
        parts += ["", "## Eager view ops (metadata only)", "",
                  "Per call on an `(8, 16, 32)` float32 array, same ops side by side.", "",
                  format_markdown(*eager_rows(result["eager"]))]
    if result.get("sweep"):
        parts += ["", "## Size sweep", "",
                  "`contiguous()` of a transpose (2-D, near-square) and of a framed signal "
                  "(window 256, hop 64) by output size; time per call in ms.", ""]
        if meta.get("plot"):
            rel = os.path.relpath(_REPO / meta["plot"], path.resolve().parent)
            parts += [f"![time vs size]({Path(rel).as_posix()})", ""]
        parts += [format_markdown(*sweep_rows(result["sweep"]))]
    if any(rec.get("faults_per_call") for rec in result["cases"].values()):
        parts += ["", "### Page faults", "",
                  "Minor page faults per call, counted with `getrusage` around calls of each column "
                  "after the timed rounds (an output faults in once per page it touches).", "",
                  format_markdown(*fault_rows(result["cases"]))]
    if result.get("memory"):
        parts += ["", memory_markdown(result["memory"])]
    if writes:
        parts += ["", writes_markdown(writes)]
    parts += ["", "## Targets", "", "Reported by every run, never asserted by tests. Time ratios "
              "are given from the medians and from the minima (other work on the machine only "
              "ever adds time, so the minima show the uncontended ratio). *A miss's measured limit*: "
              "for a rival out of reach, the numbers of the same run that show why (ours within "
              f"{XLA_FLOOR_SLACK:g}x XLA's own copy of the output's bytes, which the rival beats: no "
              "XLA program makes that output faster; or the fresh output: ours at or below that copy, "
              "which the rival beats while taking under a quarter of our page faults per call; or "
              "the call's floor: ours, less the time of a "
              "jitted copy of one element measured in the same rounds, no slower than the rival's "
              "whole call; or the runtime around the kernel: the strided copy alone (the "
              "*kernel* column) no slower than the rival's whole call); '-' where the run shows none.",
              "",
              format_markdown(*target_rows(evaluate_targets(result))),
              "", "## Runs", "", "The runs whose records are stored, and which records each measured.",
              "", format_markdown(*run_rows(result)), ""]
    if overlap is not None:
        parts += [overlap_markdown(overlap)]
    if sharded is not None:
        parts += ["", _bench_module("bench_sharded").markdown(sharded)]
    return "\n".join(parts)


def _bench_module(name: str) -> Any:
    """The benchmark script ``benchmarks/<name>.py`` as a module (it renders its own section)."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import importlib

    return importlib.import_module(name)


def overlap_markdown(overlap: dict[str, Any]) -> str:
    """The section of the stored ``bench_overlap.json``, rendered by ``bench_overlap.markdown``."""
    return _bench_module("bench_overlap").markdown(overlap["rows"], overlap["summary"], overlap["header"])


def write_plot(path: Path, sweep: dict[str, list[dict[str, Any]]]) -> None:
    """Log-log time vs output elements of every column, one panel per sweep layout."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(sweep), figsize=(6 * len(sweep), 4.5), squeeze=False)
    colors = dict(zip(COLUMNS, plt.rcParams["axes.prop_cycle"].by_key()["color"][:len(COLUMNS)], strict=True))
    for ax, (kind, points) in zip(axes[0], sweep.items(), strict=True):
        sizes = [2 ** p["log2_elements"] for p in points]
        for col in COLUMNS:
            ys = [p["times_s"][col] for p in points]
            if all(y is not None for y in ys):
                ax.plot(sizes, [y * 1e3 for y in ys], marker="o", ms=3, label=col, color=colors[col])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"contiguous() of a {SWEEP_TITLES.get(kind, kind)}")
        ax.set_xlabel("output elements (float32)")
        ax.set_ylabel("median time per call (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the markdown report of the stored results (nothing is measured)."""
    p = argparse.ArgumentParser(description="Render stored benchmark results as markdown (no measuring).")
    p.add_argument("--markdown", type=Path, required=True, help="where to write (e.g. docs/benchmarks.md)")
    p.add_argument("--json", type=Path, default=CONTIGUOUS_JSON, help="stored bench_contiguous.py results")
    p.add_argument("--overlap-json", type=Path, default=OVERLAP_JSON,
                   help="stored bench_overlap.py results (its section is left out when the file is absent)")
    p.add_argument("--writes-json", type=Path, default=WRITES_JSON,
                   help="stored bench_writes.py results (its section is left out when the file is absent)")
    p.add_argument("--sharded-json", type=Path, default=SHARDED_JSON,
                   help="stored bench_sharded.py results (its section is left out when the file is absent)")
    args = p.parse_args(argv)
    result = load_results(args.json)
    if result is None:
        p.error(f"--json {args.json}: no stored results; run benchmarks/bench_contiguous.py first")
    write_markdown(args.markdown, result, overlap=load_results(args.overlap_json),
                   writes=load_results(args.writes_json), sharded=load_results(args.sharded_json))
    print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

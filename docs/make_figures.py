"""Draw the pictures of the documentation site into a folder (``docs/build.sh`` passes
``docs/_generated``): layouts drawn by ``fs.explain`` for the concept pages, and the benchmark
results of ``benchmarks/results`` for the performance page.

Run: ``python docs/make_figures.py OUT_DIR``. Needs matplotlib.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: name -> (what explain draws, storage): the layouts the pages show.
LAYOUTS = {
    "block": ("(4,3):(20,2)+22", "10x10"),
    "transpose": ("(4,3):(1,4)+0", "3x4"),
    "unfold": ("(4,4):(2,1)+0", 10),
    "expand": ("(3,4):(0,1)+0", 4),
    "reverse": ("(5,):(-2,)+9", 10),
}


def layouts(out: Path) -> list[Path]:
    """One PNG per entry of :data:`LAYOUTS`, as ``explain --png`` draws it."""
    import functional_strides as fs

    paths = []
    for name, (layout, storage) in LAYOUTS.items():
        path = out / f"explain-{name}.png"
        fs.explain(layout, storage=storage, show=False).save(str(path), dpi=80)
        paths.append(path)
    return paths


def benchmarks(out: Path) -> list[Path]:
    """Ratios of ``contiguous()`` to PyTorch and to a plain gather per case, and of functional
    writes to ``jnp``'s ``.at[]`` and PyTorch's in-place writes, from the recorded JSON."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    paths = []
    result = json.loads((REPO / "benchmarks/results/bench_contiguous.json").read_text())
    cases = result["cases"]
    names = list(cases)
    fig = Figure(figsize=(9, 4))
    ax = fig.subplots()
    width = 0.27
    for k, col in enumerate(("torch", "gather", "native")):
        ratios = [cases[n]["ratios"].get(col) or 0.0 for n in names]
        ax.bar([i + (k - 1) * width for i in range(len(names))], ratios, width, label=f"ours / {col}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("time ratio (below 1: ours faster)")
    ax.set_title("contiguous(): ours against PyTorch, a plain gather and the native XLA op")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(out / "bench-contiguous.png")
    fig.savefig(paths[-1], dpi=90)

    writes = json.loads((REPO / "benchmarks/results/bench_writes.json").read_text())
    fig = Figure(figsize=(9, 3.6))
    ax = fig.subplots()
    labels = [w["case"] for w in writes]
    series = {"ours / jnp .at[]": [w["ours_s"] / w["at_s"] for w in writes],
              "ours / jnp .at[] (donated)": [w["ours_donated_s"] / w["at_donated_s"] for w in writes],
              "ours donated / torch in place": [w["ours_donated_s"] / w["torch_s"] for w in writes]}
    for k, (label, ratios) in enumerate(series.items()):
        ax.bar([i + (k - 1) * width for i in range(len(labels))], ratios, width, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("time ratio (log)")
    ax.set_title("functional writes through views")
    ax.legend(fontsize=7)
    fig.tight_layout()
    paths.append(out / "bench-writes.png")
    fig.savefig(paths[-1], dpi=90)

    sweep = REPO / "benchmarks/results/bench_contiguous_sweep.png"
    if sweep.exists():
        paths.append(out / "bench-contiguous-sweep.png")
        paths[-1].write_bytes(sweep.read_bytes())
    return paths


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))  # draw with this checkout, not an installed copy
    out = Path(argv[0] if argv else "_generated")
    out.mkdir(parents=True, exist_ok=True)
    for path in layouts(out) + benchmarks(out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

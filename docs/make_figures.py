"""Draw the pictures of the documentation site into a folder (``docs/build.sh`` passes
``docs/_generated``): layouts drawn by ``fs.explain`` for the concept pages and the worked
examples (views of rank 2 to 6), and the benchmark results of ``benchmarks/results`` for the
performance page.

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


def _examples() -> dict:
    """name -> the view of ``docs/examples.md`` it draws (the same small arrays)."""
    import jax.numpy as jnp

    import functional_strides as fs

    return {
        "windows": fs.from_array(jnp.arange(32.0).reshape(1, 4, 4, 2))
                     .view(1, 2, 2, 2, 2, 2).permute(0, 1, 3, 2, 4, 5),          # 6-D
        "im2col": fs.from_array(jnp.arange(50.0).reshape(2, 5, 5)).unfold(1, 3, 1).unfold(2, 3, 1),
        "frames": fs.from_array(jnp.arange(16.0)).unfold(0, 8, 4),
        "heads": fs.from_array(jnp.arange(48.0).reshape(2, 3, 8)).view(2, 3, 2, 4).transpose(1, 2),  # 4-D
        "kv-cache": fs.from_array(jnp.arange(24.0).reshape(2, 4, 3))[:, 1],   # the slots of step t = 1
    }


def examples(out: Path) -> list[Path]:
    """One PNG per view of :func:`_examples`, drawn by ``fs.explain`` for any rank."""
    import functional_strides as fs

    paths = []
    for name, view in _examples().items():
        path = out / f"example-{name}.png"
        fs.explain(view, show=False).save(str(path), dpi=80)
        paths.append(path)
    return paths


def benchmarks(out: Path) -> list[Path]:
    """Ratios of ``contiguous()`` to PyTorch and to a plain gather per case, and of functional
    writes to ``jnp``'s ``.at[]`` and PyTorch's in-place writes, from the recorded JSON."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    result = json.loads((REPO / "benchmarks/results/bench_contiguous.json").read_text())
    cases = result["cases"]
    names = list(cases)
    contiguous = {f"ours / {col}": [cases[n]["ratios"].get(col) or 0.0 for n in names]
                  for col in ("torch", "gather", "native")}
    writes = json.loads((REPO / "benchmarks/results/bench_writes.json").read_text())
    write_ratios = {"ours / jnp .at[]": [w["ours_s"] / w["at_s"] for w in writes],
                    "ours / jnp .at[] (donated)": [w["ours_donated_s"] / w["at_donated_s"] for w in writes],
                    "ours donated / torch in place": [w["ours_donated_s"] / w["torch_s"] for w in writes]}
    return [
        _ratio_bars(Figure(figsize=(9, 4)), names, contiguous, out / "bench-contiguous.png",
                    title="contiguous(): ours against PyTorch, a plain gather and the native XLA op",
                    ylabel="time ratio (below 1: ours faster)", rotation=30, fontsize=8),
        _ratio_bars(Figure(figsize=(9, 3.6)), [w["case"] for w in writes], write_ratios,
                    out / "bench-writes.png", title="functional writes through views",
                    ylabel="time ratio (log)", rotation=20, fontsize=7, log=True),
        *_sweep(out),
    ]


def _ratio_bars(fig, labels, series, path: Path, *, title: str, ylabel: str, rotation: int,
                fontsize: int, log: bool = False) -> Path:
    """Grouped bars of time ratios (one group per case, one bar per series), a line at 1."""
    ax = fig.subplots()
    width = 0.27
    for k, (label, ratios) in enumerate(series.items()):
        ax.bar([i + (k - 1) * width for i in range(len(labels))], ratios, width, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    if log:
        ax.set_yscale("log")
    ax.set_xticks(range(len(labels)), labels, rotation=rotation, ha="right", fontsize=fontsize)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=fontsize)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def _sweep(out: Path) -> list[Path]:
    """The stored size-sweep plot, copied next to the other figures (none when absent)."""
    sweep = REPO / "benchmarks/results/bench_contiguous_sweep.png"
    if not sweep.exists():
        return []
    path = out / "bench-contiguous-sweep.png"
    path.write_bytes(sweep.read_bytes())
    return [path]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))  # draw with this checkout, not an installed copy
    out = Path(argv[0] if argv else "_generated")
    out.mkdir(parents=True, exist_ok=True)
    for path in layouts(out) + examples(out) + benchmarks(out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

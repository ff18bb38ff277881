"""The demo, ``python -m functional_strides demo``: an example of the library on real data.

:mod:`.tasks` holds the tasks (each a chain of view steps, run under ``jax.jit`` and
checked against an independent reference), :mod:`.figures` draws their figures with
matplotlib; :func:`run` is the command. The demo uses the public API only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import jax

from . import tasks

__all__ = ["run"]


def _plotting_name(module: str) -> str:
    return {"PIL": "Pillow"}.get(module, module)


def run(out: str | Path | None = None, stream: Any = None) -> int:
    """Run every task in :data:`tasks.TASKS`, print the table, optionally save PNGs to ``out``.

    Without matplotlib or Pillow, one line says which is missing and how to install it: the
    checks then run on :func:`synthetic_data`, or, when figures were asked for (``out``),
    nothing runs and the status is 1 (that line goes to stderr).

    Returns:
      0 when every check passes, 1 when one fails or figures cannot be drawn."""
    stream = sys.stdout if stream is None else stream
    missing = tasks.missing_plotting()
    if missing is not None and out is not None:
        print(f"demo --out needs {_plotting_name(missing)} (not installed): {tasks.install_hint()}",
              file=sys.stderr)
        return 1
    if missing is None:
        data = tasks.load_data()
    else:
        print(f"inputs: synthetic ({_plotting_name(missing)} is not installed: {tasks.install_hint()})",
              file=stream)
        data = tasks.synthetic_data()
    print(f"backend: {jax.default_backend()} ({jax.devices()[0].device_kind})", file=stream)
    print(f"photo: {data.photo_name} -> storage of {data.photo.size} float32, (C,H,W) = "
          f"{data.photo.shape}", file=stream)
    print(f"signal: {data.signal_name} -> {data.signal.size} float32 samples at "
          f"{data.sample_rate:g} Hz", file=stream)
    results = [task(data) for task in tasks.TASKS]
    print(file=stream)
    print(tasks.format_table(results, tasks.arrow(stream)), file=stream)
    print(file=stream)
    for r in results:
        print(tasks.format_steps(r), file=stream)
    if out is not None:
        from .figures import save_figures  # imported on use: it needs matplotlib

        out_dir = Path(out)
        save_figures(results, data, out_dir)
        print(f"\nfigures saved in {out_dir}:", file=stream)
        for name, what in tasks.FIGURES.items():
            print(f"  {name:<18}  {what}", file=stream)
    failed = [r.name for r in results if not r.passed]
    print(f"\n{'FAILED: ' + ', '.join(failed) if failed else 'all checks passed'}", file=stream)
    return 1 if failed else 0

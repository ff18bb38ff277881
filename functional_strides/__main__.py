"""Command line: ``functional-strides <command>`` (also ``python -m functional_strides``).

Options: ``--version`` prints the version, ``--help`` the usage.

Commands:
  demo [--out DIR]   strided views on matplotlib's bundled photo and signal (synthetic
                     stand-ins without matplotlib), each result checked against a reference;
                     prints a table, exits 1 if a check fails or --out cannot draw figures.
  explain LAYOUT [--storage N|RxW] [--view SHAPE] [--width W] [--label auto|coords|order]
          [--png FILE] [--svg FILE] [--max-cells N] [--color [auto|always|never] | --no-color]
                     draw a layout written as "(4,3):(20,2)+22" over its storage, with its
                     facts and lowering plans (``fs.explain``); exits 2 on a bad layout or
                     option. ``--color`` alone is ``--color always``, ``--no-color`` is
                     ``--color never``; the default ``auto`` colours only a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

#: The name the usage shows when the program's name is not known (``main(argv)`` called directly).
PROG = "functional-strides"


def _demo(args: argparse.Namespace) -> int:
    from .examples import demo  # imported on use (it compiles and runs the tasks)

    return demo.run(out=args.out)


def _shape(text: str) -> tuple[int, ...]:
    """``"3,-1"``, ``"(3, -1)"`` or ``"3x-1"`` -> ``(3, -1)``."""
    parts = [p for p in text.strip().strip("()[]").replace("x", ",").split(",") if p.strip()]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a shape: {text!r} (write e.g. 3,-1)") from None


def _explain(args: argparse.Namespace) -> int:
    from ._src.core.errors import LayoutError
    from ._src.explain.explain import explain

    color = {"always": True, "never": False}.get(args.color)
    for flag, path in (("--png", args.png), ("--svg", args.svg)):
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder is not None and not os.path.isdir(folder):
            print(f"error: {flag} {path}: the folder {folder} does not exist; create it first "
                  f"(mkdir -p {folder}) or write the file elsewhere", file=sys.stderr)
            return 2
    try:
        report = explain(args.layout, storage=args.storage, view=args.view, width=args.width,
                         label=args.label, show=False)
        report.print(color=color)
        for flag, path in (("--png", args.png), ("--svg", args.svg)):
            if path:
                try:
                    report.save(path, max_cells=args.max_cells)
                except OSError as err:
                    print(f"error: {flag} {path}: cannot write the file ({err.strerror or err})",
                          file=sys.stderr)
                    return 2
                print(f"wrote {path}")
    except LayoutError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def prog_name(argv0: str | None = None) -> str:
    """The program's name as it was run: ``python -m functional_strides`` for ``-m``, the
    script's name (``functional-strides``) otherwise."""
    base = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    if base in ("__main__.py", "-m", "-c", ""):
        return "python -m functional_strides"
    return base if base.startswith(PROG) else PROG


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The argument parser: one subparser per command, each setting ``func``.

    Args:
      prog: the program name the usage and ``--version`` show.
    Returns:
      An ``argparse.ArgumentParser``.
    Raises:
      Nothing.
    Example:
      >>> build_parser().parse_args(["explain", "(2,3):(3,1)", "--no-color"]).color
      'never'"""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=prog,
        description="PyTorch-style strided views for JAX: tools.",
    )
    parser.add_argument("--version", action="version", version=f"functional_strides {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", required=True)
    demo = commands.add_parser(
        "demo",
        help="run ViT patches, im2col conv, a spectrogram and its overlap-add inverse, checked",
        description="Run view chains on matplotlib's sample data (synthetic stand-ins when "
                    "matplotlib or Pillow is missing) under jax.jit; check each result, print a "
                    "table, exit 1 if any check fails.",
    )
    demo.add_argument("--out", metavar="DIR", default=None,
                      help="also save patches.png, conv2d.png, spectrogram.png and reconstruction.png "
                           "in DIR (created if needed; needs matplotlib and Pillow)")
    demo.set_defaults(func=_demo)
    ex = commands.add_parser(
        "explain",
        help="draw a layout over its storage: coordinates, storage indices, overlap, lowering plans",
        description="Draw a layout, written as (shape):(strides)+offset in elements, over its "
                    "storage, with the coordinate -> storage-index table, numel, required storage "
                    "size, contiguity, overlap and the read/write plans of the lowering.",
    )
    ex.add_argument("layout", help='the layout, e.g. "(4,3):(20,2)+22" (negative strides allowed)')
    ex.add_argument("--storage", metavar="N|RxW", default=None,
                    help="storage size in elements, or a 2-D shape such as 10x10 to draw it as that grid")
    ex.add_argument("--view", metavar="SHAPE", type=_shape, default=None,
                    help="also explain PyTorch's view rule for this shape, e.g. 3,-1")
    ex.add_argument("--width", type=int, default=None, help="storage elements per drawn row")
    ex.add_argument("--label", choices=("auto", "coords", "order"), default="auto",
                    help="mark the view's slots by coordinates or by position in the view's order")
    ex.add_argument("--png", metavar="FILE", default=None, help="also draw the picture to a PNG file")
    ex.add_argument("--svg", metavar="FILE", default=None, help="also draw the picture to an SVG file")
    ex.add_argument("--max-cells", metavar="N", type=int, default=4096,
                    help="draw pictures of at most N storage cells and N view cells (default 4096)")
    color = ex.add_mutually_exclusive_group()
    color.add_argument("--color", nargs="?", const="always", default="auto",
                       choices=("auto", "always", "never"),
                       help="colour with rich (installed separately): auto (the default) = only on a "
                            "terminal; --color alone = always")
    color.add_argument("--no-color", dest="color", action="store_const", const="never",
                       help="no colour (as --color never)")
    ex.set_defaults(func=_explain)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command.

    Args:
      argv: the arguments after the program's name; ``None`` reads ``sys.argv``.
    Returns:
      The command's exit status: 0 on success, 1 when a demo check fails or figures were
      asked for without matplotlib and Pillow installed.
    Raises:
      SystemExit: status 2 on bad arguments (argparse), 0 for ``--help``."""
    parser = build_parser(prog_name() if argv is None else PROG)
    args = parser.parse_args(None if argv is None else [str(a) for a in argv])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

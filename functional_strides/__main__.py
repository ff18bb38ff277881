"""Command line: ``python -m functional_strides <command>`` (also ``functional-strides``).

Commands:
  demo [--out DIR]   strided views on matplotlib's bundled photo and signal (synthetic
                     stand-ins without matplotlib), each result checked against a reference;
                     prints a table, exits 1 if a check fails or --out cannot draw figures.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _demo(args: argparse.Namespace) -> int:
    from . import demo  # imported on use (it compiles and runs the tasks)

    return demo.run(out=args.out)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: one subparser per command, each setting ``func``."""
    parser = argparse.ArgumentParser(
        prog="python -m functional_strides",
        description="PyTorch-style strided views for JAX: tools.",
    )
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command.

    Returns:
      The command's exit status: 0 on success, 1 when a demo check fails or figures were
      asked for without matplotlib and Pillow installed.
    Raises:
      SystemExit: status 2 on bad arguments (argparse), 0 for ``--help``."""
    args = build_parser().parse_args(None if argv is None else [str(a) for a in argv])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

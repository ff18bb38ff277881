"""The command line: its name in the usage, ``--version``, and the options its docstring
documents, which are exactly the parser's (``--color [WHEN]`` and ``--no-color`` included)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import functional_strides as fs
from functional_strides import __main__ as cli


@pytest.mark.slow
def test_usage_names_the_program_as_it_was_run():
    assert cli.prog_name("/usr/local/bin/functional-strides") == "functional-strides"
    assert cli.prog_name("/x/functional_strides/__main__.py") == "python -m functional_strides"
    assert cli.prog_name("/usr/bin/python3") == "functional-strides"
    out = subprocess.run([sys.executable, "-m", "functional_strides", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("usage: python -m functional_strides ")
    script = ("import sys; sys.argv = ['/usr/local/bin/functional-strides', '--help']; "
              "from functional_strides.__main__ import main; sys.exit(main())")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.startswith("usage: functional-strides ")


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"functional_strides {fs.__version__}"


def _documented_options(doc: str, command: str) -> set[str]:
    block = doc[doc.index(f"  {command} "):]
    block = block[: block.index("\n\n")] if "\n\n" in block else block
    usage = "\n".join(line.split("   ")[0] if not line.startswith("          ") else line
                      for line in block.splitlines())
    return set(re.findall(r"\[(--[\w-]+)", usage)) | set(re.findall(r"\| (--[\w-]+)", usage))


def test_documented_options_are_the_parsers():
    parser = cli.build_parser()
    sub = parser._subparsers._group_actions[0].choices["explain"]
    options = {s for a in sub._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
    assert _documented_options(cli.__doc__, "explain") == options
    assert "--version" in cli.__doc__


@pytest.mark.parametrize(("argv", "color"), [
    ([], "auto"), (["--color"], "always"), (["--color", "never"], "never"),
    (["--color", "always"], "always"), (["--no-color"], "never"),
], ids=["default", "bare", "never", "always", "no-color"])
def test_color_spellings(argv, color):
    args = cli.build_parser().parse_args(["explain", "(2,3):(3,1)", *argv])
    assert args.color == color


def test_color_and_no_color_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["explain", "(2,3):(3,1)", "--color", "--no-color"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_max_cells_reaches_the_picture(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "p.png"
    assert cli.main(["explain", "(3,4):(4,1)", "--png", str(png), "--max-cells", "10", "--no-color"]) == 2
    assert "max_cells=10" in capsys.readouterr().err and not png.exists()
    assert cli.main(["explain", "(3,4):(4,1)", "--png", str(png), "--max-cells", "12", "--no-color"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"

"""The package is typed: ``py.typed`` ships, pyright (basic mode, ``[tool.pyright]`` of
``pyproject.toml``) reports no error over ``functional_strides/``, and a type checker sees
what ``tests/typing/public_types.py`` asserts of the public API (view ops return
``StridedArray``, ``stride()`` a ``tuple[int, ...]``, ``Layout``'s fields their types); an
assertion that does not hold is reported, so the check can fail."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _support import REPO

PYRIGHT = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")


def _pyright(*paths: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    if not Path(PYRIGHT).exists():
        pytest.skip("pyright is not installed (python -m pip install pyright); .ci/run installs it")
    return subprocess.run([PYRIGHT, "--pythonpath", sys.executable, *paths], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_py_typed_ships_in_the_package():
    assert (REPO / "functional_strides" / "py.typed").is_file()
    config = (REPO / "pyproject.toml").read_text()
    assert '[tool.pyright]\ninclude = ["functional_strides"]\ntypeCheckingMode = "basic"' in config


@pytest.mark.slow
def test_pyright_reports_no_error_and_sees_the_public_types():
    result = _pyright("functional_strides", "tests/typing")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 errors" in result.stdout


@pytest.mark.slow
def test_a_wrong_type_assertion_is_reported(tmp_path):
    bad = tmp_path / "bad_types.py"
    bad.write_text(textwrap.dedent('''
        from typing_extensions import assert_type
        import functional_strides as fs

        def check(x: fs.StridedArray) -> None:
            assert_type(x.stride(), int)
            assert_type(x.t(), int)
    '''))
    result = _pyright(str(bad))
    assert result.returncode == 1, result.stdout
    assert "2 errors" in result.stdout, result.stdout

"""The suite stands on its own: its data lives in the repository, and a test that needs
PyTorch either runs or says which extra installs it (and, in CI, fails instead of skipping)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap

import pytest
from _support import PARITY_INSTALL, REPO, REQUIRE_TORCH, TESTS, TORCH_MISSING

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

# A pytest run in a fresh interpreter where ``import torch`` fails, as when it is not installed.
_WITHOUT_TORCH = textwrap.dedent("""
    import sys
    sys.modules["torch"] = None  # import torch -> ModuleNotFoundError
    import pytest
    raise SystemExit(pytest.main(sys.argv[1:]))
""")
# one module that skips at import, one test that skips inside its body
_PARITY_TESTS = ["tests/lowering/test_scatter_parity.py",
                 "tests/core/test_layout.py::test_predicates_match_torch"]


def _pytest_without_torch(env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_TORCH} | {"COLUMNS": "250"} | env_extra
    # -n 0: in this interpreter, where torch was made to fail (pytest-xdist's workers import it anew)
    args = ["-q", "-rs", "-p", "no:cacheprovider", "-n", "0", *_PARITY_TESTS]
    return subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_missing_torch_skips_with_the_extra_to_install():
    proc = _pytest_without_torch({})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert " passed" not in out and " failed" not in out, out
    # -rs lists "SKIPPED [count] location: reason" (the module is collected for its tests and
    # for its doctests; the test in test_layout.py skips in its body)
    skips = re.findall(r"^SKIPPED \[(\d+)\] (.*)$", out, re.MULTILINE)
    assert sum(int(n) for n, _ in skips) >= 2, out
    assert all(reason.endswith(TORCH_MISSING) for _, reason in skips), out


@pytest.mark.slow
def test_missing_torch_fails_when_ci_requires_it():
    proc = _pytest_without_torch({REQUIRE_TORCH: "1"})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "skipped" not in out, out
    assert f"{REQUIRE_TORCH}=1 but torch does not import" in out, out


def test_the_skip_reason_names_the_parity_extra():
    assert '".[test,parity]"' in PARITY_INSTALL and PARITY_INSTALL in TORCH_MISSING
    assert "torch==2.13.0" in TORCH_MISSING


def _torch_imports(path) -> list[str]:
    """Places in ``path`` that import torch other than through ``_support.import_torch``: an
    ``importorskip("torch")``, any ``import torch``, a module-level ``from torch... import``
    (inside a test, ``from torch._prims_common import ...`` after ``import_torch()`` is fine)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            arg = node.args[0] if node.args else None
            hit = name in ("importorskip", "import_module") and isinstance(arg, ast.Constant) \
                and str(arg.value).split(".")[0] == "torch"
        elif isinstance(node, ast.Import):
            hit = any(alias.name.split(".")[0] == "torch" for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            hit = (node.module or "").split(".")[0] == "torch" and node.col_offset == 0
        else:
            hit = False
        if hit:
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_every_torch_import_goes_through_the_helper():
    offenders = [hit for path in sorted(TESTS.rglob("*.py")) if path.name != "_support.py"
                 for hit in _torch_imports(path)]
    assert not offenders, f"import torch with _support.import_torch() (its skip names the extra): {offenders}"
    users = [p.name for p in TESTS.rglob("test_*.py") if "import_torch()" in p.read_text()]
    assert len(users) >= 5, users  # the parity tests are still wired to the helper


@pytest.mark.skipif(tomllib is None, reason="tomllib is part of the standard library from Python 3.11")
def test_parity_extra_pins_torch():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["parity"] == ["torch==2.13.0"]
    assert {"matplotlib>=3.7", "pillow>=9"} <= set(extras["demo"])


def test_ci_installs_the_parity_extra_and_requires_torch():
    script = (REPO / ".ci" / "run").read_text()
    assert re.search(r'pip install --quiet -e "\.\[test,parity(,[\w-]+)*\]"', script)
    assert re.search(r'pip install --quiet -e "\.\[[\w,-]*\bcute-test\b[\w,-]*\]"', script)
    assert f"export {REQUIRE_TORCH}=1" in script
    assert "export FUNCTIONAL_STRIDES_REQUIRE_PYCUTE=1" in script
    assert 'python -c "import torch' in script
    # an install or import failure must stop the script: it runs with errexit and exits 1
    assert "set -euo pipefail" in script and script.count("exit 1") >= 2
    assert "python -m pytest" in script

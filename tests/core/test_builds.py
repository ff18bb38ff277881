"""Stale in-place builds (``_src/core/builds.py``): an extension older than a source beside it
is not loaded, and a warning at import names the source and the rebuild command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _support import copy_kernel, native_search

from functional_strides._src.core import builds
from functional_strides._src.native import copy_kernel as kernel_module

PACKAGE = Path(__file__).resolve().parents[2] / "functional_strides"


def test_stale_sources_compares_modification_times(tmp_path):
    binary, older, newer = tmp_path / "ext.so", tmp_path / "a.c", tmp_path / "b.h"
    for path, age in ((older, 200), (binary, 100), (newer, 0)):
        path.write_text("x")
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))
    assert builds.stale_sources(binary, [older, newer, tmp_path / "missing.h"]) == [str(newer)]
    assert builds.stale_sources(binary, [older]) == []
    assert builds.stale_sources(tmp_path / "not-built.so", [newer]) == []


def test_a_checkout_is_a_package_beside_setup_py(tmp_path):
    inner = tmp_path / "pkg" / "sub"
    inner.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (inner / "__init__.py").write_text("")
    assert not builds.in_checkout(inner)
    (tmp_path / "setup.py").write_text("")
    assert builds.in_checkout(inner) and builds.in_checkout(tmp_path / "pkg")
    assert builds.in_checkout(PACKAGE / "_src" / "native")  # this checkout


def test_a_missing_extension_loads_as_none():
    assert builds.load_extension("functional_strides._src.core.no_such_extension", ("x.c",)) is None


def test_the_strided_copys_sources_are_all_listed():
    """Every file the extension is built from is one whose change makes the build stale."""
    folder = PACKAGE / "_src" / "native"
    assert set(kernel_module.SOURCES) == {p.name for p in folder.iterdir() if p.suffix in (".cc", ".h")}


CHECK = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import functional_strides as fs
from functional_strides._src.native import copy_kernel
from functional_strides._src.core.overlap import dfs
stale = [w for w in caught if issubclass(w.category, fs.StaleBuildWarning)]
print(len(stale))
for w in stale:
    print(str(w.message))
print(copy_kernel.native is None, dfs.compiled() is None, fs.read_plan(fs.Layout((512, 512), (1, 512))))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("edited", "checkout", "loaded"), [
    (None, True, "False False strided_copy"),
    ("_src/native/parallel.h", True, "True False structured"),
    ("_src/core/overlap/_dfs_native.c", True, "False True strided_copy"),
    ("_src/native/handlers.cc", False, "False False strided_copy"),
], ids=["fresh", "copy-kernel-header", "overlap-source", "installed"])
def test_a_stale_in_place_build_is_said_and_not_used(tmp_path, edited, checkout, loaded):
    """A copy of the checkout's package with its built extensions (as an editable install has
    them), one source then edited: the import warns with ``StaleBuildWarning`` naming the
    source and the rebuild command, and the library runs without that extension (the other
    still loads). An installed package (no ``setup.py`` beside it; an installer writes its
    files in any order, sources after binaries) is not compared."""
    copy_kernel()
    native_search()
    package = tmp_path / "functional_strides"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"),
                    copy_function=shutil.copy2)  # modification times kept
    if checkout:
        shutil.copy2(PACKAGE.parent / "setup.py", tmp_path / "setup.py")
    if edited is not None:
        source = package / edited
        source.write_text(source.read_text() + "\n")  # newer than the built extension now
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "JAX_PLATFORMS": "cpu"}
    env.pop("FUNCTIONAL_STRIDES_PURE_PYTHON", None)
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=240,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().split("\n")
    assert lines[-1] == loaded
    if edited is None or not checkout:
        assert lines[0] == "0"
        return
    assert lines[0] == "1", lines
    message = lines[1]
    assert Path(edited).name in message and "older than its source" in message
    assert "python -m pip install -e ." in message and "build_ext --inplace" in message

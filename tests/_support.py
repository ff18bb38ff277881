"""Helpers shared by the test modules: the worked examples kept in the repository, and the
one way to skip a PyTorch parity test when PyTorch is not installed.

Example:
  >>> SEED_EXAMPLES.name, SEED_EXAMPLES.parent.name
  ('seed_examples.json', 'data')
  >>> len(seed_cases()) > 0 and {"id", "storage", "ops", "expect"} <= set(seed_cases()[0])
  True
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

# The worked examples (storage, chain of ops, layout after each op, values or the error),
# a byte-identical copy of ``shared/cases/seed_examples.json`` kept beside the tests so that a
# fresh clone runs them; test_seed_cases.py checks the copy against the original when a
# ``shared/`` folder sits beside the checkout.
SEED_EXAMPLES = TESTS / "data" / "seed_examples.json"

PARITY_INSTALL = 'python -m pip install -e ".[test,parity]"'
TORCH_MISSING = (f"PyTorch is not installed; the parity tests need it: {PARITY_INSTALL} "
                 "(the parity extra pins torch==2.13.0)")
# Set to 1 by .ci/run: there a missing PyTorch fails the parity tests instead of skipping them.
REQUIRE_TORCH = "FUNCTIONAL_STRIDES_REQUIRE_TORCH"


@functools.cache
def _seed_document() -> dict[str, Any]:
    return json.loads(SEED_EXAMPLES.read_text())


def seed_cases() -> list[dict[str, Any]]:
    """The worked examples of :data:`SEED_EXAMPLES` (a fresh list of the parsed cases).

    Raises:
      FileNotFoundError: the data file is missing from the checkout."""
    return list(_seed_document()["cases"])


def import_torch() -> ModuleType:
    """``import torch``, or skip the calling test (or module, at module level) with a reason
    that names the extra to install; when the environment variable :data:`REQUIRE_TORCH` is
    ``1`` (as in CI), fail instead, so that the parity tests cannot turn into skips.

    Semantics: ``pytest.importorskip("torch")`` with :data:`TORCH_MISSING` as the reason."""
    if os.environ.get(REQUIRE_TORCH) != "1":
        return pytest.importorskip("torch", reason=TORCH_MISSING)
    try:
        import torch
    except ImportError as exc:
        pytest.fail(f"{REQUIRE_TORCH}=1 but torch does not import ({exc}). {TORCH_MISSING}", pytrace=False)
    return torch


PYCUTE_MISSING = ("pycute is not installed (CUTLASS's Python CuTe, in the nvidia-cutlass wheel); the "
                  'differential tests need it: python -m pip install -e ".[cute-test]"')
# Set to 1 by .ci/run: there a missing pycute fails the differential tests instead of skipping them.
REQUIRE_PYCUTE = "FUNCTIONAL_STRIDES_REQUIRE_PYCUTE"


def import_pycute() -> ModuleType:
    """``import pycute``, or skip the calling module with :data:`PYCUTE_MISSING`; when the
    environment variable :data:`REQUIRE_PYCUTE` is ``1`` (as in CI), fail instead."""
    if os.environ.get(REQUIRE_PYCUTE) != "1":
        return pytest.importorskip("pycute", reason=PYCUTE_MISSING)
    try:
        import pycute
    except ImportError as exc:
        pytest.fail(f"{REQUIRE_PYCUTE}=1 but pycute does not import ({exc}). {PYCUTE_MISSING}", pytrace=False)
    return pycute


NATIVE_MISSING = ("the C extension functional_strides._src.core.overlap._dfs_native is not built (no C "
                  "compiler when the package was installed, or FUNCTIONAL_STRIDES_PURE_PYTHON is set); "
                  "build it with python -m pip install -e . on a machine with a C compiler")
COPY_KERNEL_MISSING = ("the C++ extension functional_strides._src.native._copy_native is not built (no C++ "
                       "compiler or no jaxlib headers when the package was installed, or "
                       "FUNCTIONAL_STRIDES_PURE_PYTHON is set); build it with python -m pip install -e . on "
                       "a machine with a C++ compiler")
# Set to 1 by .ci/run: there a missing extension fails its tests instead of skipping them.
REQUIRE_NATIVE = "FUNCTIONAL_STRIDES_REQUIRE_NATIVE"


def native_search() -> ModuleType:
    """The compiled overlap search (``functional_strides._src.core.overlap.dfs.native``), or skip the calling
    test with :data:`NATIVE_MISSING`; fail instead when :data:`REQUIRE_NATIVE` is ``1``."""
    from functional_strides._src.core.overlap import dfs as _dfs

    return _require(_dfs.native, NATIVE_MISSING)


def copy_kernel() -> ModuleType:
    """The compiled strided copy (``functional_strides._src.native.copy_kernel.native``), or skip the
    calling test with :data:`COPY_KERNEL_MISSING`; fail instead when :data:`REQUIRE_NATIVE`
    is ``1``."""
    from functional_strides._src.native import copy_kernel as _copy_kernel

    return _require(_copy_kernel.native, COPY_KERNEL_MISSING)


def _require(module: ModuleType | None, missing: str) -> ModuleType:
    if module is None:
        if os.environ.get(REQUIRE_NATIVE) == "1":
            pytest.fail(f"{REQUIRE_NATIVE}=1 but {missing}", pytrace=False)
        pytest.skip(missing)
    return module


def run_pure_python(code: str) -> str:
    """The standard output of ``python -c code`` in a fresh process with
    ``FUNCTIONAL_STRIDES_PURE_PYTHON=1`` (no compiled extension loaded) and JAX on the CPU;
    fails the calling test when the process exits with an error."""
    env = {**os.environ, "FUNCTIONAL_STRIDES_PURE_PYTHON": "1", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def every_path(fn, methods, *args) -> dict[str, Any]:
    """``{method: fn(method, *args)}`` for each of ``methods`` that applies, all of them
    compiled in one ``jax.jit`` program (a compile costs far more than the paths it holds).

    A method applies when tracing ``fn(method, *args)`` raises no ``LayoutError`` (checked
    with ``jax.eval_shape``, which traces and compiles nothing); each path is still lowered on
    its own, as ``method=`` forces it, and its value is its own output of the program."""
    import jax

    from functional_strides import LayoutError

    ran = []
    for method in methods:
        try:
            jax.eval_shape(lambda *a, m=method: fn(m, *a), *args)
        except LayoutError:
            continue  # the path does not apply to these arguments
        ran.append(method)
    outs = jax.jit(lambda *a: [fn(m, *a) for m in ran])(*args)
    return dict(zip(ran, outs, strict=True))


def draws(n: int) -> int:
    """How many of ``n`` cases (the count under the default hypothesis profile, ``ci``) a test
    draws under the profile loaded: proportionally more or fewer, ``fast`` (the fast loop,
    ``pytest -m "not slow"``) a quarter, ``thorough`` 50 times as many; at least three."""
    import math

    from hypothesis import settings

    return max(3, math.ceil(n * settings.default.max_examples / settings.get_profile("ci").max_examples))


def examples(n: int, **kwargs: Any):
    """``hypothesis.settings`` for a property test that draws ``draws(n)`` examples: ``n``
    under the default profile. Other keyword arguments go to ``settings`` as they are."""
    from hypothesis import settings

    return settings(max_examples=draws(n), **kwargs)


def numpy_read(storage, layout):
    """The view ``layout`` of 1-D ``storage`` read by NumPy (``as_strided``, byte strides,
    copied): the reference for views of millions of elements, where the oracle's loop over
    every coordinate would take seconds. No bounds check: the view must lie in ``storage``."""
    import numpy as np
    from numpy.lib.stride_tricks import as_strided

    storage = np.asarray(storage)
    base = storage[int(layout.offset):]
    return as_strided(base, layout.shape, [s * storage.itemsize for s in layout.strides]).copy()


def numpy_write(storage, layout, values, mode):
    """``storage`` with ``values`` set (``mode="set"``, a view whose elements have slots of
    their own) or added (``"add"``, by NumPy's ``np.add.at``: unbuffered, a slot's additions
    in row-major order of the view, as the oracle's loop adds them) through the view
    ``layout``: the reference for views of many elements. ``storage`` is left as it was."""
    import numpy as np

    slots = numpy_read(np.arange(np.asarray(storage).size), layout).reshape(-1)
    out = np.array(storage, copy=True)
    if mode == "add":
        np.add.at(out, slots, np.asarray(values).reshape(-1))
    else:
        assert mode == "set" and np.unique(slots).size == slots.size, "a set through slots of their own only"
        out[slots] = np.asarray(values).reshape(-1)
    return out

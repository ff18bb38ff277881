"""The public API only grows: every name a release exported is still there.

``tests/data/public_api.json`` records, for the package and each front-end module, the names
of its ``__all__``, and the public attributes of ``StridedArray`` and ``Layout``, as they stood
when the implementation moved under ``functional_strides/_src/``. A name may be added; none
may disappear or stop being exported.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import functional_strides as fs

RECORD = json.loads((Path(__file__).resolve().parents[1] / "data" / "public_api.json").read_text())
MODULES = sorted(k for k in RECORD if k.startswith("functional_strides"))


@pytest.mark.parametrize("module", MODULES)
def test_every_recorded_name_is_still_exported(module):
    mod = importlib.import_module(module)
    exported = set(getattr(mod, "__all__", ()))
    missing = sorted(set(RECORD[module]) - exported)
    assert not missing, f"{module}.__all__ lost {missing}"
    unbound = sorted(n for n in RECORD[module] if not hasattr(mod, n))
    assert not unbound, f"{module} no longer binds {unbound}"


@pytest.mark.parametrize("cls", ["StridedArray", "Layout"])
def test_every_recorded_attribute_is_still_there(cls):
    missing = sorted(n for n in RECORD[cls] if not hasattr(getattr(fs, cls), n))
    assert not missing, f"{cls} lost {missing}"


def test_the_package_all_is_sorted_and_unique():
    assert list(fs.__all__) == sorted(set(fs.__all__))

"""The fast loop's sample of a table of cases (``tests/conftest.py``, marker ``sampled``)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from types import SimpleNamespace

import pytest

_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
_spec = importlib.util.spec_from_file_location("tests_conftest", _CONFTEST)
_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conftest)


def _items(**params):
    names = list(params)
    return [SimpleNamespace(nodeid=f"t[{'-'.join(map(str, values))}]", callspec=SimpleNamespace(
        params=dict(zip(names, values, strict=True)))) for values in itertools.product(*params.values())]


@pytest.mark.parametrize("share", [2, 3, 4, 8])
def test_a_sample_holds_every_value_of_the_few_valued_parameters(share):
    items = _items(dtype=["int4", "uint4", "int2", "float4"], mode=["set", "add", "mul", "min", "max"],
                   layout=[f"L{k}" for k in range(7)])
    keep = _conftest._sample(items, share)
    assert len(keep) >= len(items) / share and len(keep) < len(items)
    seen = {k: {items[i].callspec.params[k] for i in keep} for k in ("dtype", "mode")}
    assert seen == {"dtype": {"int4", "uint4", "int2", "float4"}, "mode": {"set", "add", "mul", "min", "max"}}
    assert keep == _conftest._sample(items, share)  # the same sample every run


def test_a_parameter_with_a_value_per_case_is_sampled_not_covered():
    items = _items(layout=[f"L{k}" for k in range(9)])
    assert len(_conftest._sample(items, 3)) == 3

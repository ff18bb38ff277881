"""Every public name of :mod:`functional_strides.cute` has one full docstring.

Each callable in ``cute.__all__`` (classes included: their class docstring) states a
``Raises:`` section, an ``Example:`` with ``>>>`` lines (run as doctests) and the pycute or
CuTe function it matches.
"""

from __future__ import annotations

import pytest

from functional_strides import cute

CALLABLES = sorted(name for name in cute.__all__ if callable(getattr(cute, name)))


def test_all_names_are_callable():
    assert sorted(cute.__all__) == CALLABLES


@pytest.mark.parametrize("name", CALLABLES)
def test_docstring_has_raises_example_and_semantics(name):
    doc = getattr(cute, name).__doc__
    assert doc, f"cute.{name} has no docstring"
    for part in ("Raises:", "Example:", ">>> ", "Semantics:"):
        assert part in doc, f"cute.{name}'s docstring lacks {part!r}"
    assert "pycute" in doc or "CuTe" in doc, f"cute.{name}'s docstring names no pycute/CuTe function"


@pytest.mark.parametrize("name", CALLABLES)
def test_example_comes_before_semantics(name):
    doc = getattr(cute, name).__doc__
    assert doc.index("Raises:") < doc.index("Example:") < doc.rindex("Semantics:")

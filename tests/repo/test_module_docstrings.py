"""Every public callable of the public modules has a full docstring.

The callables in the ``__all__`` of :mod:`functional_strides.sharded`, ``.ascend``,
``.numpy``, ``.views`` and ``.oracle`` (exception classes excepted; constants are not
callable) say what they raise (a ``Raises:`` section, "Nothing: ..." where they raise
nothing of their own), give an ``Example:`` with doctested ``>>>`` lines, and name the
function they match (``Semantics:``). The examples themselves run as doctests.
"""

from __future__ import annotations

import importlib

import pytest

MODULES = ("sharded", "ascend", "numpy", "views", "oracle", "testing")
PARTS = ("Raises:", "Example:", ">>> ", "Semantics:")


def _callables():
    """``(label, object)`` for every callable of the modules' ``__all__`` but exceptions."""
    for name in MODULES:
        module = importlib.import_module(f"functional_strides.{name}")
        for attr in module.__all__:
            obj = getattr(module, attr)
            if not callable(obj):
                continue
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue
            yield f"{name}.{attr}", obj


CALLABLES = list(_callables())


def test_every_module_is_covered():
    covered = {label.split(".")[0] for label, _ in CALLABLES}
    assert covered == set(MODULES)


@pytest.mark.parametrize(("label", "obj"), CALLABLES, ids=[label for label, _ in CALLABLES])
def test_public_callable_has_a_full_docstring(label, obj):
    doc = obj.__doc__  # a class's own docstring: a dataclass without one gets its signature
    assert doc, f"{label} has no docstring"
    missing = [part for part in PARTS if part not in doc]
    assert not missing, f"{label}'s docstring lacks {missing}"


@pytest.mark.parametrize(("label", "obj"), CALLABLES, ids=[label for label, _ in CALLABLES])
def test_example_lines_follow_the_example_heading(label, obj):
    doc = obj.__doc__
    assert doc.index("Example:") < doc.index(">>> "), f"{label}'s doctest lines precede its Example:"

"""Every user-facing op has one full docstring, shown by ``help()`` for each of its forms.

The rule in :mod:`functional_strides.views`, the ``StridedArray`` method and the module
function ``fs.X`` carry the same text, and it gives the units, a ``Raises`` section, an
example and the function matched. The examples themselves run as doctests.
"""

from __future__ import annotations

import inspect

import pytest

import functional_strides as fs
from functional_strides import views
from functional_strides._src.array import ops as ops

#: method name -> the rule in views.py that holds its docstring
RULES = {
    "as_strided": "as_strided", "view": "view", "permute": "permute", "transpose": "transpose",
    "t": "t", "T": "reverse_dims", "mT": "mT", "movedim": "movedim", "squeeze": "squeeze",
    "unsqueeze": "unsqueeze", "expand": "expand", "narrow": "narrow", "select": "select",
    "unfold": "unfold", "diagonal": "diagonal", "split": "split", "chunk": "chunk",
    "unbind": "unbind", "__getitem__": "getitem", "flip": "flip", "fliplr": "fliplr", "flipud": "flipud",
}
#: ops whose rule needs the storage (a copy may be made): the method holds the docstring
ARRAY_ONLY = ("reshape", "flatten", "unflatten", "expand_as", "broadcast_to", "contiguous", "clone")
SCATTERS = ("as_strided_scatter", "slice_scatter", "select_scatter", "diagonal_scatter")


def _method(name: str):
    attr = inspect.getattr_static(fs.StridedArray, name)
    return attr.fget if isinstance(attr, property) else attr


def _user_facing():
    """(label, docstring) for every form of every op."""
    for name, rule in RULES.items():
        yield f"views.{rule}", getattr(views, rule).__doc__
        yield f"StridedArray.{name}", _method(name).__doc__
        if hasattr(ops, name):
            yield f"fs.{name}", getattr(fs, name).__doc__
    for name in ARRAY_ONLY:
        yield f"StridedArray.{name}", _method(name).__doc__
        yield f"fs.{name}", getattr(fs, name).__doc__
    for name in SCATTERS:
        yield f"fs.{name}", getattr(fs, name).__doc__


FORMS = list(_user_facing())


@pytest.mark.parametrize(("label", "doc"), FORMS, ids=[label for label, _ in FORMS])
def test_every_form_has_a_full_docstring(label, doc):
    assert doc, f"{label} has no docstring"
    for part in ("Raises:", "Example:", ">>> ", "Semantics: ``torch."):
        assert part in doc, f"{label}'s docstring lacks {part!r}"


@pytest.mark.parametrize("name", sorted(RULES))
def test_method_and_module_function_show_the_rule(name):
    rule = getattr(views, RULES[name])
    assert _method(name).__doc__ is rule.__doc__
    if hasattr(ops, name):
        assert getattr(fs, name).__doc__ is rule.__doc__


@pytest.mark.parametrize("name", ARRAY_ONLY)
def test_module_function_shows_the_method(name):
    assert getattr(fs, name).__doc__ is _method(name).__doc__


def test_help_shows_it(capsys):
    help(fs.permute)
    shown = capsys.readouterr().out
    assert "Raises:" in shown and "x.permute(1, 0)" in shown


#: names of the package that are no operation: errors, a warning and a report record
NOT_OPS = {"Explanation", "ForkError", "IndexTypeError", "LayoutError", "LayoutTypeError", "OutOfRangeError",
           "OverlapError", "StaleBuildWarning", "StorageError", "ViewError"}


PUBLIC_OPS = sorted(n for n in fs.__all__ if n not in NOT_OPS and callable(getattr(fs, n))
                    and not inspect.ismodule(getattr(fs, n)))


@pytest.mark.parametrize("name", PUBLIC_OPS)
def test_every_public_callable_has_raises_and_an_example(name):
    doc = inspect.getdoc(getattr(fs, name)) or ""
    for part in ("Raises", "Example", ">>> "):
        assert part in doc, f"fs.{name}'s docstring lacks {part!r}"

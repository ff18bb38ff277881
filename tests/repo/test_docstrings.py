"""Every user-facing op has one full docstring, shown by ``help()`` for each of its forms.

The rule in :mod:`functional_strides.views`, the ``StridedArray`` method and the module
function ``fs.X`` carry the same text, and it gives the units, a ``Raises`` section, an
example and the function matched. The examples themselves run as doctests.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import re
import sys
from pathlib import Path

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
           "OverlapError", "StaleBuildWarning", "StorageError", "TooHardError", "ViewError"}


PUBLIC_OPS = sorted(n for n in fs.__all__ if n not in NOT_OPS and callable(getattr(fs, n))
                    and not inspect.ismodule(getattr(fs, n)))


@pytest.mark.parametrize("name", PUBLIC_OPS)
def test_every_public_callable_has_raises_and_an_example(name):
    doc = inspect.getdoc(getattr(fs, name)) or ""
    for part in ("Raises", "Example", ">>> "):
        assert part in doc, f"fs.{name}'s docstring lacks {part!r}"


# -- every documented parameter is one of the signature's, one per entry -----------------------------

def _public_api():
    path = Path(__file__).resolve().parents[2] / "docs" / "_ext" / "public_api.py"
    spec = importlib.util.spec_from_file_location("docs_public_api", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


#: The first parameter of an op, the array or layout it acts on: one docstring serves the rule
#: (``layout``), the method (``self``) and the function (``x``), so it is not an Args entry.
SUBJECTS = ("self", "cls", "x", "layout")
def args_entries(doc: str, section: str = "Args") -> list[tuple[str, str]]:
    """``(name, text)`` of every entry of the Google-style ``Args:`` (or ``section``) sections
    of ``doc``: an entry is a line at the section's first indentation, up to its first colon, with its
    continuation lines (indented deeper)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    heading = re.compile(rf"^(?P<indent>\s*){section}:\s*$")
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(lines):
        m = heading.match(lines[k])
        k += 1
        if not m:
            continue
        step = None
        while k < len(lines):
            line = lines[k]
            indent = len(line) - len(line.lstrip())
            if line.strip() and indent <= len(m.group("indent")):
                break
            if line.strip():
                step = indent if step is None else step
                if indent == step:
                    name, _, text = line.strip().partition(":")
                    out.append((name.strip(), text.strip()))
                elif out:
                    out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
            k += 1
    return out


def _signature_of(obj):
    target = obj.fget if isinstance(obj, property) else obj
    if inspect.isclass(target):
        if "__init__" not in vars(target) and not dataclasses.is_dataclass(target):
            return None
    try:
        return inspect.signature(target)
    except (TypeError, ValueError):
        return None


def _callables():
    for entry in _public_api().entries():
        if entry.kind in ("module", "data", "attribute", "property", "exception"):
            continue
        sig = _signature_of(entry.obj)
        if sig is not None:
            yield entry.name, entry.obj, sig


CALLABLES = list(_callables())


def _param_names(sig: inspect.Signature) -> list[str]:
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    if params and params[0].name in SUBJECTS and params[0].kind != inspect.Parameter.KEYWORD_ONLY:
        params = params[1:]
    return [p.name for p in params]


@pytest.mark.parametrize(("name", "obj", "sig"), CALLABLES, ids=[n for n, _, _ in CALLABLES])
def test_documented_parameters_are_the_signatures(name, obj, sig):
    doc = (obj.fget if isinstance(obj, property) else obj).__doc__
    entries = args_entries(doc)
    every = {p.lstrip("_"): p for p in sig.parameters}
    documented = []
    for entry, text in entries:
        bare = entry.lstrip("*").lstrip("_")
        assert re.fullmatch(r"\w+", bare), f"{name}: Args entry {entry!r} names more than one parameter"
        assert bare in every, f"{name}: Args documents {entry!r}, which is no parameter of {sig}"
        merged = [p for p in every if p != every[bare] and re.search(rf"(^|[.;]\s+){re.escape(p)}:\s", text)]
        assert not merged, f"{name}: the Args entry of {entry!r} also holds {merged}: one entry each"
        documented.append(every[bare])
    assert len(documented) == len(set(documented)), f"{name}: a parameter documented twice: {documented}"
    if inspect.isclass(obj):  # a record's fields are documented as its Attributes
        documented += [n.strip().lstrip("_") for entry, _ in args_entries(doc, "Attributes")
                       for n in entry.split(",")]
    expected = _param_names(sig)
    missing = [p for p in expected if p not in documented and p.lstrip("_") not in documented]
    assert not missing, f"{name}{sig}: Args leaves out {missing}"


def test_args_entries_reads_entries_one_each():
    doc = """Summary.

    Args:
      dim: the dim.
      size: window length,
        continued. step: hop.
    Returns:
      x: not an argument.
    """
    assert args_entries(doc) == [("dim", "the dim."), ("size", "window length, continued. step: hop.")]

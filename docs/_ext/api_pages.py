"""Sphinx extension: one page of the API reference per public object, titled by its public name.

At ``builder-inited`` it writes ``docs/_autosummary/<public name>.rst`` for every entry of
:func:`public_api.entries` (``functional_strides.unfold``,
``functional_strides.StridedArray.unfold``, ``functional_strides.numpy.sliding_window_view``,
...); the ``autosummary`` tables of ``docs/api.md`` link to them. Objects are documented
under the name a user imports, never under the private module that defines them:

* a data object's docstring is its ``#:`` comment where it is bound in the source;
* base classes are shown by their public names.

Entries that ``docs/api.md`` does not list are added to its last group, so that the
reference is complete; ``tests/repo/test_docs_site.py`` asks for them to be placed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import public_api

#: Folder of the generated pages, relative to the documentation's source folder.
OUT = "_autosummary"
#: The page holding the grouped tables, and the marker where unlisted entries go.
API_PAGE = "api"
UNLISTED_MARKER = "<!-- api:unlisted -->"

_DIRECTIVE = {"function": "autofunction", "class": "autoclass", "exception": "autoexception",
              "method": "automethod", "property": "autoproperty", "attribute": "autoattribute",
              "data": "autodata"}


def _title(name: str) -> list[str]:
    return [name, "=" * len(name), ""]


def page(entry: public_api.Entry, members: dict[str, list[public_api.Entry]]) -> str:
    """The reST source of ``entry``'s page."""
    lines = _title(entry.name)
    if entry.kind == "module":
        lines += [f".. automodule:: {entry.name}", "", f".. currentmodule:: {entry.name}", "",
                  ".. rubric:: Contents", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {e.short}" for e in members.get(entry.name, [])]
        return "\n".join(lines) + "\n"
    lines += [f".. currentmodule:: {entry.module}", "", f".. {_DIRECTIVE[entry.kind]}:: {entry.short}"]
    own = members.get(entry.name)
    if own:  # a class whose members have pages of their own
        for heading, kinds in (("Attributes", ("property", "attribute")), ("Methods", ("method",))):
            group = [e for e in own if e.kind in kinds]
            if group:
                lines += ["", f"   .. rubric:: {heading}", "", "   .. autosummary::", "      :toctree: .",
                          "      :nosignatures:", ""]
                lines += [f"      ~{e.short}" for e in group]
    elif entry.kind in ("class", "exception"):
        specials = [n for n, _ in public_api.class_members(entry.obj) if n.startswith("__")]
        lines += ["   :members:"]
        if specials:
            lines += [f"   :special-members: {', '.join(specials)}"]
        if entry.kind == "exception":
            lines += ["   :show-inheritance:"]
    return "\n".join(lines) + "\n"


def write_pages(srcdir: Path) -> list[str]:
    """Write every page into ``srcdir / OUT`` (removing stale ones); return their names."""
    entries = public_api.entries()
    members: dict[str, list[public_api.Entry]] = {}
    for e in entries:
        if e.kind in ("method", "property", "attribute"):
            members.setdefault(e.name.rsplit(".", 1)[0], []).append(e)
        elif e.kind != "module" and e.module != public_api.PACKAGE:
            members.setdefault(e.module, []).append(e)
    out = srcdir / OUT
    out.mkdir(exist_ok=True)
    wanted = {f"{e.name}.rst": page(e, members) for e in entries}
    for stale in out.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        path = out / name
        if not path.exists() or path.read_text() != text:  # unchanged pages keep their mtime
            path.write_text(text)
    return [e.name for e in entries]


def listed(text: str) -> set[str]:
    """The public names the ``autosummary`` tables of an API page list (each table's names
    resolved against the ``currentmodule`` before it)."""
    found, module = set(), public_api.PACKAGE
    for line in text.splitlines():
        m = re.match(r"\s*\.\. (?:py:)?currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
            continue
        m = re.match(r"^ {3}~?([A-Za-z_][\w.]*)\s*$", line)
        if m:
            name = m.group(1)
            found.add(name if name.startswith(public_api.PACKAGE + ".") and name != public_api.PACKAGE
                      else f"{module}.{name}")
    return found


def unlisted(text: str) -> list[str]:
    """Public entries (no class members: their class's page lists them) the API page misses."""
    have = listed(text)
    return [e.name for e in public_api.entries()
            if e.kind not in ("method", "property", "attribute") and e.name not in have]


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    if docname != API_PAGE:
        return
    missing = unlisted(source[0])
    block = ""
    if missing:
        names = "".join(f"   {name}\n" for name in missing)
        block = ("## More\n\n```{eval-rst}\n.. currentmodule:: functional_strides\n\n"
                 f".. autosummary::\n   :toctree: _autosummary\n   :nosignatures:\n\n{names}```\n")
    source[0] = source[0].replace(UNLISTED_MARKER, block)


def _data_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """A data object's docstring: its ``#:`` comment where it is bound in the source."""
    if what != "data":
        return
    entry = _BY_NAME.get(name)
    if entry is None or entry.origin is None:
        return
    from sphinx.pycode import ModuleAnalyzer

    source, bound = entry.origin
    docs = ModuleAnalyzer.for_module(source).find_attr_docs()
    doc = docs.get(("", bound))
    if doc:
        lines[:] = [line.rstrip("\n") for line in doc]


def _public_bases(app: Any, name: str, obj: Any, options: Any, bases: list[Any]) -> None:
    """Base classes by their public names (a base defined in a private module is shown as
    the public name it has, if any)."""
    public = {id(e.obj): e.name for e in _BY_NAME.values() if e.kind in ("class", "exception")}
    for k, base in enumerate(bases):
        private = getattr(base, "__module__", "").startswith(public_api.PACKAGE + "._")
        if id(base) in public and private:
            bases[k] = f":py:class:`{public[id(base)]}`"


#: The name of an exception (``LayoutError``, ``jax.errors.TracerArrayConversionError``)
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Warning|Exit|Interrupt|StopIteration)$")


def prose_raises(lines: list[str]) -> list[str]:
    """``lines`` with the entries of each ``Raises:`` section that name no exception (``Nothing
    for any rank; ...``, ``Nothing.``) moved out of it, after the section, as a paragraph: napoleon
    would read the words before their first colon as an exception to cross-reference."""
    out, k = [], 0
    while k < len(lines):
        m = re.match(r"^(\s*)Raises:\s*$", lines[k])
        if not m:
            out.append(lines[k])
            k += 1
            continue
        indent, k = len(m.group(1)), k + 1
        body = []
        while k < len(lines) and (not lines[k].strip() or len(lines[k]) - len(lines[k].lstrip()) > indent):
            body.append(lines[k])
            k += 1
        while body and not body[-1].strip():
            body.pop()
        step = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=indent + 2)
        entries: list[list[str]] = []
        for line in body:
            if line.strip() and len(line) - len(line.lstrip()) == step:
                entries.append([line])
            elif entries:
                entries[-1].append(line)
        named, prose = [], []
        for entry in entries:
            head = entry[0].strip().split(":", 1)[0] if ":" in entry[0] else ""
            heads = [h.strip() for h in head.split(",")]
            (named if head and all(_EXCEPTION.match(h) for h in heads) else prose).append(entry)
        if named:
            out.append(" " * indent + "Raises:")
            out += [line for entry in named for line in entry]
        if prose:
            words = " ".join(line.strip() for entry in prose for line in entry)
            out += ["", " " * indent + f"**Raises:** {words}", ""]
    return out


def _prose_raises(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    lines[:] = prose_raises(lines)


_BY_NAME: dict[str, public_api.Entry] = {}


def _builder_inited(app: Any) -> None:
    _BY_NAME.clear()
    _BY_NAME.update({e.name: e for e in public_api.entries()})
    write_pages(Path(app.srcdir))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _builder_inited)
    app.connect("source-read", _source_read)
    app.connect("autodoc-process-docstring", _data_docstring, priority=100)
    app.connect("autodoc-process-docstring", _prose_raises, priority=200)  # before napoleon (500)
    app.connect("autodoc-process-bases", _public_bases)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

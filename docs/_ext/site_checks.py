"""Sphinx extension: checks that make the build fail (``-W``) on a site that names or links
to something that does not exist.

* Names: every ``fs.X.Y`` (``import functional_strides as fs``) and ``functional_strides.X.Y``
  spelled in a page or a docstring must resolve to an attribute, and none may go through a
  private module (``functional_strides._src...``).
* Links: every relative ``href`` and ``src`` of the built HTML must reach a file of the site,
  and its ``#fragment`` an ``id`` on that page. No network is used: external links are not
  followed (``sphinx -b linkcheck`` does that).
* Private paths: no built page may show ``functional_strides._...`` (the search index included).
"""

from __future__ import annotations

import html
import importlib
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

#: ``fs.a.b`` or ``functional_strides.a.b`` not preceded by a name character or a dot
NAME = re.compile(r"(?<![\w./-])(fs|functional_strides)((?:\.[A-Za-z_]\w*)+)")
FILE_SUFFIXES = ("py", "md", "json", "cc", "c", "so", "txt", "png", "svg")
PRIVATE = re.compile(r"functional_strides\._[a-z]")
_HREF = re.compile(r"""(?:href|src)="([^"]*)\"""")
_ID = re.compile(r"""\sid="([^"]+)\"""")


def unresolved_names(text: str) -> list[str]:
    """The ``fs.*`` / ``functional_strides.*`` names in ``text`` that name no public attribute:
    each as written, with why."""
    package = importlib.import_module("functional_strides")
    bad = []
    for m in NAME.finditer(text):
        parts = m.group(2)[1:].split(".")
        if parts[-1] in FILE_SUFFIXES:
            continue  # a file name, such as functional_strides.egg-info or fs.py
        obj, path = package, m.group(1)
        for part in parts:
            if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
                bad.append(f"{m.group(0)} (the private name {part!r})")
                break
            if not hasattr(obj, part):
                bad.append(f"{m.group(0)} ({path} has no attribute {part!r})")
                break
            obj, path = getattr(obj, part), f"{path}.{part}"
    return sorted(set(bad))


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    from sphinx.util import logging

    for name in unresolved_names(source[0]):
        logging.getLogger(__name__).warning(f"names nothing: {name}", location=docname)


def _docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    from sphinx.util import logging

    for bad in unresolved_names("\n".join(lines)):
        logging.getLogger(__name__).warning(f"the docstring of {name} names nothing: {bad}")


def broken_links(outdir: Path) -> list[str]:
    """``"page: link (why)"`` for every relative link of the HTML under ``outdir`` that
    reaches no file, or no ``id`` of its page."""
    ids: dict[Path, set[str]] = {}

    def ids_of(path: Path) -> set[str]:
        if path not in ids:
            ids[path] = set(_ID.findall(path.read_text(errors="replace")))
        return ids[path]

    bad = []
    for page in sorted(outdir.rglob("*.html")):
        if "_static" in page.relative_to(outdir).parts:  # the theme's template fragments
            continue
        text = page.read_text(errors="replace")
        for raw in _HREF.findall(text):
            link = html.unescape(raw)
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//") or not link:
                continue
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(outdir)}: {link}"
            if not target.exists():
                bad.append(f"{where} (no such file)")
            elif (parts.fragment and target.suffix == ".html"
                  and unquote(parts.fragment) not in ids_of(target)):
                bad.append(f"{where} (no id {parts.fragment!r} on that page)")
    return bad


def private_paths(outdir: Path) -> list[str]:
    """``"file: path"`` for every private module path shown by the built site."""
    bad = []
    for path in sorted(outdir.rglob("*")):
        if path.suffix not in (".html", ".js", ".txt") or "_static" in path.parts:
            continue
        for m in PRIVATE.finditer(path.read_text(errors="replace")):
            bad.append(f"{path.relative_to(outdir)}: {m.string[m.start():m.start() + 60].split()[0]}")
    return bad


def _build_finished(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    out = Path(app.outdir)
    for bad in broken_links(out):
        log.warning(f"link to nothing: {bad}")
    for bad in private_paths(out):
        log.warning(f"private module path on the site: {bad}")


def setup(app: Any) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.autodoc")  # its docstring event is checked too
    app.connect("source-read", _source_read)
    app.connect("autodoc-process-docstring", _docstring)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

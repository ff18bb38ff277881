"""The documentation site's sources: every page is in the navigation, and pages that belong
to modules not in this checkout join it only when their file exists (``docs/conf.py``).

The site itself is built by ``docs/build.sh`` (Sphinx, warnings as errors); the code blocks
of every page run as doctests (``--doctest-glob=*.md``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _conf():
    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def _toctree_entries(text: str) -> set[str]:
    entries = set()
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, flags=re.S):
        entries |= {line.strip() for line in block.splitlines()
                    if line.strip() and not line.startswith(":") and not line.startswith("<!--")}
    return entries


def test_every_page_is_in_the_navigation():
    conf = _conf()
    pages = {p.stem for p in DOCS.glob("*.md")} - {"index", "README"} - set(conf.OPTIONAL_PAGES)
    entries = _toctree_entries((DOCS / "index.md").read_text())
    assert pages == entries, (pages - entries, entries - pages)


@pytest.mark.parametrize("present", [True, False], ids=["page-present", "page-absent"])
def test_optional_pages_join_only_when_present(tmp_path, present, monkeypatch):
    conf = _conf()
    if present:
        (tmp_path / "cute.md").write_text("# CuTe layouts\n")
    monkeypatch.setattr(conf, "HERE", tmp_path)
    source = ["```{toctree}\napi\n<!-- optional-pages -->\n```\nsee <!-- link:cute -->.\n"]
    conf._optional_pages(None, "index", source)
    assert ("cute" in _toctree_entries(source[0])) == present
    assert ("[CuTe layouts reference](cute.md)" in source[0]) == present
    assert "<!--" not in source[0]


def test_optional_modules_join_the_api_reference_only_when_importable(monkeypatch):
    conf = _conf()
    monkeypatch.setattr(conf, "OPTIONAL_MODULES", {"x": ("X", "functional_strides.views"),
                                                   "y": ("Y", "functional_strides.no_such_module")})
    source = ["<!-- api:x -->\n<!-- api:y -->\n"]
    conf._optional_pages(None, "api", source)
    assert ".. automodule:: functional_strides.views" in source[0]
    assert "no_such_module" not in source[0] and "<!--" not in source[0]

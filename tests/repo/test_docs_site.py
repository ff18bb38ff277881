"""The documentation site's sources and the checks of its build.

* Every page is in the navigation; pages that belong to features not in this checkout join it
  only when their file exists (``docs/conf.py``).
* The API reference lists every public object in a group, and its pages are titled by their
  public names (``docs/_ext/api_pages.py``).
* The build's checks fail on what they should: an ``fs.*`` name that does not exist, a link
  to nothing, a private module path (``docs/_ext/site_checks.py``).
* The pictures of the worked examples (a 4-D and a 6-D view among them) render legibly.
* In headless Chromium, a page that logs a console error or clips a code block fails the
  browser check (``docs/_ext/browser_check.py``), which ``docs/build.sh`` runs on the built
  home page, a guide and an API page. Skipped where Chromium is missing, unless
  ``FUNCTIONAL_STRIDES_REQUIRE_BROWSER=1`` (CI).

The site itself is built by ``docs/build.sh`` (Sphinx, warnings as errors); the code blocks
of every page run as doctests (``--doctest-glob=*.md``)."""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _conf():
    return _load("docs_conf", DOCS / "conf.py")


def _ext(name: str):
    sys.path.insert(0, str(DOCS / "_ext"))  # the extensions import one another by name
    try:
        return _load(name, DOCS / "_ext" / f"{name}.py")
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def _toctree_entries(text: str) -> set[str]:
    entries = set()
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, flags=re.S):
        entries |= {line.strip() for line in block.splitlines()
                    if line.strip() and not line.startswith(":") and not line.startswith("<!--")}
    return entries


# -- navigation ---------------------------------------------------------------------------------------

def test_every_page_is_in_the_navigation():
    pages = {p.stem for p in DOCS.glob("*.md")} - {"index", "README"}
    entries = _toctree_entries((DOCS / "index.md").read_text())
    assert pages == entries, (pages - entries, entries - pages)


def test_the_api_page_lists_every_public_object_in_a_group():
    api_pages = _ext("api_pages")
    missing = api_pages.unlisted((DOCS / "api.md").read_text())
    assert not missing, f"add these to a group of docs/api.md: {missing}"


def test_api_pages_are_titled_and_documented_by_public_names(tmp_path):
    api_pages, public_api = _ext("api_pages"), _ext("public_api")
    names = api_pages.write_pages(tmp_path)
    assert {"functional_strides.unfold", "functional_strides.StridedArray.unfold",
            "functional_strides.numpy.sliding_window_view", "functional_strides.cute.composition",
            "functional_strides.numpy"} <= set(names)
    for name in names:
        text = (tmp_path / "_autosummary" / f"{name}.rst").read_text()
        assert text.splitlines()[0] == name
        assert "_src" not in text, name
    method = (tmp_path / "_autosummary" / "functional_strides.StridedArray.unfold.rst").read_text()
    assert ".. currentmodule:: functional_strides\n" in method
    assert ".. automethod:: StridedArray.unfold" in method
    assert len(names) == len(public_api.entries()) == len(set(names))


def test_every_public_member_of_strided_array_has_a_page_inherited_ones_included(tmp_path):
    """The in-place methods live on a mixin (and, on arrays over a ``jax.Array``, are absent):
    each still gets a page, as do ``x[i] = v``, the augmented operators that write in place
    (``+= -= *= /= //=``) and every other public name ``dir()`` shows."""
    import functional_strides as fs

    api_pages, public_api = _ext("api_pages"), _ext("public_api")
    names = set(api_pages.write_pages(tmp_path))
    public = {n for n in dir(fs.StridedArray) if not n.startswith("_") or n in public_api.PUBLIC_SPECIALS}
    assert {f"functional_strides.StridedArray.{n}" for n in public} <= names
    inherited = {n for n in public if n not in vars(fs.StridedArray)}
    assert {"copy_", "fill_", "zero_", "add_", "sub_", "mul_", "div_", "clamp_", "__setitem__", "__iadd__",
            "__isub__", "__imul__", "__itruediv__", "__ifloordiv__"} <= inherited
    for name in sorted(inherited):
        text = (tmp_path / "_autosummary" / f"functional_strides.StridedArray.{name}.rst").read_text()
        assert f".. automethod:: StridedArray.{name}" in text
        assert getattr(fs.StridedArray, name).__doc__, name
    cls = (tmp_path / "_autosummary" / "functional_strides.StridedArray.rst").read_text()
    assert "      ~StridedArray.copy_" in cls and "      ~StridedArray.__setitem__" in cls
    assert "      ~StridedArray.__iadd__" in cls and "      ~StridedArray.__ifloordiv__" in cls


def test_raises_sections_that_name_no_exception_become_prose():
    api_pages = _ext("api_pages")
    lines = ["Summary.", "", "Raises:", "  LayoutError: a bad shape.", "  Nothing for a Layout; a",
             "    UserWarning when the rank is not 2.", "Example:", "  >>> 1"]
    out = api_pages.prose_raises(lines)
    assert out[:4] == ["Summary.", "", "Raises:", "  LayoutError: a bad shape."]
    assert "**Raises:** Nothing for a Layout; a UserWarning when the rank is not 2." in out
    assert out[-2:] == ["Example:", "  >>> 1"]


# -- the build's checks -------------------------------------------------------------------------------

def test_no_page_names_an_attribute_that_does_not_exist():
    site_checks = _ext("site_checks")
    pages = [p for p in DOCS.glob("*.md") if p.name not in _conf().exclude_patterns]
    bad = {p.name: site_checks.unresolved_names(p.read_text()) for p in pages}
    assert not {k: v for k, v in bad.items() if v}


def test_the_name_check_catches_what_does_not_exist():
    site_checks = _ext("site_checks")
    text = ("`fs.overlap`, `fs.memory_format`, fs.unfold, `fs.StridedArray.unfold`, "
            "`functional_strides._src.core.layout`, `fs.cute.composition`, dfs.py, fs.__file__")
    bad = site_checks.unresolved_names(text)
    assert [b.split()[0] for b in bad] == ["fs.memory_format", "fs.overlap",
                                           "functional_strides._src.core.layout"]


def test_the_link_check_catches_links_to_nothing(tmp_path):
    site_checks = _ext("site_checks")
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.html").write_text('<p id="here"><a href="sub/b.html#there">b</a> '
                                     '<a href="#here">self</a> <a href="https://example.org/x">out</a> '
                                     '<img src="missing.png"></p>')
    (tmp_path / "sub" / "b.html").write_text('<a href="../a.html#nowhere">a</a><h1 id="there">b</h1>')
    bad = site_checks.broken_links(tmp_path)
    assert bad == ["a.html: missing.png (no such file)",
                   "sub/b.html: ../a.html#nowhere (no id 'nowhere' on that page)"]


def test_the_private_path_check(tmp_path):
    site_checks = _ext("site_checks")
    (tmp_path / "ok.html").write_text("functional_strides.unfold functional_strides/_src/core/views.py")
    (tmp_path / "bad.html").write_text("<code>functional_strides._src.array.ops.unfold</code>")
    found = site_checks.private_paths(tmp_path)
    assert found == ["bad.html: functional_strides._src.array.ops.unfold</code>"]


# -- the pictures of the worked examples --------------------------------------------------------------

def test_example_pictures_render_legibly_for_a_4d_and_a_6d_view():
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    import functional_strides as fs
    from functional_strides._src.explain import plot

    make_figures = _load("docs_make_figures", DOCS / "make_figures.py")
    views = make_figures._examples()
    assert {4, 6} <= {v.ndim for v in views.values()}
    page = (DOCS / "examples.md").read_text()
    for name, view in views.items():
        assert f"(_generated/example-{name}.png)" in page
        fig = fs.explain(view, show=False).figure()
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        texts = list(fig.texts) + [t for ax in fig.axes for t in ax.texts]
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_text().strip()]
        assert len(boxes) >= view.layout.numel
        for (a, ba), (b, bb) in itertools.combinations(boxes, 2):
            apart = (min(ba.x1, bb.x1) - max(ba.x0, bb.x0) <= 0.5
                     or min(ba.y1, bb.y1) - max(ba.y0, bb.y0) <= 0.5)
            assert apart, (name, a, b)
        w, h = fig.get_size_inches()
        assert w <= plot.MAX_INCHES[0] + 0.5 and h <= plot.MAX_INCHES[1] + 2.0, (name, w, h)


# -- in a real browser --------------------------------------------------------------------------------

def _browser():
    browser_check = _ext("browser_check")
    reason = browser_check.missing_reason()
    if reason is not None:
        if os.environ.get(browser_check.REQUIRE) == "1":
            pytest.fail(f"{browser_check.REQUIRE}=1 but the browser check cannot run: {reason}")
        pytest.skip(reason)
    return browser_check


_PAGE = """<!doctype html><html><head><title>{title}</title><style>
pre {{ width: 300px; overflow-x: {overflow}; font: 14px monospace; }}</style></head><body>
<pre>{text}</pre>{script}</body></html>"""


def test_the_browser_check_fails_on_console_errors_and_clipped_code(tmp_path):
    browser_check = _browser()
    wide = "0123456789" * 10
    (tmp_path / "good.html").write_text(_PAGE.format(title="good", overflow="auto", text=wide, script=""))
    (tmp_path / "clipped.html").write_text(_PAGE.format(title="clipped", overflow="hidden", text=wide,
                                                        script=""))
    (tmp_path / "error.html").write_text(_PAGE.format(title="error", overflow="auto", text="short",
                                                      script="<script>undefinedFunction()</script>"))
    (tmp_path / "favicon.ico").write_bytes(b"")
    pages = ["good.html", "clipped.html", "error.html"]
    reports = {r.page: r for r in browser_check.check_site(tmp_path, pages)}
    assert reports["good.html"].problems == [] and reports["good.html"].wide_fit == [False]
    assert len(reports["clipped.html"].clipped) == 1 and reports["clipped.html"].problems
    assert reports["error.html"].console_errors and "undefinedFunction" in reports["error.html"].problems[0]


def test_the_built_site_renders_in_a_browser():
    """The home page, a guide and an API page of ``docs/_build/html``, as ``docs/build.sh``
    checks them (run after a build; CI builds the site after the tests and checks it there)."""
    browser_check = _browser()
    site = DOCS / "_build" / "html"
    if not all((site / p).exists() for p in browser_check.PAGES):
        pytest.skip("the site is not built here (bash docs/build.sh builds it and runs this check)")
    reports = browser_check.check_site(site)
    assert [p for r in reports for p in r.problems] == []
    concepts = next(r for r in reports if r.page == "concepts.html")
    assert concepts.wide_fit and sum(concepts.wide_fit) >= len(concepts.wide_fit) - 1


@pytest.mark.slow
def test_the_build_fails_on_what_reaches_nothing(tmp_path):
    """A small site with the checks of ``conf.py`` builds under ``sphinx -W``, and fails, naming
    each, once a page names ``fs.overlap``, links to a file that does not exist and to a page
    that does not exist."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    import subprocess

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['myst_parser', 'site_checks']\nnitpicky = True\n")
    build = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", str(src),
             str(tmp_path / "out")]
    (src / "index.md").write_text("# Home\n\nText about `fs.unfold`.\n")
    ok = subprocess.run(build, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    (src / "index.md").write_text("# Home\n\nUse `fs.overlap` here.\n\n"
                                  '<a href="nothing.html">a link</a>\n\nSee [the other page](other.md).\n')
    bad = subprocess.run(build, capture_output=True, text=True)
    assert bad.returncode != 0
    for expect in ("names nothing: fs.overlap", "link to nothing: index.html: nothing.html", "other.md"):
        assert expect in bad.stderr, (expect, bad.stderr)

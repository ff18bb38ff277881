"""Render pages of the built site in headless Chromium and check what a reader sees.

Each page is served from a local HTTP server (127.0.0.1) and loaded in the system's
``chromium`` through ``chromedriver`` (selenium; pip cannot download a browser here, so
none is fetched): the check fails on a console error (a script that throws, a file that
does not load) and on a code block whose text is wider than the block and that cannot be
scrolled sideways (clipped). It also reports, per page, whether the 100-column ``explain``
reports fit without scrolling.

Run by ``docs/build.sh`` after the build (``python docs/_ext/browser_check.py
docs/_build/html``) and by ``tests/repo/test_docs_site.py``. Where Chromium is missing the
check is skipped with the reason, unless ``FUNCTIONAL_STRIDES_REQUIRE_BROWSER=1`` (CI), where
that is an error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

#: The pages checked by default: the home page, one guide and one API page.
PAGES = ("index.html", "concepts.html", "_autosummary/functional_strides.unfold.html")
#: Chromium's flags: headless, and nothing that reaches the network or a GPU.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage")
#: Window width of the check, in CSS pixels (a laptop screen).
WIDTH = 1280
REQUIRE = "FUNCTIONAL_STRIDES_REQUIRE_BROWSER"

#: For every <pre>: its width, the width its text needs, its overflow style and whether it
#: holds a report of ``explain`` (a line of more than 80 columns).
_MEASURE = """
return Array.from(document.querySelectorAll('pre')).map(function (p) {
  var lines = p.textContent.split('\\n');
  var widest = Math.max.apply(null, lines.map(function (l) { return l.length; }));
  return {client: p.clientWidth, scroll: p.scrollWidth, columns: widest,
          overflow: getComputedStyle(p).overflowX,
          text: lines.find(function (l) { return l.trim().length; }) || ''};
});
"""


@dataclasses.dataclass
class PageReport:
    """What one page showed: console errors, clipped code blocks, and for the blocks wider
    than 80 columns, whether each fits (``wide_fit``) or scrolls."""

    page: str
    console_errors: list[str]
    clipped: list[str]
    wide_fit: list[bool]
    title: str

    @property
    def problems(self) -> list[str]:
        return ([f"{self.page}: console error: {e}" for e in self.console_errors]
                + [f"{self.page}: clipped code block: {c}" for c in self.clipped]
                + ([f"{self.page}: no title"] if not self.title else []))


def find_browser() -> tuple[str, str] | None:
    """``(chromium, chromedriver)`` paths of the system's browser, or ``None``."""
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    driver = shutil.which("chromedriver") or next(
        (p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if os.path.exists(p)), None)
    if chromium is None or driver is None:
        return None
    return chromium, driver


def missing_reason() -> str | None:
    """Why the browser check cannot run here (``None`` when it can)."""
    if find_browser() is None:
        return "no chromium and chromedriver (Debian: apt-get install -y chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return 'selenium is not installed (python -m pip install -e ".[docs]")'
    return None


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (a free port) for the duration; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def browser(width: int = WIDTH) -> Iterator[object]:
    """A selenium driver of headless Chromium with a fresh profile, ``width`` pixels wide."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_browser()
    if found is None:
        raise RuntimeError(missing_reason())
    chromium, driver_path = found
    with tempfile.TemporaryDirectory(prefix="fs-docs-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},900"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
        try:
            driver.set_page_load_timeout(60)
            yield driver
        finally:
            driver.quit()


def check_page(driver: object, url: str, page: str) -> PageReport:
    """Load ``url`` and measure it (see :class:`PageReport`)."""
    driver.get(url)
    driver.execute_script("return document.readyState")
    blocks = driver.execute_script(_MEASURE)
    logs = driver.get_log("browser")
    errors = [entry["message"] for entry in logs if entry.get("level") == "SEVERE"]
    clipped, wide_fit = [], []
    for b in blocks:
        fits = b["scroll"] <= b["client"] + 1
        if not fits and b["overflow"] not in ("auto", "scroll"):
            clipped.append(f"{b['text'][:60]!r} needs {b['scroll']} px, shows {b['client']} px, "
                           f"overflow-x {b['overflow']}")
        if b["columns"] > 80:
            wide_fit.append(fits)
    return PageReport(page, errors, clipped, wide_fit, driver.title)


def check_site(site: Path, pages: Sequence[str] = PAGES, *, width: int = WIDTH) -> list[PageReport]:
    """Check ``pages`` (paths relative to ``site``) at ``width`` pixels."""
    missing = [p for p in pages if not (site / p).exists()]
    if missing:
        raise FileNotFoundError(f"not in the built site {site}: {missing}")
    with serve(site) as base, browser(width) as driver:
        return [check_page(driver, base + page, page) for page in pages]


def main(argv: Sequence[str]) -> int:
    site = Path(argv[0] if argv else "_build/html")
    reason = missing_reason()
    if reason is not None:
        if os.environ.get(REQUIRE) == "1":
            print(f"error: the browser check cannot run ({REQUIRE}=1): {reason}", file=sys.stderr)
            return 1
        print(f"browser check skipped: {reason}")
        return 0
    reports = check_site(site)
    problems = [p for r in reports for p in r.problems]
    for r in reports:
        wide = (f"{sum(r.wide_fit)} of {len(r.wide_fit)} wide code blocks fit at {WIDTH} px"
                if r.wide_fit else "")
        print(f"browser check: {r.page}: {len(r.console_errors)} console errors, {len(r.clipped)} clipped"
              + (f"; {wide}" if wide else ""))
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

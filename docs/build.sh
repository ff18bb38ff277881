#!/usr/bin/env bash
# Build the documentation site into docs/_build/html with Sphinx (MyST Markdown pages, one API
# page per public object from the docstrings), warnings as errors, then check it in a browser.
# Installs nothing: run it in an environment with the package and its "docs" extra, e.g.
#   python -m pip install -e ".[test,docs]" && bash docs/build.sh
# The pictures are drawn first into docs/_generated (fs.explain and the benchmark results).
set -euo pipefail
cd "$(dirname "$0")"
rm -rf _build/html _build/doctrees _generated _autosummary
MPLBACKEND=Agg python make_figures.py _generated
python -m sphinx -b html -W --keep-going -q -d _build/doctrees . _build/html
# the home page, a guide and an API page in headless Chromium: no console error, no clipped code
# (skipped with the reason where chromium is missing, unless FUNCTIONAL_STRIDES_REQUIRE_BROWSER=1)
python _ext/browser_check.py _build/html
echo "docs: built $(pwd)/_build/html/index.html"

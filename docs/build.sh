#!/usr/bin/env bash
# Build the documentation site into docs/_build/html with Sphinx (MyST Markdown pages, API
# reference from the docstrings), warnings as errors. Installs nothing: run it in an
# environment with the package and its "docs" extra, e.g.
#   python -m pip install -e ".[test,docs]" && bash docs/build.sh
# The pictures are drawn first into docs/_generated (fs.explain and the benchmark results).
set -euo pipefail
cd "$(dirname "$0")"
rm -rf _build/html _generated _autosummary
MPLBACKEND=Agg python make_figures.py _generated
python -m sphinx -b html -W --keep-going -q . _build/html
echo "docs: built $(pwd)/_build/html/index.html"

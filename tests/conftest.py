"""Shared helpers of the test folders: ``strategies`` (hypothesis strategies) and ``_support``
(skips and requirements) live in ``tests/`` and are imported by name from every folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

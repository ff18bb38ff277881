"""Type aliases shared by the package (one home for them)."""

from __future__ import annotations

from typing import Any

#: A shape: extents of each dim, in elements.
Shape = tuple[int, ...]
#: Strides of each dim, in elements of the storage.
Strides = tuple[int, ...]
#: A storage offset: a Python int (static) or a traced/concrete integer scalar (dynamic).
Offset = Any

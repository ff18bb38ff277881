"""Named checks of argument values shared by the read and write paths (pure Python). The
storage-bounds checks live with the layout record (``layout.check_in_storage``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import LayoutError


def check_choice(op: str, name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices`` (a ``method=``, ``mode=`` or ``overlap=``
    argument), else ``LayoutError`` naming ``op``, the argument and the choices."""
    if value not in choices:
        raise LayoutError(f"{op}: unknown {name} {value!r}; use one of {tuple(choices)}.")
    return value

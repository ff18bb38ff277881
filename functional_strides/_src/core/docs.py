"""One docstring per op: the method and the module function show the rule's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def shares_doc(source: Callable[..., Any] | None) -> Callable[[F], F]:
    """Decorator: give the decorated function ``source``'s docstring, so that ``help()``
    shows one text for ``views.permute``, ``StridedArray.permute`` and ``fs.permute``."""
    def decorate(fn: F) -> F:
        fn.__doc__ = source.__doc__
        return fn
    return decorate

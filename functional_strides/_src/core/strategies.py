"""The strategy skeleton shared by reads (``lowering/reads.py``) and writes (``lowering/writes.py``).

Each direction lowers a layout by one of a few strategies, each a row ``(name, applies,
lower)`` of the direction's table, and picks among those that apply with a rule derived
from measurements (``benchmarks/lowering_choices.py``, ``benchmarks/write_choices.py``).
Planning is the same for both: check ``method=`` once, bring the layout to canonical form
once (:func:`functional_strides._src.core.canonical.canonicalize` caches it), answer ``"empty"`` for
a zero extent, else run the rule (``"auto"``) or check that the named strategy applies.
Pure Python: the ``lower`` functions are the direction's, called by the array layer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .canonical import Canonical, canonicalize
from .checks import check_choice
from .errors import LayoutError
from .layout import Layout


@dataclasses.dataclass(frozen=True)
class Need:
    """What a strategy may consult besides the canonical form: the storage's size (in
    elements; ``None`` where a read does not depend on it) and, for a write, how values
    combine with the storage (``"set"``, ``"add"``, ...); a read has ``mode=None``.
    ``copy_kernel``: whether a read may take the compiled strided copy (False: XLA ops only,
    as on other platforms, for jax.export and under a vmap split across devices)."""

    storage_size: int | None = None
    mode: str | None = None
    copy_kernel: bool = True


@dataclasses.dataclass(frozen=True)
class Strategy:
    """One way to lower a layout: ``applies(c, need)`` says whether it can, ``lower`` does it
    (``None`` where the caller lowers that path from the layout itself)."""

    name: str
    applies: Callable[[Canonical, Need], bool]
    lower: Callable[..., Any] | None


class Strategies:
    """A direction's table of strategies and its ``"auto"`` rule.

    Args:
      op: the name errors give (``"materialize"``, ``"write"``).
      table: the strategies, in the order their names are listed in ``methods``.
      auto: ``auto(c, need, applies)`` names the strategy to take; ``applies`` maps every
        name to whether it applies (computed once per plan).
    """

    def __init__(self, op: str, table: tuple[Strategy, ...],
                 auto: Callable[[Canonical, Need, dict[str, bool]], str]) -> None:
        self.op = op
        self.table = {s.name: s for s in table}
        self.auto = auto
        #: ``"auto"`` and the name of every strategy: what ``method=`` accepts.
        self.methods: tuple[str, ...] = ("auto", *self.table)

    def applies(self, c: Canonical, need: Need) -> dict[str, bool]:
        """Whether each strategy applies to canonical form ``c``."""
        return {name: s.applies(c, need) for name, s in self.table.items()}

    def check_method(self, method: str, op: str | None = None) -> str:
        """``method`` when it is one of :attr:`methods`, else ``LayoutError``."""
        return check_choice(op or self.op, "method", method, self.methods)

    def plan(self, layout: Layout, method: str, need: Need, *, op: str | None = None) -> str:
        """The strategy that lowers ``layout`` (a static offset): ``"empty"`` for a zero extent,
        the ``"auto"`` rule's choice, or ``method`` after checking that it applies.

        Raises:
          LayoutError: ``method`` is unknown, or does not apply (the message names the layout,
            its canonical dims and, for writes, the mode and the storage size)."""
        op = op or self.op
        self.check_method(method, op)
        c = canonicalize(layout)
        if c.empty:
            return "empty"
        ok = self.applies(c, need)
        if method == "auto":
            return self.auto(c, need, ok)
        if not ok[method]:
            what = f"layout {layout}" if need.mode is None else (
                f"mode={need.mode!r} through layout {layout} over a storage of {need.storage_size} elements")
            raise LayoutError(
                f"{op}: method={method!r} does not apply to {what} (canonical dims {c.dims}); use "
                "method='auto', which picks among the paths that apply.")
        return method

    def lower(self, path: str) -> Callable[..., Any]:
        """The function that lowers by strategy ``path``."""
        lower = self.table[path].lower
        assert lower is not None, path  # the paths without one are lowered by the caller
        return lower

"""The strategy skeleton shared by reads (``lowering/reads.py``) and writes (``lowering/writes.py``).

Each direction lowers a layout by one of a few strategies, each a row ``(name, applies,
lower)`` of the direction's table, and picks among those that apply with a rule derived
from measurements (``benchmarks/lowering_choices.py``, ``benchmarks/write_choices.py``).
Planning is the same for both: check ``method=`` once, bring the layout to canonical form
once (:func:`functional_strides._src.core.canonical.canonicalize` caches it), answer ``"empty"`` for
a zero extent, else run the rule (``"auto"``) or check that the named strategy applies. The
answer is a :class:`Plan`: the path's name, carrying the reasons the direction's table gives
for it (computed when first read), so that ``fs.explain`` prints the plan's own reasons.
Pure Python: the ``lower`` functions are the direction's, called by the array layer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
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


class Plan(str):
    """The path a read or write takes (:func:`functional_strides.read_plan`,
    :func:`functional_strides.write_plan`), with the reasons the rule that chose it gives.

    A ``str``: it compares, hashes and prints as the path's name (``read_plan(x) == "gather"``).
    ``reasons`` is a tuple of sentences, the first saying why the path applies, the rest what
    it does (the thresholds it passed, the program it emits, the path taken where this one is
    not available); ``fs.explain`` prints them. They are worked out when first read.

    Raises:
      Nothing of its own; made by ``read_plan`` and ``write_plan``, which raise for a bad
      ``method`` or ``mode``.
    Example:
      >>> plan = fs.read_plan(fs.Layout((1024, 1024), (1, 1024)))
      >>> plan in ("strided_copy", "structured"), isinstance(plan.reasons[0], str)
      (True, True)

    Semantics: no PyTorch or NumPy counterpart."""

    def __new__(cls, name: str, why: Callable[[], Sequence[str]] | None = None) -> Plan:
        plan = super().__new__(cls, name)
        plan._why = why
        plan._reasons = None
        return plan

    _why: Callable[[], Sequence[str]] | None
    _reasons: tuple[str, ...] | None

    @property
    def reasons(self) -> tuple[str, ...]:
        """The sentences that say why this path was taken, one a fact; the first says why it
        applies."""
        if self._reasons is None:
            self._reasons = tuple(self._why()) if self._why is not None else ()
        return self._reasons

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (str, (str(self),))  # pickled as its name


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
      why: ``why(layout, c, need, path, method)`` gives the reasons of ``path`` (``"empty"``
        included), chosen by ``method`` (``"auto"``, or the path asked for), one sentence a
        fact: what the :class:`Plan` carries.
    """

    def __init__(self, op: str, table: tuple[Strategy, ...],
                 auto: Callable[[Canonical, Need, dict[str, bool]], str],
                 why: Callable[[Layout, Canonical, Need, str, str], Sequence[str]]) -> None:
        self.op = op
        self.table = {s.name: s for s in table}
        self.auto = auto
        self.why = why
        #: ``"auto"`` and the name of every strategy: what ``method=`` accepts.
        self.methods: tuple[str, ...] = ("auto", *self.table)

    def applies(self, c: Canonical, need: Need) -> dict[str, bool]:
        """Whether each strategy applies to canonical form ``c``."""
        return {name: s.applies(c, need) for name, s in self.table.items()}

    def check_method(self, method: str, op: str | None = None) -> str:
        """``method`` when it is one of :attr:`methods`, else ``LayoutError``."""
        return check_choice(op or self.op, "method", method, self.methods)

    def plan(self, layout: Layout, method: str, need: Need, *, op: str | None = None) -> Plan:
        """The strategy that lowers ``layout`` (a static offset): ``"empty"`` for a zero extent,
        the ``"auto"`` rule's choice, or ``method`` after checking that it applies; a
        :class:`Plan` carrying its reasons.

        Raises:
          LayoutError: ``method`` is unknown, or does not apply (the message names the layout,
            its canonical dims and, for writes, the mode and the storage size)."""
        op = op or self.op
        self.check_method(method, op)
        c = canonicalize(layout)

        def planned(path: str) -> Plan:
            return Plan(path, lambda: self.why(layout, c, need, path, method))

        if c.empty:
            return planned("empty")
        ok = self.applies(c, need)
        if method == "auto":
            return planned(self.auto(c, need, ok))
        if not ok[method]:
            what = f"layout {layout}" if need.mode is None else (
                f"mode={need.mode!r} through layout {layout} over a storage of {need.storage_size} elements")
            raise LayoutError(
                f"{op}: method={method!r} does not apply to {what} (canonical dims {c.dims}); use "
                "method='auto', which picks among the paths that apply.")
        return planned(method)

    def lower(self, path: str) -> Callable[..., Any]:
        """The function that lowers by strategy ``path``."""
        lower = self.table[path].lower
        assert lower is not None, path  # the paths without one are lowered by the caller
        return lower

"""CuTe's swizzles and composed layouts (pure Python, no ``jax``).

A :class:`Swizzle` is a bit permutation of indices; a :class:`ComposedLayout` applies one
after a layout (``composition(Swizzle(...), layout)``). Names of CUTLASS's ``pycute``.
Public through :mod:`functional_strides.cute`.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import LayoutError
from .int_tuple import has_none, is_tuple, normalize
from .layout import Layout, LayoutBase, _as_layout, composition, cosize, size, slice_and_offset

__all__ = ["ComposedLayout", "Swizzle"]


def _shiftr(a: int, s: int) -> int:
    return a >> s if s > 0 else a << -s


class Swizzle:
    """The bit permutation ``i -> i ^ ((i & yyy_mask) >> shift)`` of CuTe's swizzled layouts.

    ``bits`` bits starting at bit ``base + max(0, shift)`` are XORed into the ``bits`` bits
    starting at ``base - min(0, shift)``. Immutable and hashable.

    Args:
      bits: number of bits in the mask, >= 0.
      base: least-significant bits kept, >= 0.
      shift: distance of the mask, ``abs(shift) >= bits``.
    Raises:
      LayoutError: an argument out of these ranges.
    Example:
      >>> sw = Swizzle(2, 0, 3)
      >>> [sw(i) for i in (0, 8, 9, 16, 27)], sw.size()
      ([0, 9, 8, 18, 24], 32)

    Semantics: ``pycute.Swizzle``, CuTe ``Swizzle<B, M, S>``."""

    __slots__ = ("bits", "base", "shift", "yyy_msk", "zzz_msk")

    def __init__(self, bits: int, base: int, shift: int) -> None:
        bits, base, shift = (normalize(n, v, op="Swizzle") for n, v in
                             (("bits", bits), ("base", base), ("shift", shift)))
        if bits < 0 or base < 0 or abs(shift) < bits or any(is_tuple(v) for v in (bits, base, shift)):
            raise LayoutError(f"Swizzle: need bits >= 0, base >= 0 and abs(shift) >= bits "
                              f"(got bits={bits}, base={base}, shift={shift}).")
        mask = (1 << bits) - 1
        for name, value in (("bits", bits), ("base", base), ("shift", shift),
                            ("yyy_msk", mask << (base + max(0, shift))),
                            ("zzz_msk", mask << (base - min(0, shift)))):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Swizzle is immutable; cannot set {name!r}.")

    def __call__(self, offset: int) -> int:
        return offset ^ _shiftr(offset & self.yyy_msk, self.shift)

    def compose(self, layout: Any) -> ComposedLayout:
        """``self o layout``: what :func:`composition` returns for a swizzle on the left."""
        return ComposedLayout(self, 0, _as_layout(layout, "composition", "layoutB"))

    def __eq__(self, other: object) -> bool:
        return type(other) is Swizzle and (self.bits, self.base, self.shift) == (other.bits, other.base,
                                                                                 other.shift)

    def __hash__(self) -> int:
        return hash(("Swizzle", self.bits, self.base, self.shift))

    def size(self) -> int:
        """Size of the domain: ``2 ** (bits + base + abs(shift))``."""
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self) -> int:
        """Size of the codomain (a permutation: equal to :meth:`size`)."""
        return self.size()

    def __str__(self) -> str:
        return f"SW_{self.bits}_{self.base}_{self.shift}"

    def __repr__(self) -> str:
        return f"Swizzle({self.bits},{self.base},{self.shift})"


class ComposedLayout(LayoutBase):
    """``layoutB o (offset + layoutA)``: ``R(c) = layoutB(offset + layoutA(c))``, e.g. a swizzled layout.

    The domain, rank and modes are those of ``layoutA`` (coordinates colexicographic, as for
    a Layout); ``offset`` and the indices are in elements. ``R(c)`` with ``None`` in ``c``
    slices ``layoutA`` and moves the sliced-off part into ``offset``; ``R[i]`` keeps mode
    ``i``. Immutable and hashable; ``size()`` is that of ``layoutA``, ``cosize()`` that of
    ``layoutB``. :func:`composition` with a Swizzle or ComposedLayout on the left builds one.

    Args:
      layoutB: the outer function (a :class:`Swizzle` or a Layout).
      offset: int added first.
      layoutA: the inner Layout (it gives the domain, rank and modes).
    Raises:
      LayoutError: ``layoutA`` is not a :class:`Layout`; ``layoutB`` is not callable (not a
        Swizzle or Layout); ``offset`` is not an int. Calling it with a coordinate that does
        not match ``layoutA``'s shape raises LayoutError (from ``crd2idx``).
    Example:
      >>> sl = ComposedLayout(Swizzle(1, 0, 1), 0, Layout((2, 2), (1, 2)))
      >>> [sl(i) for i in range(4)], sl.size()
      ([0, 1, 3, 2], 4)
      >>> ComposedLayout(Layout(4, 2), 1, Layout(4))(3)     # layoutB(1 + 3)
      8

    Semantics: pycute ``ComposedLayout`` / CuTe ``ComposedLayout``."""

    __slots__ = ("layoutB", "offset", "layoutA")

    def __init__(self, layoutB: Any, offset: int, layoutA: Any) -> None:  # noqa: N803
        if not isinstance(layoutA, Layout):
            raise LayoutError(f"ComposedLayout: layoutA must be a Layout (got {type(layoutA).__name__}).")
        if not callable(layoutB):
            raise LayoutError(f"ComposedLayout: layoutB must be a Swizzle or a Layout "
                              f"(got {type(layoutB).__name__}).")
        object.__setattr__(self, "layoutB", layoutB)
        object.__setattr__(self, "offset", normalize("offset", offset, op="ComposedLayout"))
        object.__setattr__(self, "layoutA", layoutA)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ComposedLayout is immutable; cannot set {name!r}.")

    def __eq__(self, other: object) -> bool:
        return (type(other) is ComposedLayout and self.layoutB == other.layoutB
                and self.offset == other.offset and self.layoutA == other.layoutA)

    def __hash__(self) -> int:
        return hash((self.layoutB, self.offset, self.layoutA))

    def __len__(self) -> int:
        return len(self.layoutA)

    def __call__(self, *args: Any) -> Any:
        crd = args[0] if len(args) == 1 else args
        if has_none(crd):
            sub, off = slice_and_offset(crd, self.layoutA)
            return ComposedLayout(self.layoutB, self.offset + off, sub)
        return self.layoutB(self.offset + self.layoutA(crd))

    def __getitem__(self, i: int) -> ComposedLayout:
        return ComposedLayout(self.layoutB, self.offset, self.layoutA[i])

    def compose(self, layout: Any) -> ComposedLayout:
        """``self o layout``: the inner layout composed with ``layout``, the swizzle kept outside."""
        return ComposedLayout(self.layoutB, self.offset, composition(self.layoutA, layout))

    def size(self) -> int:
        """Size of the domain (that of ``layoutA``)."""
        return size(self.layoutA)

    def cosize(self) -> int:
        """Size of the codomain (that of ``layoutB``)."""
        return cosize(self.layoutB)

    def __str__(self) -> str:
        return f"{self.layoutB} o {self.offset} o {self.layoutA}"

    def __repr__(self) -> str:
        return f"ComposedLayout({self.layoutB!r},{self.offset!r},{self.layoutA!r})"

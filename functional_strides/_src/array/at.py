"""``x.at[idx]``: functional writes through a view of a ``StridedArray``, spelled as ``jnp``'s.

:class:`_IndexUpdateHelper` is what ``x.at`` returns and :class:`_IndexUpdateRef` what
``x.at[idx]`` returns; each write goes back to the array (``StridedArray._write``), which
plans it (``fs.write``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax

from ..core import views

if TYPE_CHECKING:
    from .strided import StridedArray

__all__ = ["_IndexUpdateHelper", "_IndexUpdateRef"]


class _IndexUpdateHelper:
    """``x.at``: index it (``x.at[idx]``) to write through the view ``x[idx]``."""

    __slots__ = ("array",)

    def __init__(self, array: StridedArray) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array.layout})"


class _IndexUpdateRef:
    """``x.at[idx]``: the view ``x[idx]`` to read or write, as ``jnp``'s ``_IndexUpdateRef``.

    Every write returns ``x`` (its layout, its batch axes) over a new storage; ``src``
    broadcasts to the view's shape (with ``x``'s batch axes in front, for a batched array) and
    is cast to the storage dtype by ``jnp``'s ``.at[]`` rule (``result_type(src, dtype)`` must
    be the storage dtype; Python scalars are weakly typed).

    Raises (every method):
      OutOfRangeError / LayoutError: ``idx`` is not a valid basic index of ``x`` (the same
        errors as ``x[idx]``). LayoutError: ``src`` does not broadcast to the view, or its
        dtype does not fit the storage.
    """

    __slots__ = ("array", "index", "layout")

    def __init__(self, array: StridedArray, index: Any) -> None:
        self.array = array
        self.index = index
        self.layout = array.layout if index is Ellipsis else views.getitem(array.layout, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array.layout}, {self.index!r})"

    def get(self) -> jax.Array:
        """The values of the view ``x[idx]``, materialised: ``jnp.asarray(x[idx])``.

        Example:
          >>> import jax.numpy as jnp
          >>> fs.from_array(jnp.arange(6).reshape(2, 3)).at[:, ::2].get().tolist()
          [[0, 2], [3, 5]]

        Semantics: ``jax.Array.at[idx].get()``."""
        return self.array._read(self.layout)

    def set(self, values: Any, *, overlap: str = "error") -> StridedArray:
        """``x`` over new storage in which the view's elements are replaced by ``values``.

        Storage slots outside the view keep their values.

        Args:
          values: broadcastable to the view's shape.
          overlap: ``"error"`` (default) refuses a view whose elements share storage slots;
            ``"last"`` keeps, per slot, the element last in row-major order of the view.
        Raises:
          OverlapError: the view overlaps itself and ``overlap="error"`` (the message names two
            colliding coordinates and their storage index).
        Example:
          >>> import jax.numpy as jnp
          >>> x = fs.from_array(jnp.zeros((2, 3)))
          >>> x.at[1, 1:].set(jnp.array([5.0, 6.0])).tolist()
          [[0.0, 0.0, 0.0], [0.0, 5.0, 6.0]]

        Semantics: ``jax.Array.at[idx].set``; ``x[idx] = values`` / ``x[idx].copy_(values)`` in
        PyTorch, functionalized (``as_strided_scatter``)."""
        return self.array._write(self.layout, values, "set", overlap, "at[].set")

    def add(self, values: Any) -> StridedArray:
        """``x`` over new storage in which ``values`` is added to the view's elements; where
        elements share a slot every contribution is added (overlap-add).

        Example:
          >>> import jax.numpy as jnp
          >>> fs.from_array(jnp.ones(4)).at[::2].add(2.0).tolist()
          [3.0, 1.0, 3.0, 1.0]

        Semantics: ``jax.Array.at[idx].add``; ``x[idx] += values`` (``add_``) in PyTorch."""
        return self.array._write(self.layout, values, "add", "error", "at[].add")

    def multiply(self, values: Any) -> StridedArray:
        """``x`` over new storage in which the view's elements are multiplied by ``values``
        (every contribution, where elements share a slot).

        Example:
          >>> import jax.numpy as jnp
          >>> fs.from_array(jnp.ones(4)).at[1:3].multiply(5.0).tolist()
          [1.0, 5.0, 5.0, 1.0]

        Semantics: ``jax.Array.at[idx].multiply``; ``x[idx] *= values`` (``mul_``)."""
        return self.array._write(self.layout, values, "mul", "error", "at[].multiply")

    def min(self, values: Any) -> StridedArray:
        """``x`` over new storage in which each element of the view becomes the minimum of
        itself and ``values`` (every contribution, where elements share a slot).

        Example:
          >>> import jax.numpy as jnp
          >>> fs.from_array(jnp.arange(4.0)).at[:].min(1.5).tolist()
          [0.0, 1.0, 1.5, 1.5]

        Semantics: ``jax.Array.at[idx].min``; ``x[idx] = torch.minimum(x[idx], values)``."""
        return self.array._write(self.layout, values, "min", "error", "at[].min")

    def max(self, values: Any) -> StridedArray:
        """``x`` over new storage in which each element of the view becomes the maximum of
        itself and ``values`` (every contribution, where elements share a slot).

        Example:
          >>> import jax.numpy as jnp
          >>> fs.from_array(jnp.arange(4.0)).at[:].max(1.5).tolist()
          [1.5, 1.5, 2.0, 3.0]

        Semantics: ``jax.Array.at[idx].max``; ``x[idx] = torch.maximum(x[idx], values)``."""
        return self.array._write(self.layout, values, "max", "error", "at[].max")

"""Assertions of views for users' tests: values and layouts, and the NumPy oracle's reading.

Both raise ``AssertionError`` with a message that names the first differing coordinate and
the layouts in the library's ``(shape):(strides)+offset`` notation, so that they read well in
pytest's report, in ``unittest``/``chex.TestCase`` and outside any framework. They take
concrete arrays: the outputs of a ``jax.jit``-compiled function or of a ``chex.variants``
variant, never the tracers inside one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..array.strided import StridedArray
from ..core.layout import Layout, format_layout, is_traced
from ..oracle import materialize

__all__ = ["assert_matches_oracle", "assert_views_equal", "layout_of"]


def layout_of(x: Any) -> Layout | None:
    """The layout of ``x`` in elements: a ``StridedArray``'s, a ``torch.Tensor``'s
    ``(size(), stride(), storage_offset())``, or ``None`` for arrays without one (NumPy, JAX)."""
    if isinstance(x, StridedArray):
        return x.layout
    if type(x).__module__.startswith("torch") and hasattr(x, "storage_offset"):
        return Layout(tuple(x.shape), tuple(x.stride()), int(x.storage_offset()))
    return None


def _describe(layout: Layout | None, x: Any) -> str:
    if layout is None:
        return f"{type(x).__name__} of shape {tuple(np.shape(x))} (no layout)"
    offset = layout.offset
    return format_layout(layout.shape, layout.strides, offset if is_traced(offset) else int(offset))


def _values(op: str, name: str, x: Any) -> np.ndarray:
    leaves = [x.storage, x.layout.offset] if isinstance(x, StridedArray) else [x]
    if any(is_traced(leaf) for leaf in leaves):
        raise TypeError(f"{op}: {name} is traced (got {type(x).__name__} inside a jax transformation); "
                        "call it on the outputs of the jitted or vmapped function, outside the trace.")
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu().resolve_conj().resolve_neg().numpy()
    return np.asarray(x)


def _first_difference(bad: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(bad)[0])


def assert_views_equal(actual: Any, desired: Any, *, check_layout: bool = True, rtol: float = 0.0,
                       atol: float = 0.0) -> None:
    """Assert that two views hold the same values and, with ``check_layout``, the same layout.

    The values are compared elementwise (``|actual - desired| <= atol + rtol * |desired|``,
    NaNs equal to NaNs; exact by default); the layouts compare ``shape``, ``stride()`` and
    ``storage_offset()`` (in elements). Either side may be a
    :class:`functional_strides.StridedArray`, a ``torch.Tensor`` (its own layout), or a NumPy
    or JAX array (no layout: with ``check_layout``, then only the shapes are compared).

    Args:
      actual: the view under test.
      desired: the expected view.
      check_layout: also compare the layouts.
      rtol: relative tolerance of the values (``numpy.isclose``'s).
      atol: absolute tolerance of the values.
    Returns:
      None.
    Raises:
      AssertionError: the shapes, the layouts (with ``check_layout``) or the values differ;
        the message names the first differing coordinate (row-major order), both values, the
        number of differing elements and both layouts as ``(shape):(strides)+offset``.
      TypeError: an argument is a tracer (the assertion was called inside ``jax.jit``).
    Example:
      >>> import jax.numpy as jnp
      >>> import functional_strides as fs
      >>> from functional_strides.testing import assert_views_equal
      >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
      >>> assert_views_equal(x.t(), fs.as_strided(x.storage, (3, 2), (1, 3)))
      >>> assert_views_equal(x.t(), x.t().contiguous())
      Traceback (most recent call last):
      ...
      AssertionError: assert_views_equal: layouts differ: actual (3,2):(1,3)+0, desired (3,2):(2,1)+0 ...

    Semantics: ``torch.testing.assert_close`` (values) plus the layout PyTorch reports with
    ``size()``, ``stride()`` and ``storage_offset()``; ``numpy.testing.assert_allclose``'s
    tolerance rule."""
    op = "assert_views_equal"
    a, d = _values(op, "actual", actual), _values(op, "desired", desired)
    la, ld = layout_of(actual), layout_of(desired)
    layouts = f"actual {_describe(la, actual)}, desired {_describe(ld, desired)}"
    if a.shape != d.shape:
        raise AssertionError(f"{op}: shapes differ: actual {a.shape}, desired {d.shape} ({layouts}).")
    if check_layout and la is not None and ld is not None:
        same = (la.shape, la.strides) == (ld.shape, ld.strides) and int(la.offset) == int(ld.offset)
        if not same:
            detail = [f"{what} {x} != {y}" for what, x, y in (
                ("strides", la.strides, ld.strides), ("offset", int(la.offset), int(ld.offset))) if x != y]
            raise AssertionError(f"{op}: layouts differ: {layouts} ({'; '.join(detail)}). "
                                 "Pass check_layout=False to compare the values only.")
    if a.size == 0:
        return
    try:
        close = np.isclose(a, d, rtol=rtol, atol=atol, equal_nan=True) if (rtol or atol) else (
            (a == d) | (_isnan(a) & _isnan(d)))
    except TypeError:
        close = a == d
    close = np.asarray(close, dtype=bool)
    if not close.all():
        where = _first_difference(~close)
        count = int((~close).sum())
        raise AssertionError(
            f"{op}: values differ at {where}: actual {_scalar(a[where])!r}, desired {_scalar(d[where])!r} "
            f"({count} of {a.size} elements differ; rtol={rtol}, atol={atol}; {layouts}).")


def _scalar(v: Any) -> Any:
    """A NumPy scalar as the Python number it holds (``0.0``, not ``np.float32(0.0)``)."""
    try:
        return v.item()
    except (AttributeError, ValueError):
        return v


def _isnan(a: np.ndarray) -> np.ndarray:
    try:
        return np.isnan(a)
    except TypeError:
        return np.zeros(a.shape, bool)


def assert_matches_oracle(x: StridedArray) -> None:
    """Assert that the values of ``x`` are its storage read through its layout by the NumPy oracle.

    The oracle (:func:`functional_strides.oracle.materialize`) computes
    ``storage[offset + sum_d i_d * strides[d]]`` for every coordinate from the definition,
    sharing no code with the library's compiled reads; the values of ``x``
    (``numpy.asarray(x)``, the compiled read) must equal it exactly, NaNs included.

    Args:
      x: a :class:`functional_strides.StridedArray` (concrete: an output of ``jax.jit`` is
        fine, a tracer inside one is not).
    Returns:
      None.
    Raises:
      AssertionError: ``x`` is not a ``StridedArray``, its layout reaches outside its
        storage, or a value differs (the message names the first differing coordinate, both
        values, the storage index it reads and the layout as ``(shape):(strides)+offset``).
      TypeError: ``x`` is traced (the assertion was called inside ``jax.jit``).
    Example:
      >>> import jax
      >>> import jax.numpy as jnp
      >>> import functional_strides as fs
      >>> from functional_strides.testing import assert_matches_oracle
      >>> x = fs.from_array(jnp.arange(12.0).reshape(3, 4))
      >>> assert_matches_oracle(jax.jit(lambda v: v.t()[1:].unfold(0, 2, 1))(x))

    Semantics: ``torch.as_strided(storage, size, stride, storage_offset)`` read elementwise
    (``numpy.lib.stride_tricks.as_strided`` in elements, with a bounds check)."""
    op = "assert_matches_oracle"
    if not isinstance(x, StridedArray):
        raise AssertionError(f"{op}: expected a functional_strides.StridedArray, got {type(x).__name__}.")
    values = _values(op, "x", x)
    storage = np.asarray(x.storage)
    layout = Layout(x.layout.shape, x.layout.strides, int(x.layout.offset))
    try:
        want = materialize(storage, layout)
    except (ValueError, IndexError) as e:
        raise AssertionError(f"{op}: the oracle cannot read layout {layout} over a storage of "
                             f"{storage.shape[0]} elements: {e}") from None
    if values.shape != want.shape:
        raise AssertionError(f"{op}: shape {values.shape} of the values differs from the layout's "
                             f"{want.shape} (layout {layout}).")
    same = np.asarray((values == want) | (_isnan(values) & _isnan(want)), dtype=bool)
    if not same.all():
        where = _first_difference(~same)
        index = layout(*where)
        raise AssertionError(
            f"{op}: value at {where} is {_scalar(values[where])!r}, the oracle reads "
            f"{_scalar(want[where])!r} from storage index {index} ({int((~same).sum())} of {values.size} "
            f"elements differ; layout {layout}, storage of {storage.shape[0]} elements).")

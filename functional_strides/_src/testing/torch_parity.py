"""A view op chain checked against PyTorch: shapes, strides, offsets, values and refusals.

PyTorch is imported when the check runs, never at import: ``functional_strides.testing``
works without it, and the check says how to install it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..array import ops as _ops
from ..array.strided import StridedArray, shares_storage
from ..core.errors import LayoutError
from .assertions import assert_views_equal
from .strategies import ViewChain, ViewOp

__all__ = ["assert_chain_matches_torch", "torch_twin"]

#: What PyTorch raises where a view op is refused (this library raises a ``LayoutError``).
TORCH_ERRORS = (RuntimeError, IndexError, ValueError, TypeError)


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError("assert_chain_matches_torch needs PyTorch, which is not installed: "
                          "pip install torch (the CPU build suffices).") from None
    return torch


def torch_twin(x: StridedArray) -> Any:
    """The same view in PyTorch: ``torch.as_strided`` over a CPU copy of ``x``'s storage."""
    torch = _torch()
    storage = torch.from_numpy(np.array(x.storage))
    return torch.as_strided(storage, x.shape, x.stride(), x.storage_offset())


def _torch_apply(op: ViewOp, t: Any) -> tuple[Any, BaseException | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # x.T / x.mT deprecations
            out = op.apply(t)
    except TORCH_ERRORS as e:
        return None, e
    if not isinstance(out, tuple) and any(n < 0 for n in out.shape):
        # PyTorch returns a negative extent for scalar.expand(-1, ...); refused here.
        return None, RuntimeError(f"negative extent in {tuple(out.shape)}")
    return out, None


def _ours_apply(op: ViewOp, x: StridedArray, functional: bool) -> tuple[Any, BaseException | None]:
    module = _ops if functional and op.name != "getitem" else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # x.T / x.mT, as PyTorch's deprecations
            return op.apply(x, module=module), None
    except LayoutError as e:
        return None, e


def _shares(t_out: Any, t_in: Any) -> bool:
    return t_out.untyped_storage().data_ptr() == t_in.untyped_storage().data_ptr()


def _same(t_out: Any, ours: Any, t_in: Any, x: StridedArray, what: str) -> None:
    if not isinstance(ours, StridedArray):
        raise AssertionError(f"{what}: returned {type(ours).__name__}, not a StridedArray")
    try:
        assert_views_equal(ours, t_out)
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None
    if ours.is_contiguous() != t_out.is_contiguous():
        raise AssertionError(f"{what}: is_contiguous() is {ours.is_contiguous()}, PyTorch's "
                             f"{t_out.is_contiguous()} (layout {ours.layout})")
    if shares_storage(ours, x) != _shares(t_out, t_in):
        raise AssertionError(f"{what}: shares the input's storage: {shares_storage(ours, x)}, in PyTorch "
                             f"{_shares(t_out, t_in)} (a view where PyTorch copies, or the reverse)")


def _step(op: ViewOp, t: Any, x: StridedArray, functional: bool, what: str) -> tuple[Any, Any]:
    t_out, t_err = _torch_apply(op, t)
    ours, err = _ours_apply(op, x, functional)
    if t_err is not None:
        if err is None:
            raise AssertionError(f"{what}: PyTorch raised {t_err!r}, functional_strides returned {ours!r}")
        if isinstance(t_err, IndexError) and not isinstance(err, IndexError):
            raise AssertionError(f"{what}: PyTorch raised {t_err!r} (an IndexError), functional_strides "
                                 f"raised {err!r}")
        return None, None
    if err is not None:
        raise AssertionError(f"{what}: PyTorch returned a tensor of shape {tuple(t_out.shape)} "
                             f"and strides {t_out.stride()}, functional_strides raised {err!r}")
    if op.returns_tuple:
        if not isinstance(ours, tuple) or len(ours) != len(t_out):
            raise AssertionError(f"{what}: PyTorch returned {len(t_out)} pieces, functional_strides "
                                 f"{len(ours) if isinstance(ours, tuple) else type(ours).__name__}")
        for i, (tp, piece) in enumerate(zip(t_out, ours, strict=True)):
            _same(tp, piece, t, x, f"{what} piece {i}")
    else:
        _same(t_out, ours, t, x, what)
    return t_out, ours


def assert_chain_matches_torch(x: StridedArray, chain: ViewChain | Iterable[ViewOp], *,
                               functional: bool = False) -> None:
    """Assert that a chain of view ops does here what it does in PyTorch, op by op.

    ``x``'s storage is copied into a ``torch.Tensor`` and viewed with ``torch.as_strided``
    through ``x``'s layout; each op of ``chain`` then runs on both sides. After every op the
    results must agree: both refused (PyTorch's ``RuntimeError``, ``IndexError``,
    ``ValueError`` or ``TypeError`` against a :class:`functional_strides.LayoutError`, an
    ``IndexError`` on both sides when PyTorch raises one; the chain then goes on from the
    array before the op), or the same ``size()``, ``stride()``, ``storage_offset()`` (in
    elements), ``is_contiguous()``, values, and whether the result shares the input's storage
    (a view, not a copy). Deprecation warnings of ``x.T`` and ``x.mT`` are silenced on both
    sides.

    Args:
      x: a concrete :class:`functional_strides.StridedArray` (a dtype PyTorch has).
      chain: a :class:`ViewChain` (from :func:`view_chains`) or an iterable of :class:`ViewOp`.
      functional: call the module-level functions (``fs.permute(x, ...)``) instead of the
        methods.
    Returns:
      None.
    Raises:
      AssertionError: a step differs; the message gives the chain up to that step as code
        (``x.permute((1, 0)).view((6,))``), the layout it started from and what differs.
      ImportError: PyTorch is not installed.
    Example:
      >>> import jax.numpy as jnp
      >>> import functional_strides as fs
      >>> import functional_strides.testing as fst
      >>> x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
      >>> chain = fst.ViewChain((fst.ViewOp("t"), fst.ViewOp("view", ((6,),))))
      >>> fst.assert_chain_matches_torch(x, chain)  # both refuse the view of the transpose

    Semantics: the ``torch.Tensor`` view methods, applied to ``torch.as_strided(storage,
    size, stride, storage_offset)``."""
    ops = tuple(chain.ops if isinstance(chain, ViewChain) else chain)
    t, ours = torch_twin(x), x
    for k, op in enumerate(ops):
        what = f"{ViewChain(ops[:k + 1])} from x of layout {x.layout}"
        t_out, out = _step(op, t, ours, functional, what)
        if t_out is None:
            continue
        t, ours = op.follow(t_out), op.follow(out)
        if t is None:
            return

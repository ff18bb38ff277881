"""The library's tests draw from the public strategies of :mod:`functional_strides.testing`.

This module re-exports them under the names the tests use, with the pieces the library's own
tests need beyond the public ones (the per-op table, the layout-level application of an op,
argument drawers), all defined once, in ``functional_strides/_src/testing/strategies.py``.
"""

from __future__ import annotations

from functional_strides._src.testing.strategies import (
    OP_NAMES,
    OPS,
    OpSpec,
    ViewChain,
    ViewOp,
    apply_to_layout,
    expand_shapes,
    getitem_keys,
    layouts,
    op_chains,
    shapes,
    sliced_permuted_expanded,
    storage_for,
    strided_arrays,
    view_chains,
    view_ops,
    view_shapes,
)

#: The library's tests' names for :class:`ViewOp` and :func:`view_ops`.
Op = ViewOp
ops = view_ops

__all__ = [
    "OPS",
    "OP_NAMES",
    "Op",
    "OpSpec",
    "ViewChain",
    "ViewOp",
    "apply_to_layout",
    "expand_shapes",
    "getitem_keys",
    "layouts",
    "op_chains",
    "ops",
    "shapes",
    "sliced_permuted_expanded",
    "storage_for",
    "strided_arrays",
    "view_chains",
    "view_ops",
    "view_shapes",
]

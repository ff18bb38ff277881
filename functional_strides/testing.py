"""Tools for testing code that uses views: hypothesis strategies and assertions.

* Strategies (hypothesis): :func:`layouts` draws :class:`functional_strides.Layout` records
  (ranks 0 and up, size-0 and size-1 dims, permuted, sliced, stride-0 and overlapping strides,
  offsets); :func:`strided_arrays` draws :class:`functional_strides.StridedArray` views over
  storages they fit, whose values name their storage index; :func:`view_chains` draws chains
  of view ops for a given array, each printing as the PyTorch call it is
  (:class:`ViewChain`, :class:`ViewOp`; :func:`view_ops` draws one op).
* Assertions, raising ``AssertionError``: :func:`assert_views_equal` (values, and layouts),
  :func:`assert_matches_oracle` (the values equal the NumPy oracle's reading of the storage),
  and, with PyTorch installed, :func:`assert_chain_matches_torch` (a chain of view ops against
  PyTorch: shapes, strides, offsets, values and refusals).

Needs hypothesis (``pip install 'functional_strides[testing]'``); importing this module
without it raises an ``ImportError`` that says so. ``import functional_strides`` never
imports it. The guide "Testing code that uses views" shows them in chex and pytest tests.
"""

from ._src.testing.assertions import assert_matches_oracle as assert_matches_oracle
from ._src.testing.assertions import assert_views_equal as assert_views_equal
from ._src.testing.strategies import OP_NAMES as OP_NAMES
from ._src.testing.strategies import ViewChain as ViewChain
from ._src.testing.strategies import ViewOp as ViewOp
from ._src.testing.strategies import layouts as layouts
from ._src.testing.strategies import strided_arrays as strided_arrays
from ._src.testing.strategies import view_chains as view_chains
from ._src.testing.strategies import view_ops as view_ops
from ._src.testing.torch_parity import assert_chain_matches_torch as assert_chain_matches_torch

__all__ = [
    "OP_NAMES",
    "ViewChain",
    "ViewOp",
    "assert_chain_matches_torch",
    "assert_matches_oracle",
    "assert_views_equal",
    "layouts",
    "strided_arrays",
    "view_chains",
    "view_ops",
]

"""Reference semantics in pure NumPy, written from the definitions (no ``jax`` import).

A layout ``(shape, strides, offset)`` reads ``out[i_0..i_k] = storage[offset + sum_d i_d *
strides[d]]`` (strides in elements). Tests compare every JAX result against these
functions, which enumerate indices explicitly and share no code with the lowering.
"""

from ._src.oracle import element_indices as element_indices
from ._src.oracle import has_internal_overlap as has_internal_overlap
from ._src.oracle import materialize as materialize
from ._src.oracle import overlaps as overlaps
from ._src.oracle import scatter as scatter

__all__ = [
    "element_indices",
    "has_internal_overlap",
    "materialize",
    "overlaps",
    "scatter",
]

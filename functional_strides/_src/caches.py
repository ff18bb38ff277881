"""The package's caches, and the one call that empties them."""

from __future__ import annotations

from .core import canonical as _canonical
from .core.overlap import overlap as _overlap
from .lowering import refs as _refs


def clear_caches() -> None:
    """Forget every cached canonical form, strided box, window split and self-overlap answer,
    and the compiled programs of eager writes through views of a ``jax.Ref``.

    Layouts are immutable, so these caches never hold a stale answer; clearing them only
    matters to measure the cold cost of a query, or to release their memory. XLA's other
    compiled programs are JAX's to clear (``jax.clear_caches()``).

    Returns:
      ``None``.
    Raises:
      Nothing.
    Example:
      >>> fs.has_internal_overlap(fs.Layout((3, 2), (1, 1)))
      True
      >>> fs.clear_caches()

    Semantics: ``jax.clear_caches()`` for this package's own caches."""
    for cached in (_canonical._canonicalize_cached, _canonical.box, _canonical.split_windows,
                   _overlap._internal_witness):
        cached.cache_clear()
    _refs.clear_compiled()

"""The package's caches, and the one call that empties them."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

from .core import canonical as _canonical
from .core.overlap import overlap as _overlap
from .lowering import programs as _programs
from .lowering import refs as _refs


def clear_caches() -> None:
    """Forget every cached canonical form, strided box, window split and self-overlap answer,
    and drop every compiled program the package holds (the compiled programs of eager writes
    through views of a ``jax.Ref`` too).

    Layouts are immutable, so these caches never hold a stale answer; clearing them only
    matters to measure the cold cost of a query, or to release their memory. The compiled
    programs of eager reads and writes (outside ``jit``) are held in one least-recently-used
    cache of at most ``PROGRAM_CACHE_SIZE`` (256) programs, so their memory stays bounded
    however many shapes are read; this call drops them all, and their executables with them
    (JAX's own caches key them weakly by the program). On Linux with glibc the memory so
    freed is then handed back to the system (``malloc_trim``), so that the process's resident
    size drops. Programs compiled by the caller's ``jax.jit`` are JAX's to clear
    (``jax.clear_caches()``).

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
                   _overlap._internal_witness, _overlap._bounded_internal):
        cached.cache_clear()
    _refs.clear_compiled()
    _programs.PROGRAMS.clear()
    _return_freed_memory()


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or ``None`` (another platform or C library)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def _return_freed_memory() -> None:
    """Hand the allocator's free memory back to the system where glibc can (a freed executable
    otherwise stays in the process's heap, reused but counted in its resident size)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)

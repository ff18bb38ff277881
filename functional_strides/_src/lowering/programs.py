"""The package's compiled programs outside ``jit``: one least-recently-used cache of bounded size.

Eager use (concrete arrays, outside a user's ``jit``) runs compiled programs: a read or a
write compiled once per output shape, storage shape and dtype (``reads.py``, ``writes.py``),
a forced method once per layout, the sharded programs once per layout and plan. A module-level
``jax.jit`` keeps every executable it ever compiled, and JAX's own caches keep many (up to
thousands per function), so a program that meets many distinct shapes grows without bound;
``jax.clear_caches()`` does not reach them all. Here every such program is its own
``jax.jit`` of the body with its static arguments bound, made for one signature (static
arguments, and shape, dtype, weak type and placement of each array argument), and held only by
:data:`PROGRAMS`: at most :data:`PROGRAM_CACHE_SIZE` of them, the least recently used dropped
first. A dropped program is garbage: JAX's caches key its executable by the function (weakly),
so its memory goes with it. ``fs.clear_caches()`` drops them all.

The shape-dependent JAX operations the package runs outside ``jit`` on its own (the ``reshape``
of ``from_array`` and ``contiguous()``, the ``broadcast_to`` of a written value) go through the
same cache (:func:`reshape`, :func:`broadcast_to`): run eagerly, each would be compiled by
JAX once per shape and kept in JAX's dispatch caches.

Inside a trace (``jit``, ``vmap``, ``grad``) nothing is cached here: the caller's trace takes
the operations, and its program is the caller's.
"""

from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Callable, Hashable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..core.layout import is_traced

__all__ = ["PROGRAMS", "PROGRAM_CACHE_SIZE", "ProgramCache", "broadcast_to", "cached", "reshape"]

#: Compiled programs the package holds at most (each one executable); past it the least
#: recently used is dropped and compiles again when next needed.
PROGRAM_CACHE_SIZE = 256


class ProgramCache:
    """A thread-safe LRU mapping from a hashable key to a program (a ``jax.jit`` function).

    Args:
      maxsize: programs held at most (>= 1).
    Example:
      >>> cache = ProgramCache(2)
      >>> [cache.get(k, lambda k=k: str(k)) for k in (1, 2, 1, 3)]
      ['1', '2', '1', '3']
      >>> sorted(cache.keys()), len(cache)
      ([1, 3], 2)
    """

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._entries: collections.OrderedDict[Hashable, Any] = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The program under ``key``; ``build()`` makes it when absent (a cheap wrapper: the
        compile happens at its first call), evicting the least recently used past ``maxsize``."""
        with self._lock:
            program = self._entries.get(key)
            if program is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return program
            self.misses += 1
            program = self._entries[key] = build()
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
            return program

    def clear(self) -> None:
        """Drop every program (their executables are freed with them)."""
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._entries)

    def count(self, name: str) -> int:
        """Programs held whose key starts with ``name`` (one decorated function's)."""
        with self._lock:
            return sum(1 for key in self._entries if isinstance(key, tuple) and key and key[0] == name)

    def __len__(self) -> int:
        return len(self._entries)


#: The one cache of the package's compiled programs (``fs.clear_caches()`` empties it).
PROGRAMS = ProgramCache(PROGRAM_CACHE_SIZE)


_CONCRETE_ARRAY_TYPES: set[type] = set()  # the jax.Array classes met, not tracers (checked once each)


def _signature(value: Any) -> Hashable:
    """What ``jax.jit`` compiles a new executable for, of one positional argument (checked by
    class first: it runs on every eager call)."""
    cls = value.__class__
    if cls in _CONCRETE_ARRAY_TYPES:
        return value.shape, value.dtype, value.weak_type, value.sharding
    if cls is np.ndarray or isinstance(value, np.generic):
        return value.shape, value.dtype
    if isinstance(value, jax.Array) and not is_traced(value):
        _CONCRETE_ARRAY_TYPES.add(cls)
        return value.shape, value.dtype, value.weak_type, value.sharding
    return jax.typeof(value)


def cached(*, static_argnames: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``functools.partial(jax.jit, static_argnames=...)`` with its executables in :data:`PROGRAMS`.

    The decorated function takes its arrays positionally and its static arguments (the
    ``static_argnames``, hashable) by keyword; each distinct signature gets its own ``jax.jit``
    of the body with the static arguments bound, held by the cache alone.

    Example:
      >>> @cached(static_argnames=("shape",))
      ... def zeros_like_shape(x, *, shape):
      ...     return jnp.zeros(shape, x.dtype)
      >>> zeros_like_shape(jnp.ones(2), shape=(3,)).tolist()
      [0.0, 0.0, 0.0]
    """
    def decorate(body: Callable[..., Any]) -> Callable[..., Any]:
        name = body.__qualname__

        def program(args: tuple[Any, ...], statics: dict[str, Any]) -> Any:
            key = (name, tuple(statics.items()), tuple(map(_signature, args)))
            return PROGRAMS.get(key, lambda: jax.jit(functools.partial(body, **statics)))

        @functools.wraps(body)
        def run(*args: Any, **statics: Any) -> Any:
            return program(args, statics)(*args)

        # as on a jax.jit function: the executables held (here one per program) and the lowering
        run._cache_size = lambda: PROGRAMS.count(name)  # type: ignore[attr-defined]
        run.lower = lambda *args, **statics: program(args, statics).lower(*args)  # type: ignore[attr-defined]
        run.static_argnames = static_argnames  # type: ignore[attr-defined]
        return run

    return decorate


@cached(static_argnames=("shape",))
def _reshape(x: jax.Array, *, shape: tuple[int, ...]) -> jax.Array:
    return x.reshape(shape)


@cached(static_argnames=("shape",))
def _broadcast(x: jax.Array, *, shape: tuple[int, ...]) -> jax.Array:
    return jnp.broadcast_to(x, shape)


def reshape(x: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """``x.reshape(shape)`` (``shape`` of non-negative extents with ``x.size`` elements):
    ``x`` itself when the shape is already ``shape``, a cached program for a concrete array,
    ``jnp``'s reshape inside a trace."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if is_traced(x) or not isinstance(x, jax.Array):
        return jnp.reshape(x, shape)
    return _reshape(x, shape=shape)


def broadcast_to(x: Any, shape: tuple[int, ...]) -> jax.Array:
    """``jnp.broadcast_to(x, shape)`` (``x`` an array or a scalar): a cached program for a
    concrete array whose shape differs, ``jnp`` otherwise.

    Raises:
      ValueError: ``x``'s shape does not broadcast to ``shape`` (as ``jnp.broadcast_to``)."""
    shape = tuple(shape)
    if is_traced(x) or not isinstance(x, jax.Array) or x.shape == shape:
        return jnp.broadcast_to(x, shape)
    if np.broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"Incompatible shapes for broadcasting: {x.shape} and requested shape {shape}")
    return _broadcast(x, shape=shape)

"""The library's run-time switches, ``fs.config``: whether its compiled parts run, and how
much work an overlap query may take.

Two options, each a bool, on by default where the compiled part is built:

* ``native_copy`` -- the C++ strided copy and write on XLA:CPU (``_src/native/``): the
  ``"strided_copy"`` read and write paths. Off, every read and write is XLA's own ops, as on
  other platforms.
* ``native_overlap`` -- the C overlap search (``_src/core/overlap/_dfs_native.c``). Off, the
  same search runs in Python (the same answers, slower).

And two integers:

* ``overlap_max_work`` -- the work an overlap query takes by default (``fs.overlaps``,
  ``fs.has_internal_overlap``, ``fs.internal_overlap_witness``, ``fs.overlap_witness``, the
  ``Layout`` methods) and the bound of the library's own checks (the overlap check of every
  write, ``fs.explain``, the command line): ``10**6`` units (a step of a depth-first search, a
  candidate of an enumeration; milliseconds compiled, about a second in Python), ``-1`` for
  exact answers whatever they cost (the problem is NP-hard). A query past it raises
  ``TooHardError`` naming this option; a write past it is planned as overlapping, which gives
  the same values either way.
* ``kernel_threads`` -- the most threads one call of the strided copy or write runs on (the
  calling thread and the tasks it hands to XLA's intra-op pool): ``0`` (the default) for as
  many as that pool has, as jaxlib's own CPU kernels take, or a cap from 1 to 64. The kernel
  reads it at every call, so it applies to programs already compiled; it is the process's
  (as ``torch.set_num_threads``): set it with ``update``, not ``using``.

The environment variable ``FUNCTIONAL_STRIDES_PURE_PYTHON`` set to a non-empty value when the
package is imported makes the two switches default to off. ``update`` changes an option for the whole
process; ``using`` changes options for the code inside a ``with`` block, in the calling
thread (and the tasks it starts with ``contextvars``) only, as ``jax``'s context managers do.

Where a switch takes effect: the paths of reads and writes are chosen when a program is
traced, so a function already jitted keeps the path it was traced with (``jax.jit`` does not
retrace when a switch changes; ``jax.clear_caches()`` or a new jitted function does); the
library's own programs for eager calls take the switch as part of their cache key, so an eager
``contiguous()`` or write follows it at once.

Example:
  >>> from functional_strides._src.core.config import config
  >>> with config.using(native_copy=False):
  ...     config.native_copy
  False
  >>> sorted(config.values())
  ['kernel_threads', 'native_copy', 'native_overlap', 'overlap_max_work']
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator

from .errors import LayoutError

__all__ = ["Config", "config"]

#: Set to a non-empty value at import: every option below defaults to off.
PURE_PYTHON_ENV = "FUNCTIONAL_STRIDES_PURE_PYTHON"

#: The options and what each turns on.
OPTIONS = {
    "native_copy": "the C++ strided copy and write on XLA:CPU (the 'strided_copy' read and write paths)",
    "native_overlap": "the C overlap search (its Python twin runs otherwise: the same answers)",
    "overlap_max_work": "the work an overlap query takes by default (-1: exact, whatever it costs)",
    "kernel_threads": "the most threads one call of the strided copy or write takes (0: XLA's pool's size)",
}

#: ``overlap_max_work``'s default: units of work (about a second of the Python search at most).
OVERLAP_MAX_WORK = 10**6
#: ``kernel_threads``' largest cap (the kernel's most parts of one call).
KERNEL_MAX_THREADS = 64
_INTEGER_OPTIONS = ("overlap_max_work", "kernel_threads")
#: The options that are the process's, set with ``update`` only.
_PROCESS_OPTIONS = ("kernel_threads",)

_NO_OVERRIDES: dict[str, bool | int] = {}  # never changed: using() sets a new dict
_overrides: contextvars.ContextVar[dict[str, bool | int]] = contextvars.ContextVar(
    "functional_strides_config", default=_NO_OVERRIDES)  # noqa: B039


class Config:
    """The switches of the library's compiled parts (see the module docstring).

    Read an option as an attribute (``fs.config.native_copy``); change it for the process with
    :meth:`update`, or for a block of code with :meth:`using`. An option that is on where its
    compiled part is not built (no compiler at install time, or a stale in-place build) has no
    effect: the library then runs its XLA ops or Python code, as ``fs.explain`` reports.
    """

    def __init__(self) -> None:
        off = bool(os.environ.get(PURE_PYTHON_ENV))
        values: dict[str, bool | int] = {name: not off for name in OPTIONS if name not in _INTEGER_OPTIONS}
        values["overlap_max_work"] = OVERLAP_MAX_WORK
        values["kernel_threads"] = 0
        self._values = values
        # called with the new value when update() sets an option (the kernel's thread cap)
        self._on_update: dict[str, Callable[[bool | int], None]] = {}

    def __getattr__(self, name: str) -> bool | int:
        if name.startswith("_") or name not in OPTIONS:
            raise AttributeError(f"fs.config has no option {name!r} (options: {', '.join(OPTIONS)}).")
        overrides = _overrides.get()
        return overrides[name] if name in overrides else self._values[name]

    def __setattr__(self, name: str, value: object) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        raise AttributeError(f"fs.config.{name}: set options with fs.config.update({name!r}, value).")

    def values(self) -> dict[str, bool | int]:
        """Every option and its value as seen by the calling thread.

        Returns:
          A new dict ``{name: value}``.
        Example:
          >>> Config().values()["native_overlap"] in (True, False)
          True
        """
        return {name: getattr(self, name) for name in OPTIONS}

    def update(self, name: str, value: bool | int) -> None:
        """Set option ``name`` to ``value`` for the whole process (as ``jax.config.update``).

        Args:
          name: ``"native_copy"``, ``"native_overlap"``, ``"overlap_max_work"`` or
            ``"kernel_threads"``.
          value: ``True`` (run the compiled part where it is built) or ``False``; for
            ``overlap_max_work``, ``-1`` or an int >= 0; for ``kernel_threads``, ``0`` (as
            many threads as XLA's pool has) or 1 to 64.
        Raises:
          LayoutError: ``name`` is not an option, or ``value`` is not a bool.
        Example:
          >>> c = Config()
          >>> c.update("native_overlap", False)
          >>> c.native_overlap
          False

        Semantics: ``jax.config.update``. A function already jitted keeps the path it was
        traced with."""
        self._check(name, value, "update")
        self._values[name] = value
        if name in self._on_update:
            self._on_update[name](value)

    @contextlib.contextmanager
    def using(self, **values: bool | int) -> Iterator[None]:
        """Set options inside a ``with`` block, in the calling thread only; the previous values
        come back on exit, exception or not.

        Args:
          **values: options and their values, e.g. ``native_copy=False``.
        Raises:
          LayoutError: an unknown option, or a value that is not a bool (before the block runs).
        Example:
          >>> c = Config()
          >>> with c.using(native_copy=False, native_overlap=False, overlap_max_work=-1):
          ...     c.values()
          {'native_copy': False, 'native_overlap': False, 'overlap_max_work': -1, 'kernel_threads': 0}

        Semantics: ``jax``'s configuration context managers (``jax.numpy_rank_promotion(...)``),
        thread-local as theirs."""
        for name, value in values.items():
            self._check(name, value, "using")
            if name in _PROCESS_OPTIONS:
                raise LayoutError(
                    f"config.using: option {name!r} is the process's, not a thread's (the kernel's parts run "
                    f"on XLA's pool, whoever called it): set it with fs.config.update({name!r}, {value!r}) "
                    f"and back with fs.config.update({name!r}, {self._values[name]!r}).")
        token = _overrides.set({**_overrides.get(), **values})
        try:
            yield
        finally:
            _overrides.reset(token)

    def __repr__(self) -> str:
        return f"fs.config({', '.join(f'{k}={v}' for k, v in self.values().items())})"

    @staticmethod
    def _check(name: str, value: object, op: str) -> None:
        if name not in OPTIONS:
            raise LayoutError(f"config.{op}: unknown option {name!r} (options: {', '.join(OPTIONS)}).")
        if name == "kernel_threads":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= KERNEL_MAX_THREADS:
                raise LayoutError(f"config.{op}: option 'kernel_threads' takes 0 (as many threads as XLA's "
                                  f"pool has) or a cap from 1 to {KERNEL_MAX_THREADS} (got {value!r}).")
            return
        if name in _INTEGER_OPTIONS:
            if isinstance(value, bool) or not isinstance(value, int) or value < -1:
                raise LayoutError(f"config.{op}: option {name!r} takes -1 (exact) or an int >= 0, a budget "
                                  f"of work units (got {value!r}).")
            return
        if value is not True and value is not False:
            raise LayoutError(f"config.{op}: option {name!r} takes True or False (got {value!r}).")


#: The library's one configuration object, ``fs.config``.
config = Config()

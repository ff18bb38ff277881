"""The library as a guest in someone else's process: forks.

**Forks.** JAX runs threads of its own once its runtime has started (the first array, compile
or device query): XLA's compiler and its intra-op pool, the PJRT client's dispatch threads. A
child of ``os.fork()`` has only the thread that forked, so in a child forked after that
point a compile, a transfer from the host and any program that XLA runs on its pool wait
forever for threads that are not there (JAX warns of this at every such fork, and documents
``fork`` as unsafe). The library's own kernel holds no thread and no lock between calls, and
in a forked child runs on the calling thread alone; but nearly everything around it would
hang. So the library records such a fork (``os.register_at_fork``) and its entry points that
would run JAX (``materialize``, ``write`` and the methods built on them, ``from_numpy``,
``from_torch``) raise :class:`ForkError` in the child at once, naming the start methods that
work: ``spawn`` and ``forkserver`` (``multiprocessing.get_context("spawn")``,
``torch.utils.data.DataLoader(..., multiprocessing_context="spawn")``). A child forked before
JAX's runtime started (``backends_are_initialized()`` false in the parent) starts its own, and
is not refused; nor is anything that only computes layouts (``fs.views``, ``fs.Layout``).
"""

from __future__ import annotations

import os

from ..core.errors import ForkError

__all__ = ["ForkError", "check_not_forked", "forked"]

_forked_after_start = False


def _after_fork_in_child() -> None:
    global _forked_after_start
    try:
        from jax._src import xla_bridge
    except ImportError:  # a JAX without it: assume its runtime had started
        _forked_after_start = True
        return
    # the parent's state, copied into the child with its memory
    _forked_after_start = _forked_after_start or xla_bridge.backends_are_initialized()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def forked() -> bool:
    """Whether this process is a child of ``os.fork()`` (at any depth) from a process in which
    JAX's runtime had started."""
    return _forked_after_start


def check_not_forked(op: str) -> None:
    """Raise :class:`ForkError` for ``op`` when :func:`forked`.

    Raises:
      ForkError: this process was forked after JAX's runtime started in its parent."""
    if _forked_after_start:
        raise ForkError(
            f"{op}: this process is a child of os.fork() from a process in which JAX had started its "
            "runtime, whose threads (compiler, intra-op pool, dispatch) are not in the child, so JAX "
            "programs, compiles and transfers here would wait for them forever. Start worker processes "
            "with the 'spawn' or 'forkserver' start method (multiprocessing.get_context('spawn'), "
            "torch.utils.data.DataLoader(..., multiprocessing_context='spawn')), or fork before JAX "
            "runs anything.")

"""The library as a guest in someone else's process: forks, and the CPUs it may use.

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

**CPUs.** The kernel splits a call over XLA's intra-op pool, whose size XLA takes from the
CPUs the process may run on (``taskset``) and raises to the number of devices it simulates
(``--xla_force_host_platform_device_count``). :func:`cpu_limit` is the cap the kernel applies
on top: the CPUs of the process's affinity mask, fewer where a cgroup's CPU quota
(``cpu.max``, a container's ``--cpus``) allows less, and 1 where XLA's flags turn its own
multi-threading off (``--xla_cpu_multi_thread_eigen=false``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from ..core.errors import ForkError

__all__ = ["ForkError", "check_not_forked", "cpu_limit", "forked"]

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


def _cgroup_cpus() -> int | None:
    """The CPUs a cgroup v2 (``cpu.max``) or v1 (``cpu.cfs_quota_us``) quota allows this
    process, rounded up; None without a quota."""
    try:
        line = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for entry in line:
        _, controllers, path = entry.split(":", 2)
        root = Path("/sys/fs/cgroup")
        if controllers == "":  # cgroup v2
            files = [(root / path.lstrip("/") / "cpu.max", None), (root / "cpu.max", None)]
        elif "cpu" in controllers.split(","):
            base, own = root / controllers, root / controllers / path.lstrip("/")
            files = [(own / "cpu.cfs_quota_us", own / "cpu.cfs_period_us"),
                     (base / "cpu.cfs_quota_us", base / "cpu.cfs_period_us")]
        else:
            continue
        for quota_file, period_file in files:
            try:
                text = quota_file.read_text().split()
                if period_file is None:
                    quota, period = text[0], text[1]
                else:
                    quota, period = text[0], period_file.read_text().split()[0]
            except (OSError, IndexError):
                continue
            if quota in ("max", "-1"):
                return None
            return max(1, math.ceil(int(quota) / int(period)))
    return None


def _xla_multi_threaded(flags: str) -> bool:
    """False where ``flags`` (XLA_FLAGS) turn XLA:CPU's multi-threaded Eigen calls off."""
    value = None
    for flag in flags.split():
        name, _, setting = flag.lstrip("-").partition("=")
        if name == "xla_cpu_multi_thread_eigen":
            value = setting.lower() not in ("false", "0")
    return value is not False


def cpu_limit() -> int:
    """The most threads one call of the kernel runs on (the calling one and the pool's).

    Returns:
      1 where ``XLA_FLAGS`` holds ``--xla_cpu_multi_thread_eigen=false``; else the CPUs in the
      process's affinity mask (``os.sched_getaffinity``, ``os.cpu_count()`` where that is
      missing), fewer where a cgroup's CPU quota allows less; between 1 and 64.
    Example:
      >>> 1 <= cpu_limit() <= 64
      True
    """
    if not _xla_multi_threaded(os.environ.get("XLA_FLAGS", "")):
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpus()
    if quota is not None:
        cpus = min(cpus, quota)
    return max(1, min(64, cpus))

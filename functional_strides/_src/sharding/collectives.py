"""What a compiled SPMD program communicates: its collective ops and their sizes, read from
the optimised HLO text (``jax.stages.Compiled.as_text()``). Sizes in bytes."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

__all__ = ["Collective", "collectives"]

_COLLECTIVE = re.compile(
    r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.+?)\s+"
    r"(all-gather|all-to-all|collective-permute|all-reduce|reduce-scatter|collective-broadcast)"
    r"(?:-start)?\((.*)$", re.M)
_ARRAY = re.compile(r"\b([a-z]+[0-9]*)\[([0-9,]*)\]")
_PAIRS = re.compile(r"source_target_pairs=\{((?:\{\d+,\d+\},?)*)\}")
_PARTITIONS = re.compile(r"num_partitions=(\d+)")
_GROUPS = re.compile(r"replica_groups=(\{(?:\{[\d,]*\},?)*\}|\[\d+,\d+\]<=)")
_MESH_GROUPS = re.compile(r"replica_groups=mesh\[([^\]]*)\][^{}]*\{([^{}]*)\}")
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
          "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}


@dataclasses.dataclass(frozen=True)
class Collective:
    """One collective op of a compiled SPMD program.

    Attributes:
      op: ``all-gather``, ``all-to-all``, ``collective-permute``, ``all-reduce``,
        ``reduce-scatter`` or ``collective-broadcast``.
      bytes: the size of its result on one device.
      moved: bytes that cross between devices in all: for ``collective-permute`` the result
        times the number of (source != target) pairs; for the others the result times
        ``D * (g - 1) / g``, with ``D`` the partition count and ``g`` the devices of a group of
        ``replica_groups`` (all ``D`` when there are none): what a device receives from the
        others in its group, summed over the devices (for ``all-reduce``, a lower bound).
    Raises:
      Nothing: a frozen record, built by :func:`collectives`.
    Example:
      >>> c = Collective("all-to-all", 16, 48)     # 16 bytes per device, 4 devices
      >>> c.op, c.moved // c.bytes
      ('all-to-all', 3)

    Semantics: one XLA HLO collective instruction, as ``jax.stages.Compiled.as_text()``
    prints it."""

    op: str
    bytes: int
    moved: int


def collectives(hlo: Any) -> list[Collective]:
    """The collective ops of a compiled SPMD program, with their sizes in bytes.

    Args:
      hlo: a ``jax.stages.Compiled`` or its ``as_text()``.
    Returns:
      A :class:`Collective` per op, in program order (``[]`` for a program without one).
    Raises:
      Nothing of its own: an ``hlo`` that is neither a string nor has ``as_text()`` raises
      ``AttributeError``; text without collectives gives ``[]``.
    Example:
      >>> collectives("num_partitions=8\\n  %cp = f32[192]{0} collective-permute(%x), "
      ...             "source_target_pairs={{0,1},{1,2}}")
      [Collective(op='collective-permute', bytes=768, moved=1536)]

    Semantics: XLA's HLO collective ops (``all-gather``, ``all-to-all``,
    ``collective-permute``, ``all-reduce``, ``reduce-scatter``, ``collective-broadcast``,
    and their ``-start`` async forms) as ``jax.stages.Compiled.as_text()`` prints them."""
    text = hlo if isinstance(hlo, str) else hlo.as_text()
    found = _PARTITIONS.search(text)
    partitions = int(found.group(1)) if found else 1
    out = []
    for result, op, rest in _COLLECTIVE.findall(text):
        arrays = _ARRAY.findall(result)
        if result.startswith("(") and op in ("collective-permute", "all-gather") and "-start(" in text:
            arrays = arrays[1:2]  # an async start returns (operand, result, ...)
        size = sum(_BYTES.get(t, 4) * int(np.prod([int(e) for e in dims.split(",") if e]))
                   for t, dims in arrays)
        if op == "collective-permute":
            pairs = _PAIRS.search(rest)
            count = sum(a != b for a, b in re.findall(r"\{(\d+),(\d+)\}", pairs.group(1))) if pairs else 0
            moved = size * count
        else:
            group = _group_size(rest, partitions)
            moved = size * partitions * (group - 1) // group
        out.append(Collective(op, int(size), int(moved)))
    return out


def _group_size(rest: str, partitions: int) -> int:
    """Devices in one replica group of a collective (``{{0,4},{1,5}}``, ``[4,2]<=[8]``, or
    ``mesh['axis_0'=2,'axis_1'=4], device_ids=(...) {'axis_1'}``: the axes of a group)."""
    found = _MESH_GROUPS.search(rest)
    if found:
        sizes = dict(re.findall(r"'([^']+)'=(\d+)", found.group(1)))
        return int(np.prod([int(sizes[a]) for a in re.findall(r"'([^']+)'", found.group(2))]))
    found = _GROUPS.search(rest)
    if not found:
        return partitions
    text = found.group(1)
    if text.startswith("["):
        return int(text[1:-3].split(",")[1])
    groups = re.findall(r"\{([\d,]*)\}", text)
    return len(groups[0].split(",")) if groups and groups[0] else partitions

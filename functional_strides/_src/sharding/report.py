"""What the reads and writes of a sharded storage communicate, compiled: the ``"sharding"``
section of :func:`functional_strides.explain`."""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import PartitionSpec as P

from ..core.layout import Layout, is_traced
from .collectives import Collective, collectives
from .plans import ShardedRead, partition, read_plan, write_plan
from .reads import _static, program
from .writes import write_program

__all__ = ["read_report"]


def _collective_line(what: str, found: list[Collective], storage: Any) -> list[str]:
    if not found:
        return [f"{what} collectives: none"]
    ops = sorted({c.op for c in found})
    counts = ", ".join(f"{sum(c.op == op for c in found)} {op}" for op in ops)
    lines = [f"{what} collectives: {counts}; {sum(c.moved for c in found)} bytes cross devices in all "
             f"(the storage holds {storage.nbytes} bytes)"]
    if any(c.op == "all-gather" for c in found):
        lines.append(f"the {what} all-gathers: some device needs elements beyond its neighbours' blocks")
    return lines


def _how(plan: ShardedRead, devices: int, rows: int) -> str:
    text = {
        "local": "each device works on its part in its own block (no communication)",
        "halo": f"each device works on its own block plus up to {max(plan.left)} elements of its left "
                f"neighbour's and {max(plan.right)} of its right neighbour's (lax.ppermute; "
                f"{plan.halo_elements} elements cross shard boundaries in all)",
        "all_to_all": "a permute of the whole storage: each device sends every other device the piece of "
                      "its block that device's part holds (one lax.all_to_all)",
        "exchange": "a permute of the whole storage: each device sends the pieces of its block to the few "
                    "devices whose parts hold them (lax.ppermute)",
        "partitioner": "JAX's SPMD partitioner partitions the single-device program"}[plan.strategy]
    if plan.padded:
        text += (f"; dim 0 ({rows} rows) does not split into {devices} equal parts and JAX shards evenly: "
                 f"it is read as {rows + plan.padded} rows, the last part shorter in the view")
    return text


def read_report(storage: Any, layout: Layout, out_sharding: Any = None) -> list[str]:
    """Lines saying how a read of a sharded storage (its values, and ``contiguous()``'s
    storage where that plan differs), and a write through the same view (``add``), are
    partitioned and what they communicate (compiled, read from the HLO: collective ops and
    the bytes that cross devices); ``[]`` for a storage that is not sharded over several
    devices.

    Args:
      storage: the storage; a 1-D ``jax.Array`` sharded over several devices is reported on.
      layout: the view (elements; a concrete offset).
      out_sharding: the read's output ``NamedSharding`` (default: :func:`default_out_sharding`).
    Returns:
      A list of ``str`` lines: the partition, the read's strategy and collectives (ops and
      bytes), then, for a non-empty view, the same for ``at[...].add`` through it.
    Raises:
      LayoutTypeError: ``out_sharding`` is not a ``NamedSharding`` (checked only for a
        sharded storage). Compiling also raises what :func:`program` raises (a view past
        the storage end: ``StorageError``).
    Example:
      >>> import jax.numpy as jnp
      >>> read_report(jnp.zeros(8), Layout((2, 2), (1, 2)))
      []

    Semantics: no PyTorch/NumPy counterpart; it reads XLA's compiled HLO
    (``jax.stages.Compiled.as_text()``, see :func:`collectives`)."""
    part = partition(storage)
    if part is None or is_traced(storage):  # a traced storage has no program to compile here
        return []
    layout = _static(layout)
    n, rows = storage.shape[0], layout.shape[0] if layout.ndim else 1
    plan = read_plan(layout, n, part, out_sharding)
    found = collectives(program(storage, layout, out_sharding).lower(storage).compile())
    dim = "replicated" if plan.out_sharding.spec == P() else \
        f"sharded as {plan.out_sharding.spec}"
    lines = [f"sharded storage: {n} elements in {part.devices} blocks of {plan.block} "
             f"over mesh axis {part.axis!r}; output {dim}"]
    lines.append(f"sharded read: {plan.strategy}: {_how(plan, part.devices, rows)}")
    lines += _collective_line("read", found, storage)
    if out_sharding is None and layout.ndim:
        flat = read_plan(layout, n, part, flat=True)
        if (flat.strategy, flat.padded) != (plan.strategy, plan.padded) or plan.dim != 0:
            found = collectives(program(storage, layout, flat=True).lower(storage).compile())
            lines.append(f"contiguous() storage: {flat.strategy}: {_how(flat, part.devices, rows)}")
            if flat.padded:
                lines.append(f"contiguous() stores {rows + flat.padded} rows (the padding after the view's "
                             f"{rows}) so that its storage splits into {part.devices} equal blocks")
            lines += _collective_line("contiguous()", found, storage)
    if layout.is_empty:
        return lines
    wplan = write_plan(layout, n, part, mode="add")
    # src as a host array or a scalar comes replicated
    src = jax.ShapeDtypeStruct(layout.shape, storage.dtype, sharding=part.sharding(P()))
    found = collectives(write_program(storage, layout, mode="add", op="add").lower(storage, src).compile())
    lines.append(f"sharded write (at[...].add): {wplan.strategy}: {_how(wplan, part.devices, rows)}")
    return lines + _collective_line("write", found, storage)

"""Reads and writes of one 1-D storage sharded across devices.

A storage of ``n`` elements with a ``NamedSharding`` over its only axis lies on ``D``
devices in blocks of ``B = n / D`` consecutive elements. A view's output is sharded along
one of its dims (the outermost one the device count divides, unless the caller passes
``out_sharding``), so output part ``d`` (``d = 0 .. D-1``) is the view narrowed to the
``d``-th slice of that dim: a layout whose storage range ``[lo_d, lo_d + span]`` moves by a
fixed step from one part to the next. When every part's range lies within its own block
and its neighbours' (the ``halo`` read), the program is a ``shard_map``: each device
receives from each neighbour (``lax.ppermute``) exactly the elements of that neighbour's
block its part needs, and reads its part from ``[left halo, block, right halo]`` with the
single-device lowering; writes run the same plan backwards (:func:`write_plan`). Parts
in their own blocks (slices and selects that stay within shards) move nothing. Any other
view is left to JAX's SPMD partitioner: the single-device lowering (strided slices,
reshapes, transposes, broadcasts) under ``jit`` with the output sharding given, which
partitions a 2-D transpose into one all-to-all; where it cannot do better it all-gathers,
and :func:`read_report` says so.

Counts: strides, offsets, blocks and halos in elements; collective sizes in bytes.
"""

from ._src.sharding.sharded import Collective as Collective
from ._src.sharding.sharded import Partition as Partition
from ._src.sharding.sharded import ShardedRead as ShardedRead
from ._src.sharding.sharded import ShardingWarning as ShardingWarning
from ._src.sharding.sharded import collectives as collectives
from ._src.sharding.sharded import default_out_sharding as default_out_sharding
from ._src.sharding.sharded import partition as partition
from ._src.sharding.sharded import program as program
from ._src.sharding.sharded import read as read
from ._src.sharding.sharded import read_plan as read_plan
from ._src.sharding.sharded import read_report as read_report
from ._src.sharding.sharded import write as write
from ._src.sharding.sharded import write_plan as write_plan
from ._src.sharding.sharded import write_program as write_program

__all__ = [
    "Collective",
    "Partition",
    "ShardedRead",
    "ShardingWarning",
    "collectives",
    "default_out_sharding",
    "partition",
    "program",
    "read",
    "read_plan",
    "read_report",
    "write",
    "write_plan",
    "write_program",
]

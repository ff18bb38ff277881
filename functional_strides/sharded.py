"""Reads and writes of one 1-D storage sharded across devices.

A storage of ``n`` elements with a ``NamedSharding`` over its only axis lies on ``D``
devices in blocks of ``B = n / D`` consecutive elements. Its sharding is read from the
array, or, inside a user's ``jit``, from its type (``jax.typeof(storage).sharding``), which
holds it on an explicit mesh (``AxisType.Explicit``); on a mesh of ``Auto`` axes the type
cannot say, and a :class:`ShardingWarning` says so once per mesh (pass ``out_sharding`` to
name the axis). A view's output is cut into one part per device: the slices of one dim (the
outermost one the device count divides, unless ``out_sharding`` says otherwise), or, for
``contiguous()``'s storage, the flat blocks of the row-major output. When every part lies
within its own block and its neighbours' (``"local"``/``"halo"``), the program is a
``shard_map`` in which each device receives from each neighbour (``lax.ppermute``) exactly
the elements its part needs and reads it with the single-device lowering; a permute of the
whole storage (a transpose, heads first) sends each device's pieces to their parts by one
``lax.all_to_all`` (``"all_to_all"``) or ``ppermute`` rounds (``"exchange"``); a dim 0 the
device count does not divide is padded to a multiple of it (the last part shorter in the
view). Writes run the same plans backwards (:func:`write_plan`). Any other view is left to
JAX's SPMD partitioner; where it all-gathers, :func:`read_report` says so. Outputs carry
their sharding (a type, on an explicit mesh).

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

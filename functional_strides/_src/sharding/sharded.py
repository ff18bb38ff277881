"""The names of :mod:`functional_strides.sharded` (documented there), from the modules that
implement them: the plans (:mod:`.plans`), the reads (:mod:`.reads`), the writes
(:mod:`.writes`), the compiled report (:mod:`.report`) and the collectives of an HLO text
(:mod:`.collectives`)."""

from __future__ import annotations

from .collectives import Collective, collectives
from .plans import (
    Partition,
    ShardedRead,
    ShardingWarning,
    default_out_sharding,
    partition,
    read_plan,
    write_plan,
)
from .reads import program, read
from .report import read_report
from .writes import write, write_program

__all__ = ["Collective", "Partition", "ShardedRead", "ShardingWarning", "collectives", "default_out_sharding",
           "partition", "program", "read", "read_plan", "read_report", "write", "write_plan", "write_program"]

# The primitives register their rules and become the reads' and writes' entry points on import.
from . import primitives as primitives

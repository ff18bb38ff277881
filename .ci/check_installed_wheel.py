"""Run by .ci/run in the virtual environment the wheel was installed into, outside the checkout:
the package imports from site-packages (not from a checkout on the path), ships py.typed and
its compiled extensions (the exact-overlap search and the strided copy), both loaded."""

import sys
from pathlib import Path

import functional_strides
from functional_strides._src.core.overlap import dfs
from functional_strides._src.native import copy_kernel

where = Path(functional_strides.__file__).resolve().parent
problems = []
if "site-packages" not in where.parts:
    problems.append(f"functional_strides imports from {where}, not from the installed wheel")
if not (where / "py.typed").is_file():
    problems.append("the wheel lacks py.typed")
if dfs.compiled() is None:
    problems.append("the wheel lacks the C extension of the overlap search (_dfs_native)")
if copy_kernel.native is None:
    problems.append("the wheel lacks the C++ extension of the strided copy (_copy_native)")
if problems:
    sys.exit("error: " + "; ".join(problems))
print(f"wheel: functional_strides installed at {where}, with py.typed and both extensions")

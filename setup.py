"""Build of the optional compiled parts; the rest is in pyproject.toml.

* ``functional_strides._src.core.overlap._dfs_native`` (C): the exact-overlap search
  (``dfs.py`` beside it is the same search in Python).
* ``functional_strides._src.native._copy_native`` (C++17): the strided copy of ``contiguous()``
  and the strided write of ``.at[]`` on XLA:CPU, XLA FFI handlers, one extension built from
  ``handlers.cc`` and the headers beside it (``_src/native/README.md``); it compiles against
  the FFI headers that jaxlib ships (``jaxlib/include``), so jaxlib is a build requirement.

Both are optional (``optional=True``): without a compiler, or without jaxlib's headers, an
extension is skipped and the library takes its pure-Python or pure-XLA path instead."""

import importlib.util
import os

from setuptools import Extension, setup

OVERLAP = "functional_strides/_src/core/overlap"
NATIVE = "functional_strides/_src/native"
#: The parts of the strided copy included by handlers.cc: a change to any rebuilds it.
NATIVE_HEADERS = [f"{NATIVE}/{name}" for name in ("plan.h", "movers.h", "parallel.h", "pages.h")]


def _jaxlib_include() -> list[str]:
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.submodule_search_locations:
        return []
    include = os.path.join(list(spec.submodule_search_locations)[0], "include")
    return [include] if os.path.isfile(os.path.join(include, "xla", "ffi", "api", "ffi.h")) else []


_include = _jaxlib_include()
_extensions = [Extension("functional_strides._src.core.overlap._dfs_native", [f"{OVERLAP}/_dfs_native.c"],
                         extra_compile_args=["-O2"], optional=True)]
if _include:
    _extensions.append(Extension("functional_strides._src.native._copy_native", [f"{NATIVE}/handlers.cc"],
                                 include_dirs=_include, depends=NATIVE_HEADERS, language="c++",
                                 extra_compile_args=["-O3", "-std=c++17", "-fvisibility=hidden"],
                                 optional=True))

setup(ext_modules=_extensions)

"""Build of the optional C extension (the compiled overlap search); the rest is in pyproject.toml.

Without a C compiler the extension is skipped (``optional=True``) and the same search runs in
Python (functional_strides._dfs)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("functional_strides._dfs_native", ["functional_strides/_dfs_native.c"],
                             extra_compile_args=["-O2"], optional=True)])

"""The write modes: one table of what each mode combines and of the value that leaves a slot
unchanged, shared by the single-device writes (:mod:`functional_strides._src.lowering.writes`)
and the writes of a storage sharded across devices (:mod:`functional_strides._src.sharding.writes`).

A write combines the stored value ``x`` of a slot with each update ``u`` through the slot:
``"set"`` keeps ``u``, ``"add"`` ``x + u``, ``"mul"`` ``x * u``, ``"min"``/``"max"`` the
smaller/larger. On a bool storage ``"add"`` is a logical or and ``"mul"`` a logical and, as
in PyTorch (:func:`storage_mode` maps them to ``"max"`` and ``"min"``). Where a path writes
a mode's :func:`identity` into slots the view does not reach (padding, halos), the slot keeps
its value bit for bit: ``-0.0`` for a float add (``-0.0 + -0.0`` is ``-0.0``, where ``+0.0``
would turn a stored ``-0.0`` into ``+0.0``), ``1`` for a multiply, the largest or smallest
value of the dtype (``inf`` for floats, both parts for complex; the largest or lowest finite
value of a float format without infinities, such as ``float4_e2m1fn``) for min and max. Complex
numbers have no such value for a multiply (``(-0-0j) * (1+0j)`` is ``0-0j``), nor an order
that keeps NaNs for min and max: :func:`has_exact_identity` says where one exists, and the
paths that would lean on it mask the slots the view writes instead.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["COMBINE", "MODES", "combine", "has_exact_identity", "identity", "storage_mode"]

MODES = ("set", "add", "mul", "min", "max")

#: ``combine(x, u)`` per mode: the stored value ``x`` with the update ``u``.
COMBINE = {"set": lambda x, u: u, "add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}


def storage_mode(mode: str, dtype: Any) -> str:
    """The mode as the storage's dtype computes it: on bool, ``"add"`` is ``"max"`` (a
    logical or) and ``"mul"`` is ``"min"`` (a logical and), as PyTorch's ``add_``/``mul_``.

    Example:
      >>> storage_mode("add", jnp.bool_), storage_mode("add", jnp.float32)
      ('max', 'add')
    """
    if np.dtype(dtype) == np.bool_:
        return {"add": "max", "mul": "min"}.get(mode, mode)
    return mode


def identity(mode: str, dtype: Any) -> jax.Array:
    """The scalar ``e`` of ``dtype`` with ``combine(x, e) == x`` bit for bit for every ``x``
    (``mode`` as the storage computes it: see :func:`storage_mode`; ``"set"`` has none, and
    gets ``0``, for slots a mask leaves unwritten).

    Example:
      >>> [str(identity(m, jnp.float32)) for m in ("add", "mul", "min")]
      ['-0.0', '1.0', 'inf']
      >>> bool(identity("max", jnp.bool_)), complex(identity("add", jnp.complex64))
      (False, (-0-0j))
    """
    dtype = jnp.dtype(dtype)
    # bfloat16 and the float8 types are floats to jnp, not to NumPy's dtype.kind
    cplx = jnp.issubdtype(dtype, jnp.complexfloating)
    real = jnp.issubdtype(dtype, jnp.floating)
    big = {"min": 1, "max": -1}.get(mode, 0)  # used for min and max only
    if mode == "set":
        value = 0
    elif mode == "add":
        value = complex(-0.0, -0.0) if cplx else (-0.0 if real else 0)
    elif mode == "mul":
        value = 1
    elif dtype == jnp.bool_:
        value = mode == "min"
    elif jnp.issubdtype(dtype, jnp.integer):
        value = int(jnp.iinfo(dtype).max) if mode == "min" else int(jnp.iinfo(dtype).min)
    elif cplx:
        value = complex(big * np.inf, big * np.inf)
    elif np.isinf(np.asarray(np.inf, dtype).astype(np.float32)):
        value = big * np.inf
    else:  # a float format without infinities (float4_e2m1fn, float8_e4m3fn, ...): its extremes
        value = float(jnp.finfo(dtype).max) if mode == "min" else float(jnp.finfo(dtype).min)
    return jnp.asarray(value, dtype)


def has_exact_identity(mode: str, dtype: Any) -> bool:
    """Whether :func:`identity` leaves every value of ``dtype`` bit for bit under ``mode``
    (not for ``"set"``, nor a complex multiply, min or max).

    Example:
      >>> has_exact_identity("mul", jnp.float32), has_exact_identity("mul", jnp.complex64)
      (True, False)
    """
    if mode == "set":
        return False
    return mode == "add" or not jnp.issubdtype(jnp.dtype(dtype), jnp.complexfloating)


def combine(mode: str, x: jax.Array, u: jax.Array) -> jax.Array:
    """``x`` combined with the updates ``u`` (same shape and dtype) as ``mode`` says."""
    return COMBINE[mode](x, u)

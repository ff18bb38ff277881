"""Offset arithmetic on traced values, for the view algebra.

A view op given a traced index (``x[i]``, ``x.select(d, i)``, ``x.narrow(d, i, n)`` with ``i``
a tracer) or applied to a view whose offset is traced (any view passed into ``jit``) computes
its new offset here: the index is clamped into range, as ``jnp`` clamps traced indices, in an
integer width that cannot wrap. :mod:`functional_strides.views` calls these through the hook
this module installs, so that the view algebra itself never imports jax.
"""

from __future__ import annotations

import sys
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from ..core import layout as _layout
from ..core.errors import StorageError
from ..core.layout import Layout, is_static_offset
from ..core.views import common as _view_args

__all__ = ["dynamic_offset", "shifted_offset"]

_INT32_MAX = 2**31 - 1


def _x64_enabled() -> bool:
    return bool(jax.config.read("jax_enable_x64"))


def _offset_dtype(op: str, layout: Layout, reach: int) -> str:
    """Integer dtype for ``layout.offset + t`` with ``|t| <= reach`` (a traced part).

    int32 when every value fits; int64 when it may not and ``jax_enable_x64`` is on (always
    for a traced offset under x64, whose value cannot be bounded at trace time). Without
    x64 a traced int32 offset stays int32: a storage JAX can index then has at most 2^31
    elements, and a sum past int32 wraps to a negative offset, which reads and writes as out
    of range (the documented behaviour of a traced offset past the storage).

    Raises:
      StorageError: x64 is off and a static part of the sum exceeds int32."""
    base = layout.offset
    if is_static_offset(base):
        need, traced_wide = abs(base) + reach, False
    else:
        need, traced_wide = reach, np.dtype(base.dtype).itemsize > 4 or _x64_enabled()
    if need <= _INT32_MAX and not traced_wide:
        return "int32"
    if _x64_enabled():
        return "int64"
    start = f"offset {base} + " if is_static_offset(base) else ""
    raise StorageError(
        f"{op}: a traced index or offset into layout {layout} gives storage offsets up to "
        f"{start}{reach}, past int32's {_INT32_MAX}, and 64-bit integers are disabled in JAX. Enable "
        "64-bit indices with jax.config.update('jax_enable_x64', True)."
    )


def _clamped_index(value: Any, n: int, high: int, dtype: str) -> Any:
    """A traced index into a dim of extent ``n`` (negative counts from the end) clamped into
    ``[0, high]`` (as ``jnp`` clamps traced indices), as ``dtype``, which holds ``high``.

    Computed in the index's own width (int32 at least, ``dtype`` if wider) whatever ``n``:
    for ``i < 0``, ``clip(i + n, 0, high) == clip(i, -n, -m) + m + high`` with
    ``m = n - high``, whose bounds can be cut to the width's range."""
    if value.dtype.kind == "u":  # no negative index: min(value, high)
        cap = min(high, int(np.iinfo(value.dtype).max))
        return jnp.minimum(value, cap).astype(dtype)
    if value.dtype.itemsize < max(4, np.dtype(dtype).itemsize):
        value = value.astype(dtype if np.dtype(dtype).itemsize > 4 else "int32")
    info = np.iinfo(value.dtype)
    m = n - high
    if m > info.max:  # i + n > high for every representable i < 0
        wrapped = high
    else:
        wrapped = value.clip(max(-n, int(info.min)), -m) + m + high
    return jnp.where(value < 0, wrapped, value.clip(0, high)).astype(dtype)


def dynamic_offset(op: str, layout: Layout, d: int, index: Any, high: int) -> Any:
    """``layout.offset + clamp(index) * strides[d]`` for a traced ``index`` into dim ``d``
    (negative wraps; clamped into ``[0, high]``), in the width :func:`_offset_dtype` picks.
    A stride-0 dim (or ``high == 0``) leaves the offset as it is, whatever the extent.

    Raises:
      StorageError: the offsets exceed int32 and x64 is off."""
    stride = layout.strides[d]
    if stride == 0 or high <= 0:
        return layout.offset
    dtype = _offset_dtype(op, layout, high * abs(stride))
    step = _clamped_index(index, layout.shape[d], high, dtype) * stride
    return _add_offset(layout.offset, step, dtype)


def _add_offset(base: Any, delta: Any, dtype: str) -> Any:
    if is_static_offset(base):
        return delta + base if base else delta
    return base.astype(dtype) + delta if base.dtype != np.dtype(dtype) else base + delta


def shifted_offset(op: str, layout: Layout, delta: int) -> Any:
    """``layout.offset + delta`` for a static ``delta``: exact for a Python-int offset; for a
    traced offset in the width :func:`_offset_dtype` picks.

    Raises:
      StorageError: a traced offset, ``|delta|`` past int32 and x64 off."""
    base = layout.offset
    if is_static_offset(base) or delta == 0:
        return base + delta
    return _add_offset(base, delta, _offset_dtype(op, layout, abs(delta)))


_view_args._traced_offsets = sys.modules[__name__]  # the hook the view algebra calls
_layout._TRACER_TYPES = (jax.core.Tracer,)  # what layout.is_traced recognises

"""PyTorch's dtype rules for in-place ops: type promotion, the output cast check, scalar conversion.

An in-place op of PyTorch (``x.add_(y)``) computes in the *result type* of its operands and
casts the result to ``x``'s dtype, which it refuses where the result type's category is
higher (``int64.add_(1.5)``: "result type Float can't be cast to the desired output type
Long"). The result type follows ``c10``'s ``ResultTypeState``: dimensioned tensors, zero-dim
tensors and Python numbers are promoted in three groups, and a lower group counts only where
its category (bool < integer < floating < complex) is higher than the groups above
(``int8 + 200`` stays ``int8``; ``int32 + 1.5`` is ``float32``, the default dtype). A Python
number written into a storage by ``fill_`` or ``x[idx] = v`` is checked for overflow first
(``c10::checked_convert``: "value cannot be converted to type int8_t without overflow"); one
taking part in arithmetic is cast, wrapping as C++ casts do (``uint8.add_(-1)`` adds 255).

NumPy dtypes throughout (``jnp.bfloat16`` included); no ``jax`` import.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from ..core.errors import LayoutError, LayoutTypeError

__all__ = ["WRAPPED", "can_cast", "category", "checked_scalar", "promote", "result_type", "torch_name",
           "wrapped_scalar"]

#: ``torch.dtype`` names as PyTorch's messages spell them (``c10::ScalarType``).
_SCALAR_TYPE = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                "int64": "Long", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
#: The C++ type in PyTorch's overflow message ("value cannot be converted to type int8_t ...").
_CPP_TYPE = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
             "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
             "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
#: The ``caffe2::TypeMeta`` names ``clamp_`` with Python-number bounds prints ("long int").
_TYPE_META = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
              "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "float32": "float", "float64": "double"}
#: The dtype a Python number takes part in promotion with (a "wrapped number": int64, and the
#: default dtypes float32 and complex64).
WRAPPED = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float32),
           complex: np.dtype(np.complex64)}
_UNPROMOTED = ("uint16", "uint32", "uint64")  # PyTorch promotes these with nothing but bool


def torch_name(dtype: Any, style: str = "scalar_type") -> str:
    """PyTorch's name of ``dtype`` in its messages: ``"scalar_type"`` (``Long``), ``"cpp"``
    (``int64_t``) or ``"type_meta"`` (``long int``); the NumPy name where PyTorch has none.

    Example:
      >>> torch_name(np.int64), torch_name(np.int8, "cpp"), torch_name(np.int64, "type_meta")
      ('Long', 'int8_t', 'long int')
    """
    table = {"scalar_type": _SCALAR_TYPE, "cpp": _CPP_TYPE, "type_meta": _TYPE_META}[style]
    name = np.dtype(dtype).name
    return table.get(name) or name


def category(dtype: Any) -> int:
    """0 bool, 1 integer (signed or unsigned), 2 floating (``bfloat16``, float8 included),
    3 complex: PyTorch's order of type categories.

    Example:
      >>> [category(d) for d in (np.bool_, np.uint8, np.float16, np.complex64)]
      [0, 1, 2, 3]
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return 0
    if dtype.kind in "iu":
        return 1
    if dtype.kind == "c":
        return 3
    return 2  # "f", and "V" for bfloat16 and the float8 types (ml_dtypes)


def _is_reduced_float(dtype: np.dtype) -> bool:
    return category(dtype) == 2 and dtype.kind != "f"


def promote(a: Any, b: Any) -> np.dtype | None:
    """``torch.promote_types(a, b)``; ``None`` stands for no operand yet.

    Raises:
      LayoutTypeError: types PyTorch does not promote with each other (uint16/32/64 or a
        float8 type with another type than itself and bool).
    Example:
      >>> promote(np.uint8, np.int8), promote(np.int64, np.float16), promote(np.float64, np.complex64)
      (dtype('int16'), dtype('float16'), dtype('complex128'))
    """
    if a is None or b is None:
        return None if a is None and b is None else np.dtype(b if a is None else a)
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = category(a), category(b)
    if ca == 0 or cb == 0:
        return b if ca == 0 else a
    odd = [d for d in (a, b) if d.name in _UNPROMOTED or (_is_reduced_float(d) and d.name != "bfloat16")]
    if odd:
        raise LayoutTypeError(f"Promotion of {torch_name(a)} and {torch_name(b)} is not supported "
                              "(PyTorch promotes uint16, uint32, uint64 and the float8 types with no other "
                              "type); cast one operand first.")
    if ca == cb == 1:
        return np.promote_types(a, b)  # PyTorch's integer promotions are NumPy's for these types
    if ca != cb:
        low, high = (a, b) if ca < cb else (b, a)
        if category(high) == 3 and category(low) == 2 and low.itemsize > high.itemsize // 2:
            return np.dtype(np.complex128)  # a wider float widens the complex type
        return high
    if category(a) == 2 and {a.name, b.name} == {"float16", "bfloat16"}:
        return np.dtype(np.float32)
    return a if a.itemsize >= b.itemsize else b


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """``c10::combine_categories``: a lower group of operands counts where its category is
    higher than the higher group's."""
    if higher is None:
        return lower
    if category(higher) == 3:
        return higher
    if lower is not None and category(lower) == 3:
        if category(higher) == 2:  # a float group keeps its precision: complex of it
            return promote(higher, np.complex64)
        return lower
    if category(higher) == 2:
        return higher
    if category(higher) == 0 or (lower is not None and category(lower) == 2):
        return promote(higher, lower)
    return higher


def result_type(operands: list[tuple[Any, int]]) -> np.dtype:
    """PyTorch's result type of operands given as ``(dtype, group)``, group 0 for a tensor
    of rank >= 1, 1 for a rank-0 tensor, 2 for a Python number (its dtype: :data:`WRAPPED`).

    Example:
      >>> result_type([(np.int8, 0), (np.int64, 2)]), result_type([(np.int32, 0), (np.float32, 2)])
      (dtype('int8'), dtype('float32'))
      >>> result_type([(np.float16, 0), (np.float32, 1)]), result_type([(np.float16, 0), (np.float32, 0)])
      (dtype('float16'), dtype('float32'))
    """
    groups: list[np.dtype | None] = [None, None, None]
    for dtype, group in operands:
        groups[group] = promote(groups[group], dtype)
    out = _combine(groups[0], _combine(groups[1], groups[2]))
    assert out is not None, "result_type of no operands"
    return out


def can_cast(source: Any, target: Any) -> bool:
    """``c10::canCast``: no complex into a real type, no floating type into an integer one,
    nothing but bool into bool.

    Example:
      >>> can_cast(np.float64, np.float16), can_cast(np.float32, np.int64), can_cast(np.int64, np.bool_)
      (True, False, False)
    """
    cs, ct = category(source), category(target)
    return not ((cs == 3 and ct != 3) or (cs == 2 and ct <= 1) or (cs != 0 and ct == 0))


def cast_error(op: str, result: Any, target: Any, style: str = "scalar_type", where: str = "") -> LayoutError:
    """PyTorch's refusal of an in-place result it cannot cast to the written dtype."""
    return LayoutError(
        f"{op}: result type {torch_name(result)} can't be cast to the desired output type "
        f"{torch_name(target, style)}{where}. PyTorch refuses in-place results of a higher type "
        f"category than the written view's dtype; compute out of place (jnp) and copy_ the result, "
        "which casts.")


def _int_range(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _check_python_int(op: str, value: int) -> None:
    if not -(2**63) <= value < 2**64:
        raise LayoutError(f"{op}: the Python int {value} fits no 64-bit integer (PyTorch: int too big "
                          "to convert); pass a smaller number.")


def wrapped_scalar(op: str, value: Any, dtype: Any) -> np.ndarray:
    """A Python number as a rank-0 array of ``dtype``, cast as PyTorch casts a number taking
    part in arithmetic: integers wrap (``int8``: 200 -> -56), floats round (``float16``: 1e6
    -> inf), bool is ``value != 0``.

    Raises:
      LayoutError: an int outside ``[-2**63, 2**64)`` (PyTorch: "int too big to convert").
    Example:
      >>> wrapped_scalar("add_", 200, np.int8).item(), wrapped_scalar("add_", -1, np.uint8).item()
      (-56, 255)
    """
    dtype = np.dtype(dtype)
    kind = category(dtype)
    if isinstance(value, int) and not isinstance(value, bool):
        _check_python_int(op, value)
    if kind == 0:
        return np.asarray(bool(value))
    if kind == 1:
        bits = dtype.itemsize * 8
        v = int(value) % 2**bits
        if dtype.kind == "i" and v >= 2 ** (bits - 1):
            v -= 2**bits
        return np.asarray(v, dtype)
    with np.errstate(over="ignore"):
        return np.asarray(complex(value) if kind == 3 else float(value.real if isinstance(value, complex)
                                                                  else value), dtype)


def _overflow(op: str, value: Any, name: str, dtype: np.dtype) -> LayoutError:
    return LayoutError(f"{op}: value cannot be converted to type {name} without overflow (got {value!r}). "
                       f"The view's dtype is {dtype.name}: PyTorch checks Python and NumPy numbers written "
                       "into a view against its dtype's range; pass a number in range, or a rank-0 array, "
                       "which is cast without the check.")


def _float_max(dtype: np.dtype) -> float:
    if dtype.name == "bfloat16":
        return float.fromhex("0x1.fep127")
    return float(np.finfo(dtype).max)


def checked_scalar(op: str, value: Any, dtype: Any, *, item: bool = False) -> np.ndarray:
    """A Python number as a rank-0 array of ``dtype``, refused where PyTorch's
    ``c10::checked_convert`` finds it out of range: what ``fill_`` and ``x[idx] = v`` write.

    Integers must lie in the dtype's range (an unsigned dtype also takes negative numbers down
    to ``-max``, which wrap: ``uint8``: -1 -> 255); floats written into an integer dtype must be
    finite and in its range before truncation toward zero; a finite float must lie in a floating
    dtype's range (infinities and NaN pass); a complex number needs a zero imaginary part
    unless the dtype is complex; bool takes anything (``value != 0``). ``item=True`` is
    ``x[idx] = v``'s rule, which converts into ``float16`` and ``bfloat16`` through ``double``
    (1e6 becomes inf there instead of being refused).

    Raises:
      LayoutError: the number does not fit ("value cannot be converted to type int8_t without
        overflow"), or is an int outside ``[-2**63, 2**64)``.
    Example:
      >>> checked_scalar("fill_", 2.7, np.int32).item(), checked_scalar("fill_", -1, np.uint8).item()
      (2, 255)
      >>> checked_scalar("fill_", 300, np.int8)
      Traceback (most recent call last):
      ...
      functional_strides.LayoutError: fill_: value cannot be converted to type int8_t without overflow ...
    """
    dtype = np.dtype(dtype)
    kind = category(dtype)
    if isinstance(value, int) and not isinstance(value, bool):
        _check_python_int(op, value)
    if kind == 0:
        return np.asarray(value != 0)
    check = np.dtype(np.float64) if item and dtype.name in ("float16", "bfloat16") else dtype
    name = torch_name(check, "cpp")
    if isinstance(value, complex):
        if category(check) != 3:
            if value.imag != 0:
                raise _overflow(op, value, name, dtype)
            value = value.real
    if category(check) == 3:
        value = complex(value)
        limit = _float_max(np.dtype(np.float32 if check.itemsize == 8 else np.float64))
        if any(math.isfinite(p) and abs(p) > limit for p in (value.real, value.imag)):
            raise _overflow(op, value, name, dtype)
        return np.asarray(value, dtype)
    if kind == 1:
        low, high = _int_range(dtype)
        if isinstance(value, float):
            if not math.isfinite(value) or value < low or value > high:
                raise _overflow(op, value, name, dtype)
            return wrapped_scalar(op, int(value), dtype)
        value = int(cast(Any, value))  # a real number here: complex ones were checked above
        if dtype.kind == "u" and -high <= value < 0:
            return wrapped_scalar(op, value, dtype)  # two's complement wrap, as PyTorch allows
        if not low <= value <= high:
            raise _overflow(op, value, name, dtype)
        return np.asarray(value, dtype)
    value = float(cast(Any, value))  # a real number here: complex ones were checked above
    if math.isfinite(value) and abs(value) > _float_max(check):
        raise _overflow(op, value, name, dtype)
    with np.errstate(over="ignore"):
        return np.asarray(value, dtype)

"""What a type checker sees of the public API (checked by pyright, in ``.ci/run`` and
``tests/repo/test_typing.py``; never run): view ops return ``StridedArray``, ``stride()`` and
``size()`` a ``tuple[int, ...]`` (an ``int`` for one dim), ``Layout``'s fields their types."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from typing_extensions import assert_type

import functional_strides as fs


def check_arrays(x: fs.StridedArray) -> None:
    assert_type(fs.from_array(jnp.zeros((2, 3))), fs.StridedArray)
    assert_type(x.stride(), tuple[int, ...])
    assert_type(x.stride(0), int)
    assert_type(x.size(), tuple[int, ...])
    assert_type(x.size(-1), int)
    assert_type(x.shape, tuple[int, ...])
    assert_type(x.ndim, int)
    assert_type(x.numel(), int)
    assert_type(x.layout, fs.Layout)
    assert_type(x.t(), fs.StridedArray)
    assert_type(x.T, fs.StridedArray)
    assert_type(x.view(6), fs.StridedArray)
    assert_type(x.permute(1, 0).contiguous(), fs.StridedArray)
    assert_type(x[1:, None], fs.StridedArray)
    assert_type(x.unfold(0, 2, 1), fs.StridedArray)
    assert_type(x.split(1), tuple[fs.StridedArray, ...])
    assert_type(fs.transpose(x, 0, 1), fs.StridedArray)
    assert_type(fs.as_strided(x, (2,), (1,)), fs.StridedArray)
    assert_type(fs.narrow(x, 0, 0, 1), fs.StridedArray)
    assert_type(x.is_contiguous(), bool)


def check_layouts(layout: fs.Layout) -> None:
    assert_type(layout.shape, tuple[int, ...])
    assert_type(layout.strides, tuple[int, ...])
    assert_type(layout.offset, Any)
    assert_type(layout.ndim, int)
    assert_type(layout.numel, int)
    assert_type(layout.is_contiguous(), bool)
    assert_type(fs.Layout.contiguous((2, 3)), fs.Layout)
    assert_type(fs.views.transpose(layout, 0, 1), fs.Layout)

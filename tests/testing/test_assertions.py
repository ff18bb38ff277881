"""The assertions of ``functional_strides.testing``: they pass on equal views, fail with a message
that names the first differing coordinate and both layouts, work on the outputs of ``jit`` and
under pytest's report, and refuse tracers with the reason."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import REPO, import_torch

import functional_strides as fs
import functional_strides.testing as fst
from functional_strides._src.testing import assertions as assertions_module


def _x():
    return fs.from_array(jnp.arange(12.0).reshape(3, 4))


def test_equal_views_pass_eager_and_jitted():
    x = _x()
    fst.assert_views_equal(x.t()[1:], fs.as_strided(x.storage, (3, 3), (1, 4), 1))
    jitted = jax.jit(lambda v: v.t()[1:])(x)
    fst.assert_views_equal(jitted, x.t()[1:])
    fst.assert_matches_oracle(jitted)


def test_different_values_name_the_first_differing_coordinate():
    x = _x()
    other = fs.from_array(jnp.asarray(np.asarray(x).copy()).at[1, 2].set(-1.0).at[2, 0].set(5.0))
    message = ("assert_views_equal: values differ at (1, 2): actual 6.0, desired -1.0 (2 of 12 elements "
               "differ; rtol=0.0, atol=0.0; actual (3,4):(4,1)+0, desired (3,4):(4,1)+0).")
    with pytest.raises(AssertionError, match=re.escape(message)):
        fst.assert_views_equal(x, other)


def test_different_layouts_name_both_in_the_library_notation():
    x = fs.from_array(jnp.arange(20.0))
    a, b = x[2:8].view(2, 3), fs.as_strided(x.storage, (2, 3), (3, 1), 3)
    message = ("assert_views_equal: layouts differ: actual (2,3):(3,1)+2, desired (2,3):(3,1)+3 "
               "(offset 2 != 3). Pass check_layout=False to compare the values only.")
    with pytest.raises(AssertionError, match=re.escape(message)):
        fst.assert_views_equal(a, b)
    with pytest.raises(AssertionError, match=re.escape("values differ at (0, 0): actual 2.0, desired 3.0")):
        fst.assert_views_equal(a, b, check_layout=False)


def test_shapes_differ():
    x = _x()
    with pytest.raises(AssertionError, match=re.escape("shapes differ: actual (3, 4), desired (4, 3) "
                                                       "(actual (3,4):(4,1)+0, desired (4,3):(1,4)+0)")):
        fst.assert_views_equal(x, x.t(), check_layout=False)


def test_tolerances_and_nans():
    x = fs.from_array(jnp.asarray([1.0, np.nan, 3.0]))
    near = fs.from_array(jnp.asarray([1.0 + 1e-6, np.nan, 3.0]))
    fst.assert_views_equal(x, x)  # NaN equals NaN
    with pytest.raises(AssertionError, match=re.escape("values differ at (0,)")):
        fst.assert_views_equal(x, near)
    fst.assert_views_equal(x, near, rtol=1e-5)
    fst.assert_views_equal(x, near, atol=1e-5)


def test_numpy_and_jax_arrays_compare_values_and_shapes():
    x = _x()
    fst.assert_views_equal(x.t(), np.arange(12.0).reshape(3, 4).T)
    fst.assert_views_equal(x.t(), jnp.arange(12.0).reshape(3, 4).T)
    with pytest.raises(AssertionError, match=re.escape("desired ndarray of shape (4, 3) (no layout)")):
        fst.assert_views_equal(x.t(), np.zeros((4, 3)))


def test_torch_tensors_bring_their_layout():
    torch = import_torch()
    x = _x()
    t = torch.arange(12.0).reshape(3, 4)
    fst.assert_views_equal(x.t()[1:], t.t()[1:])
    with pytest.raises(AssertionError, match=re.escape("actual (4,3):(1,4)+0, desired (4,3):(3,1)+0")):
        fst.assert_views_equal(x.t(), t.t().contiguous())


def test_tracers_are_refused_with_the_reason():
    x = _x()
    with pytest.raises(TypeError, match=re.escape("assert_views_equal: actual is traced")):
        jax.jit(lambda v: fst.assert_views_equal(v, v))(x)
    with pytest.raises(TypeError, match=re.escape("assert_matches_oracle: x is traced")):
        jax.jit(fst.assert_matches_oracle)(x)


def test_matches_oracle_names_the_coordinate_and_the_storage_index(monkeypatch):
    x = _x().t()[1:]
    fst.assert_matches_oracle(x)
    read = assertions_module._values

    def corrupted(op, name, v):
        out = read(op, name, v).copy()
        out[2, 1] += 100
        return out

    monkeypatch.setattr(assertions_module, "_values", corrupted)
    message = ("assert_matches_oracle: value at (2, 1) is 107.0, the oracle reads 7.0 from storage index 7 "
               "(1 of 9 elements differ; layout (3,3):(1,4)+1, storage of 12 elements).")
    with pytest.raises(AssertionError, match=re.escape(message)):
        fst.assert_matches_oracle(x)


def test_matches_oracle_refuses_what_is_not_a_view():
    message = "expected a functional_strides.StridedArray, got ndarray"
    with pytest.raises(AssertionError, match=re.escape(message)):
        fst.assert_matches_oracle(np.zeros(3))


# -- the PyTorch check ---------------------------------------------------------------------------------
def test_a_chain_that_matches_passes_refusals_included():
    import_torch()
    x = _x()
    chain = fst.ViewChain((fst.ViewOp("t"), fst.ViewOp("view", ((12,),)), fst.ViewOp("unfold", (0, 2, 1)),
                           fst.ViewOp("split", (1, 1), pick=1)))
    fst.assert_chain_matches_torch(x, chain)  # the view is refused on both sides, the rest agree
    fst.assert_chain_matches_torch(x, chain, functional=True)


def test_a_view_that_differs_from_pytorch_names_the_chain_as_code(monkeypatch):
    import_torch()
    x = _x()
    monkeypatch.setattr(fs.StridedArray, "transpose", lambda self, a, b: self)
    chain = fst.ViewChain((fst.ViewOp("getitem", ((slice(1, None),),)), fst.ViewOp("transpose", (0, 1))))
    message = ("x[1:].transpose(0, 1) from x of layout (3,4):(4,1)+0: assert_views_equal: shapes differ: "
               "actual (2, 4), desired (4, 2)")
    with pytest.raises(AssertionError, match=re.escape(message)):
        fst.assert_chain_matches_torch(x, chain)


def test_a_refusal_pytorch_does_not_make_fails(monkeypatch):
    import_torch()
    x = _x()

    def refuse(self, *shape):
        raise fs.ViewError("view: refused")

    monkeypatch.setattr(fs.StridedArray, "view", refuse)
    message = "x.view((12,)) from x of layout (3,4):(4,1)+0: PyTorch returned a tensor of shape (12,)"
    with pytest.raises(AssertionError, match=re.escape(message)):
        fst.assert_chain_matches_torch(x, [fst.ViewOp("view", ((12,),))])


def test_a_copy_where_pytorch_views_fails(monkeypatch):
    import_torch()
    x = _x()
    monkeypatch.setattr(fs.StridedArray, "reshape", lambda self, shape: self.contiguous().clone().view(shape))
    with pytest.raises(AssertionError, match=re.escape("shares the input's storage: False, in PyTorch True")):
        fst.assert_chain_matches_torch(x, [fst.ViewOp("reshape", ((4, 3),))])


# -- under pytest's report ------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_failing_user_test_reports_the_message_under_pytest(tmp_path):
    (tmp_path / "test_user.py").write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        import functional_strides as fs
        import functional_strides.testing as fst

        def test_views():
            x = fs.from_array(jnp.arange(6.0).reshape(2, 3))
            fst.assert_views_equal(jax.jit(lambda v: v.t())(x), x.t().contiguous())
    '''))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert ("AssertionError: assert_views_equal: layouts differ: actual (3,2):(1,3)+0, desired (3,2):(2,1)+0"
            in result.stdout), result.stdout

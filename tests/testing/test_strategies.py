"""The public strategies of ``functional_strides.testing``: what they draw, and how often.

* Over a few hundred draws, ``layouts()`` covers non-contiguous layouts, stride 0 on extents
  > 1, internal overlap, empty shapes, non-zero offsets and every rank 0..4, in the fractions
  that the guide ("Testing code that uses views") reports.
* Every drawn array reads what NumPy's ``as_strided`` reads over its storage (byte strides).
* The keywords hold of every draw: bounds of rank, extent and storage; contiguous,
  overlapping and empty asked for or excluded; conflicting ones are refused.
* A chain prints as the PyTorch code it runs: evaluated on a tensor, the printed code gives
  the tensor that applying the chain gives.
"""

from __future__ import annotations

import re
from pathlib import Path

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from _support import draws, import_torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import functional_strides as fs
import functional_strides.testing as fst

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def _stride0(layout: fs.Layout) -> bool:
    return any(s == 0 and n > 1 for n, s in zip(layout.shape, layout.strides, strict=True))


#: What the guide's table reports, as (row label, predicate of a layout).
FEATURES = {
    "non-contiguous": lambda lay: not lay.is_contiguous(),
    "stride 0 on an extent > 1": _stride0,
    "internal overlap": lambda lay: lay.has_internal_overlap(),
    "empty (a size-0 dim)": lambda lay: lay.is_empty,
    "a size-1 dim": lambda lay: 1 in lay.shape,
    "non-zero offset": lambda lay: int(lay.offset) != 0,
    **{f"rank {r}": (lambda lay, r=r: lay.ndim == r) for r in range(5)},
}
#: The floor of each fraction, well below what is drawn: a change of the strategy that loses
#: a kind of layout fails here.
FLOORS = {"non-contiguous": 0.4, "stride 0 on an extent > 1": 0.1, "internal overlap": 0.15,
          "empty (a size-0 dim)": 0.05, "a size-1 dim": 0.2, "non-zero offset": 0.6,
          **{f"rank {r}": 0.04 for r in range(5)}}
N_DRAWS = 400


def coverage(n: int = N_DRAWS) -> dict[str, float]:
    """The fraction of ``n`` draws of ``layouts()`` (derandomized) that has each feature."""
    drawn: list[fs.Layout] = []

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate], deadline=None)
    @given(fst.layouts())
    def collect(layout):
        drawn.append(layout)

    collect()
    return {label: sum(map(test, drawn)) / len(drawn) for label, test in FEATURES.items()}


def _guide_table() -> dict[str, float]:
    text = GUIDE.read_text()
    rows = re.findall(r"^\| ([^|]+?) +\| +(\d+) % +\|$", text, flags=re.M)
    return {label: int(percent) / 100 for label, percent in rows}


def test_layouts_cover_every_kind_and_the_guide_reports_the_fractions():
    got = coverage()
    low = {k: v for k, v in got.items() if v < FLOORS[k]}
    assert not low, f"layouts() draws too few of {low} (floors {FLOORS})"
    reported = _guide_table()
    assert set(reported) == set(FEATURES), (sorted(reported), sorted(FEATURES))
    off = {k: (reported[k], round(v, 2)) for k, v in got.items() if abs(reported[k] - v) > 0.06}
    assert not off, f"docs/testing.md reports (guide, measured) {off}: update its table"


def _numpy_as_strided(x: fs.StridedArray) -> np.ndarray:
    storage = np.asarray(x.storage)
    item = storage.itemsize
    base = storage[int(x.storage_offset()):] if x.numel() else storage
    return np.lib.stride_tricks.as_strided(base, x.shape, tuple(s * item for s in x.stride()))


@settings(max_examples=draws(300))
@given(x=fst.strided_arrays())
def test_every_drawn_array_matches_numpy_as_strided(x):
    assert int(x.storage.shape[0]) >= x.layout.required_storage_size
    want = _numpy_as_strided(x)
    np.testing.assert_array_equal(np.asarray(x), want)
    fst.assert_matches_oracle(x)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.bool_, ml_dtypes.bfloat16, jnp.float16],
                         ids=["int8", "int32", "bool", "bfloat16", "float16"])
@settings(max_examples=draws(40))
@given(data=st.data())
def test_the_caller_chooses_the_dtype_and_values_name_their_index(dtype, data):
    x = data.draw(fst.strided_arrays(dtype=dtype))
    assert x.dtype == np.dtype(dtype)
    with np.errstate(all="ignore"):
        index = np.arange(x.storage.shape[0]).astype(dtype)
    np.testing.assert_array_equal(np.asarray(x.storage), index)
    np.testing.assert_array_equal(np.asarray(x), _numpy_as_strided(x))


@settings(max_examples=draws(40))
@given(x=fst.strided_arrays(dtype=np.float32, elements=st.floats(-2, 2, width=32)))
def test_elements_draw_the_storage_values(x):
    assert np.all(np.abs(np.asarray(x.storage)) <= 2)
    fst.assert_matches_oracle(x)


_KEYWORDS = [
    pytest.param(dict(contiguous=True), lambda lay: lay.is_contiguous(), id="contiguous"),
    pytest.param(dict(contiguous=False), lambda lay: not lay.is_contiguous(), id="non-contiguous"),
    pytest.param(dict(overlapping=True), lambda lay: lay.has_internal_overlap(), id="overlapping"),
    pytest.param(dict(overlapping=False), lambda lay: not lay.has_internal_overlap(), id="non-overlapping"),
    pytest.param(dict(empty=True), lambda lay: lay.is_empty, id="empty"),
    pytest.param(dict(empty=False), lambda lay: not lay.is_empty, id="non-empty"),
    pytest.param(dict(min_rank=2, max_rank=3), lambda lay: 2 <= lay.ndim <= 3, id="rank"),
    pytest.param(dict(max_extent=2), lambda lay: all(n <= 2 for n in lay.shape), id="extent"),
    pytest.param(dict(max_storage=12), lambda lay: lay.required_storage_size <= 12, id="storage"),
    pytest.param(dict(max_offset=0), lambda lay: int(lay.offset) == 0, id="offset"),
    pytest.param(dict(overlapping=True, max_storage=6),
                 lambda lay: lay.has_internal_overlap() and lay.required_storage_size <= 6,
                 id="overlap-storage"),
    pytest.param(dict(contiguous=False, overlapping=False, negative=True),
                 lambda lay: not lay.is_contiguous() and not lay.has_internal_overlap(), id="negative"),
]


@pytest.mark.parametrize(("kwargs", "holds"), _KEYWORDS)
@settings(max_examples=draws(100))
@given(data=st.data())
def test_every_draw_keeps_to_the_keywords(kwargs, holds, data):
    layout = data.draw(fst.layouts(**kwargs))
    assert holds(layout), (kwargs, str(layout))


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(min_rank=3, max_rank=2), "need 0 <= min_rank <= max_rank (got min_rank=3, max_rank=2)"),
    (dict(overlapping=True, contiguous=True), "an overlapping layout is neither empty nor contiguous"),
    (dict(overlapping=True, max_extent=1), "overlapping=True needs a dim of extent >= 2"),
    (dict(empty=True, max_rank=0), "empty=True needs a dim of extent 0, so max_rank >= 1 (got max_rank=0)"),
    (dict(contiguous=False, empty=True), "a non-contiguous layout has 2 or more elements"),
    (dict(kinds=("diagonal",)), "kinds must be a non-empty tuple of"),
])
@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_conflicting_keywords_are_refused_with_the_reason(kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        fst.layouts(**kwargs).example()


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_strided_arrays_refuse_a_negative_slack():
    with pytest.raises(InvalidArgument, match=re.escape("max_slack must be >= 0 (got max_slack=-1)")):
        fst.strided_arrays(max_slack=-1).example()


@settings(max_examples=draws(100))
@given(x=fst.strided_arrays(), data=st.data())
def test_a_chain_without_refusals_runs_and_reads_as_the_oracle(x, data):
    chain = data.draw(fst.view_chains(x, min_len=1, max_len=5))
    assert len(chain) <= 5
    out = chain.apply(x)  # no op of the chain is refused
    if out is not None:
        fst.assert_matches_oracle(out)


@settings(max_examples=draws(100))
@given(x=fst.strided_arrays(max_slack=0), data=st.data())
def test_a_chain_prints_as_the_pytorch_code_it_runs(x, data):
    torch = import_torch()
    chain = data.draw(fst.view_chains(x, min_len=1, max_len=4))
    t = torch.as_strided(torch.from_numpy(np.array(x.storage)), x.shape, x.stride(), x.storage_offset())
    want = chain.apply(t)
    got = eval(str(chain), {"x": t, "torch": torch})  # the printed code, run by PyTorch
    assert want is None or (tuple(got.shape), got.stride(), got.storage_offset()) == (
        tuple(want.shape), want.stride(), want.storage_offset())
    if want is not None:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_view_op_printing_examples():
    cases = [
        (fst.ViewOp("getitem", ((slice(1, None), None, Ellipsis, slice(None, None, 2)),)),
         "[1:, None, ..., ::2]"),
        (fst.ViewOp("getitem", (-1,)), "[-1]"),
        (fst.ViewOp("getitem", ((),)), "[()]"),
        (fst.ViewOp("view", ((2, 3),), star=True), ".view(2, 3)"),
        (fst.ViewOp("expand_as", ((2, 3),)), ".expand_as(torch.empty((2, 3)))"),
        (fst.ViewOp("mT"), ".mT"),
    ]
    assert [str(op) for op, _ in cases] == [text for _, text in cases]
    chain = fst.ViewChain((fst.ViewOp("unbind", (0,), pick=2), fst.ViewOp("unsqueeze", (0,))))
    assert str(chain) == "x.unbind(0)[2].unsqueeze(0)"


def test_the_guide_shows_the_user_test_file_as_it_is():
    text = GUIDE.read_text()
    block = text[text.rindex("```python\n") + len("```python\n"):text.rindex("```")]
    source = (Path(__file__).parent / "test_user_example.py").read_text()
    assert source.split('"""\n\n', 1)[1] == block


_WITHOUT_HYPOTHESIS = """
import sys
sys.modules["hypothesis"] = None  # import hypothesis -> ModuleNotFoundError, as when it is not installed
import functional_strides as fs
assert "functional_strides.testing" not in sys.modules
try:
    import functional_strides.testing
except ImportError as e:
    print(e)
"""


@pytest.mark.slow
def test_without_hypothesis_the_package_imports_and_the_testing_module_says_what_to_install():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _WITHOUT_HYPOTHESIS], capture_output=True, text=True,
                            timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("functional_strides.testing needs hypothesis, which is not installed: "
                                     "pip install 'functional_strides[testing]' (or pip install hypothesis).")

"""Tests of ``python -m functional_strides demo``: the command on matplotlib's sample data,
its exit status, its PNGs, and each task's pipeline on small synthetic inputs."""

from __future__ import annotations

import functools
import io
import re
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed; the demo needs it")
pytest.importorskip("PIL", reason="Pillow is not installed; the demo needs it")

from functional_strides import __main__ as cli  # noqa: E402
from functional_strides import demo  # noqa: E402

REPO = Path(__file__).parents[1]
TASK_NAMES = ("patches", "conv2d", "spectrogram", "reconstruction")


def _row(table: str, name: str) -> str:
    rows = [line for line in table.splitlines() if line.startswith(name + "  ")]
    assert len(rows) == 1, f"expected one table row for {name!r} in:\n{table}"
    return rows[0]


def _assert_png(path: Path, min_side: int) -> None:
    from PIL import Image

    assert path.is_file() and path.stat().st_size > 0, path
    with Image.open(path) as im:
        assert im.format == "PNG"
        assert min(im.size) >= min_side, im.size
        im.verify()
    with Image.open(path) as im:  # verify() leaves the file unusable; decode it fully
        pixels = np.asarray(im.convert("RGB"))
    assert pixels.std() > 10.0  # not a blank canvas


# -- the command, in process -----------------------------------------------------------------
def test_demo_passes_and_saves_pngs(tmp_path, capsys):
    rc = cli.main(["demo", "--out", str(tmp_path / "figs")])
    out = capsys.readouterr().out
    assert rc == 0, out
    for name in TASK_NAMES:
        assert _row(out, name).endswith("PASS")
    assert "FAIL" not in out
    assert "all checks passed" in out
    assert ("view(view) → narrow(view) → view(view) → permute(view) → reshape(copy)"
            in _row(out, "patches"))
    assert re.match(r"conv2d +as_strided\(view\) → reshape\(copy\) → matmul", _row(out, "conv2d"))
    assert "unfold(view) → contiguous(copy)" in _row(out, "spectrogram")
    _assert_png(tmp_path / "figs" / "patches.png", min_side=500)
    _assert_png(tmp_path / "figs" / "spectrogram.png", min_side=300)
    _assert_png(tmp_path / "figs" / "reconstruction.png", min_side=300)
    assert "at[].add(write)" in _row(out, "reconstruction")


def test_failing_check_exits_nonzero(monkeypatch, capsys):
    right_reference = demo.conv_reference
    monkeypatch.setattr(demo, "conv_reference",  # off by 1e-2: 100x the tolerance
                        lambda photo, weights: right_reference(photo, weights) + np.float32(1e-2))
    rc = cli.main(["demo"])
    out = capsys.readouterr().out
    assert rc == 1
    assert _row(out, "conv2d").endswith("FAIL")
    assert re.search(r"\b1\.00e-02\b", _row(out, "conv2d"))
    assert _row(out, "patches").endswith("PASS")
    assert _row(out, "spectrogram").endswith("PASS")
    assert "FAILED: conv2d" in out


def test_python_dash_m_demo_subprocess():
    proc = subprocess.run([sys.executable, "-m", "functional_strides", "demo"], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in TASK_NAMES:
        assert re.search(rf"^{name} .*PASS$", proc.stdout, re.MULTILINE), proc.stdout


def test_cli_arguments():
    with pytest.raises(SystemExit) as exc:
        cli.main([])  # a command is required
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        cli.main(["demo", "--no-such-flag"])
    assert exc.value.code == 2
    args = cli.build_parser().parse_args(["demo", "--out", "d"])
    assert (args.command, args.out, args.func) == ("demo", "d", cli._demo)


# -- data ------------------------------------------------------------------------------------
def test_load_data_shapes_and_ranges():
    data = demo.load_data()
    assert data.photo.dtype == np.float32 and data.photo.shape == (3, 600, 512)
    assert data.photo.flags.c_contiguous
    assert 0.0 <= data.photo.min() and data.photo.max() <= 1.0 and data.photo.std() > 0.1
    assert data.signal.dtype == np.float32 and data.signal.shape == (12000,)
    assert np.isfinite(data.signal).all() and data.signal.std() > 0.01
    assert data.sample_rate == 2000.0


# -- the pipelines on small inputs (both narrow branches, exact values) ----------------------
def test_patchify_crops_both_dims_and_matches_references():
    photo = np.random.default_rng(1).random((2, 37, 35), dtype=np.float32)
    chain = demo.Chain()
    fn = functools.partial(demo.patchify, chw=photo.shape, patch=8, chain=chain)
    out = np.asarray(jax.jit(fn)(jnp.asarray(photo.reshape(-1))))
    assert out.shape == (4 * 4, 2 * 8 * 8)
    np.testing.assert_array_equal(out, demo.patches_reference(photo, 8))
    # patch (1, 2) is crop[:, 8:16, 16:24] of the centre crop starting at (2, 1)
    np.testing.assert_array_equal(out[1 * 4 + 2], photo[:, 10:18, 17:25].reshape(-1))
    assert [(s.op, s.args, s.kind) for s in chain.steps] == [
        ("view", "(2, 37, 35)", "view"), ("narrow", "1, 2, 32", "view"),
        ("narrow", "2, 1, 32", "view"), ("view", "(2, 4, 8, 4, 8)", "view"),
        ("permute", "(1, 3, 0, 2, 4)", "view"), ("reshape", "(16, 128)", "copy")]
    assert str(chain.last_view()) == "(4,4,2,8,8):(280,8,1295,35,1)+71"


def test_conv2d_im2col_matches_xla_conv():
    rng = np.random.default_rng(2)
    photo = rng.random((3, 11, 9), dtype=np.float32)
    weights = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    chain = demo.Chain()
    fn = functools.partial(demo.conv2d_im2col, chw=photo.shape, chain=chain)
    out = np.asarray(jax.jit(fn)(jnp.asarray(photo.reshape(-1)), jnp.asarray(weights)))
    assert out.shape == (4, 9, 7)
    np.testing.assert_allclose(out, demo.conv_reference(photo, weights), rtol=0, atol=1e-5)
    direct = np.einsum("ochw,chw->o", weights, photo[:, 2:5, 4:7])
    np.testing.assert_allclose(out[:, 2, 4], direct, rtol=0, atol=1e-5)
    assert [s.kind for s in chain.steps] == ["view", "copy", "compute", "view", "view", "copy"]
    assert chain.steps[0].layout.strides == (9, 1, 99, 9, 1)  # overlapping windows


def test_spectrogram_matches_numpy_and_hann_is_periodic():
    signal = np.sin(2 * np.pi * 50.0 * np.arange(1000) / 1000.0).astype(np.float32)
    chain = demo.Chain()
    fn = functools.partial(demo.spectrogram, n_fft=100, hop=25, chain=chain)
    out = np.asarray(jax.jit(fn)(jnp.asarray(signal)))
    ref = demo.spectrogram_reference(signal, 100, 25)
    assert out.shape == ref.shape == ((1000 - 100) // 25 + 1, 51)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-4)
    assert np.all(out.argmax(axis=1) == 5)  # 50 Hz at 10 Hz per bin
    np.testing.assert_allclose(np.asarray(demo.hann(8)), np.hanning(9)[:-1], atol=1e-7)
    assert chain.steps[0].layout.shape == (37, 100) and chain.steps[0].layout.strides == (25, 1)


# -- records and formatting ------------------------------------------------------------------
def _result(name, err, tol):
    chain = demo.Chain()
    chain(demo.from_array(jnp.zeros((2, 3))), "t")
    return demo.TaskResult(name, chain, "ref", err, tol, 0.25, 0.0015, np.zeros(1))


def test_result_pass_fail_and_table():
    ok, bad, nan = _result("a", 0.0, 0.0), _result("bb", 2e-3, 1e-3), _result("c", float("nan"), 1.0)
    assert ok.passed and not bad.passed and not nan.passed
    table = demo.format_table([ok, bad, nan], arrow="->")
    assert _row(table, "a").split() == ["a", "t(view)", "0.00e+00", "0.0e+00", "250.0", "ms",
                                        "1.5", "ms", "PASS"]
    assert _row(table, "bb").endswith("FAIL") and _row(table, "c").endswith("FAIL")
    assert demo.max_abs_error(np.zeros(3), np.zeros(4)) == float("inf")


def test_arrow_falls_back_to_ascii():
    ascii_stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert demo._arrow(ascii_stream) == "->"
    assert demo._arrow(io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) == "→"


def test_overlap_add_inverts_framing_on_a_small_signal():
    signal = np.sin(np.linspace(0.0, 20.0, 400)).astype(np.float32) + 2.0
    chain = demo.Chain()
    fn = functools.partial(demo.istft_overlap_add, n_fft=64, hop=16, chain=chain)
    num, wsum = (np.asarray(a) for a in jax.jit(fn)(jnp.asarray(signal)))
    covered = wsum >= demo.RECON_COVER * wsum.max()
    assert covered.sum() > 300
    np.testing.assert_allclose(num[covered] / wsum[covered], signal[covered], rtol=1e-5)
    assert [s.kind for s in chain.steps][-2:] == ["view", "write"]

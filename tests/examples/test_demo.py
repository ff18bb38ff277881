"""Tests of ``python -m functional_strides demo``: the command on matplotlib's sample data,
its exit status, its PNGs and their labels, its line width, its behaviour without matplotlib or
Pillow, and each task's pipeline on small synthetic inputs."""

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

from functional_strides import __main__ as cli
from functional_strides.examples.demo import figures as demo_figures
from functional_strides.examples.demo import tasks as demo

REPO = Path(__file__).parents[2]
TASK_NAMES = ("patches", "conv2d", "spectrogram", "reconstruction")
needs_plotting = pytest.mark.skipif(
    demo.missing_plotting() is not None,
    reason=f"matplotlib and Pillow draw the figures and read the sample data: {demo.install_hint()}")


def _row(table: str, name: str) -> str:
    rows = [line for line in table.splitlines() if line.startswith(name + "  ")]
    assert len(rows) == 1, f"expected one table row for {name!r} in:\n{table}"
    return rows[0]


def _chain(table: str, name: str) -> str:
    """The chain printed under a task's row (its continuation lines joined)."""
    lines = table.splitlines()
    i = lines.index(_row(table, name)) + 1
    chain = []
    while i < len(lines) and lines[i].startswith("  "):
        chain.append(lines[i].strip())
        i += 1
    return " ".join(chain)


def _assert_fits(text: str, width: int = demo.LINE_WIDTH) -> None:
    long = [(len(line), line) for line in text.splitlines() if len(line) > width]
    assert not long, f"lines over {width} columns: {long}"


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
@needs_plotting
def test_demo_passes_and_saves_pngs(tmp_path, capsys):
    rc = cli.main(["demo", "--out", str(tmp_path / "figs")])
    out = capsys.readouterr().out
    assert rc == 0, out
    for name in TASK_NAMES:
        assert _row(out, name).endswith("PASS")
    assert "FAIL" not in out
    assert "all checks passed" in out
    assert "photo: grace_hopper.jpg" in out and "signal: membrane.dat" in out
    assert _chain(out, "patches") == "view(view) → narrow(view) → view(view) → permute(view) → reshape(copy)"
    assert _chain(out, "conv2d").startswith("as_strided(view) → reshape(copy) → matmul(compute)")
    assert _chain(out, "spectrogram").startswith("unfold(view) → contiguous(copy)")
    assert _chain(out, "reconstruction").endswith("unfold(view) → at[].add(write)")
    _assert_png(tmp_path / "figs" / "patches.png", min_side=500)
    _assert_png(tmp_path / "figs" / "conv2d.png", min_side=400)
    _assert_png(tmp_path / "figs" / "spectrogram.png", min_side=300)
    _assert_png(tmp_path / "figs" / "reconstruction.png", min_side=500)
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == sorted(demo.FIGURES)
    for name in demo.FIGURES:
        assert re.search(rf"^  {re.escape(name)} +\S", out, re.MULTILINE), out
    _assert_fits(out.replace(str(tmp_path), "DIR"))


@needs_plotting
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


@pytest.mark.slow
def test_python_dash_m_demo_subprocess():
    proc = subprocess.run([sys.executable, "-m", "functional_strides", "demo"], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in TASK_NAMES:
        assert re.search(rf"^{name} .*PASS$", proc.stdout, re.MULTILINE), proc.stdout
    _assert_fits(proc.stdout)


# -- without matplotlib or Pillow --------------------------------------------------------------
# The demo in a fresh interpreter where ``import <module>`` fails, as when it is not installed.
_BLOCKED = """
import sys
sys.modules[sys.argv[1]] = None
from functional_strides.__main__ import main
raise SystemExit(main(sys.argv[2:]))
"""


def _demo_without(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _BLOCKED, module, "demo", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_missing_plotting_library_runs_the_checks_on_synthetic_inputs():
    module = "matplotlib"  # Pillow missing takes the same path (test_missing_plotting_names_...)
    proc = _demo_without(module)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]
    shown = {"PIL": "Pillow"}.get(module, module)
    assert first == f"inputs: synthetic ({shown} is not installed: {demo.install_hint()})"
    assert 'pip install -e ".[demo]"' in first  # run from this checkout
    assert "photo: synthetic test card" in proc.stdout
    for name in TASK_NAMES:
        assert re.search(rf"^{name} .*PASS$", proc.stdout, re.MULTILINE), proc.stdout
    assert "all checks passed" in proc.stdout
    _assert_fits(proc.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("module", ["matplotlib", "PIL"])
def test_missing_plotting_library_with_out_is_one_line_and_exit_1(tmp_path, module):
    proc = _demo_without(module, "--out", str(tmp_path / "figs"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    shown = {"PIL": "Pillow"}.get(module, module)
    assert proc.stderr.splitlines() == [f"demo --out needs {shown} (not installed): {demo.install_hint()}"]
    assert proc.stdout == ""  # nothing ran
    assert not (tmp_path / "figs").exists()


def test_install_hint_outside_a_checkout(monkeypatch, tmp_path):
    installed = tmp_path / "site-packages" / "functional_strides" / "examples" / "demo" / "tasks.py"
    monkeypatch.setattr(demo, "__file__", str(installed))
    assert demo.install_hint() == 'pip install "functional_strides[demo]"'


@needs_plotting
def test_missing_plotting_names_the_module_that_fails(monkeypatch):
    assert demo.missing_plotting() is None
    for module in ("PIL", "matplotlib"):
        with monkeypatch.context() as m:
            m.setitem(sys.modules, module, None)
            assert demo.missing_plotting() == module


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
@needs_plotting
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
    assert _row(table, "a").split() == ["a", "0.00e+00", "0.0e+00", "250.0", "ms", "1.5", "ms", "PASS"]
    assert _chain(table, "a") == "t(view)"
    assert _row(table, "bb").endswith("FAIL") and _row(table, "c").endswith("FAIL")
    assert table.splitlines()[0].split() == ["task", "max", "abs", "err", "tolerance", "compile", "run",
                                             "check"]
    assert demo.max_abs_error(np.zeros(3), np.zeros(4)) == float("inf")


def test_arrow_falls_back_to_ascii():
    ascii_stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert demo.arrow(ascii_stream) == "->"
    assert demo.arrow(io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) == "→"


def test_overlap_add_inverts_framing_on_a_small_signal():
    signal = np.sin(np.linspace(0.0, 20.0, 400)).astype(np.float32) + 2.0
    chain = demo.Chain()
    fn = functools.partial(demo.istft_overlap_add, n_fft=64, hop=16, chain=chain)
    num, wsum = (np.asarray(a) for a in jax.jit(fn)(jnp.asarray(signal)))
    covered = wsum >= demo.RECON_COVER * wsum.max()
    assert covered.sum() > 300
    np.testing.assert_allclose(num[covered] / wsum[covered], signal[covered], rtol=1e-5)
    assert [s.kind for s in chain.steps][-2:] == ["view", "write"]


def _long_chain(n: int) -> demo.Chain:
    chain = demo.Chain()
    x = demo.from_array(jnp.arange(24.0))
    for i in range(n):
        x = chain(x, "view", (4, 6)) if i % 2 == 0 else chain(x, "reshape", (24,))
    return chain


@pytest.mark.parametrize("width", [24, 40, 61, 100])
def test_chain_wraps_at_arrows_within_the_width(width):
    chain = _long_chain(11)
    lines = demo.wrap_chain(chain, "→", width=width)
    assert len(lines) > 1
    assert all(len(line) <= width for line in lines), lines
    assert lines[0].startswith("  ") and not lines[0].startswith("   ")
    assert all(line.startswith("    ") for line in lines[1:])
    assert all(line.endswith(" →") for line in lines[:-1]) and not lines[-1].endswith("→")
    assert " ".join(line.strip() for line in lines) == chain.describe("→")
    assert demo.wrap_chain(_long_chain(1), width=width) == ["  view(view)"]


def test_table_and_steps_fit_in_the_line_width():
    chain = _long_chain(14)
    long_call = demo.Step("as_strided", "(596, 508, 3, 5, 5), (512, 1, 307200, 512, 1), 0", "view",
                          demo.Layout((596, 508, 3, 5, 5), (512, 1, 307200, 512, 1)))
    chain.steps.insert(0, long_call)
    result = demo.TaskResult("a_task_with_a_long_name", chain, "a reference " * 12, 1e-7, 1e-4,
                             12.5, 0.5, np.zeros(1))
    table, steps = demo.format_table([result]), demo.format_steps(result)
    _assert_fits(table)
    _assert_fits(steps)
    _assert_fits(demo.format_steps(result, width=70), width=70)
    lines = steps.splitlines()
    # the long call has a line of its own; its kind and layout follow, in the kind column
    i = lines.index("  as_strided((596, 508, 3, 5, 5), (512, 1, 307200, 512, 1), 0)")
    assert re.split(r"\s{2,}", lines[i + 1].strip()) == ["view", "(596,508,3,5,5):(512,1,307200,512,1)+0"]
    assert re.split(r"\s{2,}", lines[i + 2].strip()) == ["view((4, 6))", "view", "(4,6):(6,1)+0"]
    assert lines[i + 1].index("view") == lines[i + 2].index("view  ")
    assert "a reference a reference" in steps


def test_synthetic_data_is_deterministic_and_shaped_like_the_sample_data():
    data, again, other = demo.synthetic_data(), demo.synthetic_data(), demo.synthetic_data(seed=1)
    assert data.photo.dtype == np.float32 and data.photo.shape == (3, 600, 512)
    assert data.photo.flags.c_contiguous and 0.0 <= data.photo.min() and data.photo.max() <= 1.0
    assert data.photo.std() > 0.1
    assert data.signal.dtype == np.float32 and data.signal.shape == (12000,)
    assert -0.75 < data.signal.min() < data.signal.max() < 0.1 and data.signal.std() > 0.01
    assert data.sample_rate == 2000.0 and data.signal_name == "synthetic membrane trace"
    np.testing.assert_array_equal(data.photo, again.photo)
    np.testing.assert_array_equal(data.signal, again.signal)
    assert not np.array_equal(data.signal, other.signal)


def test_uncovered_spans_are_the_samples_left_out_of_the_reconstruction():
    assert demo_figures.uncovered_spans(np.ones(5)) == []
    assert demo_figures.uncovered_spans(np.full(3, np.nan)) == [(0, 3)]
    signal = np.cos(np.linspace(0.0, 9.0, 300)).astype(np.float32)
    fn = functools.partial(demo.istft_overlap_add, n_fft=64, hop=16, chain=demo.Chain())
    _, wsum = (np.asarray(a) for a in jax.jit(fn)(jnp.asarray(signal)))
    uncovered = wsum < demo.RECON_COVER * wsum.max()
    spans = demo_figures.uncovered_spans(np.where(uncovered, np.nan, 1.0))
    assert len(spans) == 2 and spans[0][0] == 0 and spans[-1][1] == signal.size  # both ends
    mask = np.zeros(signal.size, bool)
    for start, stop in spans:
        mask[start:stop] = True
    np.testing.assert_array_equal(mask, uncovered)


# -- figures: labels, legend placement, shading ------------------------------------------------
def _drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


@needs_plotting
def test_reconstruction_figure_labels_legend_and_uncovered_ends():
    sample_rate, n = 2000.0, 1200
    signal = demo.synthetic_data().signal[:n]
    rebuilt = signal.copy()
    rebuilt[:30], rebuilt[-45:] = np.nan, np.nan
    fig = demo_figures.reconstruction_figure(signal, rebuilt, sample_rate, "trace")
    renderer = _drawn(fig)
    axes = [ax for ax in fig.axes if ax.get_xlabel()]
    assert len(axes) == 4 and all(ax.get_xlabel() == "time (s)" for ax in axes)
    full = axes[0]
    assert "amplitude" in full.get_ylabel() and "amplitude" in axes[-1].get_ylabel()
    assert [c.get_xlabel() for c in full.child_axes] == ["sample"]  # sample index on top
    for ax in axes:  # both uncovered ends shaded, at their times
        spans = sorted((round(p.get_x() * sample_rate), round((p.get_x() + p.get_width()) * sample_rate))
                       for p in ax.patches)
        assert spans == [(0, 30), (n - 45, n)], spans
    legend = full.get_legend()
    assert [t.get_text().split("\n")[0] for t in legend.get_texts()] == [
        "recorded", "overlap-add", "uncovered: window sum"]
    box, plot = legend.get_window_extent(renderer), full.get_window_extent(renderer)
    assert box.x0 >= plot.x1  # beside the plot, off the signal
    assert "trace" in full.get_title()


@needs_plotting
def test_patches_figure_title_says_re_tiled_and_cropped():
    photo = np.random.default_rng(0).random((3, 40, 36), dtype=np.float32)
    fig = demo_figures.patches_figure(demo.patches_reference(photo, demo.PATCH), photo.shape)
    title = fig.get_suptitle()
    assert "re-tiled" in title and "cropped from 40x36 to 32x32" in title and "4 patches" in title


@needs_plotting
def test_conv2d_figure_shows_input_kernel_both_outputs_and_error():
    rng = np.random.default_rng(4)
    photo = rng.random((3, 20, 18), dtype=np.float32)
    weights = demo.conv_weights(3)
    ours = np.asarray(jax.jit(functools.partial(demo.conv2d_im2col, chw=photo.shape, chain=demo.Chain()))(
        jnp.asarray(photo.reshape(-1)), jnp.asarray(weights)))
    theirs = demo.conv_reference(photo, weights)
    fig = demo_figures.conv2d_figure(photo, weights, ours, theirs)
    _drawn(fig)
    panels = [ax for ax in fig.axes if ax.images]
    titles = [ax.get_title() for ax in panels]
    assert len(panels) == 5, titles
    assert titles[0].startswith("input (3x20x18)") and titles[1].startswith("kernel 0 (3x5x5)")
    assert titles[2].startswith("ours") and titles[3].startswith("lax.conv_general_dilated")
    np.testing.assert_array_equal(panels[2].images[0].get_array(), ours[0])
    np.testing.assert_array_equal(panels[3].images[0].get_array(), theirs[0])
    error = np.max(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)), axis=0)
    np.testing.assert_array_equal(panels[4].images[0].get_array(), error)
    assert any(ax.get_ylabel() == "absolute error" for ax in fig.axes)  # the colour bar
    assert all(ax.get_xlabel() for ax in panels)

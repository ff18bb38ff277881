"""Figures of ``python -m functional_strides demo --out DIR`` (matplotlib's Agg canvas; no
display needed): one function per figure returning a ``matplotlib.figure.Figure``, and
:func:`save_figures`, which writes every figure of :data:`~functional_strides.examples.demo.FIGURES`.

The demo imports it only when figures are asked for; drawing needs matplotlib and Pillow
(``pip install "functional_strides[demo]"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .tasks import FIGURES, HOP, N_FFT, PATCH, RECON_COVER, DemoData, TaskResult, conv_weights

__all__ = ["conv2d_figure", "patches_figure", "reconstruction_figure", "save_figures",
           "spectrogram_figure", "uncovered_spans"]


def _figure(figsize: tuple[float, float], **kwargs: Any) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=100, **kwargs)
    FigureCanvasAgg(fig)
    return fig


def patches_figure(patches: np.ndarray, chw: tuple[int, int, int]) -> Any:
    """Patch grid (``[num_patches, C*P*P]``, row-major over the grid) as a PNG, each patch
    drawn apart from its neighbours by a 2-pixel white gutter, as a figure; the title says
    how the photo was cropped and that the patches are re-tiled."""
    c, h, w = chw
    hp, wp, gap = h // PATCH, w // PATCH, 2
    tiles = patches.reshape(hp, wp, c, PATCH, PATCH).transpose(0, 3, 1, 4, 2)  # hp,P,wp,P,C
    canvas = np.ones((hp, PATCH + gap, wp, PATCH + gap, c), dtype=np.float32)
    canvas[:, :PATCH, :, :PATCH] = tiles
    image = canvas.reshape(hp * (PATCH + gap), wp * (PATCH + gap), c)
    title_px = 64
    fig = _figure((image.shape[1] / 100, (image.shape[0] + title_px) / 100))
    ax = fig.add_axes((0, 0, 1, image.shape[0] / (image.shape[0] + title_px)))
    ax.imshow(np.clip(image, 0.0, 1.0), interpolation="nearest")
    ax.set_axis_off()
    fig.suptitle(f"{hp * wp} patches of {c}x{PATCH}x{PATCH}, re-tiled in their {hp}x{wp} grid\n"
                 f"(photo centre-cropped from {h}x{w} to {hp * PATCH}x{wp * PATCH} pixels;\n"
                 f"white {gap}-pixel gaps between patches)", y=0.995, fontsize=10, linespacing=1.3)
    return fig


def conv2d_figure(photo: np.ndarray, weights: np.ndarray, ours: np.ndarray, theirs: np.ndarray) -> Any:
    """The conv2d task as a figure: the input photo, the first (C, K, K) kernel shown as RGB, our
    output channel 0 beside ``lax.conv_general_dilated``'s, and the map of
    ``max over channels |ours - theirs|``; pixel axes."""
    fig = _figure((16, 4.6), layout="constrained")
    axes = fig.subplots(1, 5, width_ratios=[1, 0.5, 1, 1, 1])
    c, h, w = photo.shape
    o, _, k, _ = weights.shape
    kernel = weights[0].transpose(1, 2, 0)
    axes[0].imshow(np.clip(photo.transpose(1, 2, 0), 0.0, 1.0))
    axes[0].set_title(f"input ({c}x{h}x{w})")
    axes[1].imshow((kernel - kernel.min()) / max(float(np.ptp(kernel)), 1e-12), interpolation="nearest")
    axes[1].set_title(f"kernel 0 ({c}x{k}x{k}),\nweights scaled to RGB")
    lo, hi = float(min(ours[0].min(), theirs[0].min())), float(max(ours[0].max(), theirs[0].max()))
    axes[2].imshow(ours[0], cmap="gray", vmin=lo, vmax=hi)
    axes[2].set_title("ours: as_strided windows\n+ matmul, channel 0")
    axes[3].imshow(theirs[0], cmap="gray", vmin=lo, vmax=hi)
    axes[3].set_title("lax.conv_general_dilated,\nchannel 0")
    error = np.max(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)), axis=0)
    im = axes[4].imshow(error, cmap="magma")
    axes[4].set_title(f"|ours - lax|, max over {o} channels\n(largest {error.max():.1e})")
    fig.colorbar(im, ax=axes[4], label="absolute error", shrink=0.7)
    for ax in axes:
        ax.set_xlabel("x (pixels)")
    axes[0].set_ylabel("y (pixels)")
    axes[1].set_xlabel("x (kernel taps)")
    axes[1].set_ylabel("y (kernel taps)")
    fig.suptitle(f"conv2d: {k}x{k} 'VALID' cross-correlation to {o} channels, "
                 f"output {ours.shape[1]}x{ours.shape[2]}")
    return fig


def spectrogram_figure(magnitude: np.ndarray, sample_rate: float, signal_name: str = "membrane.dat") -> Any:
    """Spectrogram (frames x bins magnitudes) in dB as a figure; time in s, frequency in Hz."""
    n_frames = magnitude.shape[0]
    db = 20.0 * np.log10(np.maximum(magnitude, 1e-6))
    t_end = ((n_frames - 1) * HOP + N_FFT) / sample_rate
    fig = _figure((8, 4))
    ax = fig.add_subplot()
    im = ax.imshow(db.T, origin="lower", aspect="auto", cmap="magma",
                   extent=(0.0, t_end, 0.0, sample_rate / 2))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("frequency (Hz)")
    ax.set_title(f"{signal_name}: |rfft| of {N_FFT}-sample Hann frames, hop {HOP}")
    fig.colorbar(im, ax=ax, label="dB")
    return fig


def uncovered_spans(rebuilt: np.ndarray) -> list[tuple[int, int]]:
    """Half-open sample ranges ``[start, stop)`` where ``rebuilt`` is NaN (the samples whose
    squared-window sum is below ``RECON_COVER`` of its maximum: left unreconstructed).

    Example:
      >>> uncovered_spans(np.array([np.nan, np.nan, 1.0, 2.0, np.nan]))
      [(0, 2), (4, 5)]
    """
    edges = np.flatnonzero(np.diff(np.concatenate([[0], np.isnan(rebuilt).astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def reconstruction_figure(signal: np.ndarray, rebuilt: np.ndarray, sample_rate: float,
                          signal_name: str = "membrane.dat") -> Any:
    """The recorded signal and its overlap-add reconstruction (NaN where uncovered), a close-up
    of each end, and their difference, as a figure: time in s, sample index on top, amplitude as
    recorded; the uncovered ends shaded; legends to the right of the plots."""
    t = np.arange(signal.size) / sample_rate
    spans = uncovered_spans(rebuilt)
    zoom = min(signal.size // 4, int(0.25 * sample_rate))  # samples in each close-up
    fig = _figure((10, 7.2), layout="constrained")
    axes = fig.subplot_mosaic([["full", "full"], ["start", "end"], ["diff", "diff"]],
                              height_ratios=[1.2, 1, 1])
    label = f"uncovered: window sum\n< {RECON_COVER:.0%} of its max"
    for name, ax in axes.items():
        if name != "diff":
            ax.plot(t, signal, lw=0.9, label="recorded")
            ax.plot(t, rebuilt, lw=0.9, ls="--", label="overlap-add\nreconstruction")
        for i, (start, stop) in enumerate(spans):
            ax.axvspan(start / sample_rate, stop / sample_rate, color="0.55", alpha=0.4, lw=0,
                       label=label if i == 0 else None)
        ax.set_xlabel("time (s)")
    full, diff = axes["full"], axes["diff"]
    full.set_xlim(t[0], t[-1])
    full.set_ylabel("amplitude\n(as recorded)")
    full.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    samples = full.secondary_xaxis("top", functions=(lambda s: s * sample_rate, lambda n: n / sample_rate))
    samples.set_xlabel("sample")
    full.set_title(f"{signal_name} rebuilt from {N_FFT}-sample Hann frames (hop {HOP}) by overlap-add")
    for name, (lo, hi) in (("start", (0, zoom)), ("end", (signal.size - zoom, signal.size))):
        ax = axes[name]
        ax.set_xlim(t[lo], t[hi - 1])
        low, high = float(signal[lo:hi].min()), float(signal[lo:hi].max())
        pad = max(0.1 * (high - low), 1e-3 * max(abs(low), abs(high)), 1e-6)
        ax.set_ylim(low - pad, high + pad)
        shown = [f"{a}-{b - 1}" for a, b in spans if a < hi and b > lo]
        ax.set_title(f"close-up of the {name}; uncovered samples {', '.join(shown) or 'none'}",
                     fontsize=9)
    axes["start"].set_ylabel("amplitude\n(as recorded)")
    diff.plot(t, rebuilt - signal, lw=0.8, color="tab:red", label="reconstruction\n- recorded")
    diff.set_xlim(t[0], t[-1])
    diff.set_ylabel("difference\n(amplitude)")
    diff.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def save_figures(results: Sequence[TaskResult], data: DemoData, out_dir: Path) -> list[Path]:
    """Every figure of :data:`FIGURES` in ``out_dir`` (created if needed); the paths written.

    Raises:
      ImportError: matplotlib or Pillow is missing."""
    out_dir.mkdir(parents=True, exist_ok=True)
    by_name = {r.name: r for r in results}
    conv = by_name["conv2d"]
    assert conv.reference_output is not None  # the conv2d task keeps its reference's result
    figures = {
        "patches.png": patches_figure(by_name["patches"].output, data.photo.shape),
        "conv2d.png": conv2d_figure(data.photo, conv_weights(data.photo.shape[0]), conv.output,
                                    conv.reference_output),
        "spectrogram.png": spectrogram_figure(by_name["spectrogram"].output, data.sample_rate,
                                              data.signal_name),
        "reconstruction.png": reconstruction_figure(data.signal, by_name["reconstruction"].output,
                                                    data.sample_rate, data.signal_name),
    }
    assert figures.keys() == FIGURES.keys()
    for name, fig in figures.items():
        fig.savefig(out_dir / name)
    return [out_dir / name for name in FIGURES]

"""``python -m functional_strides demo``: strided views on real data, checked and timed.

Data (bundled with matplotlib, read through ``matplotlib.cbook.get_sample_data``; without
matplotlib or Pillow the checks run on :func:`synthetic_data` of the same shapes instead, and
figures cannot be drawn):

* ``grace_hopper.jpg``: an RGB photo 512 pixels wide and 600 high, loaded with Pillow as
  float32 in [0, 1] and stored channels-first: the storage is the row-major flattening of
  a (C, H, W) = (3, 600, 512) array.
* ``membrane.dat``: a recorded membrane-potential trace, 12000 little-endian float32
  samples (48000 bytes, no header), sampled every 0.5 ms (2 kHz), as matplotlib's own
  examples read it (``np.fromfile(f, np.float32)``). Values are kept as stored.

Each task builds a chain of view steps with the library's own API, runs it under
``jax.jit``, and checks the result against an independent reference:

* ``patches``: ViT-style patch extraction, ``[num_patches, C*P*P]`` with P = 16;
* ``conv2d``: a 2-D convolution as im2col (``as_strided`` windows, then a matmul),
  against ``lax.conv_general_dilated``;
* ``spectrogram``: overlapping frames with ``unfold``, a Hann window and ``rfft``,
  against NumPy's ``sliding_window_view`` and ``np.fft.rfft``;
* ``reconstruction``: the inverse: ``irfft`` of the frames, the synthesis window, and
  overlap-add by ``add`` through an ``unfold`` view (normalised by the overlap-added
  squared window), against the original signal.

A task is a function ``(DemoData) -> TaskResult``; :data:`TASKS` lists them in order and
:func:`format_table` prints one row per result. Every line the command
(:func:`functional_strides.examples.demo.run`) prints fits in :data:`LINE_WIDTH` columns (a
long chain of steps wraps at its arrows).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import statistics
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from functional_strides import Layout, StridedArray, from_array, materialize, oracle, shares_storage

__all__ = [
    "FIGURES", "LINE_WIDTH", "TASKS", "Chain", "DemoData", "Step", "TaskResult", "conv2d_task",
    "format_steps", "format_table", "install_hint", "load_data", "missing_plotting", "patches_task",
    "reconstruction_task", "spectrogram_task", "synthetic_data", "wrap_chain",
]

PATCH = 16                      # ViT patch size P, in pixels
CONV_OUT, CONV_K = 8, 5         # conv2d: output channels and kernel size (pixels)
N_FFT, HOP = 256, 64            # spectrogram: frame length and hop, in samples
SAMPLE_RATE = 2000.0            # membrane.dat: one sample every 0.5 ms
RUNS = 5                        # run time is the median of this many calls
LINE_WIDTH = 100                # columns: no printed line is longer
# figure file -> what it shows (saved by ``demo --out DIR``; drawn by _demo_figures.py)
FIGURES = {
    "patches.png": "ViT patches, re-tiled in their grid",
    "conv2d.png": "im2col convolution against lax.conv_general_dilated",
    "spectrogram.png": "spectrogram of the recording, in dB",
    "reconstruction.png": "the recording rebuilt by overlap-add",
}

# Pass when max abs error <= tolerance. Patches are a pure gather: exact. The conv sums
# C*K*K = 75 float32 products of O(1) values in two different orders (matmul vs XLA conv,
# both at Precision.HIGHEST), so ~1e-6 is expected; 1e-4 leaves margin. The spectrogram
# compares float32 rfft magnitudes against float64 NumPy; its bound is relative to the
# largest magnitude (|X| reaches ~90 here, float32 FFT error ~ eps * log2(N_FFT) * max).
# The inverse spectrogram (irfft of rfft, windowed overlap-add, divided by the overlap-added
# squared window) is exact up to float32 FFT rounding; relative to the signal's range it must
# stay below 1e-5, on the samples whose squared-window sum is at least RECON_COVER of its
# maximum (near the ends the sum tends to 0 and dividing by it amplifies rounding).
TOLERANCES = {"patches": 0.0, "conv2d": 1e-4, "spectrogram_rel": 1e-5, "reconstruction_rel": 1e-5}
RECON_COVER = 0.1


# -- data ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DemoData:
    """Inputs of every task.

    Attributes:
      photo: float32 (C, H, W) = (3, 600, 512) in [0, 1], C-contiguous (channels-first).
      signal: float32 (12000,) membrane trace, raw values.
      sample_rate: samples per second of ``signal`` (Hz).
      photo_name, signal_name: where the photo and the signal come from (printed).
    """

    photo: np.ndarray
    signal: np.ndarray
    sample_rate: float
    photo_name: str = "grace_hopper.jpg"
    signal_name: str = "membrane.dat"


def load_data() -> DemoData:
    """Read ``grace_hopper.jpg`` and ``membrane.dat`` from matplotlib's sample data.

    Raises:
      ImportError: matplotlib or Pillow is missing (``pip install functional_strides[demo]``).
    """
    from matplotlib import cbook
    from PIL import Image

    sample: Any = cbook.get_sample_data("grace_hopper.jpg")  # a file object (asfileobj=True)
    with sample as f, Image.open(f) as img:
        hwc = np.asarray(img.convert("RGB"), dtype=np.float32) / np.float32(255.0)
    photo = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    signal = np.fromfile(cbook.get_sample_data("membrane.dat", asfileobj=False), dtype="<f4")
    return DemoData(photo=photo, signal=signal.astype(np.float32), sample_rate=SAMPLE_RATE)


def synthetic_data(seed: int = 0) -> DemoData:
    """Stand-ins of :func:`load_data`'s shapes and dtypes, made without matplotlib or Pillow.

    The photo is a (3, 600, 512) float32 test card in [0, 1] (colour gradients, rings, a
    checkerboard and 2% noise); the signal is 12000 float32 samples at 2 kHz resembling a
    membrane trace (a resting level, a step, a train of decaying spikes, a 3 Hz wobble and
    noise), in the recording's range (about -0.68 to 0.04). Deterministic for a ``seed``.

    Example:
      >>> data = synthetic_data()
      >>> data.photo.shape, data.photo.dtype, data.signal.shape, data.sample_rate
      ((3, 600, 512), dtype('float32'), (12000,), 2000.0)
      >>> bool(0.0 <= data.photo.min() and data.photo.max() <= 1.0)
      True
    """
    rng = np.random.default_rng(seed)
    y, x = np.meshgrid(np.linspace(0.0, 1.0, 600), np.linspace(0.0, 1.0, 512), indexing="ij")
    rings = 0.5 + 0.5 * np.cos(40.0 * np.hypot(x - 0.35, y - 0.4))
    checker = ((np.floor(x * 16) + np.floor(y * 16)) % 2 == 0) & (y > 0.7) & (x > 0.55)
    photo = np.stack([0.8 * x + 0.2 * rings, 0.6 * y + 0.4 * rings * (x < 0.7), 1.0 - 0.7 * x * y])
    photo = np.where(checker, 1.0 - photo, photo) + 0.02 * rng.standard_normal(photo.shape)
    t = np.arange(12000) / SAMPLE_RATE
    step = (t > 0.5) & (t < 5.5)
    phase = (t - 0.7) % 0.09
    spikes = np.where(step & (t > 0.7), 0.45 * np.exp(-phase / 0.004) - 0.12 * (phase / 0.09), 0.0)
    signal = -0.66 + 0.2 * step + spikes + 0.02 * np.sin(2 * np.pi * 3.0 * t) \
        + 0.003 * rng.standard_normal(t.size)
    return DemoData(photo=np.ascontiguousarray(np.clip(photo, 0.0, 1.0), dtype=np.float32),
                    signal=signal.astype(np.float32), sample_rate=SAMPLE_RATE,
                    photo_name="synthetic test card", signal_name="synthetic membrane trace")


def missing_plotting() -> str | None:
    """The first of Pillow and matplotlib (``"PIL"``, ``"matplotlib"``) that does not import,
    or ``None`` when both do. Figures need both; so does :func:`load_data`.

    Example:
      >>> missing_plotting() in (None, "matplotlib", "PIL")
      True
    """
    for name in ("PIL", "matplotlib"):  # Pillow first: matplotlib fails to import without it
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def install_hint() -> str:
    """The command that installs the demo's plotting extra: ``pip install -e ".[demo]"`` when
    the package runs from a checkout (a ``pyproject.toml`` beside it), else from the index.

    Example:
      >>> install_hint() in ('pip install -e ".[demo]"', 'pip install "functional_strides[demo]"')
      True
    """
    if (Path(__file__).resolve().parents[3] / "pyproject.toml").is_file():
        return 'pip install -e ".[demo]"'
    return 'pip install "functional_strides[demo]"'


# -- recording a chain of steps --------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Step:
    """One step of a chain: ``op`` with its arguments, and what it cost.

    ``kind`` is ``"view"`` (the result shares its input's storage: metadata only),
    ``"copy"`` (new storage holding the same elements), ``"write"`` (a functional write
    through a view: new storage) or ``"compute"`` (arithmetic).
    ``layout`` is the result's layout (strides and offset in elements)."""

    op: str
    args: str
    kind: str
    layout: Layout


class Chain:
    """Applies ``StridedArray`` methods and records each as a :class:`Step`.

    Steps are recorded while a function is traced (once per compile), so a chain built
    under ``jax.jit`` describes the compiled program.

    Example:
      >>> chain = Chain()
      >>> x = chain(from_array(jnp.arange(6.0)), "view", (2, 3))
      >>> y = chain(chain(x, "t"), "reshape", (6,))
      >>> chain.describe()
      'view(view) → t(view) → reshape(copy)'
      >>> str(chain.last_view())
      '(3,2):(1,3)+0'
    """

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def __call__(self, x: StridedArray, op: str, *args: Any) -> StridedArray:
        """``getattr(x, op)(*args)``, recorded as a view when storage is shared, else a copy."""
        y = getattr(x, op)(*args)
        kind = "view" if shares_storage(x, y) else "copy"
        self.steps.append(Step(op, _fmt_args(args), kind, y.layout))
        return y

    def write(self, x: StridedArray, op: str, src: Any) -> StridedArray:
        """``x.at[...].<op>(src)`` for a functional write through the whole view (``set``,
        ``add``, ...): the result is ``x``'s layout over new storage, recorded as a write."""
        y = getattr(x.at[...], op)(src)
        self.steps.append(Step(f"at[].{op}", "", "write", y.layout))
        return y

    def compute(self, op: str, fn: Callable[..., jax.Array], *args: Any) -> StridedArray:
        """``fn(*args)`` (dense arrays), recorded as a compute step, as a contiguous view."""
        out = from_array(fn(*args))
        self.steps.append(Step(op, "", "compute", out.layout))
        return out

    def describe(self, arrow: str = "→") -> str:
        """``"narrow(view) → view(view) → permute(view) → reshape(copy)"``."""
        return f" {arrow} ".join(f"{s.op}({s.kind})" for s in self.steps)

    def last_view(self) -> Layout:
        """Layout of the last view step (what the first copy after it reads)."""
        return next(s.layout for s in reversed(self.steps) if s.kind == "view")


def _fmt_args(args: Sequence[Any]) -> str:
    return ", ".join(str(tuple(a)) if isinstance(a, (tuple, list)) else str(a) for a in args)


def dense(x: StridedArray) -> jax.Array:
    """Materialise ``x`` (a slice + reshape when contiguous)."""
    return materialize(x.storage, x.layout)


# -- timing and results ----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TaskResult:
    """Outcome of one task.

    Attributes:
      name: task name (table row). chain: the recorded steps.
      reference: what the result was checked against.
      max_abs_error: ``max |result - reference|`` (float64). tolerance: pass bound.
      compile_s: seconds for ``jax.jit(f).lower(*args).compile()`` (tracing included).
      run_s: median seconds of ``RUNS`` calls of the compiled function.
      output: the result as NumPy (for plots).
      reference_output: the reference's own result where a figure compares the two, else None.
    """

    name: str
    chain: Chain
    reference: str
    max_abs_error: float
    tolerance: float
    compile_s: float
    run_s: float
    output: np.ndarray
    reference_output: np.ndarray | None = None

    @property
    def passed(self) -> bool:
        """``max_abs_error <= tolerance`` (False for NaN)."""
        return bool(self.max_abs_error <= self.tolerance)


def compile_and_time(fn: Callable[..., Any], *args: Any) -> tuple[Any, float, float]:
    """Compile ``jax.jit(fn)`` for ``args`` and time it: ``(output, compile_s, run_s)``; the
    output (an array or a tuple of arrays) as NumPy."""
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    return jax.tree.map(np.asarray, out), compile_s, statistics.median(times)


def max_abs_error(result: np.ndarray, reference: np.ndarray) -> float:
    """``max |result - reference|`` in float64; ``inf`` when the shapes differ.

    Example:
      >>> max_abs_error(np.ones(3, np.float32), np.array([1.0, 1.5, 0.75]))
      0.5
    """
    if result.shape != reference.shape:
        return math.inf
    if result.size == 0:
        return 0.0
    return float(np.max(np.abs(result.astype(np.float64) - reference.astype(np.float64))))


# -- task 1: ViT patches ---------------------------------------------------------------------
def patchify(storage: jax.Array, *, chw: tuple[int, int, int], patch: int, chain: Chain) -> jax.Array:
    """``[num_patches, C*P*P]`` patches of a channels-first image held in 1-D ``storage``.

    H and W are centre-cropped to multiples of ``patch`` with ``narrow``; patches are in
    row-major order of the patch grid, each flattened as (C, P, P) (the ViT convention)."""
    c, h, w = chw
    hp, wp = h // patch, w // patch
    x = chain(from_array(storage), "view", (c, h, w))
    for dim, n in ((1, h), (2, w)):
        if n % patch:
            x = chain(x, "narrow", dim, (n % patch) // 2, n - n % patch)
    x = chain(x, "view", (c, hp, patch, wp, patch))
    x = chain(x, "permute", (1, 3, 0, 2, 4))
    x = chain(x, "reshape", (hp * wp, c * patch * patch))
    return dense(x)


def patches_reference(photo: np.ndarray, patch: int) -> np.ndarray:
    """NumPy spelling of :func:`patchify` from array ops (crop, reshape, transpose)."""
    c, h, w = photo.shape
    top, left = (h % patch) // 2, (w % patch) // 2
    hp, wp = h // patch, w // patch
    crop = photo[:, top:top + hp * patch, left:left + wp * patch]
    grid = crop.reshape(c, hp, patch, wp, patch).transpose(1, 3, 0, 2, 4)
    return grid.reshape(hp * wp, c * patch * patch)


def patches_task(data: DemoData) -> TaskResult:
    """ViT patch extraction of the photo, checked against ``oracle.materialize`` of the
    permuted view's layout and against :func:`patches_reference` (exact match required)."""
    chain = Chain()
    storage = data.photo.reshape(-1)
    fn = functools.partial(patchify, chw=data.photo.shape, patch=PATCH, chain=chain)
    out, compile_s, run_s = compile_and_time(fn, jnp.asarray(storage))
    from_oracle = oracle.materialize(storage, chain.last_view()).reshape(out.shape)
    err = max(max_abs_error(out, from_oracle), max_abs_error(out, patches_reference(data.photo, PATCH)))
    return TaskResult("patches", chain, "oracle.materialize + NumPy", err, TOLERANCES["patches"],
                      compile_s, run_s, out)


# -- task 2: conv2d as im2col ----------------------------------------------------------------
def conv2d_im2col(storage: jax.Array, weights: jax.Array, *, chw: tuple[int, int, int],
                  chain: Chain) -> jax.Array:
    """'VALID' cross-correlation (O, H-K+1, W-K+1) of a (C, H, W) image in ``storage`` with
    (O, C, K, K) ``weights``, stride 1: overlapping ``as_strided`` windows, then a matmul."""
    c, h, w = chw
    o, _, k, _ = weights.shape
    ho, wo = h - k + 1, w - k + 1
    x = from_array(storage)
    cols = chain(x, "as_strided", (ho, wo, c, k, k), (w, 1, h * w, w, 1), 0)
    cols = chain(cols, "reshape", (ho * wo, c * k * k))
    kernel = weights.reshape(o, c * k * k).T
    y = chain.compute("matmul", functools.partial(jnp.matmul, precision=lax.Precision.HIGHEST),
                      dense(cols), kernel)
    y = chain(y, "view", (ho, wo, o))
    y = chain(y, "permute", (2, 0, 1))
    y = chain(y, "contiguous")
    return dense(y)


def conv_reference(photo: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """XLA's own convolution (``lax.conv_general_dilated``, NCHW/OIHW, VALID, HIGHEST)."""
    out = lax.conv_general_dilated(jnp.asarray(photo)[None], jnp.asarray(weights), (1, 1), "VALID",
                                   dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                   precision=lax.Precision.HIGHEST)
    return np.asarray(out[0])


def conv_weights(channels: int) -> np.ndarray:
    """Fixed (CONV_OUT, channels, CONV_K, CONV_K) float32 filters, variance 1/fan_in."""
    rng = np.random.default_rng(0)
    fan_in = channels * CONV_K * CONV_K
    w = rng.standard_normal((CONV_OUT, channels, CONV_K, CONV_K)) / math.sqrt(fan_in)
    return w.astype(np.float32)


def conv2d_task(data: DemoData) -> TaskResult:
    """im2col convolution of the photo, checked against ``lax.conv_general_dilated``."""
    chain = Chain()
    weights = conv_weights(data.photo.shape[0])
    fn = functools.partial(conv2d_im2col, chw=data.photo.shape, chain=chain)
    out, compile_s, run_s = compile_and_time(fn, jnp.asarray(data.photo.reshape(-1)),
                                             jnp.asarray(weights))
    reference = conv_reference(data.photo, weights)
    return TaskResult("conv2d", chain, "lax.conv_general_dilated", max_abs_error(out, reference),
                      TOLERANCES["conv2d"], compile_s, run_s, out, reference)


# -- task 3: spectrogram ---------------------------------------------------------------------
def hann(n: int) -> jax.Array:
    """Periodic Hann window of ``n`` samples, ``0.5 - 0.5 cos(2 pi k / n)`` (float32),
    as ``torch.hann_window(n)`` and ``scipy.signal.get_window("hann", n)``."""
    k = jnp.arange(n, dtype=jnp.float32)
    return 0.5 - 0.5 * jnp.cos(2.0 * jnp.pi * k / n)


def spectrogram(signal: jax.Array, *, n_fft: int, hop: int, chain: Chain) -> jax.Array:
    """Magnitude spectrogram ``|rfft(frame * hann)|``, shape
    ``((len(signal) - n_fft) // hop + 1, n_fft // 2 + 1)`` (frames x frequency bins)."""
    frames = chain(from_array(signal), "unfold", 0, n_fft, hop)
    frames = chain(frames, "contiguous")
    window = hann(n_fft)[None, :]
    x = chain.compute("hann", jnp.multiply, dense(frames), window)
    x = chain.compute("rfft", functools.partial(jnp.fft.rfft, axis=-1), dense(x))
    x = chain.compute("abs", jnp.abs, dense(x))
    return dense(x)


def spectrogram_reference(signal: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    """NumPy float64 spelling: ``sliding_window_view(...)[::hop]``, ``np.hanning(n+1)[:-1]``
    (the periodic Hann window), ``np.fft.rfft``, ``np.abs``."""
    frames = np.lib.stride_tricks.sliding_window_view(signal.astype(np.float64), n_fft)[::hop]
    window = np.hanning(n_fft + 1)[:-1]
    return np.abs(np.fft.rfft(frames * window[None, :], axis=-1))


def spectrogram_task(data: DemoData) -> TaskResult:
    """Spectrogram of the membrane trace, checked against NumPy in float64."""
    chain = Chain()
    fn = functools.partial(spectrogram, n_fft=N_FFT, hop=HOP, chain=chain)
    out, compile_s, run_s = compile_and_time(fn, jnp.asarray(data.signal))
    ref = spectrogram_reference(data.signal, N_FFT, HOP)
    tol = TOLERANCES["spectrogram_rel"] * float(np.max(np.abs(ref)))
    return TaskResult("spectrogram", chain, "NumPy sliding_window_view + rfft",
                      max_abs_error(out, ref), tol, compile_s, run_s, out)


# -- task 4: inverse spectrogram by overlap-add ----------------------------------------------
def istft_overlap_add(signal: jax.Array, *, n_fft: int, hop: int,
                      chain: Chain) -> tuple[jax.Array, jax.Array]:
    """Frames -> rfft -> irfft -> synthesis window -> overlap-add, then the squared-window sum
    (also by overlap-add) that normalises it: ``(numerator, window_sum)``, each of the
    signal's length. ``numerator / window_sum`` is the signal where ``window_sum > 0``.

    The overlap-add is ``add`` through an ``unfold`` view of a zero storage: where frames
    overlap, every contribution accumulates (the inverse of the framing view)."""
    n = signal.shape[0]
    frames = chain(from_array(signal), "unfold", 0, n_fft, hop)
    frames = chain(frames, "contiguous")
    window = hann(n_fft)[None, :]
    spec = chain.compute("hann·rfft", lambda f: jnp.fft.rfft(f * window, axis=-1), dense(frames))
    back = chain.compute("irfft·hann", lambda z: jnp.fft.irfft(z, n=n_fft, axis=-1) * window, dense(spec))
    target = chain(from_array(jnp.zeros(n, signal.dtype)), "unfold", 0, n_fft, hop)
    summed = chain.write(target, "add", dense(back))
    weight = target.at[...].add(jnp.broadcast_to(window * window, target.shape))
    return summed.storage, weight.storage


def reconstruction_task(data: DemoData) -> TaskResult:
    """Inverse of the spectrogram step: the recorded signal rebuilt from its windowed
    frames by overlap-add, compared with the original on the covered samples."""
    chain = Chain()
    fn = functools.partial(istft_overlap_add, n_fft=N_FFT, hop=HOP, chain=chain)
    (num, wsum), compile_s, run_s = compile_and_time(fn, jnp.asarray(data.signal))
    covered = wsum >= RECON_COVER * float(np.max(wsum))
    rebuilt = np.where(covered, num / np.where(covered, wsum, 1.0), np.nan).astype(np.float32)
    signal_range = float(np.ptp(data.signal))
    err = max_abs_error(rebuilt[covered], data.signal[covered])
    return TaskResult("reconstruction", chain,
                      f"the original signal ({int(covered.sum())} of {covered.size} samples covered)",
                      err, TOLERANCES["reconstruction_rel"] * signal_range, compile_s, run_s, rebuilt)


TASKS: list[Callable[[DemoData], TaskResult]] = [patches_task, conv2d_task, spectrogram_task,
                                                  reconstruction_task]


# -- output ----------------------------------------------------------------------------------
def arrow(stream: Any) -> str:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "→".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return "->"
    return "→"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def wrap_chain(chain: Chain, arrow: str = "→", indent: str = "  ", width: int = LINE_WIDTH) -> list[str]:
    """``chain.describe(arrow)`` cut into lines of at most ``width`` columns at its arrows:
    each line but the last ends with the arrow; the first starts with ``indent``, the others
    with two more spaces. A single step longer than a line is not cut.

    Example:
      >>> chain = Chain()
      >>> x = chain(chain(from_array(jnp.arange(6.0)), "view", (2, 3)), "t")
      >>> wrap_chain(chain, "->", width=20)
      ['  view(view) ->', '    t(view)']
    """
    lines: list[str] = []
    line = indent
    for i, step in enumerate(chain.steps):
        token = f"{step.op}({step.kind})" + ("" if i == len(chain.steps) - 1 else f" {arrow}")
        if line.strip() and len(line) + 1 + len(token) > width:
            lines.append(line)
            line = indent + "  "
        line += ("" if not line.strip() else " ") + token
    lines.append(line)
    return lines


def format_table(results: Sequence[TaskResult], arrow: str = "→", width: int = LINE_WIDTH) -> str:
    """One row per task (name, max abs error, tolerance, compile time, run time, PASS/FAIL),
    each followed by its chain of steps (a view, copy, compute or write each), indented and
    wrapped to ``width`` columns.

    Example:
      >>> chain = Chain()
      >>> _ = chain(from_array(jnp.arange(6.0)), "view", (2, 3))
      >>> print(format_table([TaskResult("t", chain, "ref", 0.0, 0.0, 0.5, 0.001, None)]))
      task  max abs err  tolerance  compile   run     check
      ----  -----------  ---------  --------  ------  -----
      t     0.00e+00     0.0e+00    500.0 ms  1.0 ms  PASS
        view(view)
    """
    header = ("task", "max abs err", "tolerance", "compile", "run", "check")
    rows = [header] + [
        (r.name, f"{r.max_abs_error:.2e}", f"{r.tolerance:.1e}", _ms(r.compile_s), _ms(r.run_s),
         "PASS" if r.passed else "FAIL")
        for r in results
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(cell.ljust(wd) for cell, wd in zip(row, widths, strict=True)).rstrip()

    lines = [line(header), "  ".join("-" * wd for wd in widths)]
    for r, row in zip(results, rows[1:], strict=True):
        lines += [line(row), *wrap_chain(r.chain, arrow, width=width)]
    return "\n".join(lines)


def format_steps(result: TaskResult, width: int = LINE_WIDTH) -> str:
    """Each step of a task with its arguments, kind and result layout (shape):(strides)+offset,
    in columns; a call too long to share a line of ``width`` columns with its kind and layout
    gets a line of its own.

    Example:
      >>> chain = Chain()
      >>> _ = chain(chain(from_array(jnp.arange(6.0)), "view", (2, 3)), "t")
      >>> print(format_steps(TaskResult("t", chain, "NumPy", 0.0, 0.0, 0.5, 0.001, None)))
      t (checked against NumPy):
        view((2, 3))  view     (2,3):(3,1)+0
        t()           view     (3,2):(1,3)+0
    """
    steps = result.chain.steps
    calls = [f"{s.op}({s.args})" for s in steps]
    tails = [f"{s.kind:<7}  {s.layout}" for s in steps]
    fits = [len(c) for c, t in zip(calls, tails, strict=True) if 4 + len(c) + 2 + len(t) <= width]
    col = max(fits, default=0)
    head = f"{result.name} (checked against {result.reference}):"
    lines = textwrap.wrap(head, width, subsequent_indent="    ") or [head]
    for call, tail in zip(calls, tails, strict=True):
        if len(call) <= col:
            lines.append(f"  {call:<{col}}  {tail}")
            continue
        lines.append(f"  {call}")
        lines.append(f"  {'':<{col}}  {tail}" if 2 + col + 2 + len(tail) <= width else f"    {tail}")
    return "\n".join(lines)

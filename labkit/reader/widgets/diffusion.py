"""The latent viewer: the four channels of z_t and the decoded preview, step by step.

``latent_view(run, step)`` is the one rendering function: it returns the frame (an RGB
mosaic, uint8 [264, 528, 3]) and its caption.  The live widget (``latent_viewer()``) shows
that frame as an image and replaces it whenever the step or the guidance scale changes —
a preview *replaces* the previous frame, it is never appended to it (§7.7).  The static
figure (``plot_latent_view``) draws the same frame with matplotlib.

Runs are cached per guidance scale and previews per (guidance, step), so moving the step
slider only re-composes a cached frame.
"""

from __future__ import annotations

import numpy as np

from labkit.core.guards import is_integer
from labkit.diffusion.pipeline import DiffusionConfig, DiffusionRun, load_models, run_diffusion
from labkit.diffusion.vae import to_uint8
from labkit.reader.png import array_png

TILE = 128  # one latent channel, 64 × 64 shown at 2×
GAP = 8
PREVIEW = 2 * TILE
CHANNEL_NAMES = ("0 luminance", "1 red-cyan", "2 blue-yellow", "3 light")
COLOUR_LIMIT = 2.5


def diverging_colours(values, limit: float = COLOUR_LIMIT) -> np.ndarray:
    """Blue–white–red colouring of a float array [H, W] (−limit → blue, 0 → white) → uint8 [H, W, 3]."""
    t = np.clip(np.asarray(values, dtype=np.float64) / limit, -1.0, 1.0)
    pos, neg = np.clip(t, 0, 1), np.clip(-t, 0, 1)
    rgb = np.stack([1 - neg * 0.8, 1 - np.maximum(pos, neg) * 0.8, 1 - pos * 0.8], axis=-1)
    return np.rint(rgb * 255).astype(np.uint8)


def step_label(run: DiffusionRun, step: int) -> str:
    """'step 2/4 · z_499 · guidance 5 · preview: decoded x0_hat of step 2' for the state after ``step`` updates."""
    n = len(run.latents) - 1
    t = run.latents[step][0]
    name = "z_0" if t < 0 else f"z_{t}"
    what = "the initial noise, decoded as is" if step == 0 else f"decoded x0_hat of step {step} (replace-frame)"
    return f"step {step}/{n} · {name} · guidance {run.config.guidance_scale:g} · preview: {what}"


class PreviewCache:
    """Decoded previews per (guidance, step): uint8 [256, 256, 3]."""

    def __init__(self, root=None):
        self.root = root
        self.frames: dict[tuple[float, int], np.ndarray] = {}

    def preview(self, run: DiffusionRun, step: int) -> np.ndarray:
        key = (float(run.config.guidance_scale), step)
        if key not in self.frames:
            vae = load_models(self.root)[2]
            latent = run.latents[0][1] if step == 0 else run.x0_hats[step - 1]
            image = to_uint8(vae.decode(latent, apply_scaling=run.config.vae_scaling))
            self.frames[key] = image[::2, ::2]
        return self.frames[key]


def latent_view(run: DiffusionRun, step: int, cache: PreviewCache | None = None) -> tuple[np.ndarray, str]:
    """The frame after ``step`` DDIM updates (0 … 4): channels of z_t (2 × 2) and the preview.

    Returns (mosaic uint8 [2·128 + 8, 2·128 + 8 + 256, 3], caption).
    """
    n = len(run.latents) - 1
    if not is_integer(step) or not 0 <= step <= n:
        raise ValueError(f"step must be an integer in [0, {n}], got {step!r}")
    cache = cache or PreviewCache()
    latent = run.latents[step][1][0]  # [4, 64, 64]
    height = 2 * TILE + GAP
    mosaic = np.full((height, 2 * TILE + GAP + GAP + PREVIEW, 3), 255, dtype=np.uint8)
    for channel in range(4):
        row, col = divmod(channel, 2)
        tile = diverging_colours(latent[channel]).repeat(2, axis=0).repeat(2, axis=1)
        top, left = row * (TILE + GAP), col * (TILE + GAP)
        mosaic[top:top + TILE, left:left + TILE] = tile
    left = 2 * TILE + 2 * GAP
    top = (height - PREVIEW) // 2
    mosaic[top:top + PREVIEW, left:left + PREVIEW] = cache.preview(run, step)
    return mosaic, step_label(run, step)


class LatentViewer:
    """State and controls of the latent viewer; ``.widget`` is what a notebook displays.

    Exposed for tests: ``step``, ``guidance``, ``step_slider``, ``guidance_slider``,
    ``step_label.value``, ``frame`` (the current mosaic) and ``runs`` (the cache).
    """

    def __init__(self, config: DiffusionConfig | None = None, root=None, step: int | None = None,
                 run: DiffusionRun | None = None):
        import ipywidgets as w

        if run is not None and config is not None and run.config != config:
            raise ValueError("run and config disagree; pass one of them")
        self.config = run.config if run is not None else (config or DiffusionConfig())
        self.root = root
        self.runs: dict[float, DiffusionRun] = {}
        self.previews = PreviewCache(root)
        self.frame = np.zeros((0, 0, 3), dtype=np.uint8)
        if run is not None:  # reuse a run the page already computed
            self.runs[float(run.config.guidance_scale)] = run
            for index in range(len(run.latents)):
                self.previews.preview(run, index)
        run = self.run_for(self.config.guidance_scale)
        n = len(run.latents) - 1
        self.step_slider = w.IntSlider(value=n if step is None else step, min=0, max=n, step=1,
                                       description="DDIM step", continuous_update=True)
        self.guidance_slider = w.FloatSlider(value=float(self.config.guidance_scale), min=0.0, max=10.0,
                                             step=0.5, description="guidance", continuous_update=False)
        self.step_label = w.Label()
        self.image = w.Image(format="png")
        self.caption = w.HTML(
            "left: the four channels of z<sub>t</sub> (blue − · white 0 · red +, ±2.5); "
            "right: the decoded preview, replaced at every step")
        self.step_slider.observe(lambda change: self._update(), names="value")
        self.guidance_slider.observe(lambda change: self._update(), names="value")
        self.widget = w.VBox([w.HBox([self.step_slider, self.guidance_slider]), self.step_label,
                              self.image, self.caption])
        self._update()

    @property
    def step(self) -> int:
        return int(self.step_slider.value)

    @property
    def guidance(self) -> float:
        return float(self.guidance_slider.value)

    def run_for(self, guidance: float) -> DiffusionRun:
        """The run at this guidance scale (computed once, then cached)."""
        guidance = float(guidance)
        if guidance not in self.runs:
            run = run_diffusion(self.config.replace(guidance_scale=guidance), root=self.root)
            for step in range(len(run.latents)):  # decode every preview now: a step change stays fast
                self.previews.preview(run, step)
            self.runs[guidance] = run
        return self.runs[guidance]

    def _update(self) -> None:
        run = self.run_for(self.guidance)
        self.frame, label = latent_view(run, self.step, self.previews)
        self.step_label.value = label
        self.image.value = array_png(self.frame)  # replace the frame, never append

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


def latent_viewer(run: DiffusionRun | None = None, config: DiffusionConfig | None = None,
                  root=None) -> LatentViewer:
    """The live latent viewer (ipywidgets), opened at the final step; ``run`` seeds its cache."""
    return LatentViewer(config, root, run=run)


def plot_latent_view(run: DiffusionRun | None = None, step: int | None = None):
    """The static figure of the viewer: the same ``latent_view`` frame, drawn with matplotlib."""
    from labkit.reader import plt as book_plt

    plt = book_plt()
    run = run or run_diffusion()
    step = len(run.latents) - 1 if step is None else step
    frame, label = latent_view(run, step)
    fig, ax = plt.subplots(figsize=(6.9, 3.9), dpi=80)  # about one screen pixel per frame pixel
    ax.imshow(frame, interpolation="nearest")
    for channel, name in enumerate(CHANNEL_NAMES):
        row, col = divmod(channel, 2)
        ax.text(col * (TILE + GAP) + 4, row * (TILE + GAP) + 12, name, fontsize=8,
                bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0})
    ax.text(2 * TILE + 2 * GAP + 4, 12, "preview", fontsize=8, color="white")
    ax.set_title(label, fontsize=9)
    ax.axis("off")
    fig.tight_layout()
    return fig

"""The picture the toy denoiser knows: a rainy-night station with a red umbrella on a bench.

Drawn at latent resolution (64 × 64) in RGB ∈ [−1, 1] plus a ``light`` channel (lamps and their wet
reflections), in concept layers night → station → rain → bench → umbrella → documentary: the difference
between two consecutive canvases is what one concept adds (the fixture recipe's deltas).
"""

from __future__ import annotations

import numpy as np

SIZE = 64
CONCEPTS = ("night", "station", "rain", "bench", "umbrella", "documentary")


def _paint(rgb, mask, colour):
    """rgb [3, H, W] ← mask·colour + (1 − mask)·rgb, mask ∈ [0, 1] of shape [H, W]."""
    colour = np.asarray(colour, dtype=np.float64)[:, None, None]
    return rgb * (1.0 - mask) + colour * mask


def _box(yy, xx, top, bottom, left, right, soft=0.6):
    """A soft-edged rectangle mask [H, W]."""

    def ramp(v):
        return np.clip(v / soft + 0.5, 0.0, 1.0)

    return ramp(yy - top) * ramp(bottom - yy) * ramp(xx - left) * ramp(right - xx)


def _disc(yy, xx, cy, cx, radius, soft=0.8):
    return np.clip((radius - np.hypot(yy - cy, xx - cx)) / soft + 0.5, 0.0, 1.0)


def paint_layers(rain_seed: int = 7) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """[(concept, rgb float64 [3, 64, 64] in [−1, 1], light float64 [64, 64])] after each layer."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64) + 0.5  # pixel centres
    layers = []
    # a neutral grey-blue start, replaced wholesale by the night layer
    rgb = np.zeros((3, SIZE, SIZE)) - 0.3
    light = np.zeros((SIZE, SIZE))

    # night: a dark sky fading to a faint city glow at the horizon; a dark wet platform below
    horizon = 34.0
    sky_t = np.clip(yy / horizon, 0.0, 1.0)
    sky = np.stack([-0.92 + 0.25 * sky_t, -0.88 + 0.25 * sky_t, -0.62 + 0.25 * sky_t])
    ground = np.stack([-0.78 + 0 * yy, -0.76 + 0 * yy, -0.66 + 0 * yy])
    below = (yy > horizon).astype(np.float64)
    rgb = sky * (1 - below) + ground * below
    layers.append(("night", rgb.copy(), light.copy()))

    # station: roof canopy, two pillars, platform edge with a yellow line, two hanging lamps
    rgb = _paint(rgb, _box(yy, xx, 0, 7, 0, 64), (-0.70, -0.70, -0.66))
    rgb = _paint(rgb, _box(yy, xx, 7, 8.5, 0, 64), (-0.35, -0.38, -0.40))
    for left in (5.0, 55.0):
        rgb = _paint(rgb, _box(yy, xx, 7, 48, left, left + 3.5), (-0.55, -0.56, -0.58))
    rgb = _paint(rgb, _box(yy, xx, 47.5, 49.0, 0, 64), (0.55, 0.40, -0.60))
    rgb = _paint(rgb, _box(yy, xx, 49.0, 64, 0, 64), (-0.86, -0.85, -0.80))
    for cx in (20.0, 44.0):
        rgb = _paint(rgb, _box(yy, xx, 8, 11.5, cx - 0.4, cx + 0.4), (-0.6, -0.6, -0.6))
        glow = np.exp(-((yy - 12.5) ** 2 + (xx - cx) ** 2) / (2 * 2.2**2))
        rgb = _paint(rgb, _disc(yy, xx, 12.5, cx, 1.6), (0.95, 0.80, 0.35))
        light = np.maximum(light, glow)
        # the lamp's smeared reflection on the wet platform
        streak = np.exp(-((xx - cx) ** 2) / (2 * 1.2**2)) * np.clip((yy - 35.0) / 12.0, 0, 1) * (yy < 47.5)
        rgb = _paint(rgb, 0.55 * streak, (0.55, 0.40, 0.05))
        light = np.maximum(light, 0.5 * streak)
    layers.append(("station", rgb.copy(), light.copy()))

    # rain: thin slanted streaks, brighter where the lamps light them
    rng = np.random.default_rng(rain_seed)
    streaks = np.zeros((SIZE, SIZE))
    for _ in range(48):
        x0, y0 = rng.uniform(-10, 64), rng.uniform(6, 60)
        length = rng.uniform(4, 9)
        for s in np.linspace(0.0, 1.0, 12):
            y, x = y0 + s * length, x0 + 0.35 * s * length
            iy, ix = int(y), int(x)
            if 0 <= iy < SIZE and 0 <= ix < SIZE:
                streaks[iy, ix] = 1.0
    strength = 0.35 + 0.35 * np.clip(light * 2, 0, 1)
    rgb = _paint(rgb, streaks * strength, (0.55, 0.62, 0.75))
    layers.append(("rain", rgb.copy(), light.copy()))

    # bench: a wooden seat and back rest on two legs, centre of the platform
    wood = (-0.15, -0.40, -0.62)
    rgb = _paint(rgb, _box(yy, xx, 33.0, 35.5, 14, 50), wood)
    rgb = _paint(rgb, _box(yy, xx, 38.5, 40.5, 13, 51), (-0.05, -0.32, -0.55))
    for left in (16.0, 46.0):
        rgb = _paint(rgb, _box(yy, xx, 40.5, 47.0, left, left + 1.6), (-0.75, -0.75, -0.75))
    rgb = _paint(rgb, _box(yy, xx, 35.5, 38.5, 15, 16.2), (-0.6, -0.6, -0.6))
    rgb = _paint(rgb, _box(yy, xx, 35.5, 38.5, 47.8, 49), (-0.6, -0.6, -0.6))
    layers.append(("bench", rgb.copy(), light.copy()))

    # umbrella: an open red canopy resting on the seat, its handle hooked over the edge
    cy, cx, radius = 38.5, 34.0, 7.5
    dome = _disc(yy, xx, cy, cx, radius) * (yy < cy)
    ribs = 0.25 * (np.abs(np.sin((xx - cx) / radius * 2.4)) < 0.15) * dome
    rgb = _paint(rgb, dome, (0.88, -0.80, -0.72))
    rgb = _paint(rgb, ribs, (0.45, -0.85, -0.80))
    rgb = _paint(rgb, _box(yy, xx, cy - 0.2, cy + 4.5, cx - 0.35, cx + 0.35), (-0.85, -0.85, -0.85))
    rgb = _paint(rgb, _box(yy, xx, cy + 4.0, cy + 5.0, cx - 1.8, cx + 0.3), (-0.85, -0.85, -0.85))
    # its red reflection on the wet floor
    reflection = 0.45 * _disc(yy, xx, 53.0, cx, 5.0) * np.clip((yy - 49) / 4, 0, 1)
    rgb = _paint(rgb, reflection, (0.55, -0.75, -0.70))
    layers.append(("umbrella", rgb.copy(), light.copy()))

    # documentary: muted colour and a vignette, as an unstaged photograph
    grey = rgb.mean(axis=0, keepdims=True)
    rgb = 0.8 * rgb + 0.2 * grey
    vignette = np.clip(1 - 0.35 * (((yy - 32) / 40) ** 2 + ((xx - 32) / 40) ** 2), 0.0, 1.0)
    rgb = (rgb + 1.0) * vignette - 1.0
    layers.append(("documentary", rgb.copy(), light.copy()))
    assert [name for name, _, _ in layers] == list(CONCEPTS)
    return [(name, np.clip(r, -0.97, 0.97), lt) for name, r, lt in layers]


def gaussian_blur(image: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur over the last two axes with edge padding; [..., H, W] → same.

    σ ≤ 0 returns a copy.  Sums of shifted slices, float64: the same numbers on every machine.
    """
    image = np.asarray(image, dtype=np.float64)
    if sigma <= 0.0:
        return image.copy()
    radius = int(np.ceil(3.0 * sigma))
    offsets = np.arange(-radius, radius + 1)
    weights = np.exp(-(offsets**2) / (2.0 * sigma**2))
    weights /= weights.sum()
    out = image
    for axis in (-2, -1):
        pad = [(0, 0)] * out.ndim
        pad[axis] = (radius, radius)
        padded = np.pad(out, pad, mode="edge")
        n = out.shape[axis]
        acc = np.zeros_like(out)
        for w, off in zip(weights, offsets, strict=True):
            acc += w * np.take(padded, np.arange(radius + off, radius + off + n), axis=axis)
        out = acc
    return out

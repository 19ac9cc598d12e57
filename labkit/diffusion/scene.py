"""The picture the toy denoiser knows: a rainy-night station with a red umbrella on a bench.

Its concepts are painted in layers night → station → rain → bench → umbrella → documentary, and the difference
between two consecutive canvases is what one concept adds (the denoiser's stored deltas).  The painting is the
book's fixture recipe (``booktools/recipes/diffusion.py``); the runtime keeps the concepts' order and the blur.
"""

from __future__ import annotations

import numpy as np

CONCEPTS = ("night", "station", "rain", "bench", "umbrella", "documentary")


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

"""toy-vae-v1: the decoder from latent [1, 4, 64, 64] to pixels [1, 3, 512, 512] (§7.6–7.7).

The diffusion latent is the VAE latent times a scaling factor (0.18215, the value latent
diffusion models use), so decoding first undoes it:

    v     = z / s                                    s = scaling_factor
    pre   = M · v + b        per latent pixel        M: [3, 4], b: [3]
    up    = bilinear 8× upsampling of pre            [3, 64, 64] → [3, 512, 512]
    x     = tanh(up)                                 pixels in (−1, 1), float32

Post-processing to an image: ``uint8 = round(clip((x + 1)/2, 0, 1) · 255)``, HWC.
Latent channels: 0 luminance, 1 red–cyan, 2 blue–yellow, 3 light (what glows).
"""

import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from labkit.core.fixtures import fixture_dir, read_json
from labkit.core.guards import real_array

VAE_ID = "toy-vae-v1"
UPSCALE = 8


@lru_cache(maxsize=4)
def bilinear_matrix(size_in: int, factor: int) -> np.ndarray:
    """U [size_in·factor, size_in] such that U @ a upsamples a column bilinearly (half-pixel centres)."""
    size_out = size_in * factor
    centres = (np.arange(size_out) + 0.5) / factor - 0.5
    centres = np.clip(centres, 0.0, size_in - 1.0)
    lower = np.floor(centres).astype(int)
    upper = np.minimum(lower + 1, size_in - 1)
    frac = centres - lower
    matrix = np.zeros((size_out, size_in))
    matrix[np.arange(size_out), lower] += 1.0 - frac
    matrix[np.arange(size_out), upper] += frac
    matrix.setflags(write=False)
    return matrix


@dataclass(frozen=True)
class VAEDecoder:
    """M [3, 4], b [3] in VAE-latent units and the scaling factor s."""

    mixing: np.ndarray
    bias: np.ndarray
    scaling_factor: float
    vae_id: str = VAE_ID

    def decode(self, latent, *, apply_scaling: bool = True) -> np.ndarray:
        """latent float [1, 4, 64, 64] → pixels float32 [1, 3, 512, 512] in (−1, 1).

        ``apply_scaling=False`` skips z / s (a fault: the image comes out washed out).
        """
        latent = real_array("latent", latent)
        if latent.ndim != 4 or latent.shape[:2] != (1, 4):
            raise ValueError(f"latent must have shape [1, 4, H, W], got {list(latent.shape)}")
        v = latent[0].astype(np.float64)
        if apply_scaling:
            v = v / self.scaling_factor  # v = z / s
        pre = np.einsum("ck,khw->chw", self.mixing, v) + self.bias[:, None, None]  # M·v + b
        rows = bilinear_matrix(pre.shape[1], UPSCALE)
        cols = bilinear_matrix(pre.shape[2], UPSCALE)
        up = rows @ pre @ cols.T  # [3, H, W] → [3, 8H, 8W]
        return np.tanh(up)[None].astype(np.float32)


def to_uint8(pixels) -> np.ndarray:
    """pixels float [1, 3, H, W] in [−1, 1] → image uint8 [H, W, 3]: round(clip((x+1)/2)·255)."""
    pixels = real_array("pixels", pixels)  # NaN has no uint8 value
    if pixels.ndim != 4 or pixels.shape[:2] != (1, 3):
        raise ValueError(f"pixels must have shape [1, 3, H, W], got {list(pixels.shape)}")
    scaled = np.clip((pixels[0].astype(np.float64) + 1.0) / 2.0, 0.0, 1.0) * 255.0
    return np.rint(scaled).astype(np.uint8).transpose(1, 2, 0)


#: the book's PNG settings: zlib level 1 (the fastest: the trace needs the same bytes every time, not
#: the smallest file; level 6 took three times as long), no optimisation pass, no text or time chunks
PNG_SETTINGS = {"format": "PNG", "compress_level": 1, "optimize": False}


def encode_png(image, text_chunks: dict[str, str] | None = None) -> bytes:
    """image uint8 [H, W, 3] → PNG bytes with fixed settings (same pixels, same bytes); ``text_chunks``
    adds tEXt chunks (the ``png_timestamp`` fault)."""
    from PIL import Image, PngImagePlugin

    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be uint8 [H, W, 3], got {image.dtype} {list(image.shape)}")
    info = None
    if text_chunks:
        info = PngImagePlugin.PngInfo()
        for key, value in text_chunks.items():
            info.add_text(key, value)
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, pnginfo=info, **PNG_SETTINGS)
    return buffer.getvalue()


def png_zlib_version() -> str:
    """The zlib inside Pillow: PNG bytes are comparable only between equal versions."""
    from PIL import features

    return str(features.version("zlib"))


def load_vae(root: str | Path | None = None) -> VAEDecoder:
    """Load toy-vae-v1 from ``root`` (default: ``fixtures/diffusion``)."""
    meta = read_json(fixture_dir("diffusion", root) / f"{VAE_ID}.json")
    mixing, bias = (np.array(meta[name], dtype=np.float64) for name in ("mixing", "bias"))
    return VAEDecoder(mixing, bias, float(meta["scaling_factor"]))

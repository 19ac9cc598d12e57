"""toy-latent-denoiser-v3: predicts the noise ε in a latent, given the timestep and the text.

Not a trained network: the ideal (posterior-mean) denoiser of a small, known family of pictures,
so that every number can be explained.  For one latent z_t, timestep t and condition c [12, 768]:

1. **Read the text** (cross-attention from six concept queries to the 12 text tokens):

       a   = attention(τ·q, c, c)                    q: concept directions [6, 768]
       w_k = sigmoid(β · (cos(a_k, q_k) − θ))        how strongly the text names concept k

2. **The picture it expects** (a base image plus the named concepts, 20 % of the way):

       μ = base + λ · Σ_k w_k Δ_k                    base: blurred average [4, 64, 64]
                                                     Δ_k: what concept k adds; λ = 0.2

   λ < 1 makes the conditional prediction timid, as trained conditional branches are;
   classifier-free guidance with scale 5 = 1/λ restores the full picture.

3. **Coarse before fine**: at noise level t only the coarse shape is trusted,

       μ_t = blur(μ, σ_blur = b_max · (t / 999)²)

4. **Posterior mean** of x₀ for the prior x₀ ~ N(μ_t, s² I) (s: texture), then ε:

       g_t = √ᾱ_t s² / (ᾱ_t s² + 1 − ᾱ_t)
       x̂₀  = μ_t + g_t · (z_t − √ᾱ_t μ_t)
       ε   = (z_t − √ᾱ_t x̂₀) / √(1 − ᾱ_t)

Arithmetic is float64; the result is cast to the latent's dtype (float32).
"""

from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from labkit.core.fixtures import fixture_dir, load_arrays, read_json
from labkit.core.guards import real_array, real_values, token_ids
from labkit.diffusion.ddim import alphas_cumprod
from labkit.nn import attention

DENOISER_ID = "toy-latent-denoiser-v3"


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


@dataclass(frozen=True)
class DenoiserParams:
    """The denoiser's scalars, named in the module docstring."""

    concepts: tuple[str, ...]
    query_scale: float  # τ
    gate_sharpness: float  # β
    gate_threshold: float  # θ
    conditional_strength: float  # λ
    texture_std: float  # s
    blur_max: float  # b_max, in latent pixels


@dataclass(eq=False)
class LatentDenoiser:
    """ε-prediction for latent_batch [B, 4, 64, 64], timestep_batch [B], condition_batch [B, 12, 768];
    concept_queries [K, 768], base [4, 64, 64], deltas [K, 4, 64, 64], schedule ᾱ [1000]."""

    denoiser_id = DENOISER_ID

    params: DenoiserParams
    concept_queries: np.ndarray
    base: np.ndarray
    deltas: np.ndarray
    schedule: np.ndarray = field(default_factory=alphas_cumprod, repr=False)

    def __post_init__(self):
        k = len(self.params.concepts)
        if self.concept_queries.ndim != 2 or self.concept_queries.shape[0] != k:
            raise ValueError(f"concept_queries must be [{k}, width], got {list(self.concept_queries.shape)}")
        if self.deltas.shape != (k, *self.base.shape):
            shape = ", ".join(map(str, self.base.shape))
            raise ValueError(f"deltas must be [{k}, {shape}], got {list(self.deltas.shape)}")

    def gates(self, condition) -> np.ndarray:
        """w_k for one condition [12, width] → float64 [K] (step 1 of the docstring)."""
        c = real_values("condition", condition, finite=True)
        q = self.concept_queries.astype(np.float64)
        allowed = np.ones((q.shape[0], c.shape[0]), dtype=bool)
        read, _ = attention((self.params.query_scale * q)[None], c[None], c[None], allowed)
        read = read[0]
        cosine = np.sum(read * q, axis=-1) / (np.linalg.norm(read, axis=-1) * np.linalg.norm(q, axis=-1))
        return 1.0 / (1.0 + np.exp(-self.params.gate_sharpness * (cosine - self.params.gate_threshold)))

    def expected_picture(self, gates) -> np.ndarray:
        """μ = base + λ Σ_k w_k Δ_k: gates [K] → float64 [4, 64, 64]."""
        gates = real_values("gates", gates, finite=True)
        added = np.tensordot(gates, self.deltas.astype(np.float64), axes=1)
        return self.base.astype(np.float64) + self.params.conditional_strength * added

    def predict_x0(self, latent, timestep: int, gates) -> np.ndarray:
        """x̂₀ of one latent [4, 64, 64] at timestep t with concept gates [K] → float64 [4, 64, 64]."""
        a = float(self.schedule[timestep])
        s2 = self.params.texture_std**2
        blur = self.params.blur_max * (timestep / (len(self.schedule) - 1)) ** 2  # σ_blur = b_max · (t / (T − 1))²
        mean = gaussian_blur(self.expected_picture(gates), blur)  # μ_t
        gain = np.sqrt(a) * s2 / (a * s2 + 1.0 - a)  # g_t
        return mean + gain * (np.asarray(latent, dtype=np.float64) - np.sqrt(a) * mean)

    def __call__(self, latent_batch, timestep_batch, condition_batch) -> np.ndarray:
        """ε for each batch element: [B, 4, 64, 64], [B], [B, 12, width] → float32 [B, 4, 64, 64]."""
        latent_batch = real_array("latent_batch", latent_batch)
        timestep_batch = np.asarray(timestep_batch)
        condition_batch = real_array("condition_batch", condition_batch)
        b = latent_batch.shape[0] if latent_batch.ndim else 0
        if latent_batch.ndim != 4 or latent_batch.shape[1:] != self.base.shape:
            raise ValueError(
                f"latent_batch must be [B, {', '.join(map(str, self.base.shape))}], got {list(latent_batch.shape)}"
            )
        if timestep_batch.shape != (b,) or timestep_batch.dtype.kind not in "iu":
            raise ValueError(
                f"timestep_batch must be integers of shape [{b}], got {timestep_batch.dtype} "
                f"{list(timestep_batch.shape)}"
            )
        token_ids("timestep_batch", timestep_batch, len(self.schedule))  # each t in [0, 999]
        width = self.concept_queries.shape[1]
        if condition_batch.ndim != 3 or condition_batch.shape[0] != b or condition_batch.shape[2] != width:
            raise ValueError(f"condition_batch must be [{b}, T, {width}], got {list(condition_batch.shape)}")
        out = np.empty(latent_batch.shape, dtype=np.float64)
        for i in range(b):
            t = int(timestep_batch[i])
            a = float(self.schedule[t])
            x0 = self.predict_x0(latent_batch[i], t, self.gates(condition_batch[i]))
            z = latent_batch[i].astype(np.float64)
            out[i] = (z - np.sqrt(a) * x0) / np.sqrt(1.0 - a)  # ε = (z_t − √ᾱ_t x̂₀)/√(1−ᾱ_t)
        return out.astype(latent_batch.dtype)


def load_denoiser(root: str | Path | None = None) -> LatentDenoiser:
    """Load toy-latent-denoiser-v3 from ``root`` (default: ``fixtures/diffusion``)."""
    folder = fixture_dir("diffusion", root)
    meta = read_json(folder / f"{DENOISER_ID}.json")
    arrays = load_arrays(folder / f"{DENOISER_ID}.npz")
    scalars = [f.name for f in fields(DenoiserParams) if f.name != "concepts"]
    params = DenoiserParams(tuple(meta["concepts"]), **{name: float(meta[name]) for name in scalars})
    return LatentDenoiser(params, arrays["concept_queries"], arrays["base"], arrays["deltas"])

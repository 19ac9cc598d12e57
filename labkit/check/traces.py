"""The exercises of the preface and chapter 7 without a runtime hook; every answer is computed from the
real kernels, fixtures and runtimes at check time, so a change to the kit moves the answer with it.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import function, value
from labkit.check.grading import exactly
from labkit.core.fixtures import fixture_path, read_json
from labkit.diffusion import DiffusionConfig, ddim_step
from labkit.diffusion.guidance import classifier_free_guidance
from labkit.diffusion.normal import blocks_to_normals
from labkit.nn import rms_norm


@value
def rms_norm_row() -> float:
    return float(rms_norm(np.array([[3.0, 4.0, 0.0, 0.0]]), 1e-6)[0, 0])


def _min_p_cases():
    rng = np.random.default_rng(29)
    return [
        ("seeded logits [16], min_p = 0.1", (rng.normal(size=16) * 3, 0.1)),
        ("logits in the thousands, min_p = 0.5", (np.array([1000.0, 999.5, 990.0, 1000.0]), 0.5)),
        ("min_p = 1: only the maxima stay", (np.array([2.0, 1.0, 2.0, -1.0]), 1.0)),
        ("a row with −∞ already masked", (np.array([0.0, -np.inf, -0.5, -3.0]), 0.2)),
    ]


@function(_min_p_cases)
def min_p_filter(logits, min_p):
    z = np.asarray(logits, dtype=np.float64)
    keep = z - np.max(z) >= np.log(min_p)  # p_i / p_max = exp(z_i − z_max)
    return np.where(keep, z, -np.inf)


@value
def philox_blocks_for_latent() -> int:
    per_block = blocks_to_normals(np.full((1, 4), 7, dtype=np.uint32)).size
    return int(np.prod(DiffusionConfig().latent_shape)) // per_block


@value
def cfg_other_convention() -> float:
    return float(DiffusionConfig().guidance_scale) - 1.0


@value
def cfg_scale_one() -> str:
    eps = np.random.default_rng(5).normal(size=(2, 4, 8, 8))
    guided = classifier_free_guidance(eps, 1.0)
    row = next(i for i in range(2) if np.allclose(guided[0], eps[i]))
    return "conditional" if DiffusionConfig().cfg_order[row] == "positive" else "unconditional"


@value
def x0_fed_as_epsilon() -> list[float]:
    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    z_prev, _ = ddim_step(np.array(fx["z_2"]), np.array([1.0, -1.0]), fx["alpha_bar"]["2"], fx["alpha_bar"]["1"])
    return [float(v) for v in np.ravel(z_prev)]


def _chain(*pairs: tuple[str, str | None]) -> list[dict]:
    """A trace of events (ID, parent ID) with every other field fixed."""
    fields = {"trace_id": "trace-x", "component": "c", "event_type": "a.b", "logical_step": None, "payload": {}}
    return [{**fields, "event_id": e, "parent_event_id": p} for e, p in pairs]


def _chains():
    return [
        ("a well-formed chain", (_chain(("e00", None), ("e01", "e00"), ("e02", "e01")),)),
        ("a parent that points forward", (_chain(("e00", None), ("e01", "e02"), ("e02", "e00")),)),
        ("a parent that does not exist", (_chain(("e00", None), ("e01", "e00"), ("e02", "e09")),)),
        ("a second root", (_chain(("e00", None), ("e01", None), ("e02", "e01")),)),
        ("a tree, not a chain", (_chain(("e00", None), ("e01", "e00"), ("e02", "e00"), ("e03", "e01")),)),
    ]


@function(_chains, agree=exactly)
def bad_parents(events):
    seen: set[str] = set()
    bad = []
    for index, event in enumerate(events):
        parent = event["parent_event_id"]
        if (parent is None and index > 0) or (parent is not None and parent not in seen):
            bad.append(event["event_id"])
        seen.add(event["event_id"])
    return bad

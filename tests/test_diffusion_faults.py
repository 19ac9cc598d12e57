"""Trace two against its golden trace, and the evidence around its named faults.

Traces are compared by ``labkit.trace.divergence.first_divergence`` (§7.17: type and parent,
artifacts, discrete state, tensors under the contract's tolerance, RNG counter, commit);
``tests/test_catalogue.py`` checks each fault's declared first divergence against it.
"""

import numpy as np
import pytest

from labkit.core.events import read_jsonl
from labkit.core.fixtures import fixture_path
from labkit.diffusion.vae import png_zlib_version
from labkit.trace.divergence import first_divergence
from labkit.trace.kinds import kind, run_kind


@pytest.fixture(scope="module")
def golden():
    return read_jsonl(fixture_path("traces", "diffusion.jsonl"))


@pytest.fixture(scope="module")
def runs():
    """Runs by fault name (None: the correct run), computed once per module."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = run_kind("diffusion", name)
        return cache[name]

    return get


def test_fresh_run_equals_golden_trace(golden, runs):
    fresh = runs(None).events
    zlib_here, zlib_golden = png_zlib_version(), golden[7]["payload"]["png_zlib"]
    if zlib_here == zlib_golden:
        assert first_divergence(golden, fresh) is None, f"{first_divergence(golden, fresh)}"
        return
    # another zlib writes other PNG bytes from the same pixels: compare up to the pixel level
    assert first_divergence(golden[:7], fresh[:7]) is None, f"{first_divergence(golden[:7], fresh[:7])}"
    pixel = [e["payload"]["tensors"]["image_uint8"] for e in (fresh[7], golden[7])]
    assert pixel[0] == pixel[1], f"uint8 pixels differ: {pixel[0]['digest']} vs {pixel[1]['digest']}"
    pytest.skip(f"PNG bytes compared only under zlib {zlib_golden}; this Pillow has zlib {zlib_here}")


def test_the_comparison_can_fail(golden):
    bent = [dict(e, payload=dict(e["payload"])) for e in golden]
    bent[4]["payload"]["timestep"] = 500
    found = first_divergence(golden, bent)
    assert (found.at.event_id, found.rule, found.field) == ("d04", "discrete_state", "timestep")


def test_png_timestamp_keeps_pixels_but_changes_bytes(golden, runs):
    faulty = runs("png_timestamp").events
    ours, theirs = faulty[7]["payload"]["tensors"], golden[7]["payload"]["tensors"]
    assert ours["image_uint8"]["digest"] == theirs["image_uint8"]["digest"], "pixel level must agree"
    assert ours["png"]["digest"] != theirs["png"]["digest"], "png level must differ"


def test_cfg_swap_pushes_away_from_the_prompt(runs):
    good, bad = runs(None), runs("cfg_order_swapped")
    region = (slice(31 * 8, 38 * 8), slice(27 * 8, 41 * 8))
    red = [float(np.mean(r.image[region][..., 0].astype(int) - r.image[region][..., 1])) for r in (good, bad)]
    assert red[0] > 100 and red[1] < 10, f"red − green at the umbrella: correct {red[0]:.1f}, swapped {red[1]:.1f}"


def test_unknown_fault_is_refused():
    with pytest.raises(ValueError, match="fault must be one of"):
        kind("diffusion").faulty_config("cosmic_ray")

"""The exercises of the preface and chapter 7 without a runtime hook; every answer is computed from the
real kernels, fixtures and runtimes at check time, so a change to the kit moves the answer with it.
"""

from __future__ import annotations

import numpy as np

from labkit.check import tools
from labkit.check.core import function, table, value
from labkit.check.grading import exactly
from labkit.core.fixtures import fixture_path, read_json
from labkit.diffusion import DiffusionConfig, ddim_step
from labkit.diffusion.guidance import classifier_free_guidance
from labkit.diffusion.normal import blocks_to_normals
from labkit.tools.calls import common_prefix
from labkit.tools.confirm import request_digest
from labkit.tools.fixture import fixture_invocation
from labkit.tools.tokenizer import ToolTemplate, ToolTokenizer
from labkit.tools.toolspec import load_toolspec
from labkit.trace import catalogue, kinds

#: the request the cache of page 09's prediction was built for
OTHER_USER_TEXT = "明天上午九点提醒我带护照。"


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


@value
def three_token_event_count() -> int:
    text = kinds.kind("text")
    return len(text.run(text.config(max_output_tokens=3)).events)


@value
def digest_changes_on_reorder() -> bool:
    arguments = fixture_invocation().normalized_arguments  # the chapter's Invocation, from the fixtures
    return request_digest(arguments) != request_digest(dict(reversed(list(arguments.items()))))


@value
def reuse_for_other_request() -> int:
    prompt = ToolTemplate().tool_call_prompt([load_toolspec()], OTHER_USER_TEXT)
    second_call = kinds.run("tool", None, decoder=tools.decoder()).second_call  # the chapter's happy path
    return int(common_prefix(np.array([ToolTokenizer().encode(prompt)]), second_call.input_ids))


def _backoff_cases():
    return [
        ("first retry", (0, 100.0, 5000.0, 0.5)),
        ("third retry", (2, 100.0, 5000.0, 0.25)),
        ("past the cap", (10, 100.0, 5000.0, 0.9)),
        ("u = 0: retry at once", (4, 50.0, 1000.0, 0.0)),
        ("exactly at the cap", (5, 100.0, 3200.0, 0.999)),
    ]


@function(_backoff_cases)
def jittered_backoff(attempt, base_ms, cap_ms, u):
    return u * min(cap_ms, base_ms * 2.0**attempt)  # full jitter on the capped exponential


#: the mysteries handed to the reader's function, in order: (kind, fault)
MYSTERIES = (
    ("text", "broken_detokenizer"),
    ("diffusion", "leading_timesteps"),
    ("tool", "unauthorized"),
    ("text", "reset_rope_position"),
)


@table(agree=exactly)
def name_the_fault():
    return [
        (f"mystery {number} ({kind})", (kind, catalogue.golden(kind), catalogue.run(kind, fault)), fault)
        for number, (kind, fault) in enumerate(MYSTERIES)
    ]

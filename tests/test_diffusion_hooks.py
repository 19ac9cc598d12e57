"""Trace two's substitution hooks (used by the trace-two exercises): the word → normal
transform, the CFG combination and the DDIM step.  With the library's own pieces plugged
in, the run is the golden run; a different piece changes the trace where it should; bad
hooks are refused with a message naming the argument."""

import numpy as np
import pytest

from labkit.core.events import read_jsonl
from labkit.core.fixtures import fixture_path
from labkit.diffusion import DiffusionConfig, ddim_step, run_diffusion
from labkit.diffusion.config import DiffusionHooks
from labkit.diffusion.guidance import classifier_free_guidance
from labkit.diffusion.normal import PhiloxNormalStream, blocks_to_normals
from labkit.trace.divergence import first_divergence


@pytest.fixture(scope="module")
def golden():
    return read_jsonl(fixture_path("traces", "diffusion.jsonl"))


def _library_step(z_t, epsilon, t, prev_t, alpha_bars):
    return ddim_step(z_t, epsilon, alpha_bars[t], 1.0 if prev_t is None else alpha_bars[prev_t])


def test_library_pieces_through_every_hook_reproduce_the_golden_trace(golden):
    calls = {"words_to_normals": [], "cfg_combine": [], "scheduler_step": []}

    def counted(name, fn):
        def wrapper(*args):
            calls[name].append(args)
            return fn(*args)

        return wrapper

    hooks = DiffusionHooks(
        words_to_normals=counted("words_to_normals", blocks_to_normals),
        cfg_combine=counted("cfg_combine", classifier_free_guidance),
        scheduler_step=counted("scheduler_step", _library_step),
    )
    run = run_diffusion(hooks=hooks)
    divergence = first_divergence(golden, run.events)
    assert divergence is None, f"golden (A) vs library pieces through the hooks (B):\n{divergence}"
    assert {name: len(c) for name, c in calls.items()} == {"words_to_normals": 1, "cfg_combine": 4, "scheduler_step": 4}
    assert [(t, prev) for _, _, t, prev, _ in calls["scheduler_step"]] == [
        (999, 749),
        (749, 499),
        (499, 249),
        (249, None),
    ]
    assert calls["words_to_normals"][0][0].shape == (4096, 4)
    assert calls["cfg_combine"][0][0].shape == (2, 4, 64, 64) and calls["cfg_combine"][0][1] == 5.0


def test_classifier_free_guidance_equals_the_inline_formula_and_its_two_ends():
    rng = np.random.default_rng(7)
    batch = rng.normal(size=(2, 4, 3, 3)).astype(np.float32)
    neg, pos = batch[0:1], batch[1:2]
    guided = classifier_free_guidance(batch, 5.0)
    assert guided.dtype == np.float32 and guided.shape == (1, 4, 3, 3)
    gap = float(np.max(np.abs(guided - (neg + np.float32(5.0) * (pos - neg)))))
    assert gap == 0.0, f"classifier_free_guidance vs ε_neg + 5(ε_pos − ε_neg): largest gap {gap}"
    assert np.array_equal(classifier_free_guidance(batch, 0.0), neg), "w = 0 must give ε_neg exactly"
    at_one = float(np.max(np.abs(classifier_free_guidance(batch, 1.0) - pos)))
    assert at_one < 1e-6, f"w = 1 must give ε_pos (up to float32 rounding of ε_neg + (ε_pos − ε_neg)); gap {at_one}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (np.zeros((3, 4)), 5.0),
            r"epsilon_batch must have 2 rows \(negative, positive\) on axis 0, got shape \[3, 4\]",
        ),
        ((np.zeros((2, 4)), -1.0), "guidance_scale must be a number >= 0, got -1.0"),
    ],
)
def test_classifier_free_guidance_errors_name_the_argument(args, message):
    with pytest.raises(ValueError, match=message):
        classifier_free_guidance(*args)


def test_cfg_hook_with_rows_swapped_diverges_at_d02_epsilon_guided(golden):
    swapped = DiffusionHooks(cfg_combine=lambda batch, w: classifier_free_guidance(batch[::-1], w))
    divergence = first_divergence(golden, run_diffusion(hooks=swapped, decode=False).events)
    assert divergence is not None and divergence.event_ids == ("d02", "d02"), divergence
    assert divergence.field.startswith("tensors.epsilon_guided"), divergence.field


def test_decode_false_stops_after_the_loop_with_the_golden_latent_events(golden):
    run = run_diffusion(decode=False)
    assert [e["event_id"] for e in run.events] == [f"d0{i}" for i in range(6)]
    assert run.pixels is None and run.png == b""
    assert first_divergence(golden[:6], run.events) is None


def test_scheduler_hook_reads_a_read_only_table():
    def writes_table(z_t, epsilon, t, prev_t, alpha_bars):
        alpha_bars[t] = 0.5
        return _library_step(z_t, epsilon, t, prev_t, alpha_bars)

    with pytest.raises(ValueError, match="read-only"):
        run_diffusion(hooks=DiffusionHooks(scheduler_step=writes_table), decode=False)


@pytest.mark.parametrize(
    ("hooks", "config", "message"),
    [
        (
            dict(cfg_combine=lambda b, w: b),
            None,
            r"hooks.cfg_combine must return epsilon_guided of the latent's shape "
            r"\[1, 4, 64, 64\], got \[2, 4, 64, 64\]",
        ),
        (
            dict(scheduler_step=lambda z, e, t, p, a: z),
            None,
            r"hooks.scheduler_step must return a pair \(z_prev, x0_hat\), got ndarray",
        ),
        (
            dict(scheduler_step=lambda z, e, t, p, a: (z, z[0])),
            None,
            r"hooks.scheduler_step must return x0_hat of the latent's shape \[1, 4, 64, 64\], got \[4, 64, 64\]",
        ),
        (
            dict(scheduler_step=_library_step),
            DiffusionConfig(eta=1.0),
            r"hooks.scheduler_step is a deterministic DDIM step \(eta = 0\); got eta=1.0",
        ),
        (
            dict(words_to_normals=lambda words: blocks_to_normals(words)[:-4]),
            None,
            r"to_normals must return 4 normals per block, shape \[16384\] for 4096 blocks, got \[16380\]",
        ),
    ],
)
def test_bad_hook_results_are_refused_with_the_argument_named(hooks, config, message):
    with pytest.raises(ValueError, match=message):
        run_diffusion(config, hooks=DiffusionHooks(**hooks), decode=False)


def test_hooks_must_be_functions_and_a_hooks_object():
    with pytest.raises(ValueError, match=r"hooks.cfg_combine must be a function \(epsilon_batch, guidance_scale\)"):
        DiffusionHooks(cfg_combine=5.0)
    with pytest.raises(ValueError, match="hooks must be a DiffusionHooks, got dict"):
        run_diffusion(hooks={"cfg_combine": classifier_free_guidance})
    with pytest.raises(ValueError, match=r"to_normals must be a function \(words uint32 \[B, 4\]\)"):
        PhiloxNormalStream(314159, to_normals="box-muller")
    assert DiffusionHooks(cfg_combine=classifier_free_guidance).cfg_combine is classifier_free_guidance


def test_stream_uses_the_given_transform_for_every_draw():
    seen = []

    def doubled(words):
        seen.append(words.shape)
        return 2.0 * blocks_to_normals(words)

    stream, plain = PhiloxNormalStream(314159, to_normals=doubled), PhiloxNormalStream(314159)
    first, again = stream.normals(8), stream.normals(4)
    assert seen == [(2, 4), (1, 4)] and (again.counter_before, again.counter_after) == (2, 3)
    assert np.array_equal(first.values, 2.0 * plain.normals(8).values)

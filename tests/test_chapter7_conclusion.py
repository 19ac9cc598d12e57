"""The facts the chapter's last page (§7.18, ``notebooks/07-traces/12-conclusion.md``) and the
sampling section of page 07-02 rest on, asserted on the library and the golden traces.

Each test names the fact; each has a case that shows it can fail.
"""

from pathlib import Path

import numpy as np
import pytest

from booktools import book
from labkit.diffusion.ddim import ddim_step
from labkit.text.processors import ProcessorContext, SamplingConfig, apply_processors
from labkit.text.runtime import run_text_trace
from labkit.trace import catalogue

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "notebooks" / "07-traces" / "12-conclusion.md"
CHECKS = ("schema.validated", "authorization.allowed", "confirmation.approved", "invocation.started")


def test_the_conclusion_page_comes_right_after_comparing_traces_in_the_toc():
    files = book.toc_files(book.load_config(REPO))
    here = files.index("notebooks/07-traces/12-conclusion.ipynb")
    assert files[here - 1] == "notebooks/07-traces/11-comparing-traces.ipynb", files[here - 2 : here + 2]


def test_the_conclusion_page_cites_a_flow_matching_and_a_discrete_diffusion_paper():
    cited = set(book.cited_keys(PAGE.read_text(encoding="utf-8")))
    assert {"lipman2023flow", "austin2021d3pm", "song2021ddim"} <= cited, sorted(cited)


def test_the_golden_traces_hold_25_9_and_15_events():
    counts = {kind: [e["event_id"] for e in catalogue.golden(kind)] for kind in catalogue.KINDS}
    assert counts == {
        "text": [f"e{i:02d}" for i in range(25)],
        "diffusion": [f"d{i:02d}" for i in range(9)],
        "tool": [f"t{i:02d}" for i in range(15)],
    }


@pytest.mark.parametrize("step", ["d02", "d03", "d04", "d05"])
def test_a_ddim_step_with_eta_zero_is_an_euler_step_in_noise_to_signal_ratio(step):
    """x̄ = z/√ᾱ, s = √((1−ᾱ)/ᾱ): DDIM(η=0) gives x̄_prev = x̄_t + (s_prev − s_t)·ε on trace two's schedule."""
    payload = next(e for e in catalogue.golden("diffusion") if e["event_id"] == step)["payload"]
    a_t, a_prev = payload["alpha_bar_t"], payload["alpha_bar_prev"]
    rng = np.random.default_rng(7)
    z_t, eps = rng.standard_normal(32), rng.standard_normal(32)
    z_prev, _ = ddim_step(z_t, eps, a_t, a_prev)
    s_t, s_prev = np.sqrt((1 - a_t) / a_t), np.sqrt((1 - a_prev) / a_prev)
    euler = z_t / np.sqrt(a_t) + (s_prev - s_t) * eps
    gap = np.max(np.abs(z_prev / np.sqrt(a_prev) - euler))
    assert gap < 1e-12, f"{step}: DDIM and the Euler step differ by {gap:.3g}"
    wrong_step = z_t / np.sqrt(a_t) + (s_prev - s_t) * 0.5 * eps  # half the step: the check must notice
    assert np.max(np.abs(z_prev / np.sqrt(a_prev) - wrong_step)) > 1e-3


def side_effect_events_after_checks(run) -> bool:
    types = [e["event_type"] for e in run]
    effects = [i for i, e in enumerate(run) if e["payload"].get("side_effect") is True]
    return all(check in types and types.index(check) < i for i in effects for check in CHECKS)


def test_no_tool_run_reports_a_side_effect_before_validation_authorisation_confirmation_and_execution():
    runs = {name: catalogue.run_events("tool", name) for name in [None, *catalogue.faults("tool")]}
    early = [name for name, run in runs.items() if not side_effect_events_after_checks(run)]
    assert not early, f"side effect before the checks in {early}"
    golden = catalogue.golden("tool")
    reordered = [golden[9], *golden[:9], *golden[10:]]  # the commit moved before the checks
    assert not side_effect_events_after_checks(reordered)


def test_faults_stopped_by_a_check_never_send_a_request():
    stopped = [
        name
        for name in catalogue.faults("tool")
        if not any(e["event_type"] == "invocation.started" for e in catalogue.run_events("tool", name))
    ]
    assert stopped == ["extra_field", "not_json", "confirmation_mismatch", "tampered_digest", "unauthorized"]


def step_one_distribution(config: SamplingConfig) -> np.ndarray:
    raw = run_text_trace().steps[0].raw_logits
    z = apply_processors(raw, ProcessorContext(config)).astype(np.float64)
    e = np.exp(z - np.max(z))
    return e / e.sum()


def swapped(config: SamplingConfig) -> SamplingConfig:
    order = config.processor_order
    return SamplingConfig(
        temperature=config.temperature,
        top_k=config.top_k,
        top_p=config.top_p,
        processor_order=order[:-2] + (order[-1], order[-2]),
    )


def test_top_p_after_temperature_keeps_six_tokens_and_before_it_two():
    config = SamplingConfig(temperature=2.0, top_p=0.9)
    first, second = step_one_distribution(config), step_one_distribution(swapped(config))
    assert (np.count_nonzero(first), np.count_nonzero(second)) == (6, 2)
    assert np.flatnonzero(second).tolist() == [14, 15]
    assert second[14] == pytest.approx(1 / (1 + np.exp(-0.2)), abs=1e-6)  # (4.2 − 3.8) / T = 0.2


def test_top_k_commutes_with_temperature_and_no_stage_moves_the_greedy_choice():
    config = SamplingConfig(temperature=2.0, top_k=3)
    assert np.array_equal(step_one_distribution(config), step_one_distribution(swapped(config)))
    for setting in ({}, {"temperature": 0.5}, {"temperature": 2.0}, {"top_k": 3}, {"top_p": 0.9}):
        assert int(np.argmax(step_one_distribution(SamplingConfig(**setting)))) == 14, setting

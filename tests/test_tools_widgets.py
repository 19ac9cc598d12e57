"""The grammar player's data is the real constrained decode of mc_01; the trace-three figures draw."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from labkit.reader.players.data import r4  # noqa: E402
from labkit.reader.players.grammar import static_data as grammar_data  # noqa: E402
from labkit.reader.traces import draw_prefix_reuse, draw_state_machine  # noqa: E402
from labkit.tools.runtime import run_tool_trace  # noqa: E402


@pytest.fixture(scope="module")
def trace():
    return run_tool_trace()


def test_grammar_steps_start_with_two_allowed_and_end_forced(trace):
    steps = grammar_data(trace.first_call)["steps"]
    assert len(steps) == 27
    assert (steps[0]["step"], steps[0]["allowed"], steps[0]["json"]) == (1, 2, '{"')
    assert steps[1]["chosen"][1].endswith("calendar_id")
    assert steps[26]["allowed"] == 1 and steps[26]["chosen"][1] == "<|call_end|>"
    assert steps[26]["json"].endswith('"duration_minutes":10}')
    assert steps[7]["allowed"] == 166 and grammar_data(trace.first_call)["vocabulary"] == 256


def test_grammar_steps_chain_the_json_and_match_the_decode(trace):
    data = grammar_data(trace.first_call)
    decode = trace.first_call.decode
    assert data["steps"][-1]["json"] == decode.text
    assert data["counts"] == trace.events[1]["payload"]["allowed_counts"]
    for shown, step in zip(data["steps"], decode.steps, strict=True):
        assert shown["json"] == step.text_after and shown["chosen"][0] == step.chosen_id
        assert all(b[2] == r4(step.raw_logits[b[0]]) and b[0] in step.allowed_ids for b in shown["best"])
    chosen_best = [st["best"][0][0] == st["chosen"][0] for st in data["steps"]]
    assert all(chosen_best), (
        f"the chosen piece is not the best allowed at steps {[i + 1 for i, ok in enumerate(chosen_best) if not ok]}"
    )


def test_state_machine_and_prefix_figures_draw(trace):
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(2, 1)
    draw_state_machine(a, ["PROPOSED", "PARSED"])
    draw_prefix_reuse(b, trace.second_call, 20)
    labels = [t.get_text() for t in b.get_legend().get_texts()]
    assert labels == ["reused from mc_01's cache: 86", "prefilled in mc_02: 46", "generated answer: 20"]
    plt.close(fig)

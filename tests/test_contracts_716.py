"""§7.16: every cell of the three-trace table, checked against the chapter's table.

``CHAPTER`` holds the chapter's cells (as it prints them) and, for each, the terms the
book's English cell must state; where a cell names something a run decides (12 prompt IDs,
t09, EOS, no RNG), the golden trace is asked as well.
"""

import pytest

from labkit.reader.tables import state_table
from labkit.trace import catalogue
from labkit.trace.kinds import CONTRACT_ROWS
from labkit.trace.kinds import kind as trace_kind

#: (row attribute, trace kind) → (the chapter's cell, terms the book's cell must contain)
CHAPTER = {
    ("initial_object", "text"): ("12 个提示 IDs", ["12", "prompt", "IDs"]),
    ("initial_object", "diffusion"): ("条件张量 + 初始噪声", ["condition tensors", "+", "initial noise"]),
    ("initial_object", "tool"): ("消息 + ToolSpec + 主体", ["messages", "ToolSpec", "subject"]),
    ("model_state", "text"): ("residual、KV、logits", ["residual", "KV", "logits"]),
    ("model_state", "diffusion"): ("整体 latent、timestep", ["whole latent", "timestep"]),
    ("model_state", "tool"): ("两次模型调用各自 cache/logits", ["two model calls", "own", "cache", "logits"]),
    ("runtime_update", "text"): ("processor、选择、stop", ["processors", "selection", "stop"]),
    ("runtime_update", "diffusion"): ("CFG、DDIM scheduler", ["guidance", "DDIM scheduler"]),
    ("runtime_update", "tool"): ("parse、validate、authorize、execute", ["parse, validate, authorize, execute"]),
    ("irreversible_point", "text"): ("已发送字节通常不回滚", ["bytes already streamed", "usually not taken back"]),
    ("irreversible_point", "diffusion"): ("最终文件发布可另定义", ["publishing the final file", "defined by"]),
    ("irreversible_point", "tool"): ("external commit t09", ["external commit", "t09"]),
    ("random_entry", "text"): ("本夹具 greedy，无 RNG", ["none", "greedily"]),
    ("random_entry", "diffusion"): ("初始 latent RNG", ["initial latent"]),
    ("random_entry", "tool"): ("模型解码固定；外部 ID 由服务产生", ["none in decoding", "service", "event ID"]),
    ("termination", "text"): ("EOS", ["EOS"]),
    ("termination", "diffusion"): ("schedule 完成", ["schedule is exhausted"]),
    ("termination", "tool"): (
        "tool observed 后第二次文本 EOS",
        ["second model call", "EOS", "tool result is observed"],
    ),
    ("replay_core", "text"): ("token 与事件序列", ["token", "event sequence"]),
    ("replay_core", "diffusion"): ("tensor shape、schedule、RNG", ["tensor shapes", "schedule", "RNG"]),
    ("replay_core", "tool"): ("Invocation、幂等键、commit status", ["Invocation", "idempotency key", "commit status"]),
}
KINDS = ("text", "diffusion", "tool")


def test_the_table_has_the_chapters_seven_questions_for_three_traces():
    table = state_table()
    assert table.headers == ["question", "Text trace", "Diffusion trace", "Tool trace"]
    assert [row[0] for row in table.rows[:7]] == [question for _, question in CONTRACT_ROWS]
    assert {attr for attr, _ in CONTRACT_ROWS} == {attr for attr, _ in CHAPTER}
    assert len(CHAPTER) == 7 * 3


@pytest.mark.parametrize(("attr", "kind"), sorted(CHAPTER), ids=[f"{a}-{k}" for a, k in sorted(CHAPTER)])
def test_every_cell_states_the_chapters_cell(attr, kind):
    chapter, terms = CHAPTER[(attr, kind)]
    row = next(r for r in state_table().rows if r[0] == dict(CONTRACT_ROWS)[attr])
    cell = row[1 + KINDS.index(kind)]
    assert cell == getattr(trace_kind(kind).contract, attr)
    missing = [t for t in terms if t.lower() not in cell.lower()]
    assert not missing, f"§7.16 {attr}/{kind}: the chapter says {chapter!r}; {cell!r} lacks {missing}"


def test_cells_that_a_run_decides_agree_with_the_golden_traces():
    text, diffusion, tool = (catalogue.golden(k) for k in KINDS)
    by = lambda events: {e["event_id"]: e for e in events}  # noqa: E731
    # text: 12 prompt IDs, no RNG consumed, ends on EOS
    assert len(by(text)["e02"]["payload"]["input_ids"][0]) == 12
    assert all(e["payload"].get("rng", {"counter_after": 0})["counter_after"] == 0 for e in text)
    assert by(text)["e22"]["payload"]["finish_reason"] == "eos"
    # diffusion: randomness enters only where the initial latent is drawn; the schedule runs out
    drew = [
        e["event_id"]
        for e in diffusion
        if e["payload"].get("rng") and e["payload"]["rng"]["counter_after"] != e["payload"]["rng"]["counter_before"]
    ]
    assert drew == ["d01"]
    assert [e["payload"]["timestep"] for e in diffusion if e["event_type"] == "denoise.updated"] == [999, 749, 499, 249]
    # tool: the external commit is t09; the second call ends on EOS after the result is observed
    assert by(tool)["t09"]["event_type"] == "external.committed"
    assert by(tool)["t10"]["payload"]["state"] == "OBSERVED" and by(tool)["t13"]["payload"]["finish_reason"] == "EOS"
    assert by(tool)["t11"]["payload"]["model_call_id"] == "mc_02"

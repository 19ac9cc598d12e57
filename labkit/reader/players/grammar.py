"""The grammar stepper's data: mc_01's constrained decode (``run_tool_trace().first_call``), step by step.

data = {"player": "grammar", "title", "vocabulary": V, "counts": [27],
        "steps": [{"step", "allowed": n, "best": [[id, label, raw logit]] (≤ 10),
                   "chosen": [id, label], "json": text so far}]}
"""

from labkit.reader.players.data import r4, words
from labkit.tools.runtime import run_tool_trace
from labkit.tools.tokenizer import vocabulary

SHOWN_ALLOWED = 10


def label(piece: str) -> str:
    return piece if piece.strip() else repr(piece)


def static_data(first_call=None) -> dict:
    """One entry per decode step of mc_01 (a ``labkit.tools.calls.ModelCall``)."""
    first_call = first_call or run_tool_trace().first_call
    pieces = vocabulary()
    steps = []
    for s in first_call.decode.steps:
        best = sorted(s.allowed_ids, key=lambda i: (-float(s.raw_logits[i]), i))[:SHOWN_ALLOWED]
        steps.append(
            {
                "step": s.step + 1,
                "allowed": len(s.allowed_ids),
                "best": [[int(i), label(pieces[i]), r4(s.raw_logits[i])] for i in best],
                "chosen": [int(s.chosen_id), label(s.piece)],
                "json": s.text_after,
            }
        )
    return {
        "title": words("Constrained proposal of mc_01, token by token", "mc_01 的受约束提议，逐 token"),
        "vocabulary": len(pieces),
        "counts": [st["allowed"] for st in steps],
        "steps": steps,
    }

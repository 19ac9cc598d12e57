"""The scheduler player's data (issue 45): trace one among two other requests on a paged KV cache, every
capacity of ``CAPACITIES`` run by the real engine (``labkit.serving.trace_one.run_batch``).

    data = {"player": "scheduler", "title", "start": capacity, "block_size", "token_budget",
            "requests": [ids, trace one first],
            "runs": {str(capacity): {"steps": [{"step", "chunks": [[id, start, n]], "tokens",
                     "admitted": [[id, shared positions]], "preempted": [ids], "finished": [ids],
                     "blocks": [[ids holding block b] for b in 0…capacity−1],
                     "tables": {id: [blocks]}}], "selected": {id: [token IDs]}}}}
"""

from labkit.reader.players.data import one_of, words
from labkit.serving.trace_one import BLOCK_SIZE, CAPACITY, TOKEN_BUDGET, run_batch

CAPACITIES = (6, 8, 10, 12, 16)


def run_data(capacity: int) -> dict:
    """One capacity's run: each step's chunks, block owners and tables; each request's tokens."""
    run = run_batch(capacity, BLOCK_SIZE, TOKEN_BUDGET)
    steps = []
    for report in run.reports:
        owners = [[] for _ in range(capacity)]
        for rid, table in report.tables.items():
            for block in table:
                owners[block].append(rid)
        steps.append(
            {
                "step": report.step,
                "chunks": [list(c) for c in report.chunks],
                "tokens": sum(n for _, _, n in report.chunks),
                "admitted": [list(a) for a in report.admitted],
                "preempted": list(report.preempted),
                "finished": list(report.finished),
                "blocks": owners,
                "tables": report.tables,
            }
        )
    return {"steps": steps, "selected": {rid: [int(t) for t in c.selected] for rid, c in run.clients.items()}}


def static_data(start: int = CAPACITY) -> dict:
    """Every capacity of ``CAPACITIES`` run by the engine, the player opening on ``start``."""
    one_of("start", start, CAPACITIES)
    runs = {str(c): run_data(c) for c in CAPACITIES}
    return {
        "title": words(
            "One request among many: a continuous-batching engine on a paged KV cache",
            "众多请求中的一个：分页 KV 缓存上的连续批处理引擎",
        ),
        "start": start,
        "block_size": BLOCK_SIZE,
        "token_budget": TOKEN_BUDGET,
        "requests": list(runs[str(start)]["selected"]),
        "runs": runs,
    }

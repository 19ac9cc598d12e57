"""Trace one as one request among many (issue 45): a continuous-batching engine on a paged KV cache.

What must not change when the request meets the engine: its tokens and events (the solo run's),
its logits (within LOGIT_TOLERANCE); what the engine must keep: no block held without a reference,
none leaked, a preempted request recomputed to the same tokens."""

from __future__ import annotations

import numpy as np
import pytest

from labkit.serving.paged import BlockPool
from labkit.serving.trace_one import LOGIT_TOLERANCE, OTHERS, other_config, run_batch
from labkit.text.runtime import run_text_trace
from labkit.text.variants import VARIANTS
from labkit.trace.divergence import first_divergence


@pytest.fixture(scope="module")
def batch():
    return run_batch()  # audits the pool's invariants after every step


@pytest.fixture(scope="module")
def solos():
    solo = {"req-text-001": run_text_trace()}
    solo |= {rid: run_text_trace(other_config(rid, user, n)) for rid, user, n, _ in OTHERS}
    return solo


def _max_logit_gap(solo, client) -> float:
    return max(float(np.max(np.abs(s.raw_logits - b))) for s, b in zip(solo.steps, client.logits, strict=True))


def test_trace_one_in_the_batch_selects_and_records_what_it_does_alone(batch, solos):
    assert batch.clients["req-text-001"].selected == solos["req-text-001"].selected == [14, 15, 16, 17, 18]
    found = first_divergence(solos["req-text-001"].events, batch.events)  # discrete state exactly, tensors to 1e-3
    assert found is None, found


@pytest.mark.parametrize("request_id", ["req-text-001", "req-long", "req-late"])
def test_every_request_keeps_its_solo_tokens_and_logits_within_the_tolerance(batch, solos, request_id):
    assert batch.clients[request_id].selected == solos[request_id].selected
    gap = _max_logit_gap(solos[request_id], batch.clients[request_id])
    assert gap <= LOGIT_TOLERANCE, f"{request_id}: max |batched − solo| logit {gap:.3g} > {LOGIT_TOLERANCE}"


def test_the_batch_shows_joins_chunked_prefill_sharing_and_a_preemption(batch):
    first_join = {}
    for report in batch.reports:
        for rid, _ in report.admitted:
            first_join.setdefault(rid, report.step)
    left = {rid: r.step for r in batch.reports for rid in r.finished}
    assert first_join == {"req-text-001": 0, "req-long": 1, "req-late": 2} and len(set(left.values())) == 3
    long_chunks = [n for r in batch.reports for rid, _, n in r.chunks if rid == "req-long"]
    assert long_chunks[:2] == [11, 5]  # a 20-token prompt, 4 shared, the rest in two chunks under a 12-token budget
    assert [r.preempted for r in batch.reports if r.preempted] == [["req-late"]]
    assert batch.requests["req-late"].preemptions == 1
    assert dict(batch.reports[2].admitted)["req-late"] == 8  # two blocks of req-long's prompt, by reference
    assert batch.reports[2].tables["req-late"][:2] == batch.reports[2].tables["req-long"][:2]


def test_no_block_leaks_and_every_reference_is_counted(batch):
    pool = batch.pool
    assert pool.in_use == 0 and sorted(pool.free) == list(range(pool.capacity)) and not pool.refcount.any()
    assert max(r.blocks_in_use for r in batch.reports) == pool.capacity  # the capacity binds once


@pytest.mark.parametrize(("capacity", "budget"), [(6, 12), (8, 5), (12, 16), (16, 3)])
def test_any_capacity_and_budget_keeps_the_tokens_and_frees_every_block(solos, capacity, budget):
    run = run_batch(capacity, 4, budget)
    assert {rid: c.selected for rid, c in run.clients.items()} == {rid: s.selected for rid, s in solos.items()}
    assert run.pool.in_use == 0


def test_a_capacity_below_one_request_is_refused():
    with pytest.raises(ValueError, match="capacity"):
        run_batch(2, 4, 12)


def test_the_pool_refuses_a_double_release_and_a_write_into_a_shared_block():
    pool = BlockPool(2, 4, 1, 1, 2)
    block = pool.allocate()
    pool.share(block)
    with pytest.raises(AssertionError, match="shared"):
        pool.write([block], 0, 0, np.ones((1, 1, 1, 2)), np.ones((1, 1, 1, 2)))
    pool.release(block)
    pool.release(block)
    with pytest.raises(ValueError, match="released twice"):
        pool.release(block)


def test_the_audit_catches_a_table_holding_a_block_without_a_reference():
    pool = BlockPool(3, 4, 1, 1, 2)
    a = pool.allocate()
    pool.audit([[a]])
    with pytest.raises(AssertionError, match="refcount"):
        pool.audit([[a], [a]])  # a second table holds a, refcount still 1


def test_a_cached_prefix_always_leaves_the_last_token_to_compute():
    pool = BlockPool(4, 2, 1, 1, 2)
    first, second = pool.allocate(), pool.allocate()
    pool.remember((1, 2), first)
    pool.remember((1, 2, 3, 4), second)
    assert pool.cached_prefix([1, 2, 3, 4, 5]) == [first, second]
    assert pool.cached_prefix([1, 2, 3, 4]) == [first]  # all four cached, but token 4's logits are needed
    assert pool.cached_prefix([9, 2, 3]) == []


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_streaming_variant_of_trace_one_runs_in_the_batch_as_it_runs_alone(name):
    """The stop hold-back, the UTF-8 wait and the disconnect (abort → its blocks released once, the
    pool audited every step) are the request's business: the batch changes none of its events."""
    run = run_batch(trace_config=VARIANTS[name].config())
    found = first_divergence(run_text_trace(VARIANTS[name].config()).events, run.events)
    assert found is None, found
    assert run.pool.in_use == 0 and not run.pool.refcount.any()


def test_the_scheduler_player_shows_the_engines_run(batch):
    """Player data is the engine's run: chunks, preemptions, block owners (refcount = owners) per step."""
    from labkit.reader.players.catalog import export

    data = export("scheduler")
    run = data["runs"][str(data["start"])]
    assert [s["chunks"] for s in run["steps"]] == [[list(c) for c in r.chunks] for r in batch.reports]
    assert [s["preempted"] for s in run["steps"]] == [r.preempted for r in batch.reports]
    shared = run["steps"][2]["blocks"]
    assert sorted(shared[0]) == ["req-late", "req-long", "req-text-001"]  # block 0: the common prefix, refcount 3
    assert run["selected"] == {rid: c.selected for rid, c in batch.clients.items()}

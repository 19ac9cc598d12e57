"""A continuous-batching scheduler over the paged KV cache (vLLM's, in miniature): requests join and leave
at any step.  One engine step:

1. **running first**, in admission order: each gets its next chunk (the tokens it knows but has not
   computed, one when decoding), within the step's token budget; its table grows to ⌈(computed + n) / B⌉
   blocks, and when the pool is empty the request admitted last is **preempted** (blocks released,
   computed = 0, back at the head of the queue to be **recomputed**: greedy then picks the same tokens);
2. **then the waiting**, in order, while budget and blocks last (none after a preemption): a request takes
   the live blocks of its longest cached whole-block prefix (refcount + 1, not computed again), then a
   chunk of the rest (**chunked prefill** when the budget is smaller than its prompt);
3. one ``forward_batch`` over all chunks; a request whose chunk reached its last known token asks its client
   for the next token or its end; a finished request releases every block it holds, once.

A request's tokens never depend on its batch: attention reads only its own blocks, and the numbers the
batch can move (``labkit.serving.batch``) stay far below the argmax margins.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from labkit.nn import Decoder
from labkit.serving.batch import Chunk, forward_batch
from labkit.serving.paged import BlockPool


@dataclass
class Request:
    """One request: its tokens (prompt, then generated), its block table and how many are computed;
    ``client(result) -> (token, finished)`` is asked with the ``ForwardResult`` of the chunk that computed
    every known token."""

    request_id: str
    prompt: list[int]
    client: Callable
    tokens: list[int] = field(default_factory=list)
    table: list[int] = field(default_factory=list)
    computed: int = 0
    state: str = "WAITING"
    preemptions: int = 0
    shared: int = 0  # positions taken from cached prefix blocks instead of computed

    def __post_init__(self):
        if not self.prompt:
            raise ValueError(f"prompt of {self.request_id} must hold at least one token")
        self.tokens = list(self.prompt)


@dataclass
class StepReport:
    """What one engine step did: chunks run (request, start, n), preemptions, finishes, blocks in use."""

    step: int
    chunks: list[tuple[str, int, int]]
    admitted: list[tuple[str, int]]  # (request, positions taken from shared prefix blocks)
    preempted: list[str]
    finished: list[str]
    blocks_in_use: int
    tables: dict[str, list[int]]


class Engine:
    """``add`` requests, ``step`` until idle; see the module docstring for one step."""

    def __init__(self, decoder: Decoder, pool: BlockPool, token_budget: int):
        if not isinstance(token_budget, int) or token_budget < 1:
            raise ValueError(f"token_budget must be an integer >= 1, got {token_budget!r}")
        self.decoder, self.pool, self.token_budget = decoder, pool, token_budget
        self.waiting: list[Request] = []
        self.running: list[Request] = []
        self.steps = 0

    def add(self, request: Request) -> None:
        self.waiting.append(request)

    @property
    def idle(self) -> bool:
        return not self.waiting and not self.running

    def step(self) -> StepReport:
        budget, preempted, plan = self.token_budget, [], []
        for request in list(self.running):
            n = min(len(request.tokens) - request.computed, budget)
            if request.state != "RUNNING" or n == 0:  # preempted in this step to make room, or no budget left
                continue
            while not self._grow(request, request.computed + n):
                victim = self.running[-1]  # the request admitted last makes room
                self._preempt(victim)
                preempted.append(victim.request_id)
                if victim is request:
                    break
            if request.state == "RUNNING":
                plan.append((request, n))
                budget -= n
        first_admitted = len(plan)
        while self.waiting and budget > 0 and not preempted and self._admit(self.waiting[0], budget, plan):
            budget -= plan[-1][1]
        if not plan and self.waiting:
            need = self.pool.blocks_for(min(len(self.waiting[0].tokens), self.token_budget))
            raise ValueError(
                f"capacity must hold {need} blocks for {self.waiting[0].request_id}, got {self.pool.capacity}"
            )
        admitted = [(r.request_id, r.shared) for r, _ in plan[first_admitted:]]
        ran = [(r, r.computed, n) for r, n in plan]
        finished = self._run(ran)
        self.steps += 1
        tables = {r.request_id: list(r.table) for r in self.running}
        chunks = [(r.request_id, start, n) for r, start, n in ran]
        return StepReport(self.steps - 1, chunks, admitted, preempted, finished, self.pool.in_use, tables)

    def _grow(self, request: Request, positions: int) -> bool:
        """Extend the table to hold ``positions``; False (and nothing taken) when blocks run out."""
        need = self.pool.blocks_for(positions) - len(request.table)
        if need > len(self.pool.free):
            return False
        request.table += [self.pool.allocate() for _ in range(max(need, 0))]
        return True

    def _preempt(self, request: Request) -> None:
        """Release every block (recompute later): computed = 0, back to the head of the queue."""
        self._release(request, "WAITING")
        request.computed = 0
        request.preemptions += 1
        self.waiting.insert(0, request)

    def _admit(self, request: Request, budget: int, plan: list) -> bool:
        """Take the cached prefix, then blocks for a chunk of ≤ budget tokens; False: it waits."""
        prefix = self.pool.cached_prefix(request.tokens)
        n = min(len(request.tokens) - len(prefix) * self.pool.block_size, budget)
        if self.pool.blocks_for(len(prefix) * self.pool.block_size + n) - len(prefix) > len(self.pool.free):
            return False
        request.table = [self.pool.share(block) for block in prefix]  # refcount + 1 each: shared, not copied
        request.computed = request.shared = len(prefix) * self.pool.block_size
        self._grow(request, request.computed + n)
        self.waiting.remove(request)
        self.running.append(request)
        request.state = "RUNNING"
        plan.append((request, n))
        return True

    def _run(self, ran: list) -> list[str]:
        """The one forward pass over (request, start, n); full blocks become shareable prefixes (keyed by
        every token up to their end); each request that reached its last known token asks its client."""
        if not ran:
            return []
        chunks = [Chunk(r.tokens[start : start + n], start, r.table) for r, start, n in ran]
        finished, block_size = [], self.pool.block_size
        for (request, start, n), result in zip(ran, forward_batch(self.decoder, self.pool, chunks), strict=True):
            request.computed = start + n
            # blocks this chunk filled become shareable prefixes
            for index in range(start // block_size, request.computed // block_size):
                self.pool.remember(tuple(request.tokens[: (index + 1) * block_size]), request.table[index])
            if request.computed < len(request.tokens):  # a chunk of a longer prefill: nothing to pick yet
                continue
            token, done = request.client(result)
            request.tokens.append(token)
            if done:
                self._release(request, "FINISHED")
                finished.append(request.request_id)
        return finished

    def _release(self, request: Request, state: str) -> None:
        """Let go of every block the request holds, exactly once; it leaves the running list."""
        for block in request.table:
            self.pool.release(block)
        request.table, request.state = [], state
        self.running.remove(request)

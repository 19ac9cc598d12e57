"""Trace three, run: two model calls around a confirmed, idempotent calendar write (t00–t14).

``run_tool_trace(ToolRunConfig())`` computes everything on the spot: ``PHASES`` of ``labkit.tools.phases``
on one ``ToolTrace``; a fault is a change of the config's ``faults``, read at its seam (``labkit.tools.seams``).
"""

from labkit.core.runtime import checked_run_arguments, run_steps
from labkit.tools.config import ToolHooks, ToolRunConfig, ToolTrace, start_trace
from labkit.tools.model import CONFIG, load_decoder
from labkit.tools.phases import PHASES, close_trace
from labkit.tools.tokenizer import TEMPLATE_ID, TOKENIZER_ID
from labkit.tools.toolspec import ToolSpec, find_tool, load_toolspec

STRATEGY = "greedy_with_json_grammar"  # §7.10; what runs in mc_01 (mc_02: ANSWER_STRATEGY)


def run_tool_trace(
    config: ToolRunConfig | None = None, hooks: ToolHooks | None = None, *, decoder=None, spec: ToolSpec | None = None
) -> ToolTrace:
    """Run trace three; ``decoder`` and ``spec`` (default: the fixtures') save loading them again."""
    config, hooks = checked_run_arguments(config, hooks, ToolRunConfig, ToolHooks)
    spec = find_tool(spec or load_toolspec(), config.tool)
    artifacts = {
        "model_id": CONFIG.model_id,
        "template_id": TEMPLATE_ID,
        "tokenizer_id": TOKENIZER_ID,
        "sampler": STRATEGY,
        "tool_version": spec.ref,
    }
    run = start_trace(config, hooks, spec=spec, decoder=decoder or load_decoder(), artifacts=artifacts)
    return close_trace(run, run_steps(PHASES, run) or "completed")

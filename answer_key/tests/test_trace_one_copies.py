"""An adversarial self-test of the preface's and trace one's graded exercises, with the key loaded: every
callable pages 00–03 import or show and every public ``labkit`` callable near the mechanisms (events,
processors, the decoder and its cache, the runtimes, the first divergence, this group's own checks), called
with the exercise's arguments or a part of them, adapted (an item, an attribute, a tuple index) and composed
in pairs, and every number the pages print — none may pass. The routes issue 40 names are tried by hand."""

import ast
import functools
import importlib
import inspect
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

import labkit.check as check
from labkit.check.trace_one import damaged_traces, min_p_cases, ngram_cases
from labkit.check.trace_one_decode import CacheView, DecoderParts
from labkit.nn import Decoder, KVCache
from labkit.text.model import load_decoder
from labkit.text.processors import ProcessorContext, SamplingConfig, repetition_transforms, truncation

pytestmark = pytest.mark.slow  # about a minute: every callable, adapted and paired

ROOT = Path(__file__).resolve().parents[2]
PAGES = (
    "notebooks/00-preface.md",
    "notebooks/07-traces/01-trace-record.md",
    "notebooks/07-traces/02-text-request-to-first-token.md",
    "notebooks/07-traces/03-text-token-by-token.md",
)
GRADED = ("cut_off_events", "no_repeat_ngram_mask", "largest_min_p", "decode_one")
NEAR = (
    "labkit.core.events",
    "labkit.text.processors",
    "labkit.text.runtime",
    "labkit.text.model",
    "labkit.nn",
    "labkit.nn.attention",
    "labkit.nn.cache",
    "labkit.nn.norm",
    "labkit.nn.rope",
    "labkit.nn.transformer",
    "labkit.trace.divergence",
    "labkit.trace.catalogue",
    "labkit.check.trace_one",
    "labkit.check.trace_one_decode",
)


def _cells(page: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M)


def _public_callables(module) -> dict[str, object]:
    found = {}
    for name, obj in vars(module).items():
        if name.startswith("_") or not callable(obj) or inspect.ismodule(obj):
            continue
        if (getattr(obj, "__module__", "") or "").startswith("labkit") or module.__name__ == "labkit.nn":
            found[f"{module.__name__}.{name}"] = obj
    return found


def pool() -> dict[str, object]:
    """Every labkit callable the pages import (and what they show), every public one near the mechanisms,
    and the methods of the decoder and cache a page builds."""
    found: dict[str, object] = {}
    for page in PAGES:
        for cell in _cells(page):
            code = "\n".join(line for line in cell.splitlines() if not line.startswith((":", "%", "!")))
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit"):
                    module = importlib.import_module(node.module)
                    for alias in node.names:
                        obj = getattr(module, alias.name, None) or importlib.import_module(
                            f"{node.module}.{alias.name}"
                        )
                        if callable(obj):
                            found[f"{node.module}.{alias.name}"] = obj
                        elif inspect.ismodule(obj):
                            found |= _public_callables(obj)
    for name in NEAR:
        found |= _public_callables(importlib.import_module(name))
    decoder = load_decoder()
    found |= {
        f"Decoder.{m}": getattr(decoder, m) for m in ("forward", "decode", "decode_step", "prefill", "full_logits")
    }
    found |= {f"KVCache.{m}": getattr(KVCache(2), m) for m in ("append", "copy", "truncated", "shapes", "layer_length")}
    return found


OUTPUTS = {
    "itself": lambda r: r,
    "[0]": lambda r: r[0],
    "[-1]": lambda r: r[-1],
    ".next_logits[0]": lambda r: r.next_logits[0],
    ".logits[0, -1]": lambda r: r.logits[0, -1],
    "list": lambda r: list(r),
    "float": lambda r: float(r),
}


def _argument_sets(args: tuple) -> dict[str, tuple]:
    sets = {"all": args, "first": args[:1], "last": args[-1:], "first two": args[:2], "reversed": args[::-1]}
    return {label: found for label, found in sets.items() if found}


def adapted(f, arguments: str, output: str):
    def candidate(*args):
        return OUTPUTS[output](f(*_argument_sets(args)[arguments]))

    return candidate


def composed(g, f):
    return lambda *args: g(f(*args))


def _passes(name: str, candidate) -> bool:
    try:
        return bool(check.exercises()[name](candidate).passed)
    except Exception:  # a candidate the check cannot even hold is not a pass
        return False


@functools.lru_cache(maxsize=1)
def _toy_parts():
    decoder = load_decoder()
    return DecoderParts(decoder), decoder.prefill(np.array([[1, 2, 7, 3]]))[1]


def _sample_args(name: str) -> tuple:
    """Arguments of the exercise's kind, to screen out candidates that cannot even return."""
    if name == "decode_one":
        parts, cache = _toy_parts()
        return parts, CacheView(cache.copy()), 14
    return {
        "cut_off_events": (damaged_traces()[2][1],),
        "no_repeat_ngram_mask": ngram_cases()[0][1],
        "largest_min_p": min_p_cases()[0][1],
    }[name]


def _answers_something(candidate, args) -> bool:
    """Whether a composition even returns (most do not: trying those in full is pointless)."""
    try:
        with np.errstate(all="ignore"):
            candidate(*args)
    except Exception:
        return False
    return True


@pytest.fixture(scope="module")
def callables():
    return pool()


@pytest.mark.parametrize("name", GRADED)
def test_no_page_or_kit_callable_adapted_passes(name, callables):
    passing, tried = [], 0
    for (label, f), arguments, output in itertools.product(callables.items(), _argument_sets((1, 2, 3)), OUTPUTS):
        if arguments != "all" and len(check.exercises()[name].signature) == 1:
            continue
        candidate = adapted(f, arguments, output)
        if not _answers_something(candidate, _sample_args(name)):
            continue
        tried += 1
        if _passes(name, candidate):
            passing.append(f"{label} ({arguments} → {output})")
    assert not passing, f"{name} passes with {passing}"
    assert tried > 5  # the screen lets real attempts through
    check.core.reset_attempts()


@pytest.mark.parametrize("name", ("cut_off_events", "no_repeat_ngram_mask", "largest_min_p"))
def test_no_pair_of_them_composed_passes(name, callables):
    args = _sample_args(name)
    first = [(label, f) for label, f in callables.items() if _answers_something(f, args)]
    then = list(callables.items())
    passing = []
    for (label_f, f), (label_g, g) in itertools.product(first, then):
        candidate = composed(g, f)
        if _answers_something(candidate, args) and _passes(name, candidate):
            passing.append(f"{label_g} ∘ {label_f}")
    assert not passing, f"{name} passes with {passing}"
    check.core.reset_attempts()


def _printed_numbers() -> list[float]:
    """Every number in the stored outputs of pages 00–03."""
    numbers = set()
    for page in PAGES:
        notebook = json.loads((ROOT / page).with_suffix(".ipynb").read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            for output in cell.get("outputs", []):
                text = "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
                numbers.update(float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text))
    return sorted(numbers)


def test_no_number_the_pages_print_passes_largest_min_p():
    numbers = _printed_numbers()
    assert 4.2 in numbers and len(numbers) > 50  # the pages' outputs were read
    passing = [x for x in numbers if _passes("largest_min_p", lambda z, k, x=x: x)]
    passing += [x for x in numbers if x > 0 and _passes("largest_min_p", lambda z, k, x=x: float(np.exp(-x)))]
    assert not passing


# -- the routes issue 40 names, and their neighbours --------------------------------------------------


def test_decode_one_cannot_be_the_library_decoders_step():
    routes = {
        "the page's load_decoder": lambda d, c, t: load_decoder().decode_step([t], c).next_logits[0],
        "a Decoder around the parts": lambda d, c, t: Decoder(d.config, d.weights).decode_step([t], c).next_logits[0],
        "the guarded method": lambda d, c, t: d.decode_step([t], c).next_logits[0],
        "the full pass of the toy model": lambda d, c, t: load_decoder().full_logits(np.array([[t]]))[0, -1],
    }
    assert not [label for label, route in routes.items() if _passes("decode_one", route)]


def _ctx(**settings):
    return ProcessorContext(SamplingConfig(**settings))


def test_the_kits_processors_are_not_the_new_ones():
    routes = {
        "repetition_transforms with a presence penalty": lambda z, s, n: repetition_transforms(
            z, ProcessorContext(SamplingConfig(presence_penalty=1e30), tuple(s))
        ),
        "repetition_transforms with a repetition penalty": lambda z, s, n: repetition_transforms(
            z, ProcessorContext(SamplingConfig(repetition_penalty=1e30), tuple(s))
        ),
    }
    assert not [label for label, route in routes.items() if _passes("no_repeat_ngram_mask", route)]

    def top_p(z, k):
        kept = truncation(z, _ctx(top_p=0.5))
        return float(np.exp(np.min(kept[np.isfinite(kept)]) - np.max(z)))

    assert not _passes("largest_min_p", top_p)


def test_cut_off_events_is_not_validate_trace_on_prefixes():
    from labkit.core.events import TraceError, validate_trace

    def prefixes(events):
        bad = []
        for index in range(len(events)):
            try:
                validate_trace(events[: index + 1])
            except TraceError:
                bad.append(events[index]["event_id"])
        return bad

    assert not _passes("cut_off_events", prefixes)


@pytest.mark.xfail(
    strict=True,
    reason="known limit: a deliberate rebuild of the library's Decoder from the parts (a DecoderConfig from the "
    "config's fields, DecoderWeights from the arrays, a KVCache filled from the view and written back) still "
    "passes — the parts are the whole model and the kit's forward pass is general. The one-line routes are closed.",
)
def test_a_deliberate_rebuild_of_the_library_decoder_does_not_pass():
    from labkit.nn import DecoderConfig, DecoderWeights

    def rebuilt(d, cache, t):
        c = d.config
        shape = {f: getattr(c, f) for f in ("vocab_size", "width", "n_layers", "n_q_heads", "n_kv_heads", "head_dim")}
        shape |= {"dtype": c.dtype, "rope_base": c.rope_base, "norm_eps": c.norm_eps}
        cfg = DecoderConfig(model_id=c.model_id, ffn_width=d.weights.layers[0]["gate"].shape[1], **shape)
        kv = KVCache(cfg.n_layers)
        kv.keys, kv.values = list(cache.keys), list(cache.values)
        result = Decoder(cfg, DecoderWeights(d.weights.embedding, d.weights.output, d.weights.layers)).decode_step(
            [t], kv
        )
        for i in range(cfg.n_layers):
            cache.append(i, kv.keys[i][..., -1:, :], kv.values[i][..., -1:, :])
        return result.next_logits[0]

    assert not _passes("decode_one", rebuilt)

"""The players' data is the runtimes' data: each exporter checked against the run it reads
(the source chapter's numbers included), the data each page embeds checked to be current,
the kernel side re-running the real computation, and the book check failing when a player's
module or data is missing."""

from __future__ import annotations

import ast
import importlib
import io
import json
import re
import shutil
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from booktools import players as devtools
from labkit.core.fixtures import book_root
from labkit.reader.players.base import player as live_player
from labkit.reader.players.catalog import PLAYERS
from labkit.reader.players.data import r4

REPO = book_root(Path(__file__).resolve().parents[1])


def data_of(name, **options):
    """What player ``name``'s exporter gives for ``options``: each exporter runs once per process,
    when a test first asks for its data (``devtools.expected_data`` keeps its run)."""
    return devtools.expected_data(name, options)


# -- the page data --------------------------------------------------------------------------
@pytest.mark.slow  # every player's data
def test_every_page_points_at_its_bundle_and_the_bundle_carries_the_exporters_data(book_copy):
    found = devtools.embeds(REPO)
    assert {e.name for e in found} == set(PLAYERS), "every registered player is embedded by a page"
    for embed in found:
        assert embed.esm == f"./players/{Path(embed.page).stem}.{embed.name}.mjs", embed
    assert devtools.structure_problems(book_copy) != [], "no bundle written yet: must be reported"
    sources = {p: p.read_bytes() for p in (book_copy / "notebooks").rglob("*.md")}
    devtools.pages(book_copy)
    assert {p: p.read_bytes() for p in (book_copy / "notebooks").rglob("*.md")} == sources, "a page was rewritten"
    assert devtools.structure_problems(book_copy) == []
    assert devtools.stale_pages(book_copy) == []
    assert devtools.pages(book_copy) == [], "a second build changes nothing"


@pytest.mark.slow  # every player's data
def test_a_pages_bundle_speaks_its_pages_edition(book_copy, monkeypatch):
    """The bundle beside a page speaks the edition of the page's folder (its nearest .labkit-edition),
    whatever folder the build runs in; the data is the same in both."""
    from labkit.core import edition

    monkeypatch.delenv(edition.VARIABLE, raising=False)
    (book_copy / "notebooks" / "07-traces" / edition.MARKER).write_text("zh\n", encoding="utf-8")
    edition.forget()
    try:
        devtools.pages(book_copy)
        spoken = {e.page: re.findall(r'^const LANG = "(\w+)";$', e.text, re.M) for e in devtools.embeds(book_copy)}
        assert devtools.structure_problems(book_copy) == []
    finally:
        edition.forget()
    assert {p: s for p, s in spoken.items() if s != (["zh"] if p.startswith("notebooks/07-traces/") else ["en"])} == {}
    assert {p.split("/")[1] for p, s in spoken.items() if s == ["zh"]} == {"07-traces"}


def test_an_embed_that_names_no_player_or_another_path_is_reported(book_copy):
    page = book_copy / "notebooks/07-traces/03-text-token-by-token.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace(".decode.mjs", ".decoder.mjs"), encoding="utf-8")
    assert any("names no registered player" in p for p in devtools.structure_problems(book_copy))
    page.write_text(text.replace("./players/03-text-token-by-token.decode.mjs", "./x.decode.mjs"), encoding="utf-8")
    problems = devtools.structure_problems(book_copy)
    assert any("bundle is ./players/03-text-token-by-token.decode.mjs" in p for p in problems)
    page.write_text(text.replace("decode.mjs\n{}", "decode.mjs\n[1]"), encoding="utf-8")
    assert any("must be a JSON object" in p for p in devtools.structure_problems(book_copy))


PROBE = """import { h, frame, modelData, painted } from "./_shared.mjs";
function render({ model, el }) {
  const root = frame(el, "probe", "", "word");
  root.append(h("div", { text: modelData(model).word }));
  painted(root);
}
export default { render };
"""


@pytest.mark.slow  # builds every bundle: every player's data
def test_a_registered_player_is_picked_up_by_the_bundles_the_book_and_the_harness(book_copy, tmp_path, monkeypatch):
    """A test-only player: its two modules, one registration, one page that embeds it."""
    (tmp_path / "probe_player.py").write_text(
        'def static_data(word="plain"):\n    return {"player": "probe", "word": word}\n', encoding="utf-8"
    )
    (book_copy / devtools.SOURCES / "probe.mjs").write_text(PROBE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(PLAYERS, "probe", importlib.import_module("probe_player"))
    page = book_copy / "notebooks/99-probe.md"
    page.write_text('# Probe\n\n```{anywidget} ./players/99-probe.probe.mjs\n{"word": "短波"}\n```\n', encoding="utf-8")

    assert devtools.module_problems(book_copy) == []
    assert any("99-probe.md: the probe player's module" in p for p in devtools.structure_problems(book_copy))
    assert "notebooks/players/99-probe.probe.mjs" in devtools.pages(book_copy)
    assert devtools.check(book_copy) == []
    bundle = (book_copy / "notebooks/players/99-probe.probe.mjs").read_text(encoding="utf-8")
    assert devtools.module_data(bundle) == {"player": "probe", "word": "短波"} and "import " not in bundle

    sys.path.insert(0, str(REPO / "tests" / "browser"))
    try:
        import player_harness
    finally:
        sys.path.remove(str(REPO / "tests" / "browser"))
    assert ("notebooks/99-probe.md", "probe") in player_harness.embeds(book_copy)
    served = player_harness.directive("notebooks/99-probe.md", "probe", book_copy)
    assert served == {"text": bundle, "body": {"word": "短波"}}


def _string_tables(tree):
    """Literal lists, tuples, sets and dict keys of a module, as the strings they hold."""
    for node in ast.walk(tree):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)) and items:
            yield node.lineno, [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def test_no_table_of_player_names_outside_the_registry():
    registry = REPO / "labkit/reader/players/catalog.py"
    names = set(PLAYERS)
    tables = []
    for folder in ("labkit", "tests", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path == registry or ".venv" in path.parts:
                continue
            for line, strings in _string_tables(ast.parse(path.read_text(encoding="utf-8"))):
                hits = {s.split("@")[0] for s in strings} & names
                if len(hits) >= 2:
                    tables.append(f"{path.relative_to(REPO)}:{line} {sorted(hits)}")
    assert tables == [], f"tables of player names outside {registry.relative_to(REPO)}: {tables}"


def test_a_changed_number_in_a_page_is_reported(book_copy):
    page = "notebooks/07-traces/03-text-token-by-token.md"
    module = [e for e in devtools.embeds(book_copy) if e.page == page][0].path
    data = data_of("decode")
    data["steps"][0]["raw"][14] += 0.01
    module.parent.mkdir(parents=True, exist_ok=True)  # this page's bundle alone: no other player's data
    module.write_text(devtools.generated_module("decode", {}, data), encoding="utf-8")
    problems = [p for p in devtools.stale_pages(book_copy) if p.startswith(page)]
    assert problems and "steps[0].raw[14]" in problems[0]


def test_every_player_bundles_into_one_module_without_imports():
    from labkit.reader.players import bundle

    assert devtools.module_problems(REPO) == []
    for name in PLAYERS:
        text = bundle(name, data={"player": name})
        assert "import " not in text and "_shared.mjs" in text  # inlined, named in a comment
        assert [line for line in text.splitlines() if line.startswith("export ")] == ["export default { render };"], (
            name
        )
        assert 'const EMBEDDED = {"player":"' + name + '"};' in text


@pytest.mark.slow
def test_a_bundle_is_valid_javascript():
    import subprocess

    from labkit.reader.players import bundle

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (Debian: apt-get install nodejs)")
    for name in PLAYERS:
        proc = subprocess.run(
            [node, "--input-type=module", "--check"],
            input=bundle(name, data={"player": name}),
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, (name, proc.stderr[-500:])


# -- the Chinese edition's players ---------------------------------------------------------------
#: a player module's own words table, the shared controls' one, and the texts that are code, not words
_TABLE = re.compile(r"\nconst (?:WORDS|CONTROL_WORDS) = \{.*?\n\};", re.S)
_CODE = re.compile(r"/\*.*?\*/|^\s*//[^\n]*|\nconst (?:BASE_)?CSS = `.*?`;", re.S | re.M)
_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`')
_PHRASE = re.compile(r"(?<![\w.$#-])[a-z]{2,}(?: [a-z]{2,})+(?![\w-])")
_STEPS = {"next back", "back next"}  # the names of a stepper's controls (the root's data-steps)


def english_phrases(source: str) -> list[str]:
    """The string literals of a player's module outside its words table that hold English words in a row."""
    code = _TABLE.sub("", _CODE.sub("", source))
    bodies = (re.sub(r"\$\{[^}]*\}", " ", literal[1:-1]) for literal in _LITERAL.findall(code))
    return [body for body in bodies if _PHRASE.search(body) and body not in _STEPS]


def test_no_player_writes_an_english_phrase_outside_its_words_table():
    from labkit.reader.players import FOLDER

    for path in sorted(FOLDER.glob("*.mjs")):
        assert english_phrases(path.read_text(encoding="utf-8")) == [], f"{path.name}: words outside WORDS"
    assert english_phrases('const WORDS = {\n};\nh("b", {}, `no steps ${n}`);') == ["no steps  "]


def test_every_players_words_speak_chinese_with_the_same_fields(tmp_path):
    """Each player's zh bundle, run by node: its table {en, zh} has the same keys and {fields} in both
    languages, the bundle speaks zh, and no Chinese entry leaves an English word (tests/_players_zh.py)."""
    import json
    import subprocess

    from labkit.reader.players import bundle
    from tests._players_zh import english_left

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (Debian: apt-get install nodejs)")
    for name in PLAYERS:
        (tmp_path / f"{name}.mjs").write_text(
            bundle(name, lang="zh")
            + "\nexport const probe = { words: WORDS, controls: CONTROL_WORDS, said: language() };\n",
            encoding="utf-8",
        )
    script = "const out = {}; for (const n of %s) out[n] = (await import(`./${n}.mjs`)).probe;"
    script += " console.log(JSON.stringify(out));"
    proc = subprocess.run(
        [node, "--input-type=module", "-e", script % json.dumps(list(PLAYERS))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    fields = lambda text: sorted(re.findall(r"\{(\w+)\}", json.dumps(text, ensure_ascii=False)))  # noqa: E731
    probes = json.loads(proc.stdout)
    probes["_shared"] = {"words": probes[next(iter(PLAYERS))]["controls"], "said": "zh"}
    for name, probe in probes.items():
        en, zh = probe["words"]["en"], probe["words"]["zh"]
        assert probe["said"] == "zh" and set(en) == set(zh), (name, set(en) ^ set(zh))
        for key in en:
            assert fields(en[key]) == fields(zh[key]), f"{name}.{key}: the fields differ between en and zh"
            left = english_left(json.dumps(zh[key], ensure_ascii=False).replace('"', " "))
            assert left == [], f"{name}.{key}: English left in {zh[key]!r}: {left}"


@pytest.mark.slow  # every player's data
def test_every_text_an_exporter_writes_is_in_both_languages_with_the_same_numbers():
    """Every {en, zh} text of every page's player data: Chinese, no English word left but data, and the
    same numbers as the English (a translation never changes a value)."""
    from tests._players_zh import CJK, data_words, english_left, texts

    number = re.compile(r"\d+(?:\.\d+)?")
    embeds = {(e.name, json.dumps(e.options, sort_keys=True)) for e in devtools.embeds(REPO)}
    assert {name for name, _ in embeds} == set(PLAYERS)
    for name, options in sorted(embeds):
        data = data_of(name, **json.loads(options))
        assert isinstance(data["title"], dict), f"{name}: its title is in one language"
        known = data_words(data)
        for text in texts(data):
            where = f"{name} {options}: {text['en']!r}"
            assert CJK.search(text["zh"]) and english_left(text["zh"], known) == [], f"{where} → {text['zh']!r}"
            assert sorted(number.findall(text["en"])) == sorted(number.findall(text["zh"])), f"{where}: numbers"


# -- each exporter against its runtime ---------------------------------------------------------
def test_decode_data_is_trace_one_token_by_token():
    from labkit.text.runtime import run_text_trace

    data, run = data_of("decode"), run_text_trace()
    steps = data["steps"]
    assert [(s["cache_start"], s["selected"]) for s in steps] == [
        ([12, 12], 14),
        ([13, 13], 15),
        ([14, 14], 16),
        ([15, 15], 17),
        ([16, 16], 18),
    ]
    for s, record in zip(steps, run.steps, strict=True):
        assert s["raw"] == [r4(v) for v in record.raw_logits]
        assert s["masked"] == record.masked_ids and s["selected"] == record.selected
        assert all((p is None) == (i in s["masked"]) for i, p in enumerate(s["processed"]))
    assert steps[0]["masked"] == [0, 1, 2, 3, 4, 5, 6, 18, 19] and steps[0]["text"] == "短波蓝光"
    assert [e[0] for e in steps[0]["events"]] == ["e05", "e06", "e07", "e08"]
    assert steps[0]["events"][0][2].startswith("step=1 token_id=14")
    assert steps[-1]["text"] == "短波蓝光的散射通常更强。" and steps[-1]["cache_after"] is None
    assert [e[0] for e in steps[-1]["events"]] == ["e21", "e22", "e23", "e24"]
    assert data["pieces"] == list(run.tokenizer.pieces)


def test_decode_player_reruns_trace_one_with_a_fault():
    player = live_player("decode")
    assert player.data["fault"] is None and "eos_in_control_mask" in player.data["faults"]
    player.request = {"fault": "eos_in_control_mask"}
    steps = player.data["steps"]
    assert player.data["fault"] == "eos_in_control_mask" and len(steps) == 8
    assert steps[4]["selected"] == 10, "EOS masked: step 5 falls to the runner-up"
    assert steps[7]["finish"] == "length" and steps[7]["cache_start"][0] == 19
    with pytest.raises(ValueError, match="fault must be one of"):
        player.recompute({"fault": "no_such_fault"})


def test_divergence_data_is_the_catalogue_diagnosis():
    from labkit.trace import catalogue

    kinds = data_of("divergence")["kinds"]
    assert list(kinds) == list(catalogue.KINDS)
    for kind, entry in kinds.items():
        assert entry["golden"] == [[e["event_id"], e["event_type"]] for e in catalogue.golden(kind)]
        assert list(entry["faults"]) == list(catalogue.faults(kind))
        for fault, shown in entry["faults"].items():
            found = catalogue.diagnose(kind, fault)
            d = shown["divergence"]
            assert (d["index"], d["rule"], d["field"], d["suspect"]["en"]) == (
                found.index,
                found.rule,
                found.field,
                found.suspect,
            )
            assert shown["events"] == [[e["event_id"], e["event_type"]] for e in catalogue.run_events(kind, fault)]
    first = kinds["text"]["faults"]["perturbed_weight"]["divergence"]
    assert (first["event_ids"], first["types"], first["rule"]) == (["e04", "e04"], ["prefill.completed"] * 2, "tensors")


def test_scenario_data_is_the_golden_traces_and_their_journals():
    from labkit.reader.players.scenarios import event_row, golden_events, run_scenario
    from labkit.tools.faults import SCENARIOS

    scenarios = data_of("scenarios")["scenarios"]
    assert list(scenarios) == list(SCENARIOS)
    for name, entry in scenarios.items():
        golden = golden_events(name)
        assert entry["events"] == [event_row(e) for e in golden]
        assert run_scenario(name).events == golden, f"{name}: the runtime no longer reproduces its golden trace"
    timeout = scenarios["timeout_before_commit"]
    assert timeout["events"][timeout["commit"]][:2] == ["t11", "external.committed"]
    assert timeout["attempts"] == [[8, 1], [10, 2]] and timeout["divergence"]["event_id"] == "t09"
    assert scenarios["happy"]["events"][scenarios["happy"]["commit"]][0] == "t09"
    assert scenarios["happy"]["divergence"] is None
    crash = scenarios["crash_after_journal_write"]
    assert [row[2] for row in crash["journal"][:3]] == ["t05", "t06", "t08"]
    assert crash["entry"]["attempts"] == 2 and crash["final_state"] == "OBSERVED"
    assert scenarios["extra_field"]["commit"] is None
    assert scenarios["extra_field"]["divergence"]["event_id"] == "t02"
    assert scenarios["unauthorized"]["divergence"]["event_id"] == "t05"


def test_scenario_player_adds_a_crash_point_by_running_it():
    player = live_player("scenarios")
    assert "after_service_commit" in player.data["crash_points"]
    player.request = {"scenario": "timeout_before_commit", "crash": "after_service_commit"}
    label = "timeout_before_commit + crash after_service_commit"
    assert player.data["start"] == label
    rows = player.data["scenarios"][label]["events"]
    assert "runtime.crashed" in [r[1] for r in rows] and rows[-1][1] == "trace.closed"
    with pytest.raises(ValueError, match="crash must be one of"):
        player.recompute({"scenario": "happy", "crash": "never"})


def unb32(text: str) -> bytes:
    """Base32 without padding → bytes (what the latent player decodes in the browser)."""
    import base64

    return base64.b32decode(text + "=" * (-len(text) % 8))


def dequantise(encoded: str, size: int = 32, limit: float = 2.5) -> np.ndarray:
    """The inverse of the latent player's ``quantise`` + ``b32`` (to within half a quantisation step)."""
    raw = np.frombuffer(unb32(encoded), dtype=np.uint8).reshape(size, size)
    return raw.astype(np.float64) / 255 * (2 * limit) - limit


def test_latent_data_is_the_ddim_run():
    from labkit.diffusion.pipeline import DiffusionConfig, run_diffusion
    from labkit.reader.players.latents import LIMIT, SIZE

    data = data_of("latents")
    assert list(data["scales"]) == ["0", "1", "5", "9"] and data["start"] == {"guidance": "5", "step": 4}
    assert data["channels"] == ["0 luminance", "1 red-cyan", "2 blue-yellow", "3 light"]
    assert (data["size"], data["limit"]) == (SIZE, LIMIT) == (32, 2.5), "the test decodes 32 × 32 over ±2.5"
    run = run_diffusion(DiffusionConfig())
    frames = data["scales"]["5"]
    assert [(f["t"], f["name"]) for f in frames] == [
        (999, "z_999"),
        (749, "z_749"),
        (499, "z_499"),
        (249, "z_249"),
        (-1, "z_0"),
    ]
    half_step = LIMIT / 255 + 1e-9
    for frame, (_, latent) in zip(frames, run.latents, strict=True):
        for c in range(4):
            exact = np.clip(latent[0, c, ::2, ::2].astype(np.float64), -LIMIT, LIMIT)
            assert np.abs(dequantise(frame["latent"][c]) - exact).max() <= half_step
            channel = latent[0, c].astype(np.float64)
            assert frame["stats"][c] == [r4(channel.mean()), r4(channel.std()), r4(channel.min()), r4(channel.max())]
    from PIL import Image

    image = Image.open(io.BytesIO(unb32(frames[-1]["preview"])))
    assert image.size == (64, 64) and frames[-1]["preview_of"]["en"] == "x̂₀ of step 4, decoded"


def test_latent_recompute_names_a_bad_scale_and_reuses_a_computed_one():
    from labkit.reader.players.latents import recompute

    data = {"player": "latents", "scales": {"5": ["frames of g = 5"]}, "start": {"guidance": "9", "step": 4}}
    assert recompute(data, {"guidance": 5.0}) == {**data, "start": {"guidance": "5", "step": 4}}
    with pytest.raises(ValueError, match="guidance must be a number, got 'x'"):
        recompute(data, {"guidance": "x"})
    with pytest.raises(ValueError, match=r"guidance must be a number in \[0, 20\], got 30.0"):
        recompute(data, {"guidance": 30})


def test_attention_data_is_the_runs_weights_and_masks():
    from labkit.labs.lab_decoder import attention_state
    from labkit.text.runtime import run_text_trace

    groups = data_of("attention")["groups"]
    run = run_text_trace()
    for li, layer in enumerate(run.prefill.layers):
        panel = groups["prefill"]["panels"][f"layer {li}"]
        for h, head in enumerate(panel["heads"]):
            w = layer.attention_weights[0, h]
            for i in range(12):
                assert head["values"][i][: i + 1] == [r4(v) for v in w[i, : i + 1]]
                assert head["values"][i][i + 1 :] == [None] * (11 - i), "the future must be blocked"
    state = attention_state(3, "top-left rectangular")
    panel = groups["decode"]["panels"]["3|top-left rectangular"]
    assert panel["rows"] == ["3", "4", "5", "6"]
    for h in range(2):
        expected = [
            [r4(v) if ok else None for v, ok in zip(row, keep, strict=True)]
            for row, keep in zip(state.weights[h], state.allowed, strict=True)
        ]
        assert panel["heads"][h]["values"] == expected
    packed = groups["masks"]["panels"]["packed documents"]["heads"][0]["values"]
    assert [v is not None for v in packed[4]] == [False] * 4 + [True] + [False] * 3


def test_cache_fault_data_is_every_modes_run():
    from labkit.labs.cache_equivalence import MODES, run_case
    from labkit.reader.players.data import significant

    data = data_of("fault_modes")
    assert list(data["modes"]) == list(MODES) and data["start"] == "reset_rope_position"
    for mode, shown in data["modes"].items():
        case = run_case(mode)
        assert shown["errors"] == significant(case.per_position_error, 3) and shown["caught_by"] == case.caught_by
        assert [c[:2] for c in shown["checks"]] == [
            ["shape", case.shape_check_passed],
            ["logit", case.logit_allclose_passed],
            ["distinct_layer", case.distinct_layer_keys_passed],
        ]
    rope = data["modes"]["reset_rope_position"]
    assert rope["checks"][0][2]["en"] == "shapes [[2, 7, 4], [2, 7, 4]]" and len(rope["errors"]) == 7
    assert rope["errors"][0] < 1e-12, "position 0 is the same under a RoPE reset (angle 0 either way)"
    assert max(rope["errors"]) == 0.248  # 0.2477276305125953 at 3 significant digits
    assert rope["caught_by"] == ["logit"] and rope["checks"][1][1] is False
    copied = data["modes"]["copy_layer1_cache_to_layer2"]
    assert copied["caught_by"] == ["logit", "distinct_layer"] and copied["checks"][2][2]["en"] == "layer 1 = layer 0"
    assert data["modes"]["correct"]["caught_by"] == [] and all(c[1] for c in data["modes"]["correct"]["checks"])
    with pytest.raises(ValueError, match="start must be one of"):
        devtools.expected_data("fault_modes", {"start": "no_such_mode"})


def test_dpo_data_is_the_kernels_at_every_grid_point():
    from labkit.labs import dpo
    from labkit.reader.players.dpo_margin import DELTAS

    data = data_of("dpo_margin")
    assert data["start"] == {"chosen": "-2", "rejected": "-3", "beta": "0.2"} and data["reference"] == [-2.5, -2.5]
    # the lab's pair (the source's numbers): margin 0.2, loss 0.5981388693815918, gradient ∓0.0900332
    assert data["points"]["0.2|-2|-3"] == [0.2, r4(0.5981388693815918), r4(-0.09003320053750444), r4(0.0900332005375)]
    for key, shown in data["points"].items():
        beta, chosen, rejected = (float(v) for v in key.split("|"))
        policy, reference = [chosen, rejected], data["reference"]
        assert shown[1] == r4(dpo.dpo_loss(policy, reference, beta)), key
        assert shown[2:] == [r4(g) for g in dpo.dpo_gradient(policy, reference, beta)], key
    assert data["points"]["0.2|-2|-5"][0] == 0.6, "rejected answer 2 nats less probable: margin 0.2 + 0.2·2"
    # the plotted curve is the loss itself at every Δ, not a sketch
    i = int(np.argmin(np.abs(DELTAS - 1.0)))
    on_curve = dpo.dpo_loss([-2.5 + DELTAS[i], -2.5], [-2.5, -2.5], 0.2)
    assert data["curves"]["0.2"]["loss"][i] == r4(on_curve)
    assert data["curves"]["0.2"]["pull"][i] == r4(abs(dpo.dpo_gradient([-2.5 + DELTAS[i], -2.5], [-2.5, -2.5], 0.2)[0]))


def test_dpo_player_computes_a_point_outside_the_grid_with_the_kernel():
    from labkit.labs import dpo

    player = live_player("dpo_margin")
    assert "0.33|-1.7|-3" not in player.data["points"]
    player.request = {"beta": 0.33, "chosen": -1.7}
    assert player.data["start"] == {"chosen": "-1.7", "rejected": "-3", "beta": "0.33"}
    assert player.data["points"]["0.33|-1.7|-3"][1] == r4(dpo.dpo_loss([-1.7, -3.0], [-2.5, -2.5], 0.33))
    with pytest.raises(ValueError, match="beta must be a number"):
        player.recompute({"beta": "x"})
    with pytest.raises(ValueError, match="beta must be a positive"):
        player.recompute({"beta": -1.0})


def test_grpo_data_is_group_advantages_for_every_group():
    from labkit.labs import grpo
    from labkit.reader.players.data import significant
    from labkit.reader.players.grpo_group import DIGITS

    sig6 = partial(significant, digits=DIGITS)

    data = data_of("grpo_group")
    assert data["start"] == {"group": "0 0 1 1", "eps": "1e-08"} and len(data["groups"]) == 17
    for key, shown in data["states"].items():
        group, eps = key.split("|")
        rewards = [[float(r) for r in group.split()]]
        for ddof, name in ((0, "population"), (1, "sample")):
            assert shown[name] == sig6(grpo.group_advantages(rewards, ddof=ddof, eps=float(eps))[0]), key
    split = data["states"]["0 0 1 1|1e-08"]
    assert split["population"] == sig6([-0.9999999800000003] * 2 + [0.9999999800000003] * 2)  # the source's
    assert split["sample"] == sig6([-0.8660253887844389] * 2 + [0.8660253887844389] * 2)
    one = data["states"]["1 0 0 0|1e-08"]  # one success in four: population std √3/4, sample std 1/2
    assert one["population"][0] == pytest.approx(np.sqrt(3.0), rel=1e-3) and one["sample"][0] == 1.5
    assert data["states"]["1 0 0 0|0.1"]["sample"][0] == sig6([0.75 / 0.6])[0]
    assert 0 < data["states"]["0.7 0.7 0.7|1e-08"]["population"][0] < 1e-7, "the rounding surprise is kept"


def test_grpo_player_computes_a_typed_group_with_the_kernel():
    from labkit.labs import grpo
    from labkit.reader.players.data import significant
    from labkit.reader.players.grpo_group import DIGITS

    sig6 = partial(significant, digits=DIGITS)

    player = live_player("grpo_group")
    player.request = {"rewards": [0.2, 0.5, 0.9], "eps": 0.05}
    assert player.data["start"] == {"group": "0.2 0.5 0.9", "eps": "0.05"}
    expected = sig6(grpo.group_advantages([[0.2, 0.5, 0.9]], ddof=1, eps=0.05)[0])
    assert player.data["states"]["0.2 0.5 0.9|0.05"]["sample"] == expected
    with pytest.raises(ValueError, match="rewards must be a list"):
        player.recompute({"rewards": "1 x"})
    with pytest.raises(ValueError, match="rewards must be finite"):
        player.recompute({"rewards": [1.0, float("nan")]})


def test_speculative_data_is_the_exact_law_and_the_seeded_runs():
    from labkit.labs import speculative
    from labkit.reader.players.speculative_sampler import r6

    data = data_of("speculative_sampler")
    p, q = speculative.TARGET, speculative.DRAFT
    assert data["runs"]["residual|200000|73"]["observed"] == [0.599475, 0.300205, 0.10032]  # the source's seed 73
    assert data["runs"]["residual|200000|73"]["acceptance"] == 0.801205
    assert data["exact"]["target"]["output"] == [0.52, 0.36, 0.12] and data["exact"]["target"]["tv"] == 0.08
    assert data["exact"]["residual"]["output"] == [0.6, 0.3, 0.1] and data["exact"]["residual"]["beta"] == 0.2
    assert data["runs"]["target|200000|73"]["sigmas"] > 6.0, "the wrong fallback fails the six-sigma check"
    for key, shown in data["runs"].items():
        fallback, draws, seed = key.split("|")
        drawn = speculative.simulate(p, q, int(draws), int(seed), fallback)
        assert shown["observed"] == r6(drawn.observed) and shown["acceptance"] == round(drawn.accepted.mean(), 6), key


def test_speculative_player_recomputes_another_target_and_draft():
    player = live_player("speculative_sampler")
    player.request = {"p": [0.6, 0.3, 0.1], "q": [0.6, 0.3, 0.1]}
    assert player.data["exact"]["residual"]["beta"] == 0.0 and player.data["q"] == [0.6, 0.3, 0.1]
    with pytest.raises(ValueError, match=r"p \(target\) must sum to 1"):
        player.recompute({"p": [0.5, 0.6, 0.1]})


def test_bandwidth_data_is_the_decode_budget_at_every_choice():
    from labkit.labs.bandwidth import DecodeBudget
    from labkit.reader.players.bandwidth_calculator import BATCHES, budget_data

    data = data_of("bandwidth_calculator")
    lab = data["budgets"]["2|2|8192|8|1"]  # the lab's 7B fp16 model, 8 KV heads, 8 192 tokens, 1 TB/s
    assert lab["weight_bytes"] == 14_000_000_000 and lab["kv_bytes"] == 1_073_741_824
    assert lab["steps"][0] == [15_073_741_824, r4(15.073741824), r4(66.34052856125128), r4(66.34052856125128)]
    assert lab["steps"][BATCHES.index(8)][:3] == [22_589_934_592, r4(22.589934592), 354.14]
    assert data["budgets"]["2|2|8192|8|2"]["steps"][0][1] == r4(15.073741824 / 2)
    assert data["budgets"]["2|2|8192|32|1"]["kv_bytes"] == 4 * 2**30, "32 KV heads: a 4 GiB cache"
    for key, shown in data["budgets"].items():
        param, kv, context, heads, tb = (int(v) for v in key.split("|"))
        budget = DecodeBudget(
            bytes_per_param=param,
            kv_bytes_per_element=kv,
            context=context,
            n_kv_heads=heads,
            bandwidth_bytes_per_second=tb * 10**12,
        )
        assert shown == budget_data(budget), key


def test_bandwidth_player_recomputes_another_model():
    player = live_player("bandwidth_calculator")
    player.request = {"n_params": 1_000_000_000}
    assert player.data["budgets"]["2|2|8192|8|1"]["weight_bytes"] == 2_000_000_000
    with pytest.raises(ValueError, match="DecodeBudget.n_layers must be a positive integer, got 0"):
        player.recompute({"n_layers": 0})


def test_the_static_book_has_no_launch_button_to_a_placeholder():
    import yaml

    project = yaml.safe_load((REPO / "myst.yml").read_text(encoding="utf-8"))["project"]
    binder = (project.get("jupyter") or {}).get("binder") if isinstance(project.get("jupyter"), dict) else None
    repo = (binder or {}).get("repo", "")
    assert "OWNER" not in repo and "OWNER" not in str(project.get("github", "")), "a launch button to a placeholder"


def test_mask_editor_data_is_every_split_and_target_choice():
    from labkit.labs import masks
    from labkit.reader.players.mask_editor import bits, document_ids, targets

    data = data_of("mask_editor")
    assert len(data["allowed"]) == 128 and len(data["prediction"]) == 2 * 128 * 256

    def prediction(split, chosen):
        index = split * 256 + chosen
        value = int(data["prediction"][2 * index : 2 * index + 2], 16)
        return [(value >> i) & 1 for i in range(7)]

    packed, every = data["presets"]["two packed documents, every token a target"]
    assert document_ids(packed).tolist() == list(masks.PACKED_DOCUMENT_IDS) and every == 255
    assert prediction(packed, every) == [1, 1, 1, 0, 1, 1, 1]  # supervised positions 0, 1, 2, 4, 5, 6
    allowed = [[(row >> j) & 1 for j in range(8)] for row in data["allowed"][packed]]
    assert allowed == masks.document_causal_allowed(masks.PACKED_DOCUMENT_IDS).astype(int).tolist()
    one, sft = data["presets"]["one document, assistant tokens 5–7 the targets"]
    assert prediction(one, sft) == [0, 0, 0, 0, 1, 1, 1], "predictions 4, 5, 6 reach the assistant's tokens"
    assert sum(bin(row).count("1") for row in data["allowed"][one]) == 36, "one document: a full lower triangle"
    for split in range(128):
        ids = document_ids(split)
        assert data["ids"][split] == ids.tolist()
        assert data["packing"][split] == bits(masks.packing_prediction_mask(ids))
        for chosen in (0, 37, 224, 255):
            expected = masks.packing_prediction_mask(ids) & masks.sft_prediction_mask(targets(chosen))
            assert prediction(split, chosen) == expected.astype(int).tolist(), (split, chosen)


# -- the kernel side ---------------------------------------------------------------------------
def test_a_player_shows_one_clear_line_where_it_cannot_be_drawn():
    from labkit.reader.players.base import Player

    player = Player("divergence", {"player": "divergence", "title": "First divergence", "kinds": {}})
    bundle = player._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/plain"] == "First divergence — run the page to use this player"
    assert "application/vnd.jupyter.widget-view+json" in data
    assert str(player._esm).startswith("// The first-divergence explorer")


# -- the book check ----------------------------------------------------------------------------
@pytest.fixture()
def book_copy(tmp_path):
    """The pages (no notebooks, no page bundles) and the players' sources, to damage."""
    book = tmp_path / "book"
    skip = shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "players")
    shutil.copytree(REPO / "notebooks", book / "notebooks", ignore=skip)
    shutil.copytree(REPO / devtools.SOURCES, book / devtools.SOURCES, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "myst.yml", book / "myst.yml")
    return book


def test_a_missing_player_module_fails_the_book_check(book_copy):
    from booktools import book

    devtools.pages(book_copy)
    assert book.player_problems(book_copy) == []
    (book_copy / "labkit/reader/players/decode.mjs").unlink()
    (book_copy / "notebooks/07-traces/players/03-text-token-by-token.decode.mjs").unlink()
    problems = book.player_problems(book_copy)
    assert any("decode.mjs is missing" in p for p in problems), problems
    assert any(
        "03-text-token-by-token.md: the decode player's module ./players/03-text-token-by-token"
        ".decode.mjs does not exist" in p
        for p in problems
    ), problems


def test_missing_player_data_fails_the_book_check(book_copy):
    from booktools import book

    devtools.pages(book_copy)
    module = book_copy / "notebooks/07-traces/players/11-comparing-traces.divergence.mjs"
    lines = [
        devtools.EMPTY if line.startswith("const EMBEDDED = ") else line
        for line in module.read_text(encoding="utf-8").splitlines()
    ]
    module.write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = book.player_problems(book_copy)
    assert any("the divergence player has no data" in p for p in problems), problems


def test_old_player_code_in_a_page_bundle_fails_the_book_check(book_copy):
    from booktools import book

    devtools.pages(book_copy)
    module = book_copy / "labkit/reader/players/_shared.mjs"
    module.write_text(
        module.read_text(encoding="utf-8").replace("function fmt(", "function fmt_new("), encoding="utf-8"
    )
    problems = book.player_problems(book_copy)
    assert any("imports ['fmt'], which _shared.mjs does not export" in p for p in problems), problems
    module.write_text(
        module.read_text(encoding="utf-8").replace("function fmt_new(", "function fmt("), encoding="utf-8"
    )
    source = book_copy / "labkit/reader/players/scenarios.mjs"
    source.write_text(source.read_text(encoding="utf-8") + "// changed\n", encoding="utf-8")
    problems = book.player_problems(book_copy)
    assert problems == [
        "notebooks/07-traces/10-tool-failures.md: ./players/10-tool-failures.scenarios.mjs holds "
        "old scenarios player code; run `python -m booktools check`"
    ], problems


def test_a_request_the_kernel_cannot_compute_is_said_in_the_player_not_raised():
    from labkit.reader.players.base import player

    live = player("bandwidth_calculator")
    before = dict(live.data)
    live.request = {"n_params": "many"}
    assert live.error and live.data == before
    live.request = {}
    assert live.data == before


def test_the_kernels_widget_speaks_the_editions_language_and_its_text_fallback_stays_english(monkeypatch):
    """The live widget's module and its ``lang`` trait follow the edition; ``repr`` (a stored output, the
    same in both editions) names the player in English; a language the kit does not speak is refused."""
    from labkit.core import edition
    from labkit.reader.players import bundle
    from labkit.reader.players.base import player

    for lang in ("zh", "en"):
        monkeypatch.setenv(edition.VARIABLE, lang)
        live = player("mask_editor")
        assert live.lang == lang and f"const LANG = {json.dumps(lang)};" in live._esm
        assert repr(live) == "Masks of one packed row (lab 02) — run the page to use this player"
    with pytest.raises(ValueError, match="lang must be one of"):
        bundle("mask_editor", lang="fr")

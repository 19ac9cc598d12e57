"""A trace kind is one value (``labkit.core.kinds.TraceKind``) in one plain table (``labkit.trace.kinds.KINDS``).

A fourth, test-only kind added as one entry of that table is picked up by the CLI, the catalogue and the
§7.16 contracts with no other file touched; its fixtures' recipe is the book's, one entry of
``booktools.recipes.RECIPES``; and no module of labkit keeps a table of kind names outside the registry.
"""

import ast
import dataclasses
from pathlib import Path

import pytest

from booktools import recipes
from labkit.core import faults as suspects
from labkit.core.events import TraceRecorder, read_jsonl
from labkit.core.faults import Fault, FirstDivergence, catalogue
from labkit.core.kinds import TraceContract, TraceKind
from labkit.core.runtime import Config, Hooks, hook
from labkit.trace import kinds

ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class EchoConfig(Config):
    trace_id: str = "trace-echo-001"
    word: str = "回声"


@dataclasses.dataclass(frozen=True)
class EchoHooks(Hooks):
    shout: object = hook("a function (word) -> word")


@dataclasses.dataclass
class EchoRun:
    config: EchoConfig
    events: list


def run_echo(config=None, hooks=None):
    config = config or EchoConfig()
    rec = TraceRecorder(config.trace_id, prefix="x")
    rec.emit("echo", "word.heard", 0, {"word": config.word})
    rec.emit("echo", "word.said", 0, {"word": config.word, "utf8_hex": config.word.encode().hex()})
    return EchoRun(config, rec.events)


def build_echo(dest: Path) -> list[str]:
    """The echo fixtures' recipe (a module of ``booktools/recipes/`` in the book)."""
    (dest / "echo").mkdir(parents=True, exist_ok=True)
    (dest / "echo" / "word.txt").write_text("回声", encoding="utf-8")
    return ["echo/word.txt"]


ECHO = TraceKind(
    name="echo",
    help="a test-only trace: one word heard, the same word said",
    config=EchoConfig,
    hooks=EchoHooks,
    run=run_echo,
    contract=TraceContract(
        kind="echo",
        event_prefix="x",
        **{attr: f"echo's {attr}" for attr in ("initial_object", "model_state", "runtime_update")},
        **{attr: f"echo's {attr}" for attr in ("irreversible_point", "random_entry", "termination", "replay_core")},
        output_means="the same word",
        suspects={("word.heard", "discrete_state"): suspects.DETOKENIZER},
    ),
    faults=catalogue(
        Fault(
            "other_word",
            "another word is heard",
            {"word": "回音"},
            FirstDivergence("x00", "discrete_state", "word", suspects.DETOKENIZER),
        )
    ),
    fixture="echo",
    summary=lambda run, fault: [f"echo {run.events[-1]['payload']['word']}" + (f", fault {fault}" if fault else "")],
)


@pytest.fixture
def echo(monkeypatch):
    """The table's one new line, ``ECHO,`` (the table is a plain dict: a test adds the entry in place)."""
    added = kinds.table([*kinds.KINDS.values(), ECHO])  # the table with the new line accepts it
    monkeypatch.setitem(kinds.KINDS, "echo", added["echo"])
    yield ECHO


def test_a_fourth_kind_is_picked_up_by_the_cli(echo, tmp_path, capsys):
    from labkit.cli import main

    out = tmp_path / "echo.jsonl"
    assert main(["trace", "echo", "--fault", "other_word", "--out", str(out)]) == 0
    assert [e["event_id"] for e in read_jsonl(out)] == ["x00", "x01"]
    assert read_jsonl(out)[0]["payload"]["word"] == "回音"
    assert "echo 回音, fault other_word" in capsys.readouterr().out
    assert main(["trace", "echo", "--list-faults"]) == 0
    assert "another word is heard" in capsys.readouterr().out
    assert main(["trace", "echo", "--fault", "nope"]) == 2
    assert "other_word" in capsys.readouterr().err


def test_a_fourth_kind_is_picked_up_by_the_catalogue_and_the_contracts(echo):
    from labkit.trace import catalogue as trace_catalogue
    from labkit.trace.divergence import first_divergence

    assert "echo" in trace_catalogue.KINDS and list(trace_catalogue.faults("echo")) == ["other_word"]
    correct, faulty = trace_catalogue.run_events("echo"), trace_catalogue.run_events("echo", "other_word")
    found = first_divergence(correct, faulty)
    assert ECHO.faults["other_word"].expected.matches(found.at), found.at
    assert kinds.kind("echo").contract is ECHO.contract and kinds.contract_for(correct) is ECHO.contract
    headers, rows = kinds.state_rows()
    assert headers[-1] == "Echo trace" and rows[0][-1] == "echo's initial_object"


def test_a_fourth_kind_has_no_recipe_and_its_recipe_is_one_line_of_the_book_s_table(echo, tmp_path, monkeypatch):
    """The kind names its folder only; its recipe is added by one line of ``booktools.recipes.RECIPES`` (the
    table is a plain dict: a test adds the entry in place), where ``labkit fixtures`` finds and builds it."""
    from booktools import fixture_files as files
    from booktools import fixtures

    with pytest.raises(ValueError, match="unknown recipe 'echo'"):
        fixtures.recipes(["echo"])  # a kind without a recipe: the registry holds no recipe
    monkeypatch.setitem(recipes.RECIPES, "echo", build_echo)  # the table's one new line
    assert fixtures.recipes(["echo"]) == {"echo": build_echo}
    assert list(fixtures.recipes(["tool", "tools"])) == ["tools"]  # a kind's name stands for its folder
    with pytest.raises(ValueError, match="unknown recipe 'audio'"):
        fixtures.recipes(["audio"])
    assert files.build(fixtures.recipes(["echo"]), tmp_path) == ["echo/word.txt"]


def test_every_kind_s_fixture_folder_has_its_recipe_in_the_book():
    """A kind's golden traces are written by the recipe of its folder: the two tables agree."""
    assert {kind.fixture for kind in kinds.KINDS.values()} == set(recipes.RECIPES)


def test_the_registry_refuses_a_second_kind_of_a_name_or_prefix(echo):
    with pytest.raises(ValueError, match="registered twice"):
        kinds.table([*kinds.KINDS.values(), ECHO])
    echo2 = dataclasses.replace(ECHO, name="echo2", contract=dataclasses.replace(ECHO.contract, kind="echo2"))
    with pytest.raises(ValueError, match="trace kind 'echo2': event prefix 'x' is taken"):
        kinds.table([*kinds.KINDS.values(), echo2])
    with pytest.raises(ValueError, match="unknown trace kind 'audio'"):
        kinds.kind("audio")
    with pytest.raises(ValueError, match="has the contract of 'echo'"):
        dataclasses.replace(ECHO, name="audio")


def name_tables(source: str, names: set[str]) -> list[int]:
    """Lines of dict, list, tuple or set literals that hold two or more of ``names``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            items = node.keys
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = node.elts
        else:
            continue
        held = {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)} & names
        if len(held) >= 2:
            found.append(node.lineno)
    return found


KIND_MODULES = {p.relative_to(ROOT).as_posix() for p in (ROOT / "labkit").glob("*/kind.py")}


def test_no_module_keeps_a_table_of_kind_names_outside_the_registry():
    names = {*kinds.KINDS, *(k.fixture for k in kinds.KINDS.values())}
    assert names >= {"text", "diffusion", "tool", "tools"}
    tables = {}
    for path in sorted((ROOT / "labkit").rglob("*.py")):
        lines = name_tables(path.read_text(encoding="utf-8"), names)
        if lines:
            tables[path.relative_to(ROOT).as_posix()] = lines
    assert not tables, f"tables of trace-kind names outside labkit/trace/kinds.py: {tables}"


def test_the_table_search_can_fail():
    names = {"text", "diffusion", "tool"}
    assert name_tables('KINDS = {"text": 1, "tool": 2}\nRECIPES = ("diffusion", "text")', names) == [1, 2]
    assert name_tables('ONE = {"text": 1}\nWORDS = ["text", "image"]', names) == []


def test_only_the_registry_names_the_kind_modules():
    """The registry imports each ``labkit/*/kind.py`` once; no other module imports a kind module or
    names one in a string (no module is found by its name at run time)."""
    declared, namers = [], {}
    for path in sorted((ROOT / "labkit").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(".kind"):
                namers.setdefault(rel, []).append(node.module)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".kind"):
                namers.setdefault(rel, []).append(node.value)
        if rel == "labkit/trace/kinds.py":
            declared = namers.pop(rel, [])
    assert not namers, f"kind modules named outside the registry: {namers}"
    assert sorted(f"{m.replace('.', '/')}.py" for m in declared) == sorted(KIND_MODULES)


# -- the trace commands check their arguments before any work -------------------------------
#: (argv with {folder} and {file} for an existing folder and file, the argument named, a word the line holds)
BAD_ARGUMENTS = [
    (["trace", "text", "--out", "{folder}"], "--out", "folder"),
    (["trace", "text", "--out", "{file}/t.jsonl"], "--out", "a-file.txt"),
    (["trace", "text", "--out", ""], "--out", "nothing"),
    (["trace", "diffusion", "--png", "{folder}"], "--png", "folder"),
    (["trace", "text", "--fault", "nope"], "--fault", "broken_detokenizer"),
    (["trace", "diffusion", "--fault", "nope"], "--fault", "png_timestamp"),
    (["trace", "tool", "--scenario", "nope"], "--scenario", "happy"),
    (["trace", "tool", "--fault", "happy"], "--fault", "extra_field"),
    (["trace", "tool", "--scenario", "extra_field", "--fault", "not_json"], "--scenario", "not both"),
]


@pytest.mark.parametrize(("argv", "argument", "named"), BAD_ARGUMENTS, ids=[" ".join(c[0]) for c in BAD_ARGUMENTS])
def test_a_bad_trace_argument_is_one_line_and_exit_2_before_any_work(
    argv, argument, named, tmp_path, capsys, monkeypatch
):
    from labkit.cli import main

    folder, afile = tmp_path / "folder", tmp_path / "a-file.txt"
    folder.mkdir()
    afile.write_text("x", encoding="utf-8")
    argv = [a.format(folder=folder, file=afile) for a in argv]

    def never(*args, **kwargs):
        raise AssertionError("the run started")

    for name, found in list(kinds.KINDS.items()):
        monkeypatch.setitem(kinds.KINDS, name, dataclasses.replace(found, run=never))
    before = sorted(tmp_path.rglob("*"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert argument in err and named in err, err
    assert sorted(tmp_path.rglob("*")) == before


def test_the_report_commands_refuse_a_folder_as_output_before_any_work(tmp_path, capsys):
    from labkit.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["faults", "--output", str(tmp_path)])
    assert stop.value.code == 2 and "argument --output" in capsys.readouterr().err

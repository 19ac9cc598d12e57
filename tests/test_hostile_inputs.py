"""Hostile inputs at every public entry point: each is refused with the exact outcome.

Table-driven: the CLI (``labkit trace diff``, ``labkit labs --samples``), the strict JSON
reader, the fixture loaders, the exported kernels and the tool-call validators.  Every row
asserts the error type (or exit status 2 for the CLI), that the message names the argument
or the file, that no traceback reaches stderr, and that the refusal comes within
``TIME_LIMIT`` seconds.  Near misses (just inside passes, just outside is refused) follow the
tables.
"""

from __future__ import annotations

import functools
import io
import json
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from booktools import fixture_files as files
from booktools.fixture_files import save_arrays
from labkit.cli import labs as cli_labs
from labkit.cli import main
from labkit.core import fixtures, strictjson
from labkit.core.fixtures import fixture_path, load_arrays, read_json
from labkit.core.strictjson import MAX_DEPTH, JSONInputError, loads
from labkit.diffusion.ddim import MIN_ALPHA_BAR, ddim_step
from labkit.diffusion.guidance import check_guidance_scale, classifier_free_guidance
from labkit.diffusion.normal import box_muller
from labkit.diffusion.vae import load_vae, to_uint8
from labkit.labs import dpo, unequal_rank
from labkit.labs.common import finite_difference, masked_cross_entropy
from labkit.labs.dpo import dpo_loss
from labkit.labs.grpo import group_advantages, ppo_clip_objective
from labkit.labs.kl import kl_divergence
from labkit.nn import KVCache, attention, rms_norm, rope
from labkit.nn.rope import rope_angles
from labkit.text.processors import ProcessorContext, SamplingConfig, apply_processors, greedy_select
from labkit.tools.fixture import TARGET_ARGUMENTS
from labkit.tools.normalize import free_text, normalize
from labkit.tools.toolspec import (
    ProposalError,
    load_toolspec,
    parse_arguments,
    validate_arguments,
)

TIME_LIMIT = 5.0
SPEC = load_toolspec()
ARGS = TARGET_ARGUMENTS  # §7.11's arguments: the valid call every near miss starts from


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        assert time.perf_counter() - start < TIME_LIMIT, f"{fn.__name__} took longer than {TIME_LIMIT} s"


# -- labkit trace diff ------------------------------------------------------------------------

EVENT = {
    "trace_id": "trace-text-001",
    "event_id": "e00",
    "parent_event_id": None,
    "component": "gateway",
    "event_type": "request.accepted",
    "logical_step": 0,
    "payload": {},
}


def line(**changes) -> bytes:
    return json.dumps({**EVENT, **changes}, ensure_ascii=False).encode("utf-8") + b"\n"


def raw_line(payload_text: str, **changes) -> bytes:
    """An event line whose payload is the literal JSON text ``payload_text``."""
    text = json.dumps({**EVENT, **changes, "payload": "@@"}, ensure_ascii=False)
    return text.replace('"@@"', payload_text).encode("utf-8") + b"\n"


DIFF_CASES = {
    "empty file": (b"", "at least one event"),
    "blank lines only": (b"\n  \n\t\n", "at least one event"),
    "random bytes": (bytes(np.random.default_rng(7).integers(0, 256, 300, dtype=np.uint8)), "not"),
    "latin-1 bytes": ('{"component": "caf\u00e9"}'.encode("latin-1"), "not UTF-8"),
    "UTF-16 text": (line().decode().encode("utf-16"), "not UTF-8"),
    "byte-order mark": (b"\xef\xbb\xbf" + line(), "not JSON"),
    "NaN in payload": (raw_line('{"x": NaN}'), "NaN"),
    "Infinity in payload": (raw_line('{"x": Infinity}'), "Infinity"),
    "-Infinity in payload": (raw_line('{"x": -Infinity}'), "-Infinity"),
    "1e400 in payload": (raw_line('{"x": 1e400}'), "overflows to infinity"),
    "-1e400 in payload": (raw_line('{"x": -1e400}'), "overflows to infinity"),
    "duplicate envelope key": (line()[:-2] + b', "event_id": "e01"}\n', "duplicate key 'event_id'"),
    "duplicate payload key": (raw_line('{"k": 1, "k": 2}'), "duplicate key 'k'"),
    "nested 100000 deep": (raw_line("[" * 100_000 + "]" * 100_000), "nested deeper"),
    "nested 101 objects deep": (raw_line('{"a":' * 101 + "1" + "}" * 101), "nested deeper"),
    "truncated line": (line()[:40], "not JSON"),
    "a JSON array": (b"[1, 2, 3]\n", "must be a JSON object"),
    "a JSON string": (b'"e00"\n', "must be a JSON object"),
    "a JSON number": (b"7\n", "must be a JSON object"),
    "a JSON null": (b"null\n", "must be a JSON object"),
    "missing field": (json.dumps({k: v for k, v in EVENT.items() if k != "component"}).encode(), "component"),
    "extra field": (line(wall_clock=1.0), "wall_clock"),
    "event_id with a final newline": (line(event_id="e00\n"), "event_id"),
    "event_type with a final newline": (line(event_type="request.accepted\n"), "event_type"),
    "event_id an integer": (line(event_id=0), "event_id"),
    "logical_step negative": (line(logical_step=-1), "logical_step"),
    "logical_step a boolean": (line(logical_step=True), "logical_step"),
    "escaped lone surrogate": (raw_line('{"s": "\\ud800"}'), "surrogate"),
    "two trace ids": (line() + line(trace_id="trace-text-002", event_id="e01", parent_event_id="e00"), "trace_id"),
    "event id twice": (line() + line(parent_event_id="e00"), "appears twice"),
    "unknown parent": (line(parent_event_id="e07"), "parent_event_id"),
    "5000-digit integer": (raw_line('{"n": ' + "9" * 5000 + "}"), "unreadable"),
    "NUL byte": (b"\x00" + line(), "not JSON"),
    "trailing garbage": (line()[:-1] + b"x\n", "not JSON"),
    "single quotes": (line().replace(b'"', b"'"), "not JSON"),
    "comment line": (b"// a comment\n" + line(), "not JSON"),
    "trailing comma": (line()[:-2] + b",}\n", "not JSON"),
}


@pytest.fixture(scope="module")
def reference() -> Path:
    return fixture_path("traces", "text.jsonl")


def _diff(capsys, a, b) -> tuple[int, str, str]:
    code = timed(main, ["trace", "diff", str(a), str(b)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("side", ["A", "B"])
@pytest.mark.parametrize("name", DIFF_CASES)
def test_trace_diff_refuses_a_hostile_file_with_status_2(tmp_path, capsys, reference, name, side):
    content, rule = DIFF_CASES[name]
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_bytes(content)
    a, b = (hostile, reference) if side == "A" else (reference, hostile)
    code, out, err = _diff(capsys, a, b)
    assert code == 2 and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "hostile.jsonl" in err and rule in err, err


@pytest.mark.parametrize(
    "make, rule",
    [
        (lambda tmp: tmp / "missing.jsonl", "does not exist"),
        (lambda tmp: tmp, "does not exist"),  # a folder
        (lambda tmp: Path(str(tmp / "x") + "\x00.jsonl"), "does not exist"),
    ],
    ids=["missing file", "a folder", "NUL in the path"],
)
def test_trace_diff_refuses_unusable_paths(tmp_path, capsys, reference, make, rule):
    code, out, err = _diff(capsys, reference, make(tmp_path))
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert rule in err


@pytest.mark.slow
def test_trace_diff_as_a_process_says_why_in_one_line(tmp_path, reference):
    deep = tmp_path / "deep.jsonl"
    deep.write_bytes(DIFF_CASES["nested 100000 deep"][0])
    done = subprocess.run(
        [sys.executable, "-m", "labkit", "trace", "diff", str(reference), str(deep)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "deep.jsonl" in done.stderr


def test_trace_diff_keeps_0_and_1(tmp_path, capsys, reference):
    assert _diff(capsys, reference, reference)[0] == 0
    events = [json.loads(x) for x in reference.read_text(encoding="utf-8").splitlines()]
    events[1]["component"] = "templater"
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    assert _diff(capsys, reference, other)[0] == 1


# -- labkit labs --samples --------------------------------------------------------------------

SAMPLES = ["1000000000000", str(cli_labs.MAX_SAMPLES + 1), "9999", "0", "-5", "abc", "", "1e5", "10000.0"]
SAMPLES += ["nan", "inf", "0x2710", "１００００", "10,000", "2**20", "99999999999999999999999999999"]


@pytest.mark.parametrize("value", SAMPLES)
def test_labs_refuses_bad_samples_before_any_work(capsys, monkeypatch, value):
    monkeypatch.setattr("labkit.labs.report.labs_report", lambda **_: pytest.fail("the labs ran"))
    with pytest.raises(SystemExit) as stop:
        timed(main, ["labs", "--samples", value])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--samples" in err and "Traceback" not in err


def test_labs_samples_near_miss():
    assert cli_labs._samples(str(cli_labs.MAX_SAMPLES)) == cli_labs.MAX_SAMPLES
    assert cli_labs._samples(str(cli_labs.MIN_SAMPLES)) == cli_labs.MIN_SAMPLES
    for value in (cli_labs.MAX_SAMPLES + 1, cli_labs.MIN_SAMPLES - 1):
        with pytest.raises(Exception, match=str(value)):
            cli_labs._samples(str(value))


# -- the strict JSON reader -------------------------------------------------------------------

LOADS_CASES = {
    "empty": ("", "not JSON"),
    "spaces": ("   ", "not JSON"),
    "NaN": ("NaN", "NaN"),
    "nan inside a list": ("[1, NaN]", "NaN"),
    "Infinity key value": ('{"a": Infinity}', "Infinity"),
    "1e400": ("1e400", "overflows"),
    "1.8e308": ("1.8e308", "overflows"),
    "-1e309": ("-1e309", "overflows"),
    "duplicate key": ('{"a": 1, "a": 1}', "duplicate key 'a'"),
    "duplicate nested key": ('{"a": {"b": 1, "b": 2}}', "duplicate key 'b'"),
    "duplicate key differing in escape": ('{"a": 1, "\\u0061": 2}', "duplicate key 'a'"),
    "deep list": ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested deeper"),
    "deep, unbalanced": ("[" * 200_000, "nested deeper"),
    "invalid UTF-8": (b'{"a": "\xc3\x28"}', "not UTF-8"),
    "overlong UTF-8": (b'"\xc0\xaf"', "not UTF-8"),
    "encoded surrogate": (b'"\xed\xa0\x80"', "not UTF-8"),
    "escaped lone high surrogate": ('"\\ud83d"', "surrogate"),
    "escaped lone low surrogate": ('["\\ude00"]', "surrogate"),
    "lone surrogate in a key": ('{"\\udfff": 1}', "surrogate"),
    "huge integer": ("1" * 5000, "unreadable"),
    "single quotes": ("{'a': 1}", "not JSON"),
    "trailing comma": ("[1,]", "not JSON"),
    "two documents": ("{} {}", "not JSON"),
    "hex number": ("0x10", "not JSON"),
    "leading zero": ("01", "not JSON"),
    "control character in a string": ('"a\x01b"', "not JSON"),
    "BOM": ("\ufeff{}", "not JSON"),
}


@pytest.mark.parametrize("name", LOADS_CASES)
def test_strict_reader_refuses(name):
    text, rule = LOADS_CASES[name]
    with pytest.raises(JSONInputError) as caught:
        timed(loads, text, "input.json", line=3)
    assert str(caught.value).startswith("input.json line 3") and rule in str(caught.value)


def test_strict_reader_near_misses():
    deepest = []
    for _ in range(MAX_DEPTH - 1):
        deepest = [deepest]
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x") == deepest  # MAX_DEPTH lists, each inside the next
    assert loads("1.7976931348623157e308", "x") == 1.7976931348623157e308
    assert loads('"\\ud83d\\ude00"', "x") == "😀"
    assert loads('{"a": 1, "A": 2}', "x") == {"a": 1, "A": 2}
    assert loads('"[[[[{{{{"', "x") == "[[[[{{{{"  # brackets inside strings are not nesting


def test_strict_reader_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(strictjson, "MAX_BYTES", 64)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(["x" * 70]), encoding="utf-8")
    with pytest.raises(JSONInputError, match="big.json: larger than 64 bytes"):
        strictjson.read_json_file(big)
    with pytest.raises(JSONInputError, match="larger than 64 bytes"):
        list(strictjson.iter_json_lines(big))
    assert strictjson.loads("[1]" + " " * 61, "x") == [1]


# -- fixture loaders --------------------------------------------------------------------------


def _npz_bytes(arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _huge_header_npz() -> bytes:
    """An .npz whose one member claims a float64 shape of 10¹² but holds 8 bytes."""
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    member.write(b"\0" * 8)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("w.npy", member.getvalue())
    return out.getvalue()


def _zip_with(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(name, data)
    return out.getvalue()


GOOD_NPZ = _npz_bytes({"w": np.arange(64, dtype=np.float32)})
NPZ_CASES = {
    "empty file": (b"", "corrupted"),
    "random bytes": (bytes(np.random.default_rng(3).integers(0, 256, 500, dtype=np.uint8)), "corrupted"),
    "truncated archive": (GOOD_NPZ[: len(GOOD_NPZ) // 2], "corrupted"),
    "header claims 10^12 values": (_huge_header_npz(), "claims shape [1000000000000]"),
    "pickled object array": (_npz_bytes({"o": np.array([{"a": 1}], dtype=object)}), "corrupted"),
    "member is not .npy": (_zip_with("w.npy", b"hello, not an array"), "corrupted"),
    "format version 9": (_zip_with("w.npy", b"\x93NUMPY\x09\x00" + b"\0" * 100), "corrupted"),
    "a JSON file": (b'{"w": [1, 2, 3]}', "corrupted"),
}


def test_load_arrays_reads_what_save_arrays_wrote(tmp_path):
    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], dtype=np.int64)}
    back = load_arrays(save_arrays(tmp_path / "ok.npz", arrays))
    assert back.keys() == arrays.keys() and all(np.array_equal(back[k], arrays[k]) for k in arrays)
    assert back["a"].dtype == np.float32 and back["a"].flags.writeable


JSON_FIXTURE_CASES = {
    "truncated": (b'{"vocab": ["a", "b"', "not JSON"),
    "empty": (b"", "not JSON"),
    "NaN": (b'{"scale": NaN}', "NaN"),
    "duplicate key": (b'{"vocab": [], "vocab": [1]}', "duplicate key"),
    "not UTF-8": (b'{"t": "\xff"}', "not UTF-8"),
    "deep": (b"[" * 5000 + b"]" * 5000, "nested deeper"),
}


#: (loader, the file it reads, the bytes, a word the refusal holds) for every hostile fixture file
FIXTURE_FILE_CASES = {
    **{f"npz {name}": (load_arrays, "weights.npz", *case) for name, case in NPZ_CASES.items()},
    **{f"json {name}": (read_json, "meta.json", *case) for name, case in JSON_FIXTURE_CASES.items()},
}


@pytest.mark.parametrize("name", FIXTURE_FILE_CASES)
def test_a_fixture_loader_refuses(tmp_path, name):
    loader, filename, content, rule = FIXTURE_FILE_CASES[name]
    path = tmp_path / filename
    path.write_bytes(content)
    with pytest.raises(ValueError) as caught:
        timed(loader, path)
    assert filename in str(caught.value) and rule in str(caught.value)


def test_fixtures_check_reports_a_truncated_npz_and_a_truncated_json(tmp_path, monkeypatch):
    def recipe(dest: Path) -> list[str]:
        save_arrays(dest / "d" / "w.npz", {"w": np.arange(64, dtype=np.float32)})
        fixtures.write_json(dest / "d" / "meta.json", {"vocab": list("abcdef")})
        return ["d/w.npz", "d/meta.json"]

    stored = tmp_path / "stored"
    recipe(stored)
    for name in ("w.npz", "meta.json"):
        path = stored / "d" / name
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    monkeypatch.setenv("LABKIT_FIXTURES", str(stored))
    problems = timed(files.check, {"d": recipe})
    assert [p.split(":")[0] for p in problems] == ["d/w.npz", "d/meta.json"]
    assert "corrupted" in problems[0] and "not JSON" in problems[1]


# -- kernels ----------------------------------------------------------------------------------

X = np.linspace(-1.0, 1.0, 8).reshape(2, 4)
LATENT = np.zeros((1, 4, 2, 2), dtype=np.float32)
Q = np.ones((1, 2, 3, 4))
ALLOWED = np.tril(np.ones((3, 3), dtype=bool))
BATCH = np.ones((2, 4, 2, 2), dtype=np.float32)


@functools.cache
def _denoiser():
    from labkit.diffusion.denoiser import load_denoiser

    return load_denoiser()


def _processors(logits=None, selected=(), **config):
    logits = np.zeros(20) if logits is None else logits
    return apply_processors(logits, ProcessorContext(SamplingConfig(**config), tuple(selected)))


def _extend(cache, first, second):
    cache.append(0, first, first)
    return cache.append(0, second, second)


KERNEL_CASES = {
    # rms_norm
    "rms_norm int64 x": (lambda: rms_norm(np.arange(8).reshape(2, 4)), "x"),
    "rms_norm complex x": (lambda: rms_norm(X + 1j), "x"),
    "rms_norm bool x": (lambda: rms_norm(X > 0), "x"),
    "rms_norm float16 x of 300": (lambda: rms_norm(np.full((1, 4), 300, dtype=np.float16)), "float32"),
    "rms_norm NaN x": (lambda: rms_norm(np.array([[1.0, np.nan]])), "x"),
    "rms_norm inf x": (lambda: rms_norm(np.array([[1.0, np.inf]])), "x"),
    "rms_norm object x": (lambda: rms_norm(np.array([[1.0, None]], dtype=object)), "x"),
    "rms_norm string x": (lambda: rms_norm("1.0"), "x"),
    "rms_norm eps NaN": (lambda: rms_norm(X, eps=np.nan), "eps"),
    "rms_norm eps inf": (lambda: rms_norm(X, eps=np.inf), "eps"),
    "rms_norm eps 0": (lambda: rms_norm(X, eps=0.0), "eps"),
    "rms_norm eps negative": (lambda: rms_norm(X, eps=-1e-6), "eps"),
    "rms_norm eps a string": (lambda: rms_norm(X, eps="1e-6"), "eps"),
    "rms_norm eps True": (lambda: rms_norm(X, eps=True), "eps"),
    "rms_norm eps complex": (lambda: rms_norm(X, eps=1e-6j), "eps"),
    # rope
    "rope int64 x": (lambda: rope(np.ones((3, 4), dtype=np.int64), np.arange(3)), "x"),
    "rope complex x": (lambda: rope(np.ones((3, 4)) * 1j, np.arange(3)), "x"),
    "rope NaN x": (lambda: rope(np.full((3, 4), np.nan), np.arange(3)), "x"),
    "rope NaN position": (lambda: rope(np.ones((3, 4)), np.array([0.0, np.nan, 2.0])), "positions"),
    "rope string positions": (lambda: rope(np.ones((3, 4)), np.array(["0", "1", "2"])), "positions"),
    "rope positions of another length": (lambda: rope(np.ones((3, 4)), np.arange(4)), "positions"),
    "rope odd head size": (lambda: rope(np.ones((3, 5)), np.arange(3)), "d_h"),
    "rope base 0": (lambda: rope(np.ones((3, 4)), np.arange(3), base=0.0), "base"),
    "rope base 1": (lambda: rope(np.ones((3, 4)), np.arange(3), base=1.0), "base"),
    "rope base NaN": (lambda: rope(np.ones((3, 4)), np.arange(3), base=np.nan), "base"),
    "rope base True": (lambda: rope(np.ones((3, 4)), np.arange(3), base=True), "base"),
    "rope_angles head_dim 3": (lambda: rope_angles(np.arange(3), 3), "head_dim"),
    "rope_angles head_dim '4'": (lambda: rope_angles(np.arange(3), "4"), "head_dim"),
    "rope_angles head_dim True": (lambda: rope_angles(np.arange(3), True), "head_dim"),
    "rope_angles base -1": (lambda: rope_angles(np.arange(3), 4, -1.0), "base"),
    # the KV cache
    "KVCache n_layers 0": (lambda: KVCache(0), "n_layers"),
    "KVCache n_layers '2'": (lambda: KVCache("2"), "n_layers"),
    "KVCache n_layers True": (lambda: KVCache(True), "n_layers"),
    "KVCache n_layers 1.5": (lambda: KVCache(1.5), "n_layers"),
    "KVCache truncated to -1": (lambda: KVCache(1).truncated(-1), "length"),
    "KVCache truncated to True": (lambda: KVCache(1).truncated(True), "length"),
    # attention
    "attention int q": (lambda: attention(Q.astype(int), Q, Q, ALLOWED), "q"),
    "attention complex k": (lambda: attention(Q, Q + 1j, Q, ALLOWED), "k"),
    "attention NaN v": (lambda: attention(Q, Q, np.full_like(Q, np.nan), ALLOWED), "v"),
    "attention float16 q": (lambda: attention(Q.astype(np.float16), Q, Q, ALLOWED), "q"),
    "attention d_h mismatch": (lambda: attention(Q, np.ones((1, 2, 3, 5)), Q, ALLOWED), "d_h"),
    "attention 1-D q": (lambda: attention(np.ones(4), Q, Q, ALLOWED), "q"),
    "attention allowed of another shape": (lambda: attention(Q, Q, Q, np.ones((3, 2), dtype=bool)), "allowed"),
    "attention row with no key": (lambda: attention(Q, Q, Q, np.zeros((3, 3), dtype=bool)), "row 0"),
    # ddim_step
    "ddim alpha_bar_t a string": (lambda: ddim_step(LATENT, LATENT, "0.5", 1.0), "alpha_bar_t"),
    "ddim alpha_bar_t True": (lambda: ddim_step(LATENT, LATENT, True, 1.0), "alpha_bar_t"),
    "ddim alpha_bar_t 1e-300": (lambda: ddim_step(LATENT, LATENT, 1e-300, 1.0), "alpha_bar_t"),
    "ddim alpha_bar_t NaN": (lambda: ddim_step(LATENT, LATENT, np.nan, 1.0), "alpha_bar_t"),
    "ddim alpha_bar_t 0": (lambda: ddim_step(LATENT, LATENT, 0.0, 1.0), "alpha_bar_t"),
    "ddim alpha_bar_t 1.5": (lambda: ddim_step(LATENT, LATENT, 1.5, 1.0), "alpha_bar_t"),
    "ddim alpha_bar_t complex": (lambda: ddim_step(LATENT, LATENT, 0.5 + 0j, 1.0), "alpha_bar_t"),
    "ddim alpha_bar_t None": (lambda: ddim_step(LATENT, LATENT, None, 1.0), "alpha_bar_t"),
    "ddim alpha_bar_prev inf": (lambda: ddim_step(LATENT, LATENT, 0.5, np.inf), "alpha_bar_prev"),
    "ddim alpha_bar_prev a list": (lambda: ddim_step(LATENT, LATENT, 0.5, [1.0]), "alpha_bar_prev"),
    "ddim NaN latents": (lambda: ddim_step(np.full_like(LATENT, np.nan), LATENT, 0.5, 1.0), "sample"),
    "ddim inf latents": (lambda: ddim_step(np.full_like(LATENT, np.inf), LATENT, 0.5, 1.0), "sample"),
    "ddim complex epsilon": (lambda: ddim_step(LATENT, LATENT + 1j, 0.5, 1.0), "epsilon"),
    "ddim NaN epsilon": (lambda: ddim_step(LATENT, np.full_like(LATENT, np.nan), 0.5, 1.0), "epsilon"),
    "ddim int sample": (lambda: ddim_step(LATENT.astype(int), LATENT, 0.5, 1.0), "sample"),
    "ddim int epsilon": (lambda: ddim_step(LATENT, LATENT.astype(int), 0.5, 1.0), "epsilon"),
    "ddim epsilon of another shape": (lambda: ddim_step(LATENT, LATENT[..., :1], 0.5, 1.0), "epsilon"),
    "ddim eta NaN": (lambda: ddim_step(LATENT, LATENT, 0.5, 0.6, eta=np.nan), "eta"),
    "ddim eta a string": (lambda: ddim_step(LATENT, LATENT, 0.5, 0.6, eta="0"), "eta"),
    "ddim eta negative": (lambda: ddim_step(LATENT, LATENT, 0.5, 0.6, eta=-1.0), "eta"),
    "ddim NaN noise": (lambda: ddim_step(LATENT, LATENT, 0.5, 0.6, eta=1.0, noise=LATENT + np.nan), "noise"),
    "ddim complex noise": (lambda: ddim_step(LATENT, LATENT, 0.5, 0.6, eta=1.0, noise=LATENT + 1j), "noise"),
    "ddim missing noise": (lambda: ddim_step(LATENT, LATENT, 0.5, 0.6, eta=1.0), "noise"),
    # classifier-free guidance
    "cfg integer batch": (lambda: classifier_free_guidance(np.ones((2, 4), dtype=int), 5.5), "epsilon_batch"),
    "cfg complex batch": (lambda: classifier_free_guidance(BATCH + 1j, 5.0), "epsilon_batch"),
    "cfg NaN batch": (lambda: classifier_free_guidance(BATCH * np.nan, 5.0), "epsilon_batch"),
    "cfg three rows": (lambda: classifier_free_guidance(np.ones((3, 4)), 5.0), "epsilon_batch"),
    "cfg w NaN": (lambda: classifier_free_guidance(BATCH, np.nan), "guidance_scale"),
    "cfg w inf": (lambda: classifier_free_guidance(BATCH, np.inf), "guidance_scale"),
    "cfg w negative": (lambda: classifier_free_guidance(BATCH, -1.0), "guidance_scale"),
    "cfg w True": (lambda: classifier_free_guidance(BATCH, True), "guidance_scale"),
    "cfg w a string": (lambda: classifier_free_guidance(BATCH, "5"), "guidance_scale"),
    "cfg w 10**400": (lambda: check_guidance_scale(10**400), "guidance_scale"),
    "cfg w complex": (lambda: check_guidance_scale(5 + 0j), "guidance_scale"),
    # logits processors
    "control_ids (-1,)": (lambda: SamplingConfig(control_ids=(-1,)), "control_ids"),
    "control_ids (1.5,)": (lambda: SamplingConfig(control_ids=(1.5,)), "control_ids"),
    "control_ids (True,)": (lambda: SamplingConfig(control_ids=(True,)), "control_ids"),
    "control id past the vocabulary": (lambda: _processors(control_ids=(20,)), "control_ids"),
    "eos_id -1": (lambda: SamplingConfig(eos_id=-1), "eos_id"),
    "eos_id past the vocabulary": (lambda: _processors(eos_id=25), "eos_id"),
    "grammar_allowed (-3,)": (lambda: SamplingConfig(grammar_allowed=(-3,)), "grammar_allowed"),
    "grammar_allowed past the vocabulary": (lambda: _processors(grammar_allowed=(7, 99)), "grammar_allowed"),
    "selected_so_far -1": (lambda: _processors(selected=(-1,)), "selected_so_far"),
    "temperature NaN": (lambda: SamplingConfig(temperature=np.nan), "temperature"),
    "repetition_penalty inf": (lambda: SamplingConfig(repetition_penalty=np.inf), "repetition_penalty"),
    "presence_penalty NaN": (lambda: SamplingConfig(presence_penalty=np.nan), "presence_penalty"),
    "frequency_penalty a string": (lambda: SamplingConfig(frequency_penalty="0"), "frequency_penalty"),
    "top_k 2.5": (lambda: SamplingConfig(top_k=2.5), "top_k"),
    "minimum_output_tokens 1.5": (lambda: SamplingConfig(minimum_output_tokens=1.5), "minimum_output_tokens"),
    "two-row logits": (lambda: _processors(logits=np.zeros((2, 20))), "raw_logits"),
    "integer logits": (lambda: _processors(logits=np.zeros(20, dtype=int)), "logits"),
    "greedy over NaN logits": (lambda: greedy_select(np.array([0.0, np.nan])), "processed_logits"),
    "greedy over +inf logits": (lambda: greedy_select(np.array([0.0, np.inf])), "processed_logits"),
    "greedy over complex logits": (lambda: greedy_select(np.array([0.0, 1j])), "processed_logits"),
    "greedy with all masked": (lambda: greedy_select(np.full(3, -np.inf)), "masked"),
    # the chapter-11 cross-entropy
    "cross-entropy NaN logits": (lambda: masked_cross_entropy(np.full((2, 3), np.nan), [0, 1], [True, True]), "logits"),
    "cross-entropy complex logits": (
        lambda: masked_cross_entropy(np.ones((2, 3)) * 1j, [0, 1], [True, True]),
        "logits",
    ),
    "cross-entropy integer logits": (
        lambda: masked_cross_entropy(np.ones((2, 3), int), [0, 1], [True, True]),
        "logits",
    ),
    "cross-entropy target -1": (lambda: masked_cross_entropy(np.ones((2, 3)), [0, -1], [True, True]), "targets"),
    "cross-entropy float targets": (lambda: masked_cross_entropy(np.ones((2, 3)), [0.0, 1.0], [True, True]), "targets"),
    "cross-entropy integer mask": (lambda: masked_cross_entropy(np.ones((2, 3)), [0, 1], [1, 1]), "valid"),
    "cross-entropy nothing valid": (lambda: masked_cross_entropy(np.ones((2, 3)), [0, 1], [False, False]), "valid"),
    # the other chapter-11 labs
    "dpo complex log-probabilities": (lambda: dpo_loss([-1 + 1j, -2.0], [-1.0, -2.0]), "policy"),
    "dpo string log-probabilities": (lambda: dpo_loss(["-1", "-2"], [-1.0, -2.0]), "policy"),
    "dpo NaN reference": (lambda: dpo_loss([-1.0, -2.0], [np.nan, -2.0]), "reference"),
    "dpo beta True": (lambda: dpo_loss([-1.0, -2.0], [-1.0, -2.0], beta=True), "beta"),
    "dpo beta a string": (lambda: dpo_loss([-1.0, -2.0], [-1.0, -2.0], beta="0.1"), "beta"),
    "dpo beta inf": (lambda: dpo_loss([-1.0, -2.0], [-1.0, -2.0], beta=np.inf), "beta"),
    "grpo string rewards": (lambda: group_advantages([["1", "0"]]), "rewards"),
    "grpo boolean rewards": (lambda: group_advantages([[True, False]]), "rewards"),
    "grpo eps NaN": (lambda: group_advantages([[1.0, 0.0]], eps=np.nan), "eps"),
    "grpo eps a string": (lambda: group_advantages([[1.0, 0.0]], eps="0"), "eps"),
    "ppo complex ratio": (lambda: ppo_clip_objective([1 + 1j], [1.0]), "ratio"),
    "ppo NaN advantage": (lambda: ppo_clip_objective([1.0], [np.nan]), "advantage"),
    "kl string probabilities": (lambda: kl_divergence(["0.5", "0.5"], [0.5, 0.5]), "p"),
    "kl complex probabilities": (lambda: kl_divergence([0.5, 0.5], [1 + 0j, 0.0]), "q"),
    "kl NaN probability": (lambda: kl_divergence([0.5, np.nan], [0.5, 0.5]), "p"),
    "kl negative probability": (lambda: kl_divergence([1.5, -0.5], [0.5, 0.5]), "p"),
    "unequal-rank learning_rate NaN": (lambda: unequal_rank.run(learning_rate=np.nan), "learning_rate"),
    "unequal-rank string targets": (lambda: unequal_rank.run(rank_targets=[["1"], ["0"]]), "rank_targets[0]"),
    # the shown steps' own parameters, and the cache every decode step extends
    "dpo step_size True": (lambda: dpo.run(step_size=True), "step_size"),
    "dpo step_size a string": (lambda: dpo.run(step_size="0.1"), "step_size"),
    "unequal-rank learning_rate True": (lambda: unequal_rank.run(learning_rate=True), "learning_rate"),
    "finite_difference step NaN": (lambda: finite_difference(float, np.zeros(2), step=np.nan), "step"),
    "finite_difference NaN point": (lambda: finite_difference(float, np.array([np.nan])), "x"),
    "processors complex logits": (lambda: _processors(np.zeros(20) + 0j), "raw_logits"),
    "processors NaN logit": (lambda: _processors(np.r_[np.zeros(19), np.nan]), "raw_logits"),
    "processors integer logits": (lambda: _processors(np.zeros(20, dtype=np.int64)), "raw_logits"),
    "VAE NaN latent": (lambda: load_vae().decode(np.full((1, 4, 2, 2), np.nan)), "latent"),
    "VAE complex latent": (lambda: load_vae().decode(LATENT + 1j), "latent"),
    "cache layer -1": (lambda: KVCache(2).append(-1, Q, Q), "layer"),
    "cache layer 2 of 2": (lambda: KVCache(2).append(2, Q, Q), "layer"),
    "cache integer keys": (lambda: KVCache(2).append(0, np.ones((1, 2, 3, 4), dtype=int), Q), "k_new"),
    "cache NaN values": (lambda: KVCache(2).append(0, Q, np.full_like(Q, np.nan)), "v_new"),
    "cache keys and values of two shapes": (lambda: KVCache(2).append(0, Q, Q[..., :2]), "k_new and v_new"),
    "cache keys of another head size": (lambda: _extend(KVCache(2), Q, Q[..., :2]), "extend layer 0"),
    # Box–Muller and the VAE's pixels
    "box_muller NaN u1": (lambda: box_muller(np.array([np.nan]), np.array([0.5])), "u1"),
    "box_muller NaN u2": (lambda: box_muller(np.array([0.5]), np.array([np.nan])), "u2"),
    "box_muller complex u2": (lambda: box_muller(np.array([0.5]), np.array([0.5j])), "u2"),
    "box_muller u1 = 0": (lambda: box_muller(np.array([0.0]), np.array([0.5])), "u1"),
    "to_uint8 NaN pixels": (lambda: to_uint8(np.full((1, 3, 2, 2), np.nan)), "pixels"),
    "to_uint8 integer pixels": (lambda: to_uint8(np.ones((1, 3, 2, 2), dtype=np.uint8)), "pixels"),
    # the toy denoiser
    "denoiser complex condition": (lambda: _denoiser().gates(np.ones((12, 768)) * 1j), "condition"),
    "denoiser NaN condition": (lambda: _denoiser().gates(np.full((12, 768), np.nan)), "condition"),
    "denoiser NaN gates": (lambda: _denoiser().expected_picture(np.full(4, np.nan)), "gates"),
    "denoiser NaN latent batch": (
        lambda: _denoiser()(np.full((1, 4, 64, 64), np.nan), np.array([999]), np.ones((1, 12, 768))),
        "latent_batch",
    ),
    "denoiser timestep 1000": (
        lambda: _denoiser()(np.zeros((1, 4, 64, 64)), np.array([1000]), np.ones((1, 12, 768))),
        "timestep_batch must lie in",
    ),
    "denoiser float timesteps": (
        lambda: _denoiser()(np.zeros((1, 4, 64, 64)), np.array([999.0]), np.ones((1, 12, 768))),
        "timestep_batch",
    ),
}


@pytest.mark.parametrize("name", KERNEL_CASES)
def test_kernel_refuses(name):
    call, argument = KERNEL_CASES[name]
    with pytest.raises(ValueError) as caught:
        timed(call)
    assert argument in str(caught.value)


# -- tool-call validators ---------------------------------------------------------------------

PROPOSAL_CASES = {
    "duplicate key": (b'{"title": "a", "title": "b"}', "duplicate key 'title'"),
    "NaN duration": (b'{"duration_minutes": NaN}', "NaN"),
    "1e400 duration": (b'{"duration_minutes": 1e400}', "overflows"),
    "nested 10000 deep": (b'{"title": ' + b"[" * 10_000 + b"]" * 10_000 + b"}", "nested deeper"),
    "not UTF-8": (b'{"title": "\xe5\xb8"}', "not UTF-8"),
    "empty": (b"", "not JSON"),
    "an array": (b"[]", "JSON object"),
    "a string": (b'"primary"', "JSON object"),
    "truncated": (b'{"calendar_id": "primary", "ti', "not JSON"),
    "lone surrogate": (b'{"title": "\\udc00"}', "surrogate"),
}


@pytest.mark.parametrize("name", PROPOSAL_CASES)
def test_proposal_parse_refuses(name):
    raw, rule = PROPOSAL_CASES[name]
    with pytest.raises(ProposalError) as caught:
        timed(parse_arguments, raw)
    assert "proposal arguments" in str(caught.value) and rule in str(caught.value)


def test_proposal_must_be_bytes():
    with pytest.raises(ProposalError, match="must be bytes"):
        parse_arguments('{"title": "a"}')


SCHEMA_CASES = {
    "local_time with a final newline": ({"local_time": "09:00\n"}, "/local_time"),
    "local_time in Arabic-Indic digits": ({"local_time": "٠٩:٠٠"}, "/local_time"),
    "local_time in full-width digits": ({"local_time": "０９:００"}, "/local_time"),
    "local_time 24:00": ({"local_time": "24:00"}, "/local_time"),
    "local_time 9:00": ({"local_time": "9:00"}, "/local_time"),
    "local_time with seconds": ({"local_time": "09:00:00"}, "/local_time"),
    "local_date 2026-02-30": ({"local_date": "2026-02-30"}, "/local_date"),
    "local_date 2026-2-3": ({"local_date": "2026-2-3"}, "/local_date"),
    "local_date with a final newline": ({"local_date": "2026-07-20\n"}, "/local_date"),
    "empty title": ({"title": ""}, "/title"),
    "81-character title": ({"title": "x" * 81}, "/title"),
    "duration 1.5": ({"duration_minutes": 1.5}, "/duration_minutes"),
    "duration true": ({"duration_minutes": True}, "/duration_minutes"),
    "duration a string": ({"duration_minutes": "10"}, "/duration_minutes"),
    "duration 0": ({"duration_minutes": 0}, "/duration_minutes"),
    "duration 1441": ({"duration_minutes": 1441}, "/duration_minutes"),
    "another calendar": ({"calendar_id": "work"}, "/calendar_id"),
    "an extra field": ({"notify_all": True}, "/"),
}


@pytest.mark.parametrize("name", SCHEMA_CASES)
def test_schema_refuses(name):
    changes, where = SCHEMA_CASES[name]
    errors = timed(validate_arguments, SPEC, {**ARGS, **changes})
    assert errors and errors[0][0] == where


def test_schema_near_misses():
    for changes in (
        {"local_time": "23:59"},
        {"local_time": "00:00"},
        {"local_date": "2028-02-29"},
        {"title": "x" * 80},
    ):
        assert validate_arguments(SPEC, {**ARGS, **changes}) == (), changes
    assert validate_arguments(SPEC, {**ARGS, "duration_minutes": 1440}) == ()


TITLE_CASES = {
    "right-to-left override": "会议\u202e告报",
    "left-to-right embedding": "\u202a会议",
    "first strong isolate": "会\u2068议",
    "pop directional formatting": "会议\u202c",
    "NUL": "会议\x00",
    "BEL": "\x07会议",
    "DEL": "会议\x7f",
    "C1 next line": "会\x85议",
    "tab": "会\t议",
    "newline": "会议\n",
    "line separator": "会\u2028议",
    "paragraph separator": "会\u2029议",
    "lone zero-width space": "\u200b",
    "zero-width space inside": "会\u200b议",
    "leading zero-width joiner": "\u200d会议",
    "trailing zero-width non-joiner": "会议\u200c",
    "byte-order mark": "\ufeff会议",
    "word joiner": "会\u2060议",
    "private use": "会议\ue000",
    "soft hyphen": "会\u00ad议",
    "spaces only": "   ",
    "ideographic space only": "\u3000",
    "no-break spaces only": "\u00a0\u00a0",
}


@pytest.mark.parametrize("name", TITLE_CASES)
def test_normalisation_refuses_hidden_characters_in_the_title(name):
    arguments = {**ARGS, "title": TITLE_CASES[name]}
    assert validate_arguments(SPEC, arguments) == ()  # the schema lets it through; normalisation stops it
    with pytest.raises(ValueError, match="title"):
        timed(
            normalize,
            SPEC,
            arguments,
            invocation_id="inv_01",
            clock="2026-07-19T14:00:00+08:00",
            tz_name="Asia/Shanghai",
            subject="user-42",
        )


def test_free_text_near_misses():
    for text in ("带护照", "👨\u200d👩\u200d👧", "क्\u200dष", "a b", "é", " 带护照 ", "\u3000x"):
        assert free_text("title", text) == text
    for text in ("a \u200d b", "\u200d", "a\u200d", 7, None, b"title"):
        with pytest.raises(ValueError, match="title"):
            free_text("title", text)


# -- near misses of the kernel guards ---------------------------------------------------------


def test_rms_norm_near_misses():
    assert np.isfinite(rms_norm(np.full((1, 4), 300, dtype=np.float32))).all()
    assert rms_norm(X, eps=np.finfo(np.float64).tiny).dtype == np.float64
    with pytest.raises(ValueError, match="eps"):
        rms_norm(X, eps=0.0)
    with pytest.raises(ValueError, match="float32"):
        rms_norm(X.astype(np.float16))


def test_rope_near_misses():
    assert rope(np.ones((3, 4), dtype=np.float32), np.arange(3)).dtype == np.float32
    assert np.isfinite(rope(np.ones((3, 4)), np.arange(3), base=np.nextafter(1.0, 2.0))).all()
    with pytest.raises(ValueError, match="base"):
        rope(np.ones((3, 4)), np.arange(3), base=1.0)


def test_attention_near_misses():
    out, _ = attention(Q.astype(np.float32), Q, Q, ALLOWED)
    assert np.isfinite(out).all()
    with pytest.raises(ValueError, match="q"):
        attention(Q.astype(np.float16), Q, Q, ALLOWED)


def test_ddim_alpha_floor_near_miss():
    z_prev, x0 = ddim_step(LATENT.astype(np.float64), LATENT.astype(np.float64), MIN_ALPHA_BAR, 1.0)
    assert np.isfinite(z_prev).all() and np.isfinite(x0).all()
    with pytest.raises(ValueError, match="alpha_bar_t"):
        ddim_step(LATENT, LATENT, MIN_ALPHA_BAR / 2, 1.0)
    assert ddim_step(LATENT, LATENT, np.float32(0.5), 1)[0].dtype == np.float32  # NumPy and int numbers pass


def test_guidance_scale_near_misses():
    assert check_guidance_scale(0) == 0.0 and check_guidance_scale(np.float32(5.5)) == 5.5
    with pytest.raises(ValueError, match="guidance_scale"):
        check_guidance_scale(-5e-324)
    eps = np.stack([np.zeros((4,)), np.ones((4,))]).astype(np.float32)
    assert classifier_free_guidance(eps, 5.5)[0, 0] == np.float32(5.5)  # not truncated to 5


def test_token_id_near_misses():
    assert np.isneginf(_processors(control_ids=(0, 19))[[0, 19]]).all()
    with pytest.raises(ValueError, match="control_ids"):
        _processors(control_ids=(20,))
    with pytest.raises(ValueError, match="control_ids"):
        SamplingConfig(control_ids=(-1,))


def test_schema_validation_loads_no_uri_grammars_and_still_asserts_date():
    code = (
        "import sys; from labkit.tools.toolspec import validate_arguments; "
        "from labkit.tools.toolspec import load_toolspec; "
        "spec = load_toolspec(); "
        "args = dict(calendar_id='primary', title='t', local_date='2026-02-30', local_time='09:00', "
        "duration_minutes=1); "
        "print(validate_arguments(spec, args)[0][0], sys.modules.get('rfc3987_syntax') is not None)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["/local_date", "False"], done.stderr


def test_greedy_near_miss():
    assert greedy_select(np.array([-np.inf, 0.0, -np.inf])) == 1  # −∞ is a mask, not an error
    assert greedy_select(np.array([np.finfo(np.float64).max, 0.0])) == 0


def test_every_json_reader_of_the_kit_is_the_strict_one():
    """``json.load(s)`` and a bare ``jsonschema`` import appear only in ``core/strictjson.py``.  One
    exception: ``second_model_call`` parses the kit's own decoded text on a line page 09 shows.  (The
    answer runner's wire, which carries an answer's floats, NaN included, as JSON on purpose, is
    ``classroom/runner_wire.py`` now, outside the kit.)"""
    root = Path(__file__).resolve().parents[1] / "labkit"
    pattern = re.compile(r"\bjson\.load|^\s*(import|from) jsonschema\b")
    found = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "strictjson.py"
        for text in path.read_text(encoding="utf-8").splitlines()
        if pattern.search(text)
    )
    assert found == ["tools/calls.py"], found


@pytest.mark.slow
def test_a_trace_command_loads_no_uri_grammars(tmp_path):
    code = (
        "import sys; from labkit.cli import main; "
        f"code = main(['trace', 'text', '--out', {str(tmp_path / 'out')!r}]); "
        "print(code, sys.modules.get('rfc3987_syntax') is not None, 'matplotlib' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split()[-3:] == ["0", "False", "False"], done.stderr

"""The answer's side of ``classroom.runner`` (and of ``classroom.sandbox``, which starts it in a sandbox).

The child runs the answer files once, each in its own namespace (a file that raises halfway keeps
what it defined before), says which of the wanted names they define and what went wrong (a file that
does not parse: its line), then hands over one exercise's answer at a time and runs the calls the
checker makes.  Parsing happens here, never in the checker's process: a file built to crash the
parser crashes only this child.
"""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from contextlib import suppress

import numpy  # noqa: F401  (loaded before the answer, as what nearly every answer imports)

from classroom.runner_wire import decode, encode, rebuilt, receive, send

#: the largest answer file the child reads
MAX_FILE = 1 << 20


class Remote:
    """A handle to one of the checker's objects: reads and calls go back over the pipe."""

    __slots__ = ("_id",)

    def __init__(self, key: int):
        object.__setattr__(self, "_id", key)

    def _ask(self, what: str, *args):
        blobs: list[bytes] = []
        send(_WIRE[1], {"op": "ask", "ref": self._id, "what": what, "args": _encode(list(args), blobs)}, blobs)
        head, blobs = receive(_WIRE[0])
        if head.get("op") == "raise":
            raise rebuilt(head)
        return decode(head.get("value"), blobs, Remote)

    def __getattr__(self, name):
        return self._ask("getattr", name)

    def __setattr__(self, name, value):
        raise AttributeError("the checker's objects cannot be changed from the answer, only called")

    def __call__(self, *args, **kwargs):
        return self._ask("call", list(args), kwargs)


_WIRE = (-1, -1)


def _encode(value, blobs):
    def ref(obj):
        if isinstance(obj, Remote):
            return {"t": "ref", "id": object.__getattribute__(obj, "_id")}
        raise TypeError(
            f"the answer gave a {type(obj).__name__}, which cannot be sent to the checker "
            "(send numbers, strings, lists, tuples, dicts or NumPy arrays)"
        )

    return encode(value, blobs, ref)


def _run_file(path: str) -> tuple[dict, dict | None]:
    """Run one answer file: its namespace, and the problem (kind, text) when it does not parse or raises."""
    shown, namespace = os.path.basename(path), {"__name__": "__answer__", "__file__": path}
    try:
        with open(path, "rb") as handle:
            source = handle.read(MAX_FILE + 1)
        if len(source) > MAX_FILE:
            return namespace, {"kind": "could not check", "text": f"{shown} is larger than {MAX_FILE >> 10} kB"}
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return namespace, {"kind": "does not parse", "text": f"{shown} does not parse: {exc.msg} (line {exc.lineno})"}
    except (ValueError, RecursionError, MemoryError, OSError) as exc:
        return namespace, {"kind": "does not parse", "text": f"{shown} does not parse: {type(exc).__name__}"}
    try:
        exec(code, namespace)
    except BaseException as exc:  # sys.exit at the top of the file lands here too
        line = _line_of(exc, path)
        where = f" (line {line})" if line else ""
        text = f"running {shown} raised {type(exc).__name__}: {str(exc)[:300]}{where}"
        return namespace, {"kind": "could not check", "text": text}
    return namespace, None


def _line_of(exc: BaseException, path: str) -> int | None:
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return lines[-1] if lines else None


class Answers:
    """The names the answer files define (the first file that defines a name gives it)."""

    def __init__(self, files: list[str], wanted: list[str]):
        self.found, self.where, self.problems, self.own = {}, {}, [], []
        for path in files:
            namespace, problem = _run_file(path)
            if problem:
                self.problems.append(problem)
            for name, value in namespace.items():
                if name not in self.found and not name.startswith("__"):
                    self.found[name], self.where[name] = value, path
                own = inspect.isfunction(value) and value.__module__ == "__answer__"
                self.own += [name] if own and name not in self.own else []
        self.wanted = [w for w in wanted if w in self.found] if wanted else list(self.where)

    def unusable(self, name: str) -> dict:
        """Why there is no answer ``name``: the files' problems first (a file that does not parse), then
        what they define."""
        if self.problems:
            first = self.problems[0]
            return {"op": "unusable", "status": first["kind"], "why": "; ".join(p["text"] for p in self.problems)}
        also = f" (it defines: {', '.join(self.own[:20])}; choose one with --function)" if self.own else ""
        shown = ", ".join(sorted({os.path.basename(p) for p in self.where.values()})) or "the hand-in"
        return {"op": "unusable", "status": "missing", "why": f"{shown} defines no function {name!r}{also}"}

    def ready(self, name: str) -> tuple[dict, list[bytes]]:
        """The message handing over ``name``: its parameters, or the value itself when it is not callable."""
        found, blobs = self.found[name], []
        if not callable(found):
            return {"op": "ready", "value": _encode(found, blobs)}, blobs
        try:
            described = [
                [p.name, int(p.kind), p.default is not p.empty] for p in inspect.signature(found).parameters.values()
            ]
        except (TypeError, ValueError):
            described = None
        return {"op": "ready", "callable": True, "signature": described}, blobs


def _serve_call(answers: Answers, head: dict, blobs) -> None:
    found = answers.found.get(head.get("name"))
    args, kwargs = decode(head["args"], blobs, Remote), decode(head["kwargs"], blobs, Remote)
    out: list[bytes] = []
    try:
        reply = {"op": "return", "value": _encode(found(*args, **kwargs), out)}
    except BaseException as exc:  # SystemExit included: it is the answer's verdict, not the child's
        out, reply = [], {"op": "raise", "type": type(exc).__name__, "message": str(exc)[:500]}
        reply["line"] = _line_of(exc, answers.where.get(head.get("name"), ""))
    send(_WIRE[1], reply, out)


def _hand_over(answers: Answers, name) -> None:
    if not isinstance(name, str) or name not in answers.found:
        return send(_WIRE[1], answers.unusable(str(name)))
    try:
        send(_WIRE[1], *answers.ready(name))
    except (TypeError, ValueError, RecursionError) as exc:
        shown = os.path.basename(answers.where[name])
        send(_WIRE[1], {"op": "unusable", "status": "could not check", "why": f"{shown}'s {name}: {exc}"})


def child(rfd: int, wfd: int) -> None:
    """The child's whole life: load the files, then hand over answers and run calls until told to stop."""
    global _WIRE
    _WIRE = (rfd, wfd)
    setup, _ = receive(rfd)
    files = [str(f) for f in setup["files"]]
    for folder in dict.fromkeys(os.path.dirname(f) for f in files):
        sys.path.insert(0, folder)  # the hand-in's own files may import each other
    answers = Answers(files, [str(w) for w in setup.get("wanted", [])])
    defined = {name: answers.where[name] for name in answers.wanted}
    send(wfd, {"op": "loaded", "defined": defined, "problems": [p["text"] for p in answers.problems]})
    while True:
        head, blobs = receive(rfd)
        if head.get("op") == "get":
            _hand_over(answers, head.get("name"))
        elif head.get("op") == "call":
            _serve_call(answers, head, blobs)
        else:
            break
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # output past the cap is lost, as it should be
            stream.flush()
    os._exit(0)

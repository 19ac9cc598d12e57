"""The answer's side of the sandbox (see ``labkit.cli.sandbox``).

This module is what the child process imports before it runs the answer, so it imports
nothing that could start a process (no ``subprocess``): once the audit hook is installed, a
module that is not yet loaded is imported under the hook's rules.
"""

from __future__ import annotations

import _posixsubprocess
import inspect
import os
import posix
import resource
import runpy
import stat
import sys
import traceback
from contextlib import suppress

import numpy  # noqa: F401  (loaded before the limits and the hook, as what nearly every answer imports)

from labkit.cli.sandbox_wire import decode, encode, rebuilt, receive, send

#: audit events refused outright (event names, or prefixes ending in ".")
REFUSED = tuple(
    "os.fork os.forkpty os.system os.exec os.posix_spawn os.spawn os.kill os.killpg os.chdir os.symlink os.link "
    "subprocess.Popen pty.spawn signal.pthread_kill ctypes. socket. webbrowser.open".split()
)
#: audit events whose path arguments must lie inside the scratch folder
WRITES = tuple("os.remove os.rename os.rmdir os.mkdir os.chmod os.chown os.truncate os.utime shutil.".split())
#: modules the answer may not import (they start processes or call C directly)
UNIMPORTABLE = frozenset({"_posixsubprocess", "_ctypes", "ctypes", "multiprocessing"})


def _outside(path, scratch: str, _isinstance=isinstance, _int=int, _bytes=bytes, _str=str) -> bool:
    """Is ``path`` (an audit event's argument) outside ``scratch``?  Only plain strings are judged:
    a path-like object could answer differently to the hook and to ``open``."""
    if _isinstance(path, _int):
        return False  # an open file: stdout, the pipe or a scratch file
    if _isinstance(path, _bytes):
        path = path.decode("utf-8", "surrogateescape")
    if not _isinstance(path, _str):
        return True
    return ".." in path.split("/") or (path.startswith("/") and not path.startswith(scratch))


def _opens_wrongly(
    args,
    scratch: str,
    _isinstance=isinstance,
    _str=str,
    _int=int,
    _outside=_outside,
    _bits=os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND,
    _stat=posix.stat,
    _isdir=stat.S_ISDIR,
) -> str | None:
    """Why the ``open`` event ``args`` is refused: a write outside ``scratch``, or ``os.open`` of a folder
    (a folder's descriptor would let ``dir_fd=`` reach outside)."""
    path, mode, flags = args
    writing = (_isinstance(mode, _str) and mode.strip("rbt") != "") or (_isinstance(flags, _int) and flags & _bits)
    if writing:
        return f"to write {_str(path)[:80]!r}: write inside the working folder" if _outside(path, scratch) else None
    try:
        folder = mode is None and not _isinstance(path, _int) and _isdir(_stat(path).st_mode)
    except (OSError, TypeError, ValueError):
        folder = False
    return "os.open of a folder" if folder else None


def guard(scratch: str):
    """The audit hook.  Everything it uses is bound at creation: an answer can patch ``os`` or
    ``builtins``, not these defaults, and changing this module's functions is refused."""
    import types

    def hook(
        event,
        args,
        _scratch=scratch + "/",
        _refused=REFUSED,
        _writes=WRITES,
        _modules=UNIMPORTABLE,
        _isinstance=isinstance,
        _any=any,
        _text=(str, bytes),
        _error=PermissionError,
        _function=types.FunctionType,
        _getattr=getattr,
        _ours=__name__,
        _opens_wrongly=_opens_wrongly,
        _outside=_outside,
    ):
        why = None
        if event == "open":
            why = _opens_wrongly(args, _scratch)
        elif event == "import" and args[0] in _modules:
            why = f"to import {args[0]}"
        elif event.startswith(_refused):
            why = event
        elif event.startswith(_writes) and _any(_outside(a, _scratch) for a in args if _isinstance(a, _text)):
            why = f"{event} outside the working folder"
        elif event == "object.__setattr__" and _isinstance(args[0], _function):
            if _getattr(args[0], "__module__", None) == _ours:
                why = f"to change the sandbox's own {args[1]}"
        if why is not None:
            raise _error(f"the sandbox refuses {why}")

    return hook


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

    def __getitem__(self, key):
        return self._ask("getitem", key)

    def __len__(self):
        return self._ask("len")

    def __iter__(self):
        return iter(self._ask("iter"))


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


def _limit(setup: dict) -> None:
    seconds = int(setup["seconds"]) + 1
    for limit, value in (
        (resource.RLIMIT_CPU, seconds),
        (resource.RLIMIT_AS, int(setup["memory_mb"]) << 20),
        (resource.RLIMIT_FSIZE, int(setup["output_kb"]) << 10),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, 0),  # not enforced for root: the audit hook refuses fork as well
    ):
        with suppress(ValueError, OSError):
            resource.setrlimit(limit, (value, value))


def _load(path: str, name: str):
    """The answer's ``name`` (run the file once); a ``LookupError`` saying why there is none."""
    shown = os.path.basename(path)
    try:
        namespace = runpy.run_path(path, run_name="__answer__")
    except SyntaxError as exc:
        raise LookupError(f"{shown} does not parse: {exc.msg} (line {exc.lineno})") from None
    except BaseException as exc:  # sys.exit at the top of the file lands here too
        where = f" (line {_line_of(exc, path)})" if _line_of(exc, path) else ""
        raise LookupError(f"running {shown} raised {type(exc).__name__}: {exc}{where}") from None
    if name not in namespace:
        defined = sorted(n for n, f in namespace.items() if inspect.isfunction(f) and f.__module__ == "__answer__")
        also = f" (it defines: {', '.join(defined)}; choose one with --function)" if defined else ""
        raise LookupError(f"{shown} defines no function {name!r}{also}")
    return namespace[name]


def _line_of(exc: BaseException, path: str) -> int | None:
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return lines[-1] if lines else None


def _ready(found) -> tuple[dict, list[bytes]]:
    """The first message: the answer's parameters, or the value itself when it is not callable."""
    blobs: list[bytes] = []
    if not callable(found):
        return {"op": "ready", "value": _encode(found, blobs)}, blobs
    try:
        described = [
            [p.name, int(p.kind), p.default is not p.empty] for p in inspect.signature(found).parameters.values()
        ]
    except (TypeError, ValueError):
        described = None
    return {"op": "ready", "callable": True, "signature": described}, blobs


def _no_fork_exec(*args, **kwargs):
    raise PermissionError("the sandbox refuses to start a process")


def child(rfd: int, wfd: int) -> None:
    """The child's whole life: load the answer under the limits, then answer calls until told to stop."""
    global _WIRE
    _WIRE = (rfd, wfd)
    _posixsubprocess.fork_exec = _no_fork_exec  # its C original starts a process without an audit event
    setup, _ = receive(rfd)
    path, name = setup["file"], setup["name"]
    _limit(setup)
    sys.addaudithook(guard(setup["scratch"]))
    sys.path.insert(0, os.path.dirname(path))
    try:
        found = _load(path, name)
        send(wfd, *_ready(found))
    except LookupError as unusable:
        return send(wfd, {"op": "unusable", "why": str(unusable)})
    except (TypeError, ValueError, RecursionError) as exc:
        return send(wfd, {"op": "unusable", "why": f"{os.path.basename(path)}'s {name}: {exc}"})
    while True:
        head, blobs = receive(rfd)
        if head.get("op") != "call":
            break
        args, kwargs = decode(head["args"], blobs, Remote), decode(head["kwargs"], blobs, Remote)
        out: list[bytes] = []
        try:
            reply = {"op": "return", "value": _encode(found(*args, **kwargs), out)}
        except BaseException as exc:  # SystemExit included: it is the answer's verdict, not the child's
            out, reply = [], {"op": "raise", "type": type(exc).__name__, "message": str(exc)[:500]}
            reply["line"] = _line_of(exc, path)
        send(wfd, reply, out)
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # output past the cap is lost, as it should be
            stream.flush()
    os._exit(0)

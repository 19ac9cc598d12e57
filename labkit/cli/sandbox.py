"""Run a reader's answer file where it cannot reach the checker (``labkit check --file``, ``labkit grade``).

The checker stays in this process; the answer runs in a child process with a wall-clock limit,
memory, CPU and file-size caps, in a fresh scratch folder, under an audit hook that refuses
writes outside that folder, new processes, signals, sockets and ``ctypes``.  The checker is
handed a stand-in callable: each call sends its arguments to the child over a pipe and waits
for the result.  Both ways the wire carries JSON plus ``numpy.save(allow_pickle=False)`` bytes,
so nothing the child sends can run code here.  An object of the checker that is not plain data
(a cache, a decoder, a service) stays here; the child gets a handle whose attribute reads and
calls come back over the pipe (public names only, never a module, class or function's inside).

Whatever the answer does — exit, crash, loop, print without end, patch what it can see — it
happens in the child: the verdict is computed here, and a child that dies, overruns its limit
or breaks the protocol gives :class:`CouldNotCheck`, never a pass.
"""

from __future__ import annotations

import inspect
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from labkit.cli.sandbox_wire import decode, encode, rebuilt, receive, send

#: the characters of the answer's own output shown with a verdict
SHOWN_OUTPUT = 2000
#: the only environment variables the child sees
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LABKIT_FIXTURES", "MPLBACKEND")
#: what the answer may do with a handle to one of the checker's objects
OPERATIONS = {
    "getattr": lambda obj, name: getattr(obj, _public(name)),
    "call": lambda obj, args, kwargs: obj(*args, **kwargs),
}
#: what never crosses to the answer, not even as a handle
UNSHAREABLE = (types.ModuleType, type, types.FunctionType, types.CodeType, types.FrameType, types.TracebackType)
UNSHAREABLE += (types.GeneratorType, types.CoroutineType)


@dataclass(frozen=True)
class Limits:
    seconds: float = 60.0  # wall clock for loading the answer and every call the checker makes
    memory_mb: int = 2048  # address space of the child
    output_kb: int = 1024  # what the child may print, and the largest file it may write


class CouldNotCheck(BaseException):
    """The answer could not be checked (it died, overran a limit or broke the protocol).

    A ``BaseException``, so a checker's ``except Exception`` never turns it into a verdict."""


class Sandbox:
    """``with Sandbox(path, name) as box:`` — ``box.candidate`` is what the checker is handed."""

    def __init__(self, path: str | Path, name: str, limits: Limits = Limits()):
        self.path, self.name, self.limits = Path(path).resolve(), name, limits
        self.objects: dict[int, object] = {}
        self.printed = ""

    def __enter__(self) -> Sandbox:
        self.scratch = os.path.realpath(tempfile.mkdtemp(prefix="labkit-answer-"))
        self.output = tempfile.TemporaryFile()
        to_child, self._to_child = os.pipe()
        self._from_child, from_parent = os.pipe()
        kit = str(Path(__file__).parents[2])  # the child runs this very labkit
        boot = f"import sys; sys.path.insert(0, {kit!r}); from labkit.cli.sandbox_child import child; child"
        boot += f"({to_child}, {from_parent})"
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}  # no tokens or secrets of the caller
        env |= dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1")
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", boot],
            stdin=subprocess.DEVNULL,
            stdout=self.output,
            stderr=self.output,
            pass_fds=(to_child, from_parent),
            cwd=self.scratch,
            env={**env, "TMPDIR": self.scratch, "HOME": self.scratch},
            start_new_session=True,
        )
        os.close(to_child)
        os.close(from_parent)
        self.deadline = time.monotonic() + self.limits.seconds
        try:
            self._send(
                {"op": "load", "file": str(self.path), "name": self.name, "scratch": self.scratch, **vars(self.limits)}
            )
            head, blobs = self._receive()
            if head.get("op") == "unusable":
                raise CouldNotCheck(str(head.get("why")))
            if head.get("op") != "ready":
                self._violation("a first message that is not 'ready'")
            if head.get("callable"):
                self.candidate = self._stand_in(head.get("signature"))
            else:
                self.candidate = self._decode(head.get("value"), blobs)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        with suppress(OSError):
            send(self._to_child, {"op": "bye"})
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self._kill()
        for fd in (self._to_child, self._from_child):
            os.close(fd)
        self.output.seek(0)
        text = self.output.read(self.limits.output_kb * 1024).decode("utf-8", "replace")
        self.output.close()
        cut = f"\n… ({len(text)} characters in all)" if len(text) > SHOWN_OUTPUT else ""
        self.printed = text[:SHOWN_OUTPUT] + cut
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _stand_in(self, described):
        """What the checker calls: the answer's parameters, each call run in the child."""

        def answer(*args, **kwargs):
            return self.call(args, kwargs)

        if isinstance(described, list):
            P = inspect.Parameter
            try:
                parameters = [P(n, inspect._ParameterKind(k), default=0 if d else P.empty) for n, k, d in described]
                answer.__signature__ = inspect.Signature(parameters)
            except (TypeError, ValueError):
                self._violation("a malformed signature")
        return answer

    def call(self, args: tuple, kwargs: dict):
        """Run the answer on ``args``; serve the child's questions about this side's objects meanwhile."""
        blobs: list[bytes] = []
        self._send({"op": "call", "args": self._encode(args, blobs), "kwargs": self._encode(kwargs, blobs)}, blobs)
        while True:
            head, blobs = self._receive()
            if head.get("op") == "return":
                return self._decode(head.get("value"), blobs)
            if head.get("op") == "raise":
                line = head.get("line")
                raise rebuilt(head, f" (line {line} of {self.path.name})" if isinstance(line, int) else "")
            if head.get("op") != "ask":
                self._violation(f"an unknown message {str(head.get('op'))[:40]!r}")
            self._serve(head, blobs)

    def _serve(self, head: dict, blobs) -> None:
        """Do what the child asks of one of this side's objects (``OPERATIONS``); send back what it gives."""
        target, operation = self._deref(head.get("ref")), OPERATIONS.get(head.get("what"))
        args = self._decode(head.get("args"), blobs)
        if not isinstance(args, list):
            self._violation("a question whose arguments are not a list")
        try:
            if operation is None:
                raise ValueError(f"the answer asked for an unknown operation {str(head.get('what'))[:40]!r}")
            out: list[bytes] = []
            self._send({"op": "return", "value": self._encode(operation(target, *args), out, public=True)}, out)
        except Exception as exc:  # the answer's mistake, raised where it asked (CouldNotCheck is no Exception)
            self._send({"op": "raise", "type": type(exc).__name__, "message": str(exc)[:500]})

    def _encode(self, value, blobs, public: bool = False):
        def ref(obj):
            if public and not _shareable(obj):
                raise TypeError(f"a {type(obj).__name__} of the checker cannot be handed to the answer")
            self.objects[id(obj)] = obj
            return {"t": "ref", "id": id(obj)}

        return encode(value, blobs, ref)

    def _deref(self, key):
        """The object of this side a handle names; a key this side never gave breaks the protocol."""
        if type(key) is not int or key not in self.objects:
            self._violation("a handle the checker never gave")
        return self.objects[key]

    def _decode(self, data, blobs):
        try:
            return decode(data, blobs, self._deref)
        except (ValueError, TypeError, KeyError, IndexError, RecursionError) as problem:
            self._violation(f"a malformed value ({problem})")

    def _send(self, head, blobs=()):
        try:
            send(self._to_child, head, blobs)
        except OSError:
            self._ended()

    def _receive(self):
        try:
            return receive(self._from_child, self.deadline)
        except TimeoutError:
            self._kill()
            raise CouldNotCheck(f"{self.path.name} ran longer than {self.limits.seconds:g} s (the limit)") from None
        except (EOFError, OSError):
            self._ended()
        except (ValueError, RecursionError) as problem:
            self._violation(str(problem))

    def _ended(self):
        try:
            status = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._kill()
            status = self.process.returncode
        why = {
            -signal.SIGXFSZ: f"printed or wrote more than {self.limits.output_kb} kB (the limit)",
            -signal.SIGXCPU: f"used more than {self.limits.seconds:g} s of processor time (the limit)",
            -signal.SIGKILL: "was killed (out of memory?)",
        }.get(status, f"ended with exit status {status}")
        raise CouldNotCheck(f"the process running {self.path.name} {why} before it gave a result")

    def _violation(self, what: str):
        self._kill()
        raise CouldNotCheck(f"the process running {self.path.name} sent {what}; it was stopped")

    def _kill(self):
        with suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def _public(name) -> str:
    if not isinstance(name, str) or name.startswith("_"):
        raise AttributeError(f"the answer may read only public attributes, not {str(name)[:40]!r}")
    return name


def _shareable(obj) -> bool:
    """May the child hold a handle to ``obj``?  Never a module, class, plain function or frame."""
    if isinstance(obj, types.BuiltinFunctionType):  # a builtin method, never a module's function
        return obj.__self__ is not None and not isinstance(obj.__self__, types.ModuleType)
    return not isinstance(obj, UNSHAREABLE)

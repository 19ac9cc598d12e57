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

import builtins
import inspect
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from labkit.cli.sandbox_wire import decode, encode, receive, send

#: the characters of the answer's own output shown with a verdict
SHOWN_OUTPUT = 2000
#: the only environment variables the child sees
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LABKIT_FIXTURES", "MPLBACKEND")


@dataclass(frozen=True)
class Limits:
    seconds: float = 60.0  # wall clock for loading the answer and every call the checker makes
    memory_mb: int = 2048  # address space of the child
    output_kb: int = 1024  # what the child may print, and the largest file it may write


class CouldNotCheck(BaseException):
    """The answer could not be checked (it died, overran a limit or broke the protocol).

    A ``BaseException``, so a checker's ``except Exception`` never turns it into a verdict."""


# ------------------------------------------------------------------------------ the parent
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
        env.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
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
                self.candidate = _Answer(self, head.get("signature"))
            else:
                self.candidate = self._decode(head.get("value"), blobs)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            send(self._to_child, {"op": "bye"})
        except OSError:
            pass
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self._kill()
        for fd in (self._to_child, self._from_child):
            os.close(fd)
        self.output.seek(0)
        text = self.output.read(self.limits.output_kb * 1024).decode("utf-8", "replace")
        self.output.close()
        self.printed = (
            text if len(text) <= SHOWN_OUTPUT else text[:SHOWN_OUTPUT] + f"\n… ({len(text)} characters in all)"
        )
        shutil.rmtree(self.scratch, ignore_errors=True)

    def call(self, args: tuple, kwargs: dict):
        """Run the answer on ``args``; serve the child's questions about this side's objects meanwhile."""
        blobs: list[bytes] = []
        self._send({"op": "call", "args": self._encode(args, blobs), "kwargs": self._encode(kwargs, blobs)}, blobs)
        while True:
            head, blobs = self._receive()
            if head.get("op") == "return":
                return self._decode(head.get("value"), blobs)
            if head.get("op") == "raise":
                raise _exception(head, self.path.name)
            if head.get("op") != "ask":
                self._violation(f"an unknown message {str(head.get('op'))[:40]!r}")
            try:
                answer = _serve(self._decode(head.get("ref"), blobs), head, self._decode(head.get("args"), blobs))
                out: list[bytes] = []
                self._send({"op": "return", "value": self._encode(answer, out, public=True)}, out)
            except CouldNotCheck:
                raise
            except Exception as exc:
                self._send({"op": "raise", "type": type(exc).__name__, "message": str(exc)[:500]})

    def _encode(self, value, blobs, public: bool = False):
        def ref(obj):
            if public and not _shareable(obj):
                raise TypeError(f"a {type(obj).__name__} of the checker cannot be handed to the answer")
            self.objects[id(obj)] = obj
            return {"t": "ref", "id": id(obj)}

        return encode(value, blobs, ref)

    def _decode(self, data, blobs):
        def deref(key):
            if key not in self.objects:
                self._violation("a handle the checker never gave")
            return self.objects[key]

        try:
            return decode(data, blobs, deref)
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
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()


class _Answer:
    """The stand-in the checker calls: same parameters as the answer's function, runs it in the child."""

    def __init__(self, box: Sandbox, described):
        self._box = box
        if isinstance(described, list):
            try:
                self.__signature__ = inspect.Signature(
                    [
                        inspect.Parameter(n, inspect._ParameterKind(k), default=0 if d else inspect.Parameter.empty)
                        for n, k, d in described
                    ]
                )
            except (TypeError, ValueError):
                box._violation("a malformed signature")

    def __call__(self, *args, **kwargs):
        return self._box.call(args, kwargs)


def _shareable(obj) -> bool:
    """May the child hold a handle to ``obj``?  Never a module, class, plain function or frame."""
    import types

    if isinstance(
        obj, (types.ModuleType, type, types.FunctionType, types.CodeType, types.FrameType, types.TracebackType)
    ):
        return False
    if isinstance(obj, types.BuiltinFunctionType):
        return obj.__self__ is not None and not isinstance(obj.__self__, types.ModuleType)
    return not isinstance(obj, (types.GeneratorType, types.CoroutineType))


def _serve(obj, head: dict, args):
    what, args = head.get("what"), args if isinstance(args, list) else []
    if what == "getattr":
        name = args[0] if args else ""
        if not isinstance(name, str) or name.startswith("_"):
            raise AttributeError(f"the answer may read only public attributes, not {str(name)[:40]!r}")
        return getattr(obj, name)
    if what == "call":
        return obj(*args[0], **args[1])
    if what == "getitem":
        return obj[args[0]]
    if what == "len":
        return len(obj)
    if what == "iter":
        return list(obj)
    raise ValueError(f"the answer asked for an unknown operation {str(what)[:40]!r}")


def _exception(head: dict, filename: str) -> Exception:
    """The exception the answer raised, rebuilt here by name (never by unpickling it)."""
    kind, message = str(head.get("type", "Exception"))[:60], str(head.get("message", ""))[:500]
    if isinstance(head.get("line"), int):
        message += f" (line {head['line']} of {filename})"
    cls = getattr(builtins, kind, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except TypeError:
            pass
    return type(kind if kind.isidentifier() else "AnswerError", (Exception,), {})(message)

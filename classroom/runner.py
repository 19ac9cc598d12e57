"""Run a reader's own answer files in a child process under limits (``labkit check --file``, which loads this
module from the book's folder; ``classroom.grading``).

This is no sandbox: the answer is the reader's own code, run on the reader's own account, and it
can do what the reader can.  What the child process buys is a verdict the answer cannot fake and
a checker it cannot hang: the checker stays in this process and is handed a stand-in callable whose
calls cross a pipe to the child (JSON plus ``numpy.save(allow_pickle=False)`` bytes, so nothing the
child sends runs code here); the child has a wall clock, CPU, memory and file-size limit.  An object
of the checker that is not plain data (a cache, a decoder) stays here and the child gets a handle
whose public attribute reads and calls come back over the pipe.

Grading a class's hand-ins needs more — the operating system's isolation: ``classroom.sandbox``
subclasses :class:`Runner` to start the child inside it.

One child serves several exercises: ``load`` runs the files once, ``candidate(name)`` hands over one
exercise's answer.  A child that dies, overruns a limit or breaks the protocol gives
:class:`CouldNotCheck`, never a pass.
"""

from __future__ import annotations

import inspect
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import types
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import labkit
from classroom.runner_wire import decode, encode, rebuilt, receive, send

#: the characters of the answer's own output shown with a verdict
SHOWN_OUTPUT = 2000
#: the only environment variables the child of ``labkit check`` sees
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LABKIT_FIXTURES", "MPLBACKEND")
#: what the answer may do with a handle to one of the checker's objects
OPERATIONS = {
    "getattr": lambda obj, name: getattr(obj, _public(name)),
    "call": lambda obj, args, kwargs: obj(*args, **kwargs),
}
#: what never crosses to the answer, not even as a handle
UNSHAREABLE = (types.ModuleType, type, types.FunctionType, types.CodeType, types.FrameType, types.TracebackType)
UNSHAREABLE += (types.GeneratorType, types.CoroutineType)
#: an exercise's calls together may take this many times the limit (each call: the limit)
EXERCISE_SPAN = 4
#: the folders holding this labkit and this classroom: the child (``-I``, no PYTHONPATH) imports them from there
ROOTS = list(dict.fromkeys(str(Path(f).resolve().parents[1]) for f in (labkit.__file__, __file__)))


@dataclass(frozen=True)
class Limits:
    seconds: float = 60.0  # wall clock for loading the files, for handing over an answer, and for each call
    memory_mb: int = 2048  # address space of the child
    output_kb: int = 1024  # what the child may print, and the largest file it may write
    cpu_seconds: int = 0  # processor time of the whole child (0: ``seconds`` + 1)
    processes: int = 0  # RLIMIT_NPROC (0: leave it)
    open_files: int = 0  # RLIMIT_NOFILE (0: leave it)


class CouldNotCheck(BaseException):
    """The answer could not be checked (it died, overran a limit or broke the protocol).

    A ``BaseException``, so a checker's ``except Exception`` never turns it into a verdict."""


class Unusable(Exception):
    """The files give no answer to this exercise; ``status`` says why (missing, does not parse, could not check)."""

    def __init__(self, status: str, why: str):
        super().__init__(why)
        self.status = status


def set_limits(limits: Limits) -> None:
    """In the child, before it runs anything: the kernel's limits (``preexec_fn``)."""
    cpu = limits.cpu_seconds or int(limits.seconds) + 1
    chosen = [
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_AS, limits.memory_mb << 20),
        (resource.RLIMIT_FSIZE, limits.output_kb << 10),
        (resource.RLIMIT_CORE, 0),
    ]
    chosen += [(resource.RLIMIT_NPROC, limits.processes)] if limits.processes else []
    chosen += [(resource.RLIMIT_NOFILE, limits.open_files)] if limits.open_files else []
    for limit, value in chosen:
        with suppress(ValueError, OSError):
            resource.setrlimit(limit, (value, value))


class Runner:
    """``with Runner([path]) as run:`` — ``run.defined`` maps exercise names to the file defining them;
    ``run.candidate(name)`` is what the checker is handed for ``name``."""

    def __init__(self, files: list[str | Path], limits: Limits = Limits(), wanted: tuple[str, ...] = ()):
        self.files, self.limits, self.wanted = [str(Path(f).resolve()) for f in files], limits, tuple(wanted)
        self.objects: dict[int, object] = {}
        self.printed, self.defined, self.problems = "", {}, []
        self._ends = float("inf")
        self.process = None

    # -- what a subclass changes: where the child runs
    def child_command(self, boot: str, fds: tuple[int, int]) -> dict:
        """``subprocess.Popen`` arguments for the child running ``boot`` with the wire on ``fds``."""
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}  # no tokens or secrets of the caller
        env |= dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1")
        env |= {"TMPDIR": self.scratch, "HOME": self.scratch}
        argv = [sys.executable, "-I", "-B", "-c", boot]
        return {"args": argv, "env": env, "cwd": self.scratch, "preexec_fn": lambda: set_limits(self.limits)}

    def load_message(self) -> dict:
        return {"op": "load", "files": self.files, "wanted": list(self.wanted)}

    def __enter__(self) -> Runner:
        self.scratch = os.path.realpath(tempfile.mkdtemp(prefix="labkit-answer-"))
        self.output = tempfile.TemporaryFile()
        to_child, self._to_child = os.pipe()
        self._from_child, from_parent = os.pipe()
        boot = f"import sys; sys.path[:0] = {ROOTS!r}; from classroom.runner_child import child; "
        boot += f"child({to_child}, {from_parent})"
        try:
            popen = self.child_command(boot, (to_child, from_parent))
            self.process = subprocess.Popen(
                **popen,
                stdin=subprocess.DEVNULL,
                stdout=self.output,
                stderr=self.output,
                pass_fds=(to_child, from_parent, *popen.pop("extra_fds", ())),
                start_new_session=True,
            )
        finally:
            os.close(to_child)
            os.close(from_parent)
        os.set_blocking(self._to_child, False)
        os.set_blocking(self._from_child, False)
        self.deadline = time.monotonic() + self.limits.seconds
        try:
            self._send(self.load_message())
            head, _ = self._receive()
            if head.get("op") != "loaded" or not isinstance(head.get("defined"), dict):
                self._violation("a first message that is not 'loaded'")
            self.defined = {str(k): str(v) for k, v in head["defined"].items()}
            self.problems = [str(p)[:500] for p in head.get("problems", [])][:20]
        except BaseException:
            self.__exit__()
            raise
        return self

    def candidate(self, name: str):
        """The answer's ``name``: its value, or a stand-in whose calls run in the child; :class:`Unusable`
        when the files do not give one."""
        self.deadline = time.monotonic() + self.limits.seconds
        self._ends = self.deadline + EXERCISE_SPAN * self.limits.seconds
        self._send({"op": "get", "name": name})
        head, blobs = self._receive()
        if head.get("op") == "unusable":
            raise Unusable(str(head.get("status", "could not check"))[:40], str(head.get("why"))[:1000])
        if head.get("op") != "ready":
            self._violation("an answer to 'get' that is not 'ready'")
        if head.get("callable"):
            return self._stand_in(name, head.get("signature"))
        return self._decode(head.get("value"), blobs)

    def __exit__(self, *exc) -> None:
        if self.process is not None:
            with suppress(OSError, TimeoutError):
                send(self._to_child, {"op": "bye"}, deadline=time.monotonic() + 0.5)
            try:
                self.process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                self._kill()
        for fd in (self._to_child, self._from_child):
            with suppress(OSError):
                os.close(fd)
        self.output.seek(0)
        text = self.output.read(min(self.limits.output_kb, 4096) * 1024).decode("utf-8", "replace")
        self.output.close()
        cut = f"\n… ({len(text)} characters in all)" if len(text) > SHOWN_OUTPUT else ""
        self.printed = text[:SHOWN_OUTPUT] + cut
        import shutil

        shutil.rmtree(self.scratch, ignore_errors=True)

    def _stand_in(self, name: str, described):
        """What the checker calls: the answer's parameters, each call run in the child."""

        def answer(*args, **kwargs):
            return self.call(name, args, kwargs)

        if isinstance(described, list):
            P = inspect.Parameter
            try:
                parameters = [P(n, inspect._ParameterKind(k), default=0 if d else P.empty) for n, k, d in described]
                answer.__signature__ = inspect.Signature(parameters)
            except (TypeError, ValueError):
                self._violation("a malformed signature")
        return answer

    def call(self, name: str, args: tuple, kwargs: dict):
        """Run the answer's ``name`` on ``args``; serve the child's questions about this side's objects meanwhile."""
        # the limit counts the answer's time, call by call (the checker's own work between calls is not the
        # answer's: a busy machine must not fail an honest answer), within a bound for the whole exercise
        self.deadline = min(time.monotonic() + self.limits.seconds, self._ends)
        blobs: list[bytes] = []
        args, kwargs = self._encode(args, blobs), self._encode(kwargs, blobs)
        self._send({"op": "call", "name": name, "args": args, "kwargs": kwargs}, blobs)
        while True:
            head, blobs = self._receive()
            if head.get("op") == "return":
                return self._decode(head.get("value"), blobs)
            if head.get("op") == "raise":
                line, shown = head.get("line"), os.path.basename(self.defined.get(name, ""))
                raise rebuilt(head, f" (line {line} of {shown})" if isinstance(line, int) else "")
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
            send(self._to_child, head, blobs, deadline=self.deadline)
        except TimeoutError:
            self._kill()
            raise CouldNotCheck(f"the answer stopped reading for {self.limits.seconds:g} s (the limit)") from None
        except OSError:
            self._ended()

    def _receive(self):
        try:
            return receive(self._from_child, self.deadline)
        except TimeoutError:
            self._kill()
            raise CouldNotCheck(f"the answer ran longer than {self.limits.seconds:g} s (the limit)") from None
        except (EOFError, OSError):
            self._ended()
        except (ValueError, RecursionError) as problem:
            self._violation(str(problem)[:200])

    def _ended(self):
        try:
            status = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._kill()
            status = self.process.returncode
        raise CouldNotCheck(f"the process running the answer {ended_why(status, self.limits)} before it gave a result")

    def _violation(self, what: str):
        self._kill()
        raise CouldNotCheck(f"the process running the answer sent {what}; it was stopped")

    def _kill(self):
        with suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def ended_why(status: int | None, limits: Limits) -> str:
    """What an exit status says about a child that ended early."""
    return {
        -signal.SIGXFSZ: f"printed or wrote more than {limits.output_kb} kB (the limit)",
        -signal.SIGXCPU: "used more processor time than its limit",
        -signal.SIGKILL: "was killed (out of memory?)",
    }.get(status, f"ended with exit status {status}")


def _public(name) -> str:
    if not isinstance(name, str) or name.startswith("_"):
        raise AttributeError(f"the answer may read only public attributes, not {str(name)[:40]!r}")
    return name


def _shareable(obj) -> bool:
    """May the child hold a handle to ``obj``?  Never a module, class, plain function or frame."""
    if isinstance(obj, types.BuiltinFunctionType):  # a bound builtin method, never a module's function
        return obj.__self__ is not None and not isinstance(obj.__self__, types.ModuleType)
    return not isinstance(obj, UNSHAREABLE)

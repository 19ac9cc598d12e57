"""The wire between the checker's process and the answer's (``classroom.runner``; ``classroom.sandbox``).

A message is a JSON header and the bytes of the arrays it names, each written by
``numpy.save(allow_pickle=False)``: reading one never runs code.  Plain data crosses by value;
any other object crosses as a handle (``{"t": "ref", "id": …}``) that the sender resolves, and
an exception as its name and message (``rebuilt``).  The checker's side reads and writes with a
deadline on non-blocking descriptors: an answer that stops reading, shrinks its pipe or sends
without end cannot hang the checker.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import select
import struct
import time
from contextlib import suppress
from functools import partial

#: the largest message either side accepts (header and arrays together)
MAX_MESSAGE = 64 << 20


def encode(value, blobs: list[bytes], ref, depth: int = 0):
    """``value`` as JSON-able data; arrays go to ``blobs``; any other object goes to ``ref``."""
    import numpy as np

    if depth > 40:
        raise TypeError("the value is nested more than 40 levels deep")
    if value is None or isinstance(value, (bool, str)):
        return value
    if value is Ellipsis:  # an unchanged page template (`ANSWER = ...`): the checker says "not yet answered"
        return {"t": "ellipsis"}
    if isinstance(value, (np.ndarray, np.generic)) and np.asarray(value).dtype != object:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(value), allow_pickle=False)
        blobs.append(buffer.getvalue())
        return {"t": "array" if isinstance(value, np.ndarray) else "scalar", "i": len(blobs) - 1}
    if isinstance(value, (int, float)):
        return int(value) if isinstance(value, int) else float(value)
    inner = partial(encode, blobs=blobs, ref=ref, depth=depth + 1)
    if isinstance(value, (list, tuple)):
        return {"t": "tuple" if isinstance(value, tuple) else "list", "v": [inner(v) for v in value]}
    if isinstance(value, dict):
        return {"t": "dict", "v": [[inner(k), inner(v)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"t": "bytes", "v": value.hex()}
    return ref(value)


def decode(data, blobs: list[bytes], deref):
    """The value ``encode`` wrote; a handle goes to ``deref``; anything malformed is a ``ValueError``."""
    import numpy as np

    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("t"), str):
        raise ValueError(f"unexpected {type(data).__name__} on the wire")
    kind, body = data["t"], data.get("v")
    if kind in ("array", "scalar"):
        array = np.load(io.BytesIO(blobs[int(data["i"])]), allow_pickle=False)
        if kind == "scalar" and array.ndim == 0 and array.dtype.kind in "biufc":
            return array[()]
        return array
    if kind in ("list", "tuple") and isinstance(body, list):
        items = [decode(v, blobs, deref) for v in body]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict" and isinstance(body, list):
        return {decode(k, blobs, deref): decode(v, blobs, deref) for k, v in body}
    if kind == "bytes" and isinstance(body, str):
        return bytes.fromhex(body)
    if kind == "ellipsis":
        return Ellipsis
    if kind == "ref" and isinstance(data.get("id"), int):
        return deref(data["id"])
    raise ValueError(f"unexpected {kind!r} on the wire")


def send(fd: int, head: dict, blobs: list[bytes] = (), deadline: float | None = None) -> None:
    """Write one message; with a ``deadline`` (a non-blocking ``fd``), ``TimeoutError`` when the other
    side has not taken it all by then."""
    head = json.dumps({**head, "sizes": [len(b) for b in blobs]}).encode()
    data = memoryview(struct.pack("!Q", len(head)) + head + b"".join(blobs))
    while data:
        if deadline is not None and not select.select([], [fd], [], max(0.0, deadline - time.monotonic()))[1]:
            raise TimeoutError
        try:
            data = data[os.write(fd, data[: 1 << 16]) :]
        except BlockingIOError:
            continue


def receive(fd: int, deadline: float | None = None) -> tuple[dict, list[bytes]]:
    """One message; ``EOFError`` when the other side is gone, ``TimeoutError`` past ``deadline``."""
    (size,) = struct.unpack("!Q", _read(fd, 8, deadline))
    if size > MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes (more than {MAX_MESSAGE})")
    head = json.loads(_read(fd, size, deadline))
    sizes = head.pop("sizes", None) if isinstance(head, dict) else None
    if not (isinstance(sizes, list) and all(type(n) is int and n >= 0 for n in sizes)):
        raise ValueError("a message without its header")
    if sum(sizes) + size > MAX_MESSAGE:
        raise ValueError("a message whose arrays are too large")
    return head, [_read(fd, n, deadline) for n in sizes]


def _read(fd: int, count: int, deadline: float | None) -> bytes:
    data = bytearray()
    while len(data) < count:
        if deadline is not None and not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise TimeoutError
        try:
            chunk = os.read(fd, min(count - len(data), 1 << 20))
        except BlockingIOError:
            continue
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def rebuilt(head: dict, where: str = "") -> Exception:
    """The exception the other side raised, rebuilt by name (never by unpickling it): a builtin one as
    itself (so ``hasattr`` and ``except KeyError`` work across the pipe), any other as a new class."""
    kind, message = str(head.get("type", "Exception"))[:60], str(head.get("message", ""))[:500] + where
    cls = getattr(builtins, kind, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        with suppress(TypeError):
            return cls(message)
    return type(kind if kind.isidentifier() else "AnswerError", (Exception,), {})(message)

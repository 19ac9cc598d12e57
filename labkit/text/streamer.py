"""Trace one's streamer: token bytes in, client deltas out (detokenize → stop check → send).

Two waits stand between a token and the client: **the UTF-8 wait** (bytes after the last whole
character stay *pending* until a later token completes it: 蓝 = e8 93 | 9d) and **the stop hold-back**
(the last len(stop) − 1 characters may begin a stop the next token completes, so they are *held*;
OpenAI's ``stop`` and vLLM's default leave the stop out of the output).  A stop may end inside a
token: the text is cut where it begins and the rest is never sent.  EOS or length flushes what is held.
"""

from dataclasses import dataclass


def complete_prefix_length(data: bytes) -> int:
    """How many leading bytes of ``data`` end on a UTF-8 character boundary.

    A lead byte announces its sequence's length: 0xxxxxxx → 1, 110xxxxx → 2, 1110xxxx → 3,
    11110xxx → 4; a continuation byte is 10xxxxxx.  Only the last ≤ 3 bytes can belong to an
    unfinished character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # not a continuation byte: the last character starts here
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)  # no lead byte in reach: malformed, the decoder will replace it


@dataclass(frozen=True)
class Delta:
    """What one token (or the final flush) gave the client, and what the streamer still keeps."""

    text: str  # sent now
    held_back: str  # decoded, not sent: it may begin a stop string
    pending: bytes  # the bytes of an unfinished character (the UTF-8 wait)
    stop: str | None = None  # the stop string this token completed
    discarded: str = ""  # decoded text never sent: the stop and what follows it in the token


class Streamer:
    """The incremental detokenizer and stop matcher of one request."""

    def __init__(self, stop_sequences: tuple[str, ...] = ()):
        if any(not isinstance(s, str) or not s for s in stop_sequences):
            raise ValueError(f"stop_sequences must be non-empty strings, got {list(stop_sequences)}")
        self.stops = tuple(stop_sequences)
        self.hold = max((len(s) for s in self.stops), default=1) - 1  # len(stop) − 1 characters
        self.pending = b""  # bytes of an unfinished character
        self.text = ""  # the decoded text (cut at a stop)
        self.sent = 0  # characters of ``text`` already sent
        self.stopped: str | None = None

    def push(self, token_bytes: bytes) -> Delta:
        """One token's bytes: wait for whole characters, match stops, hold back, send the rest."""
        if self.stopped is not None:
            raise ValueError(f"the streamer stopped at {self.stopped!r}; it takes no more tokens")
        data = self.pending + token_bytes
        whole = complete_prefix_length(data)
        self.pending = data[whole:]  # the UTF-8 wait: an unfinished character is not decoded yet
        self.text += data[:whole].decode("utf-8", errors="replace")
        found = [(self.text.find(s), s) for s in self.stops if s in self.text]
        if found:
            cut, self.stopped = min(found)
            assert cut >= self.sent, "a stop never begins in text already sent (that is what the hold-back is for)"
            discarded = self.text[cut:] + self.pending.decode("utf-8", errors="replace")
            self.text, self.pending = self.text[:cut], b""
            return Delta(self._send(cut), "", b"", self.stopped, discarded)
        safe = max(self.sent, len(self.text) - self.hold)  # hold back the last len(stop) − 1 characters
        return Delta(self._send(safe), self.text[safe:], self.pending)

    def finish(self) -> Delta:
        """The generation ended without a stop (EOS, length): flush what was held back."""
        self.text += self.pending.decode("utf-8", errors="replace")  # an unfinished character: U+FFFD
        self.pending = b""
        return Delta(self._send(len(self.text)), "", b"")

    def _send(self, upto: int) -> str:
        out, self.sent = self.text[self.sent : upto], upto
        return out

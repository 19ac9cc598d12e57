"""The request digest is SHA-256 of the RFC 8785 form: the arguments' key order cannot change it.

Mutant: the canonical form keeps the dict's insertion order (``json.dumps`` without sorting), so two
clients sending the same arguments in another order get two digests — and an idempotency conflict.
"""

import hashlib

from labkit.tools.confirm import request_digest


def test_the_request_digest_ignores_key_order_at_every_depth():
    forward = {"title": "Sync", "start": "2026-07-20T09:00:00+08:00", "extra": {"b": 1, "a": [2, {"y": 1, "x": 0}]}}
    backward = {"extra": {"a": [2, {"x": 0, "y": 1}], "b": 1}, "start": forward["start"], "title": "Sync"}
    assert list(forward) != list(backward)
    assert request_digest(forward) == request_digest(backward)


def test_the_request_digest_is_sha256_of_the_sorted_compact_form():
    canonical = b'{"a":"x","b":1,"c":{"d":true,"e":null}}'
    expected = "sha256:" + hashlib.sha256(canonical).hexdigest()
    assert request_digest({"c": {"e": None, "d": True}, "b": 1, "a": "x"}) == expected

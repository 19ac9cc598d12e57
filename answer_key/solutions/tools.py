"""Solutions for trace three (§7.10–7.15): a field of the grammar mask, the digest binding,
prefix reuse and the service's idempotent execute."""

import numpy as np

from labkit.tools.calendar_service import IdempotencyConflict
from labkit.tools.confirm import canonical_json, sha256_digest


def integer_field_mask(value_so_far, pieces, schema):
    low, high = schema["minimum"], schema["maximum"]
    spellings = [str(n) for n in range(low, high + 1)]  # JSON integers: no sign, no leading zeros

    def completable(digits):
        return any(s.startswith(digits) for s in spellings)

    allowed = np.zeros(len(pieces), dtype=bool)
    for token, piece in enumerate(pieces):
        digits, closes = (piece[:-1], True) if piece.endswith("}") else (piece, False)
        if digits and not digits.isdigit():
            continue
        number = value_so_far + digits
        if closes:
            allowed[token] = number in spellings  # the object may close after a whole number
        else:
            allowed[token] = bool(digits) and completable(number)
    return allowed


def digest_matches(confirmation, invocation):
    digest = sha256_digest(canonical_json(invocation.to_json()))  # SHA-256 of RFC 8785 JSON
    return confirmation.decision == "approve" and confirmation.invocation_digest == digest


def idempotent_execute(service, key, request_digest, request):
    record = service.stored(key)
    if record is None:
        return service.perform(request)
    if record["request_digest"] != request_digest:
        raise IdempotencyConflict(f"key {key} already belongs to another request")
    return record["response"]

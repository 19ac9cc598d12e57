"""What an otter-grader test of ``classroom.otter`` calls: labkit's verdict on a submission's answer.

It runs inside otter's grading process, beside the submission's names; the key is loaded when the
clone holds it (``answer_key``), so the hidden cases run as in ``python -m classroom grade``.
"""

from __future__ import annotations


def verdict(name: str, namespace: dict) -> str:
    """passed, failed, not attempted or missing: the status ``classroom grade`` gives ``namespace[name]``."""
    from classroom import grading

    if name not in namespace:
        return "missing"
    grading._fresh_attempts()
    try:
        result = grading.specs()[name](namespace[name])
    except Exception as problem:  # the checker choked on the answer: never a pass
        return f"could not check ({type(problem).__name__})"
    return result.status

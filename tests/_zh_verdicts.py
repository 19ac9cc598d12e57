"""A pytest plugin for ``test_check_zh``: run the wrong answers of ``tests/test_check_*.py`` with the
kit in Chinese and write every verdict an exercise gave to ``$LABKIT_VERDICTS`` (JSON lines). The
English wording those tests assert fails there; only the verdicts are read."""

import json
import os

from labkit.check.core import Exercise
from labkit.core.edition import language

_call = Exercise.__call__


def _recording(self, candidate):
    result = _call(self, candidate)
    fields = ("status", "message", "where", "rule", "hint", "concept")
    with open(os.environ["LABKIT_VERDICTS"], "a", encoding="utf-8") as out:
        out.write(
            json.dumps(
                {"exercise": self.name, "lang": language(), **{f: getattr(result, f) for f in fields}}, default=str
            )
            + "\n"
        )
    return result


Exercise.__call__ = _recording

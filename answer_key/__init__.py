"""The teacher's answer key: what knows each graded exercise's answer — the hidden reference, the
expected value, the hidden cases and the runs beside the real piece — attached to the kit's exercises
on import (``import answer_key``), plus ``solutions/``, a worked solution of every exercise.

It lives beside ``labkit``, never inside it: the wheel does not carry it, a class copy leaves it out,
and ``labkit`` never imports it. The grader imports it; a self-studying reader may, to ``reveal``.
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    if not _info.ispkg:
        importlib.import_module(f"{__name__}.{_info.name}")

"""The cache-fault player's data (lab 05): every fault mode run by ``cache_equivalence.run_case``.

data = {"player": "fault_modes", "title", "start": mode, "tolerance": 1e-12,
        "modes": {mode: {"errors": [T] (3 significant digits), "caught_by": [names],
                         "checks": [[name, passed, what it saw]]}}}
"""

from labkit.labs.cache_equivalence import ABS_TOLERANCE, MODES, FaultCase, run_case
from labkit.reader.players.data import one_of, significant, words

START = "reset_rope_position"


def mode_data(case: FaultCase) -> dict:
    """One mode's case: its errors, what caught it and [check, passed, what it saw] of the three checks."""
    distinct = case.distinct_layer_keys_passed
    error = f"{case.per_position_error.max():.3g}"
    return {
        "errors": significant(case.per_position_error, 3),  # they span 1e-16 … 1
        "caught_by": case.caught_by,
        "checks": [
            ["shape", case.shape_check_passed, words(f"shapes {case.cache_shapes}", f"形状 {case.cache_shapes}")],
            ["logit", case.logit_allclose_passed, words(f"max error {error}", f"最大误差 {error}")],
            [
                "distinct_layer",
                distinct,
                words("keys differ", "键不同") if distinct else words("layer 1 = layer 0", "第 1 层 = 第 0 层"),
            ],
        ],
    }


def static_data(start: str = START) -> dict:
    """Every mode's case (``run_case``), the player opening on ``start``."""
    one_of("start", start, MODES)
    return {
        "title": words("Cache fault modes (lab 05)", "缓存故障模式（实验 05）"),
        "start": start,
        "tolerance": ABS_TOLERANCE,
        "modes": {mode: mode_data(run_case(mode)) for mode in MODES},
    }

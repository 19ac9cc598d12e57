"""Chapter 11: the mechanism labs, each a function returning a dict: a module's ``run()``, or
``masks.run_ce_gradient`` and ``speculative.run_wrong_fallback`` (``report`` lists them all).

Every lab returns exactly the keys, nesting and values of the matching object of the
source chapter's JSON report; the numbers come from labkit's own code (the one
transformer of ``labkit.nn`` for the decoder labs).  ``labkit.labs.common`` holds the
checks and numeric helpers the labs share; ``labkit.labs.lab_decoder`` builds the lab's decoder.
"""

#: ``samples`` of the speculative-sampling lab (``labkit labs --samples``): the default, the least
#: its six-sigma check stands on, the most a run holds in memory (about 40 bytes a sample).
#: Here, not in ``report``, so that ``labkit labs`` builds its parser without importing NumPy.
DEFAULT_SAMPLES = 200_000
MIN_SAMPLES = 10_000
MAX_SAMPLES = 10_000_000


def samples_out_of_range(samples: int) -> str | None:
    """Why ``samples`` (an integer) is no sample count for the speculative lab, or None."""
    if samples < MIN_SAMPLES:
        return f"must be at least {MIN_SAMPLES} for the speculative lab's six-sigma check, got {samples}"
    if samples > MAX_SAMPLES:
        return f"must be at most {MAX_SAMPLES} (the draws are held in memory), got {samples}"
    return None

"""Chapter 11: the mechanism labs, each a function returning the matching object of the source's JSON
report, key for key, from labkit's own code (``report`` lists them)."""

#: the speculative lab's ``samples`` (``labkit labs --samples``): the default, the least its six-sigma check
#: stands on, the most a run holds (~40 bytes each).  Here so that the CLI's parser needs no NumPy.
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

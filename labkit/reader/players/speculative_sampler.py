"""The speculative sampler's data (lab 09): the exact law for each fallback and seeded Monte Carlo runs for
every number of draws and seed, from ``labkit.labs.speculative`` (a kernel recomputes for another p and q).

    data = {"player": "speculative_sampler", "title", "p": [V], "q": [V], "alpha": [V],
            "axes": {"fallback": [..], "draws": [..], "seed": [..]}, "start": {axis: str},
            "exact": {fallback: {"accepted": [V], "refill": [V] (β·refill), "output": [V], "beta", "tv"}},
            "runs": {"fallback|draws|seed": {"observed": [V], "acceptance", "sigmas"}},
            "sigma_bound": 6.0}
"""

import numpy as np

from labkit.labs import speculative
from labkit.reader.players.data import grid, words

DRAWS = (1_000, 10_000, 100_000, 200_000)
SEEDS = (speculative.SEED, 1, 2, 3, 4)


def r6(values) -> list[float]:
    """Probabilities at 6 decimals (a frequency of 200 000 draws is exact there)."""
    return [round(float(v), 6) for v in np.ravel(values)]


def exact(p, q, fallback: str) -> dict:
    mass = speculative.speculative_mass(p, q)
    target = np.asarray(p, dtype=np.float64)
    refill, output = (
        (mass.residual, mass.output) if fallback == "residual" else (target, speculative.wrong_fallback_output(p, q))
    )
    return {
        "accepted": r6(mass.accepted_mass),
        "refill": r6(mass.reject_probability * refill),
        "output": r6(output),
        "beta": round(float(mass.reject_probability), 6),
        "tv": round(float(np.abs(output - target).sum()) / 2, 6),
    }


def run(p, q, fallback: str, draws: int, seed: int) -> dict:
    drawn = speculative.simulate(p, q, draws, seed, fallback)
    sigmas = speculative.standard_error_units(drawn.observed, np.asarray(p, dtype=np.float64), draws)
    return {
        "observed": r6(drawn.observed),
        "acceptance": round(float(drawn.accepted.mean()), 6),
        "sigmas": round(sigmas, 2),
    }


def static_data(p=speculative.TARGET, q=speculative.DRAFT) -> dict:
    return {
        "title": words("Speculative sampling on one prefix (lab 09)", "一个前缀上的推测采样（实验 09）"),
        "p": r6(p),
        "q": r6(q),
        "alpha": r6(speculative.speculative_mass(p, q).accept_probability),
        "axes": {
            "fallback": list(speculative.FALLBACKS),
            "draws": [str(d) for d in DRAWS],
            "seed": [str(s) for s in SEEDS],
        },
        "start": {"fallback": "residual", "draws": str(DRAWS[-1]), "seed": str(speculative.SEED)},
        "exact": {f: exact(p, q, f) for f in speculative.FALLBACKS},
        "runs": grid({"fallback": speculative.FALLBACKS, "draws": DRAWS, "seed": SEEDS}, lambda *c: run(p, q, *c)),
        "sigma_bound": speculative.SIGMA_BOUND,
    }


def recompute(data: dict, request: dict) -> dict:
    """``request = {"p": [V], "q": [V]}``: every state for another target and draft."""
    return static_data(request.get("p", data["p"]), request.get("q", data["q"]))

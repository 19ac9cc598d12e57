"""The GRPO group player's data (lab 07): the advantages Â of every group of four 0/1 rewards and the
page's 0.7 0.7 0.7, with the population std (ddof 0), the sample std (ddof 1) and r − mean, from
``labkit.labs.grpo.group_advantages`` (a kernel adds a group the reader types).

    data = {"player": "grpo_group", "title", "groups": ["0 0 1 1", …], "epsilons": ["1e-08", …],
            "start": {"group", "eps"}, "states": {"<group>|<eps>": {"rewards": [K],
            "population": [K], "sample": [K], "centred": [K], "stds": [ddof 0, ddof 1]}}}
"""

import itertools

import numpy as np

from labkit.labs import grpo
from labkit.reader.players.data import grid, label, significant, words

GROUPS = tuple(itertools.product((0.0, 1.0), repeat=4)) + ((0.7, 0.7, 0.7),)
EPSILONS = (1e-8, 1e-6, 1e-4, 1e-2, 1e-1)
#: significant digits shown: ε's effect (1 − 1e-8/0.5 …) and a near-equal group's 1e-8-sized
#: advantages stay visible
DIGITS = 6


def state(rewards, eps: float) -> dict:
    group = np.asarray([rewards], dtype=np.float64)
    r = group[0]
    values = {
        "rewards": r,
        "population": grpo.group_advantages(group, ddof=0, eps=eps)[0],
        "sample": grpo.group_advantages(group, ddof=1, eps=eps)[0],
        "centred": r - r.mean(),
        "stds": [r.std(), r.std(ddof=1)],
    }
    return {name: significant(v, DIGITS) for name, v in values.items()}


def static_data(groups=GROUPS, epsilons=EPSILONS, start=(grpo.REWARDS[0], grpo.EPSILON)) -> dict:
    return {
        "title": words("GRPO: one group's advantages (lab 07)", "GRPO：一组回答的优势（实验 07）"),
        "groups": [label(tuple(g)) for g in groups],
        "epsilons": [label(float(e)) for e in epsilons],
        "start": {"group": label(tuple(start[0])), "eps": label(float(start[1]))},
        "states": grid({"group": [tuple(g) for g in groups], "eps": [float(e) for e in epsilons]}, state),
    }


def recompute(data: dict, request: dict) -> dict:
    """``request = {"rewards": [numbers], "eps": number}``: that group (and ε) added and shown."""
    rewards = request.get("rewards")
    if not isinstance(rewards, list) or len(rewards) < 2:
        raise ValueError(f"rewards must be a list of at least 2 numbers, got {rewards!r}")
    eps = float(request.get("eps", grpo.EPSILON))
    grpo.group_advantages([rewards], ddof=1, eps=eps)  # the kernel's own checks, before anything changes
    groups = [tuple(float(v) for v in g.split()) for g in data["groups"]]
    typed = tuple(float(r) for r in rewards)
    epsilons = sorted({float(e) for e in data["epsilons"]} | {eps})
    if typed not in groups:
        groups.append(typed)
    return static_data(groups, epsilons, (rewards, eps))

"""Trace two's contract (§7.16) as clauses on its events: condition + initial noise → one whole latent
per timestep → CFG + DDIM (ᾱ_prev chains) → publish after decode → RNG only at the initial latent →
the schedule runs out."""

from labkit.core.clauses import Clause, Events, first, missing, out_of_order


def _condition_then_noise(events: Events) -> str | None:
    order = ("condition.encoded", "latent.initialized")
    return out_of_order(events, order) or missing(events, *order)


def _noisiest_first(events: Events) -> str | None:
    steps = [e for e in events if e["event_type"] == "denoise.updated"]
    pairs = zip(steps, steps[1:], strict=False)
    return next((b["event_id"] for a, b in pairs if b["payload"]["timestep"] >= a["payload"]["timestep"]), None)


def _alpha_bars_chain(events: Events) -> str | None:
    steps = [e for e in events if e["event_type"] == "denoise.updated"]
    for step, after in zip(steps, [*steps[1:], None], strict=True):
        wanted = 1.0 if after is None else after["payload"]["alpha_bar_t"]
        if step["payload"]["alpha_bar_prev"] != wanted:
            return step["event_id"]
    return None


def _published_after_decode(events: Events) -> str | None:
    return out_of_order(events, ("denoise.updated", "vae.decoded", "image.encoded", "response.completed"))


def _noise_only_where_sigma(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return p["rng"]["counter_after"] != p["rng"]["counter_before"] and p["sigma"] == 0.0

    return first(events, wrong, "denoise.updated")


def _schedule_runs_out(events: Events) -> str | None:
    planned = [e["payload"]["scheduler"]["timesteps"] for e in events if e["event_type"] == "latent.initialized"]
    visited = [e["payload"]["timestep"] for e in events if e["event_type"] == "denoise.updated"]
    if not planned or visited != planned[0]:
        return next((e["event_id"] for e in events if e["event_type"] == "denoise.updated"), "(no denoise step)")
    return missing(events, "vae.decoded")


def _seed_and_schedule_recorded(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return not (isinstance(p["seed"], int) and p["latent_shape"] and p["scheduler"]["timesteps"])

    return first(events, wrong, "latent.initialized") or missing(events, "latent.initialized")


CLAUSES = (
    Clause("initial_object", "the condition is encoded before the initial noise is drawn", _condition_then_noise),
    Clause("model_state", "every step updates the whole latent at one timestep, noisiest first", _noisiest_first),
    Clause("runtime_update", "each step's ᾱ_prev is the next step's ᾱ_t (the last: 1)", _alpha_bars_chain),
    Clause("irreversible_point", "the image is published only after the latent is decoded", _published_after_decode),
    Clause("random_entry", "only the initial latent draws random numbers (η = 0)", _noise_only_where_sigma),
    Clause("termination", "the loop ends when the planned timesteps run out", _schedule_runs_out),
    Clause("replay_core", "the seed, the latent's shape and the schedule are recorded", _seed_and_schedule_recorded),
)

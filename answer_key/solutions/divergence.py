"""Solution for the comparing-traces page: name a fault by replaying the catalogue."""


def name_the_fault(kind, golden, mystery):
    from labkit.trace import catalogue
    from labkit.trace.divergence import first_divergence

    target = first_divergence(golden, mystery)
    for name in catalogue.faults(kind):
        candidate = first_divergence(golden, catalogue.run(kind, name))
        if (
            candidate
            and (candidate.index, candidate.rule, candidate.field) == (target.index, target.rule, target.field)
            and first_divergence(mystery, catalogue.run(kind, name)) is None
        ):
            return name
    return None

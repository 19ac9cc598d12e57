"""Chapter 11: the mechanism labs, each a module with ``run() -> dict``.

Every lab returns exactly the keys, nesting and values of the matching object of the
source chapter's JSON report; the numbers come from labkit's own code (the one
transformer of ``labkit.nn`` for the decoder labs).  ``labkit.labs.common`` holds the
numeric helpers the labs share; ``labkit.labs.lab_decoder`` builds the lab's decoder.
"""

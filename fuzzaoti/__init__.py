"""fuzzaoti: property-based differential fuzzing of PyTorch AOTInductor.

The pipeline, one module each:

    fuzzaoti.strategies  generate Programs and runtime shapes (Hypothesis)
    fuzzaoti.program     the Program: immutable, JSON, validated
    fuzzaoti.render      Program → module source, export dims, standalone repro script
    fuzzaoti.backends    eager / AOTI (cpu, cuda) / fake, behind one protocol
    fuzzaoti.worker      the isolation boundary: spawned worker processes, timeouts
    fuzzaoti.execute     what a worker does with a batch of cases, stage by stage
    fuzzaoti.oracle      element-by-element differential verdicts
    fuzzaoti.signature   stable failure signatures for deduplication
    fuzzaoti.corpus      the SQLite corpus of campaigns and findings
    fuzzaoti.campaign    the runner: generate → check → record
    fuzzaoti.cli         the ``fuzzaoti`` command
"""

__version__ = "0.1.0"

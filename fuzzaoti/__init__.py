"""fuzzaoti: property-based differential fuzzing of PyTorch AOTInductor.

The pipeline, one subpackage per phase:

    fuzzaoti.model       the Program (immutable, JSON, validated), its ops, sizes and shapes
    fuzzaoti.strategies  Hypothesis strategies: Programs, runtime shapes, the size profiles
    fuzzaoti.compile     Program → module source; batches merged into one module; backends; canaries
    fuzzaoti.workers     worker processes: export → compile → load → run → compare, timeouts, the pool
    fuzzaoti.check       the oracle, export-guard checks, outcomes, failure signatures
    fuzzaoti.corpus      the SQLite corpus, its migrations, the known-bug list, the quarantine
    fuzzaoti.findings    shrink, replay, repro scripts, reports, triage, families
    fuzzaoti.campaign    the runner: generate → check → record, until the time is up; the follow-up
    fuzzaoti.cli         the ``fuzzaoti`` command (thin: each command is a library call)
"""

__version__ = "0.1.0"

"""The SQLite corpus (``fuzzaoti.corpus``): campaigns, findings and their schema migrations,
the known-bug list, the quarantine and the recording of failures.

``Corpus`` (``store``, with sqlite-utils behind it) loads on first use, not with every
submodule: the CLI reads the quarantine's defaults and the finding statuses for its options
at start-up, before any command needs a corpus.
"""

FINDING_STATUSES = ("new", "known", "fixed")

__all__ = ["Corpus", "FINDING_STATUSES"]


def __getattr__(name: str):
    if name == "Corpus":
        from fuzzaoti.corpus.store import Corpus

        return Corpus
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The SQLite corpus (``fuzzaoti.corpus``): campaigns, findings and their schema migrations,
the known-bug list, the quarantine and the recording of failures."""

FINDING_STATUSES = ("new", "known", "fixed")  # (before the import: store reads it)

from fuzzaoti.corpus.store import Corpus  # noqa: E402

__all__ = ["Corpus", "FINDING_STATUSES"]

"""The SQLite corpus (``fuzzaoti.corpus``): campaigns, findings and their schema migrations."""

from fuzzaoti.corpus.store import FINDING_STATUSES, Corpus

__all__ = ["Corpus", "FINDING_STATUSES"]

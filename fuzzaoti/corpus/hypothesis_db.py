"""The corpus as Hypothesis's example database: a campaign replays past failing batches first.

A campaign's Hypothesis test never fails (a failure is recorded as a finding, not raised), so
Hypothesis itself would never save an example. The campaign saves the choice sequence of every
batch that produced a failure (``compat.current_choices_bytes``) under a key naming the kind of batch
(device, profile, batch size, canary), and the next campaign's *reuse* phase replays those
choices before generating anything new: the same programs and shapes, checked on today's torch.

Two departures from a plain ``ExampleDatabase``, both deliberate:

* ``delete`` keeps the entry. Hypothesis deletes a replayed example that did not fail the
  test, which for fuzzaoti is every example; the corpus keeps them as the campaign's memory.
* ``fetch`` yields the ``REPLAY_LIMIT`` most recent entries of a key, so a corpus with many
  findings does not spend hours replaying before it generates anything new.

Values are Hypothesis's own serialised choice sequences (plain bytes, no pickle).
"""

from __future__ import annotations

from typing import Iterable

from hypothesis.database import ExampleDatabase

from fuzzaoti.corpus.migrations import now

REPLAY_LIMIT = 16
TABLE = "hypothesis_examples"


class CorpusExampleDatabase(ExampleDatabase):
    def __init__(self, corpus):
        super().__init__()
        self.corpus = corpus

    def save(self, key: bytes, value: bytes) -> None:
        with self.corpus.writing():
            self.corpus.db[TABLE].insert({"key": key, "value": value, "saved_at": now()}, ignore=True)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        rows = self.corpus.db.execute(
            f"select value from {TABLE} where key = ? order by saved_at desc, rowid desc limit ?",
            [key, REPLAY_LIMIT]).fetchall()
        return [bytes(r[0]) for r in rows]

    def delete(self, key: bytes, value: bytes) -> None:
        """Kept on purpose: see the module docstring."""

    def count(self) -> int:
        return self.corpus.db[TABLE].count


def batch_key(device: str, profile: str, batch_size: int | str, runs: int, canary: str | None,
              configs: str | None = None) -> bytes:
    """One key per kind of batch: choices replay into the strategy they were drawn from. (A
    campaign of one config set has its own; one of all sets keeps the key it had before
    config sets could be chosen, so older corpora still replay.)"""
    only = f":{configs}" if configs else ""
    return f"fuzzaoti:{device}:{profile}:{batch_size}:{runs}:{canary or ''}{only}".encode()

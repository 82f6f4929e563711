"""A failing case recorded as a finding: its signature, the known-bug list's verdict, the corpus row.

One function for every path that records (a campaign, ``fuzzaoti check --record``), so a
finding looks the same whoever found it.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from fuzzaoti import compat
from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import signature
from fuzzaoti.corpus.known_bugs import KnownBug, KnownList
from fuzzaoti.corpus.store import Corpus
from fuzzaoti.model.case import Case


class Stored(NamedTuple):
    """Where a failure went: its finding, whether that finding is new, its signature, and the
    known bug it matched (None for none)."""

    finding_id: int
    new: bool
    signature: str
    known: KnownBug | None


def store_failure(corpus: Corpus, known: KnownList, campaign_id: int | None, device: str, canary: str | None,
                  case: Case, outcome: Outcome, versions: dict) -> Stored:
    """Record a failing case in the corpus (a new finding or one more hit), ``known`` when its
    signature is on the known-bug list."""
    runs = [{"env": outcome.env, "seed": outcome.seed}] if outcome.env is not None else case.run_dicts()
    sig = signature(outcome, case.program)
    bug = known.match(sig, canary)
    fid, new = corpus.record_failure(campaign_id, device, canary, sig, outcome.to_dict(), case.program.to_json(),
                                     runs, versions, known_note=bug.note if bug else None)
    return Stored(fid, new, sig, bug)


def record_checked(corpus_path: str, device: str, canary: str | None, checked: list[tuple[Case, Outcome]],
                   echo: Callable[[str], None] = print) -> None:
    """Store ``fuzzaoti check``'s failures as findings (outside any campaign), naming known bugs."""
    known, versions = KnownList.load(corpus_path), compat.torch_versions()
    with Corpus.open(corpus_path, create=True) as corpus:
        for case, outcome in checked:
            if outcome.is_finding:
                stored = store_failure(corpus, known, None, device, canary, case, outcome, versions)
                echo(f"  {'stored as' if stored.new else 'one more hit of'} finding {stored.finding_id} in {corpus_path}")

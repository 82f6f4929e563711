"""Known bugs: signatures that are already reported upstream, so a finding that matches is
``known`` rather than ``new`` and a campaign does not spend shrink and triage time on it.

Two sources, both plain data:

* the bugs fuzzaoti itself has found, kept as JSON in ``corpus/known/`` and shipped with the
  package, each read into a ``KnownEntry`` (``corpus.known_entry``, which validates it). An
  entry holds ``title``, ``upstream``, a ``program`` with ``runs`` and the ``signature`` they
  give when checked alone on its ``device`` (default cpu), the torch releases it fails on: from
  ``fails_from`` (the first release it was seen failing on) up to ``fixed_in`` where known
  (tests/test_known.py replays each there: in that range it must fail with its signature or
  one its patterns match, from ``fixed_in`` on it must pass), and the globs a campaign's signatures are matched with:
  ``patterns`` (default: the signature). For the quarantine (fuzzaoti/corpus/quarantine.py) it
  may add ``quarantine`` (feature sets, and the devices and profiles they apply on). A bug whose
  signature other root causes share (wrong values past 2**31 in any op family) matches nothing
  by signature (``"patterns": []``) and names its ``members`` by triage's evidence instead
  (``family_member``);
* a text file the user maintains (``--known FILE``; by default ``fuzzaoti-known.txt`` beside
  the corpus when it exists), one entry per line::

      # signature glob                                              note (after two spaces and #)
      compile/exception/InductorError: AssertionError: @ tiling_utils.py:*  # pytorch#181563

  A pattern is an ``fnmatch`` glob over the whole signature, so ``*`` stands for any text.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from dataclasses import dataclass

from fuzzaoti import compat
from fuzzaoti.corpus.known_entry import KnownEntry, MembersRule, load_entry
from fuzzaoti.errors import KnownListError, UnknownName

DEFAULT_FILE = "fuzzaoti-known.txt"
_BUILTIN_DIR = os.path.join(os.path.dirname(__file__), "known")


@dataclass(frozen=True)
class KnownBug:
    pattern: str  # fnmatch glob over a signature
    note: str  # where it is reported, e.g. "pytorch#181563 (fixed in 2.12)"
    source: str  # the file it came from

    def matches(self, signature: str) -> bool:
        return fnmatch.fnmatchcase(signature, self.pattern)


class KnownList:
    """The known bugs in force for a corpus; ``match(signature)`` gives the first that fits."""

    def __init__(self, bugs: list[KnownBug]):
        self.bugs = bugs

    def match(self, signature: str, canary: str | None = None) -> KnownBug | None:
        """The first bug whose pattern fits; never one for a canary's failure (the injected fault)."""
        return None if canary else next((b for b in self.bugs if b.matches(signature)), None)

    @classmethod
    def load(cls, corpus_path: str, user_file: str | None = None) -> KnownList:
        """The built-in list plus the user's (``user_file``, else the default beside the corpus)."""
        bugs = builtin_bugs()
        if user_file is None:
            beside = os.path.join(os.path.dirname(os.path.abspath(corpus_path)), DEFAULT_FILE)
            user_file = beside if os.path.exists(beside) else None
        if user_file is not None:
            bugs += read_user_file(user_file)
        return cls(bugs)


def builtin_entries() -> list[KnownEntry]:
    """The entries in ``corpus/known/*.json``, by file name; an invalid one is a ``KnownListError``
    naming its file and key."""
    return [load_entry(path) for path in sorted(glob.glob(os.path.join(_BUILTIN_DIR, "*.json")))]


def builtin_bugs() -> list[KnownBug]:
    """The bugs in ``corpus/known/*.json``, noted by their upstream reference or their title.
    An entry matches its ``signature``, or any of its ``patterns`` (a bug
    that reads out of bounds shows wrong values one time and NaNs the next). ``"patterns": []``: a
    bug whose signature other root causes share (a wrong value past 2**31 in any family) marks
    nothing; it is kept, and replayed, as data."""
    return [KnownBug(pattern, entry.note, f"{entry.name}.json") for entry in builtin_entries()
            for pattern in entry.patterns]


def read_user_file(path: str) -> list[KnownBug]:
    """Parse a user's known-bug list; a missing or unreadable file is an error, not an empty list."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise KnownListError(f"cannot read known-bug list {path}: {exc.strerror}") from None
    bugs = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        pattern, _, note = text.partition("  #")
        pattern = pattern.strip()
        if "/" not in pattern:
            raise KnownListError(f"{path}:{number}: not a signature pattern (stage/symptom/detail): {pattern!r}")
        bugs.append(KnownBug(pattern, note.strip() or f"{os.path.basename(path)}:{number}", path))
    return bugs


def mark_known(corpus, bugs: KnownList, echo=print) -> int:
    """Mark the corpus's 'new' findings that match ``bugs`` as 'known', naming the entry, and
    the triaged ones a built-in family's rule claims (``mark_member``); returns how many were
    marked."""
    marked = 0
    for f in list(corpus.findings("new")):
        bug = bugs.match(f.signature, f.canary)
        if bug is not None:
            corpus.set_status(f.id, "known", known_note=bug.note)
            echo(f"finding {f.id} is known: {bug.note}")
            marked += 1
        elif mark_member(corpus, f.id, lambda line: echo(line.strip())):
            marked += 1
    return marked


def entry_for(finding) -> KnownEntry | None:
    """The built-in entry a finding is an instance of: the first whose
    signature patterns match its signature, else the family whose ``members`` rule its triage
    meets (``family_member``); None for none, and for a canary's finding."""
    if finding.canary:
        return None
    for entry in builtin_entries():
        if any(fnmatch.fnmatchcase(finding.signature, p) for p in entry.patterns):
            return entry
    return family_member(finding)


def builtin_entry(name: str) -> KnownEntry:
    """The built-in entry ``name`` (its file name, with or without ``.json``); UnknownName if none."""
    wanted = name.removesuffix(".json")
    entries = builtin_entries()
    for entry in entries:
        if entry.name == wanted:
            return entry
    raise UnknownName(f"no known entry {name!r}: one of {', '.join(e.name for e in entries)}")


def family_member(finding, entries: list[KnownEntry] | None = None) -> KnownEntry | None:
    """The built-in entry whose ``members`` rule a triaged ``finding`` meets; None for none.

    A rule asks for what the seeds' authors checked by hand before calling a failure one more
    case of a bug: its ``devices``; the ``ops`` its program must have and the ``dtypes`` one of
    its inputs must have; the ``written_layouts`` one of the inputs it writes into must have;
    ``ladder`` and ``workarounds`` verdicts (inductor passes, AOTI fails, a bounded ``Dim`` max
    passes); and a ``reach`` (a failing run past 2**31 elements,
    ``fuzzaoti.model.scale.reach``). The evidence is triage's, so an untriaged
    finding is never anyone's member."""
    if finding.canary or not finding.triage:
        return None
    for entry in entries if entries is not None else builtin_entries():
        if entry.members is not None and _meets(entry.members, finding):
            return entry
    return None


def _meets(rule: MembersRule, finding) -> bool:
    from fuzzaoti.model import scale  # the model, for reach: only once a finding is triaged

    program = finding.case.program
    if (rule.devices and finding.device not in rule.devices) or not set(rule.ops) <= set(program.ops):
        return False
    if rule.dtypes and not any(i.dtype in rule.dtypes for i in program.inputs):
        return False
    if rule.written_layouts and not any(program.inputs[k].layout in rule.written_layouts
                                        for k in program.mutated_inputs()):
        return False
    for wanted, results in ((rule.ladder, finding.triage), (rule.workarounds, finding.workarounds)):
        if not all(want.fits(results.get(rung)) for rung, want in wanted.items()):
            return False
    reached = [scale.reach(program, dict(env)) for env, _ in finding.case.runs]
    return all(any(r[key] >= least for r in reached) for key, least in rule.reach.items())


def mark_member(corpus, finding_id: int, echo=print) -> str | None:
    """Mark new finding ``finding_id`` 'known' when triage shows it a member of a built-in
    family (``family_member``), naming the family; returns the note, or None."""
    finding = corpus.finding(finding_id)
    found = family_member(finding) if finding.status == "new" else None
    if found is None:
        return None
    note = f"same root cause as {found.name}: {found.members.note}"
    corpus.set_status(finding_id, "known", known_note=note)
    echo(f"  finding {finding_id} is known: {note}")
    return note


def expected_result(entry: KnownEntry, torch_version: str) -> str:
    """What a built-in entry's case must do on ``torch_version``: ``fail`` (with its signature)
    inside its range, ``pass`` from its ``fixed_in`` on, ``unknown`` before its ``fails_from``."""
    here = compat.release(torch_version)
    if entry.fixed_in is not None and here >= compat.release(entry.fixed_in):
        return "pass"
    return "fail" if here >= compat.release(entry.fails_from) else "unknown"

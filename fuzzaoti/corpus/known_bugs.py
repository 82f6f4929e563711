"""Known bugs: signatures that are already reported upstream, so a finding that matches is
``known`` rather than ``new`` and a campaign does not spend shrink and triage time on it.

Two sources, both plain data:

* the bugs fuzzaoti itself has found, kept as JSON in ``corpus/known/`` and shipped with the
  package. An entry holds ``title``, ``upstream``, a ``program`` with ``runs`` and the
  ``signature`` they give when checked alone on its ``device`` (default cpu), the torch
  releases it fails on: from ``fails_from`` (the first release it was seen failing on) up to
  ``fixed_in`` where known (tests/test_known.py replays each there: in that range it must fail
  with its signature, from ``fixed_in`` on it must pass), and the
  globs a campaign's signatures are matched with: ``pattern`` or ``patterns`` (default: the
  signature). For the quarantine (fuzzaoti/corpus/quarantine.py) it may add ``quarantine`` (feature
  sets) and ``devices``. A bug whose signature other root causes share (wrong values past 2**31
  in any op family) matches nothing by signature (``"patterns": []``) and names its ``members``
  by triage's evidence instead (``family_member``);
* a text file the user maintains (``--known FILE``; by default ``fuzzaoti-known.txt`` beside
  the corpus when it exists), one entry per line::

      # signature glob                                              note (after two spaces and #)
      compile/exception/InductorError: AssertionError: @ tiling_utils.py:*  # pytorch#181563

  A pattern is an ``fnmatch`` glob over the whole signature, so ``*`` stands for any text.
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
from dataclasses import dataclass

from fuzzaoti import compat
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


def builtin_entries() -> list[tuple[str, dict]]:
    """``(file name, entry)`` for each bug in ``corpus/known/*.json``."""
    entries = []
    for path in sorted(glob.glob(os.path.join(_BUILTIN_DIR, "*.json"))):
        with open(path) as f:
            entries.append((os.path.basename(path), json.load(f)))
    return entries


def builtin_bugs() -> list[KnownBug]:
    """The bugs in ``corpus/known/*.json``, noted by their upstream reference or their title.
    An entry matches its ``signature``, or its ``pattern``, or any of its ``patterns`` (a bug
    that reads out of bounds shows wrong values one time and NaNs the next). ``"patterns": []``: a
    bug whose signature other root causes share (a wrong value past 2**31 in any family) marks
    nothing; it is kept, and replayed, as data."""
    return [KnownBug(pattern, data.get("upstream") or data["title"], name)
            for name, data in builtin_entries() for pattern in _patterns(data)]


def _patterns(entry: dict) -> list[str]:
    """The signature globs a built-in entry matches: its ``patterns``, else its ``pattern``, else
    its ``signature``."""
    return entry["patterns"] if "patterns" in entry else [entry.get("pattern", entry["signature"])]


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


def entry_for(finding) -> tuple[str, dict] | None:
    """The built-in entry a finding is an instance of, as ``(file name, entry)``: the first whose
    signature patterns match its signature, else the family whose ``members`` rule its triage
    meets (``family_member``); None for none, and for a canary's finding."""
    if finding.canary:
        return None
    for name, data in builtin_entries():
        if any(fnmatch.fnmatchcase(finding.signature, p) for p in _patterns(data)):
            return name, data
    return family_member(finding)


def builtin_entry(name: str) -> dict:
    """The built-in entry ``name`` (its file name, with or without ``.json``); UnknownName if none."""
    wanted = name.removesuffix(".json") + ".json"
    for file_name, data in builtin_entries():
        if file_name == wanted:
            return data
    raise UnknownName(f"no known entry {name!r}: one of {', '.join(n.removesuffix('.json') for n, _ in builtin_entries())}")


def family_member(finding, entries: list[tuple[str, dict]] | None = None) -> tuple[str, dict] | None:
    """The built-in entry whose ``members`` rule a triaged ``finding`` meets, as ``(file name,
    entry)``; None for none.

    A rule asks for what the seeds' authors checked by hand before calling a failure one more
    case of a bug: its ``devices``; the ``ops`` its program must have and the ``dtypes`` one of
    its inputs must have; the ``written_layouts`` one of the inputs it writes into must have;
    ``ladder`` and ``workarounds`` verdicts (inductor passes, AOTI fails, a bounded ``Dim`` max
    passes); and a ``reach`` (a failing run past 2**31 elements,
    ``fuzzaoti.model.scale.reach``). The evidence is triage's, so an untriaged
    finding is never anyone's member."""
    if finding.canary or not finding.triage:
        return None
    for name, data in entries if entries is not None else builtin_entries():
        rule = data.get("members")
        if rule and _meets(rule, finding):
            return name, data
    return None


def _meets(rule: dict, finding) -> bool:
    from fuzzaoti.model import scale  # the model, for reach: only once a finding is triaged

    program = finding.case.program
    if finding.device not in rule.get("devices", [finding.device]) or not set(rule.get("ops", [])) <= set(program.ops):
        return False
    if "dtypes" in rule and not any(i.dtype in rule["dtypes"] for i in program.inputs):
        return False
    if "written_layouts" in rule and not any(program.inputs[k].layout in rule["written_layouts"]
                                             for k in program.mutated_inputs()):
        return False
    for part, verdicts in (("ladder", finding.triage), ("workarounds", finding.workarounds)):
        if not all(_verdict_is(verdicts.get(name) or "", wanted) for name, wanted in rule.get(part, {}).items()):
            return False
    reached = [scale.reach(program, dict(env)) for env, _ in finding.case.runs]
    return all(any(r[key] >= least for r in reached) for key, least in rule.get("reach", {}).items())


def _verdict_is(verdict: str, wanted: str | list[str]) -> bool:
    """A rung's verdict against a rule's: that string, or one that begins with one of a list's
    (an int32 address wrapped past 2**31 reads wrong values or faults, by where it lands: a
    wrong-value finding whose AOTI rung ``FAILS differently: run/illegal_memory_access`` is one
    bug; its rung reads back the finding's program at the finding's runs, on fresh memory)."""
    if isinstance(wanted, str):
        return verdict == wanted
    return any(verdict.startswith(w) for w in wanted)


def mark_member(corpus, finding_id: int, echo=print) -> str | None:
    """Mark new finding ``finding_id`` 'known' when triage shows it a member of a built-in
    family (``family_member``), naming the family; returns the note, or None."""
    finding = corpus.finding(finding_id)
    found = family_member(finding) if finding.status == "new" else None
    if found is None:
        return None
    name, data = found
    note = f"same root cause as {name.removesuffix('.json')}: {data['members']['note']}"
    corpus.set_status(finding_id, "known", known_note=note)
    echo(f"  finding {finding_id} is known: {note}")
    return note


def expected_result(entry: dict, torch_version: str) -> str:
    """What a built-in entry's case must do on ``torch_version``: ``fail`` (with its signature)
    inside its range, ``pass`` from its ``fixed_in`` on, ``unknown`` before its ``fails_from``."""
    here = compat.release(torch_version)
    if "fixed_in" in entry and here >= compat.release(entry["fixed_in"]):
        return "pass"
    return "fail" if here >= compat.release(entry["fails_from"]) else "unknown"

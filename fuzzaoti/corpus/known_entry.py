"""A built-in known bug (``corpus/known/NAME.json``) as a typed record, validated on load.

Each key has one meaning: ``device`` is where the entry's case is replayed; the programs a
campaign steps around are under ``quarantine`` (their feature sets, and the devices and profiles
where they are set aside); ``patterns`` are the signature globs a finding is matched with (the
``signature`` alone when absent); ``members`` is the triage evidence that makes a finding one
more case of the bug when no signature can say so. A key this module does not know, a missing
one or a value of the wrong type is a ``KnownListError`` naming the file and the key: an entry
is data a maintainer edits by hand, and a typo must not quietly turn a rule off.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from fuzzaoti.check.verdict import Wanted
from fuzzaoti.errors import KnownListError

DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class QuarantineRule:
    """Programs with all the features of one of ``features`` are set aside by a campaign on one
    of ``devices`` in one of ``profiles`` (all when empty), while the bug is not fixed there."""

    features: tuple[frozenset[str], ...]
    devices: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    why: str = ""

    def applies(self, device: str, profile: str) -> bool:
        return (not self.devices or device in self.devices) and (not self.profiles or profile in self.profiles)


@dataclass(frozen=True)
class MembersRule:
    """The evidence a triaged finding needs to count as one more case of the entry's bug
    (``known_bugs.family_member``): its device, ops, input dtypes, written layouts, rung
    verdicts and reach."""

    note: str
    devices: tuple[str, ...] = ()
    ops: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()
    written_layouts: tuple[str, ...] = ()
    ladder: dict[str, Wanted] = field(default_factory=dict)
    workarounds: dict[str, Wanted] = field(default_factory=dict)
    reach: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class KnownEntry:
    name: str  # the file name without .json
    title: str
    found: str  # how fuzzaoti found it
    fails_from: str  # the first torch release it was seen failing on
    stage: str
    symptom: str
    signature: str  # what its case gives when checked alone on ``device``
    program: dict[str, Any]
    runs: tuple[dict[str, Any], ...]
    where: str  # the code site at fault, as far as known
    workaround: str
    device: str = "cpu"
    patterns: tuple[str, ...] = ()
    fixed_in: str | None = None
    upstream: str = ""
    relatives: str = ""
    fix: str = ""
    torch_only_repro: tuple[str, ...] = ()
    quarantine: QuarantineRule | None = None
    members: MembersRule | None = None

    @property
    def note(self) -> str:
        """What a matched finding is told: the upstream reference, else the title."""
        return self.upstream or self.title


_REQUIRED = {"title": str, "found": str, "fails_from": str, "stage": str, "symptom": str, "signature": str,
             "program": dict, "runs": list, "where": str, "workaround": str}
_OPTIONAL = {"device": str, "patterns": list, "fixed_in": str, "upstream": str, "relatives": str, "fix": str,
             "torch_only_repro": list, "quarantine": dict, "members": dict}
_QUARANTINE_OPTIONAL = {"devices": list, "profiles": list, "why": str}
_MEMBERS_OPTIONAL = {"devices": list, "ops": list, "dtypes": list, "written_layouts": list, "ladder": dict,
                     "workarounds": dict, "reach": dict}


def _checked(data: Any, required: dict, optional: dict, where: str) -> dict:
    if not isinstance(data, dict):
        raise KnownListError(f"{where}: not a JSON object")
    for key in data:
        if key not in required and key not in optional:
            raise KnownListError(f"{where}: unknown key {key!r} (known: {', '.join([*required, *optional])})")
    for key, kind in {**required, **optional}.items():
        if key in required and key not in data:
            raise KnownListError(f"{where}: missing key {key!r}")
        if key in data and not isinstance(data[key], kind):
            raise KnownListError(f"{where}: {key!r} must be a {kind.__name__}, not {type(data[key]).__name__}")
    return data


def _strings(values: list, where: str) -> tuple[str, ...]:
    if not all(isinstance(v, str) for v in values):
        raise KnownListError(f"{where}: a list of strings, got {values!r}")
    return tuple(values)


def _devices(values: list, where: str) -> tuple[str, ...]:
    devices = _strings(values, where)
    if set(devices) - set(DEVICES):
        raise KnownListError(f"{where}: devices are {' or '.join(DEVICES)}, got {values!r}")
    return devices


def entry_from_data(name: str, data: Any, path: str = "") -> KnownEntry:
    """The record of one entry's JSON data; ``path`` names it in errors."""
    where = path or f"{name}.json"
    data = _checked(data, _REQUIRED, _OPTIONAL, where)
    device = data.get("device", "cpu")
    if device not in DEVICES:
        raise KnownListError(f"{where}: 'device' is {' or '.join(DEVICES)}, got {device!r}")
    quarantine = None
    if "quarantine" in data:
        q = _checked(data["quarantine"], {"features": list}, _QUARANTINE_OPTIONAL,
                     f"{where} 'quarantine'")
        if not all(isinstance(s, list) for s in q["features"]):
            raise KnownListError(f"{where} 'quarantine' 'features': a list of feature lists")
        quarantine = QuarantineRule(tuple(frozenset(_strings(s, f"{where} 'quarantine' 'features'"))
                                          for s in q["features"]),
                                    _devices(q.get("devices", []), f"{where} 'quarantine' 'devices'"),
                                    _strings(q.get("profiles", []), f"{where} 'quarantine' 'profiles'"),
                                    q.get("why", ""))
    members = None
    if "members" in data:
        m = _checked(data["members"], {"note": str}, _MEMBERS_OPTIONAL,
                     f"{where} 'members'")
        reach = m.get("reach", {})
        if not all(isinstance(v, int) for v in reach.values()):
            raise KnownListError(f"{where} 'members' 'reach': counts must be integers, got {reach!r}")
        members = MembersRule(
            m["note"], _devices(m.get("devices", []), f"{where} 'members' 'devices'"),
            _strings(m.get("ops", []), f"{where} 'members' 'ops'"),
            _strings(m.get("dtypes", []), f"{where} 'members' 'dtypes'"),
            _strings(m.get("written_layouts", []), f"{where} 'members' 'written_layouts'"),
            {rung: Wanted.from_rule(v, f"{where} 'members' 'ladder' {rung!r}") for rung, v in m.get("ladder", {}).items()},
            {rung: Wanted.from_rule(v, f"{where} 'members' 'workarounds' {rung!r}")
             for rung, v in m.get("workarounds", {}).items()},
            dict(reach))
    return KnownEntry(
        name=name, title=data["title"], found=data["found"], fails_from=data["fails_from"], stage=data["stage"],
        symptom=data["symptom"], signature=data["signature"], program=data["program"],
        runs=tuple(data["runs"]), where=data["where"], workaround=data["workaround"], device=device,
        patterns=_strings(data["patterns"], f"{where} 'patterns'") if "patterns" in data else (data["signature"],),
        fixed_in=data.get("fixed_in"), upstream=data.get("upstream", ""), relatives=data.get("relatives", ""),
        fix=data.get("fix", ""), torch_only_repro=_strings(data.get("torch_only_repro", []), f"{where} 'torch_only_repro'"),
        quarantine=quarantine, members=members)


def load_entry(path: str) -> KnownEntry:
    """The entry in JSON file ``path``: a ``KnownListError`` naming the file for one unreadable
    or invalid."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise KnownListError(f"{path}: cannot read a known entry: {exc}") from None
    return entry_from_data(os.path.basename(path).removesuffix(".json"), data, path)

"""What one triage rung said of a finding: a typed verdict, stored as data and shown as text.

A rung (a backend on the ladder, or a hand remedy) re-checks a finding's case and answers one of
four things: it passes; it fails with the finding's own bug (``check.signature.same_bug``); it
fails with another signature; or the case is invalid there (eager refuses it). Known-bug rules
(``corpus.known_bugs``) and families (``findings.families``) ask for these by kind, and a
different failure by its signature as a field: nothing parses the text a user reads.

The corpus stores ``RungResult.to_data()``; a corpus from before this record held the display
text, which ``RungResult.from_data`` still reads (and migration 002 rewrites).
"""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass
from typing import Any

from fuzzaoti.errors import CorpusError, KnownListError


class Verdict(str, enum.Enum):
    PASSES = "passes"
    FAILS_SAME = "fails_same"
    FAILS_DIFFERENTLY = "fails_differently"
    INVALID = "invalid"


@dataclass(frozen=True)
class RungResult:
    """A rung's verdict; ``detail`` is the other failure's signature (``FAILS_DIFFERENTLY``) or
    why the case is invalid there (``INVALID``), else empty."""

    verdict: Verdict
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSES

    def render(self) -> str:
        """The text a user reads: ``passes``, ``FAILS (same bug)``, ``FAILS differently: SIG``,
        ``invalid (WHY)``."""
        return {Verdict.PASSES: "passes", Verdict.FAILS_SAME: "FAILS (same bug)",
                Verdict.FAILS_DIFFERENTLY: f"FAILS differently: {self.detail}",
                Verdict.INVALID: f"invalid ({self.detail})"}[self.verdict]

    def to_data(self) -> dict[str, str]:
        return {"verdict": self.verdict.value, **({"detail": self.detail} if self.detail else {})}

    @classmethod
    def from_data(cls, data: Any, where: str = "triage") -> RungResult:
        """A stored result: ``to_data``'s dict, or the display text older corpora stored."""
        if isinstance(data, str):
            return cls.from_text(data, where)
        if not isinstance(data, dict) or set(data) - {"verdict", "detail"} or not isinstance(data.get("detail", ""), str):
            raise CorpusError(f"{where}: not a rung result: {str(data)[:120]!r}")
        try:
            return cls(Verdict(data.get("verdict")), data.get("detail", ""))
        except ValueError:
            raise CorpusError(f"{where}: unknown verdict {data.get('verdict')!r} (one of "
                              f"{', '.join(v.value for v in Verdict)})") from None

    @classmethod
    def from_text(cls, text: str, where: str = "triage") -> RungResult:
        """``render``'s text back as a result (corpora written before rung results were records)."""
        if text == "passes":
            return cls(Verdict.PASSES)
        if text == "FAILS (same bug)":
            return cls(Verdict.FAILS_SAME)
        if text.startswith("FAILS differently: "):
            return cls(Verdict.FAILS_DIFFERENTLY, text.removeprefix("FAILS differently: "))
        if text.startswith("invalid (") and text.endswith(")"):
            return cls(Verdict.INVALID, text[len("invalid ("):-1])
        raise CorpusError(f"{where}: not a rung verdict: {text[:120]!r}")


def results_from_data(data: Any, where: str) -> dict[str, RungResult]:
    """``{rung: result}`` from a stored table (a JSON object of ``to_data`` dicts or old texts)."""
    if not isinstance(data, dict):
        raise CorpusError(f"{where}: not a table of rung results: {str(data)[:120]!r}")
    return {str(name): RungResult.from_data(value, f"{where} {name!r}") for name, value in data.items()}


def results_to_data(results: dict[str, RungResult]) -> dict[str, dict[str, str]]:
    return {name: result.to_data() for name, result in results.items()}


@dataclass(frozen=True)
class Wanted:
    """A known-bug rule's demand on one rung: one of ``verdicts``; a ``FAILS_DIFFERENTLY`` result
    fits only with a signature one of the ``differently`` globs matches (fnmatch)."""

    verdicts: frozenset[Verdict]
    differently: tuple[str, ...] = ("*",)

    def fits(self, result: RungResult | None) -> bool:
        if result is None or result.verdict not in self.verdicts:
            return False
        return result.verdict is not Verdict.FAILS_DIFFERENTLY or any(
            fnmatch.fnmatchcase(result.detail, glob) for glob in self.differently)

    @classmethod
    def from_rule(cls, value: Any, where: str) -> Wanted:
        """A rule's JSON: a verdict's name (``"passes"``), or ``{"verdicts": [names],
        "differently": [signature globs]}``. Anything else is a ``KnownListError`` naming ``where``."""
        if isinstance(value, str):
            value = {"verdicts": [value]}
        if not isinstance(value, dict) or set(value) - {"verdicts", "differently"} or \
                not isinstance(value.get("verdicts"), list) or not value["verdicts"]:
            raise KnownListError(f"{where}: want a verdict name or {{\"verdicts\": [...], \"differently\": [...]}}, "
                                 f"got {value!r}")
        try:
            verdicts = frozenset(Verdict(v) for v in value["verdicts"])
        except ValueError as exc:
            raise KnownListError(f"{where}: {exc} (one of {', '.join(v.value for v in Verdict)})") from None
        differently = value.get("differently", ["*"])
        if not isinstance(differently, list) or not all(isinstance(g, str) for g in differently):
            raise KnownListError(f"{where}: 'differently' is a list of signature globs, got {differently!r}")
        return cls(verdicts, tuple(differently))

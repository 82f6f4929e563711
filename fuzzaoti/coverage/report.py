"""What a campaign's compiler coverage adds up to: per file, over its time, against another.

The lines come from the corpus (``Corpus.compiler_lines``, recorded by ``coverage.record``);
what each file *could* have run comes from the installed torch's source (``executable_lines``:
the line numbers of its functions' code), so a share is exact only on the torch the campaign
ran (``fuzzaoti coverage`` names both versions when they differ).
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator

from fuzzaoti.coverage import decisions
from fuzzaoti.coverage.record import is_function

#: the campaign minutes at which ``growth`` counts the lines reached so far (and at its end)
MINUTES = (1, 2, 5, 10, 30, 60, 120, 240, 480)


@dataclass(frozen=True)
class Lines:
    """The Inductor lines one campaign ran: ``{file: {line: seconds first reached}}``."""

    by_file: dict[str, dict[int, float]]

    @classmethod
    def of(cls, rows: Iterable[tuple[str, int, float]]) -> Lines:
        by_file: dict[str, dict[int, float]] = defaultdict(dict)
        for name, line, seconds in rows:
            by_file[name][line] = seconds
        return cls(dict(by_file))

    def total(self) -> int:
        return sum(len(lines) for lines in self.by_file.values())

    def growth(self) -> list[tuple[float, int]]:
        """``(minute, lines reached by then)`` at each of ``MINUTES`` before the last line's, and
        at the last line's: where the count stops growing, the generator stopped reaching new code."""
        seconds = sorted(s for lines in self.by_file.values() for s in lines.values())
        if not seconds:
            return []
        points = [(m, sum(s <= m * 60 for s in seconds)) for m in MINUTES if m * 60 < seconds[-1]]
        return points + [(seconds[-1] / 60, len(seconds))]


def _site() -> str:
    """The directory the installed torch package is in."""
    import torch

    return os.path.dirname(os.path.dirname(torch.__file__))


def inductor_files() -> list[str]:
    """Every ``torch/_inductor/...py`` of the installed torch, by the names coverage uses."""
    root = os.path.join(_site(), "torch", "_inductor")
    return sorted(os.path.relpath(os.path.join(d, f), _site()).replace(os.sep, "/")
                  for d, _, files in os.walk(root) for f in files if f.endswith(".py"))


def executable_lines(name: str) -> set[int] | None:
    """The line numbers of ``name``'s code (``torch/_inductor/...py``) in the installed torch;
    None where it has no such file (another torch's)."""
    functions = _functions(name)
    return None if functions is None else {line for c in functions for line in _lines(c)}


def _functions(name: str) -> list | None:
    """The code objects of ``name``'s functions in the installed torch (None: no such file)."""
    path = os.path.join(_site(), *name.split("/"))
    try:
        with open(path, encoding="utf-8") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return None
    return [c for c in _code_objects(code) if is_function(c)]


def _lines(code) -> set[int]:
    """The lines of one function's own code (not of the functions defined inside it)."""
    return {line for _, _, line in code.co_lines() if line is not None}


def _code_objects(code) -> Iterator:
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_lines"):
            yield from _code_objects(const)


def ranges(lines: Iterable[int]) -> str:
    """``1-3, 7, 9-10``: sorted line numbers as runs."""
    runs: list[list[int]] = []
    for n in sorted(lines):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs)


def summary(lines: Lines, top: int = 15) -> list[str]:
    """The lines reached in all, their growth over the campaign, and the ``top`` files by
    lines reached with each one's share of its executable lines."""
    if not lines.by_file:
        return ["no Inductor lines recorded (a campaign run with 'fuzzaoti fuzz --coverage' records them)"]
    code = {name: executable_lines(name) or set() for name in inductor_files()}
    reached = sum(len(set(lines.by_file.get(name, {})) & c) for name, c in code.items())
    whole = sum(map(len, code.values()))
    out = [f"{lines.total()} lines of torch/_inductor reached, in {len(lines.by_file)} files; of the installed "
           f"torch's {whole} lines of code in {len(code)} files: {reached} ({100 * reached / max(whole, 1):.0f}%)",
           "reached by minute: " + ", ".join(f"{m:.3g}: {n}" for m, n in lines.growth())]
    ranked = sorted(lines.by_file.items(), key=lambda kv: -len(kv[1]))
    for name, reached in ranked[:top]:
        out.append(f"  {_share(set(reached), code.get(name))}  {name}")
    if len(ranked) > top:
        out.append(f"  ... {len(ranked) - top} more files ('--file NAME' for one)")
    return out


def one_file(lines: Lines, part: str) -> list[str]:
    """Each file whose name contains ``part``: its lines reached and those not reached, as runs."""
    names = sorted(n for n in lines.by_file if part in n)
    if not names:
        return [f"no Inductor file reached has {part!r} in its name"]
    out = []
    for name in names:
        reached = set(lines.by_file[name])
        code = executable_lines(name)
        out.append(f"{name}: {_share(reached, code)}")
        out.append(f"  reached: {ranges(reached)}")
        if code is not None:
            out.append(f"  not reached: {ranges(code - reached) or '-'}")
    return out


def functions(lines: Lines, part: str) -> list[str]:
    """Each Inductor function whose qualified name contains ``part`` (``can_use_32bit_indexing``):
    its lines reached and not reached, so one sees whether a decision ever went both ways."""
    out = []
    for name in inductor_files():
        reached = set(lines.by_file.get(name, {}))
        for code in _functions(name) or ():
            if part not in getattr(code, "co_qualname", code.co_name):
                continue
            own = _lines(code)
            missed = own - reached
            out.append(f"{name}:{code.co_firstlineno} {getattr(code, 'co_qualname', code.co_name)}: "
                       f"{len(own & reached)} of {len(own)} lines reached"
                       + (f"; not reached: {ranges(missed)}" if missed and own & reached else ""))
    return out or [f"no function of torch/_inductor has {part!r} in its name"]


def against(mine: Lines, theirs: Lines, label: str, other: str, top: int = 15) -> list[str]:
    """The lines one campaign reached that the other did not, both ways, by file."""
    out = []
    for a, b, a_name, b_name in ((mine, theirs, label, other), (theirs, mine, other, label)):
        only = {name: set(lines) - set(b.by_file.get(name, {})) for name, lines in a.by_file.items()}
        only = {name: lines for name, lines in only.items() if lines}
        out.append(f"{sum(map(len, only.values()))} lines reached by {a_name} alone, in {len(only)} files")
        for name, lines in sorted(only.items(), key=lambda kv: -len(kv[1]))[:top]:
            out.append(f"  {len(lines):6d}  {name}: {ranges(lines)[:160]}")
    return out


def _share(reached: set[int], code: set[int] | None) -> str:
    """``N of M lines (P%)`` against a file's ``code`` (``executable_lines``), or ``N lines``
    where the installed torch has no such file."""
    if not code:
        return f"{len(reached):6d} lines"
    return f"{len(reached & code):6d} of {len(code):6d} lines ({100 * len(reached & code) / len(code):3.0f}%)"


@dataclass(frozen=True)
class Decided:
    """The decision combinations one campaign's compiles took (``coverage.decisions``):
    ``{combination: (seconds first taken, kernels that took it)}``."""

    by_combination: dict[str, tuple[float, int]]

    @classmethod
    def of(cls, rows: Iterable[tuple[str, float, int]]) -> Decided:
        return cls({d: (s, n) for d, s, n in rows})

    def growth(self) -> list[tuple[float, int]]:
        """``(minute, combinations taken by then)``, as ``Lines.growth``."""
        seconds = sorted(s for s, _ in self.by_combination.values())
        if not seconds:
            return []
        points = [(m, sum(s <= m * 60 for s in seconds)) for m in MINUTES if m * 60 < seconds[-1]]
        return points + [(seconds[-1] / 60, len(seconds))]

    def histogram(self) -> Counter:
        """Kernels per single decision (``cpp:vec=float``)."""
        return decisions.histogram(Counter({d: n for d, (_, n) in self.by_combination.items()}))


def decision_summary(decided: Decided, top: int = 15) -> list[str]:
    """The decision combinations taken in all and by minute, and the single decisions by the
    kernels that took them (a decision never taken is a path the generator never drives)."""
    if not decided.by_combination:
        return ["no compiler decisions recorded"]
    kernels = sum(n for _, n in decided.by_combination.values())
    single = decided.histogram()
    out = [f"{len(decided.by_combination)} decision combinations taken by {kernels} kernels; "
           "taken by minute: " + ", ".join(f"{m:.3g}: {n}" for m, n in decided.growth()),
           f"single decisions ({len(single)}), by kernels:"]
    out += [f"  {n:6d}  {d}" for d, n in single.most_common(top)]
    if len(single) > top:
        out.append(f"  ... {len(single) - top} more ('--function WORD' for those with WORD)")
    return out


def decision_matches(decided: Decided, part: str) -> list[str]:
    """Each combination with ``part`` in it (``tail``, ``int64``, ``welford``), with its kernels
    and the second it was first taken."""
    found = sorted((d, s, n) for d, (s, n) in decided.by_combination.items() if part in d)
    return [f"{n:6d} kernel{'s' if n != 1 else ''}, first at {s:.0f} s: {d}" for d, s, n in found] or [
        f"no decision combination taken has {part!r} in it"]


def decisions_against(mine: Decided, theirs: Decided, label: str, other: str) -> list[str]:
    """The combinations one campaign took that the other did not, both ways."""
    out = []
    for a, b, a_name in ((mine, theirs, label), (theirs, mine, other)):
        only = sorted(set(a.by_combination) - set(b.by_combination))
        out.append(f"{len(only)} decision combinations taken by {a_name} alone")
        out += [f"  {d}" for d in only[:20]]
    return out

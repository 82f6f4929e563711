"""Compiler coverage, recorded: which lines of Inductor a campaign's compiles executed.

Programs per minute and findings say how much a campaign checked; they do not say how much of
the compiler it reached. A generator change that draws "new" programs may drive Inductor down
the same paths as before, and a site a bug class lives in (``simd.py can_use_32bit_indexing``
answering False, a Triton bmm template's grid) may never run at all. So a campaign run with
``--coverage`` records, per compile, the source lines of ``torch/_inductor`` that ran, and the
corpus keeps each line with the campaign second it was first reached (``coverage.report``
reads them for ``fuzzaoti coverage``: per file, over time, one campaign against another).

Only the AOTI compile is traced (``tracing``), in the worker process that compiles, through
``sys.settrace`` with a local tracer on Inductor's functions alone: a CPU compile, whose time
goes mostly to the C++ compiler, took 1.08x its time (``scripts/bench_compile.py --coverage``,
torch 2.13, 2 cores; on a GPU not measured yet). A process reports each line once (``take``
returns only lines it has not returned before), so a long campaign ships ever fewer.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import threading
from collections import Counter
from typing import Iterator

from fuzzaoti.coverage import decisions

#: the part of a path from which coverage names a file (``torch/_inductor/codegen/simd.py``)
ROOT = f"torch{os.sep}_inductor{os.sep}"
FUNCTION_FLAGS = inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS

_lock = threading.Lock()
_enabled = False
_seen: set[tuple[str, int]] = set()  # every line this process has reported (``take``)
_new: set[tuple[str, int]] = set()  # lines reached since the last ``take``
_decided: Counter = Counter()  # decision combinations of the compiles since ``take_decisions``
_by_program: dict[str, list[str]] = {}  # each program's own combinations, where attributed


def enable(on: bool = True) -> None:
    """Have ``tracing`` record (a worker started with ``WorkerConfig.coverage`` does)."""
    global _enabled
    _enabled = on


@contextlib.contextmanager
def tracing() -> Iterator[None]:
    """Record the Inductor lines that run inside (while ``enable``d; otherwise nothing)."""
    if not _enabled or sys.gettrace() is not None:  # (never under a debugger's or coverage's tracer)
        yield
        return
    lines: set[tuple[str, int]] = set()

    def local(frame, event, arg):
        if event == "line":
            lines.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def calls(frame, event, arg):
        if ROOT in frame.f_code.co_filename and is_function(frame.f_code):
            lines.add((frame.f_code.co_filename, frame.f_lineno))
            return local
        return None

    sys.settrace(calls)
    try:
        yield
    finally:
        sys.settrace(None)
        with _lock:
            _new.update(lines)


def note_compile(path: str, triton_sources: list[str], kernels: dict[str, list[list[int]]]) -> dict[int, list[str]]:
    """Count the decision combinations (``coverage.decisions``) of the compile that wrote the
    AOTI package at ``path`` and defined ``triton_sources`` (while ``enable``d), and return each
    member's own (``decisions.by_member``, from ``kernels``: its C++ loop nests' members)."""
    if not _enabled:
        return {}
    wrapper, kernel = decisions.package_code(path)
    combinations = decisions.cpp_combinations(kernel)
    found = decisions.of_code(wrapper, combinations) + [decisions.triton_kernel(s) for s in triton_sources]
    with _lock:
        _decided.update(found)
    return decisions.by_member(combinations, kernels)


def note_programs(by_program: dict[str, list[str]]) -> None:
    """Keep each program's own combinations (by program id) for ``take_decisions``."""
    with _lock:
        _by_program.update(by_program)


def take_decisions() -> tuple[dict[str, int], dict[str, list[str]]]:
    """The decision combinations noted since the last call, with how many kernels took each,
    and each program's own, where they could be told apart."""
    with _lock:
        taken, mine = dict(_decided), dict(_by_program)
        _decided.clear()
        _by_program.clear()
    return taken, mine


def is_function(code) -> bool:
    """Whether ``code`` is a function's (a lambda's, a comprehension's), not a module's or class
    body's: those run once, when a module is imported, and a compile that happens to import one
    first would count them (coverage is of what compiling *does*)."""
    return code.co_flags & FUNCTION_FLAGS == FUNCTION_FLAGS


def take() -> dict[str, list[int]]:
    """The lines reached since the last call and never reported before by this process, as
    ``{"torch/_inductor/...py": [line, ...]}``."""
    with _lock:
        fresh = _new - _seen
        _seen.update(fresh)
        _new.clear()
    by_file: dict[str, list[int]] = {}
    for path, line in fresh:
        by_file.setdefault(short_name(path), []).append(line)
    return {name: sorted(lines) for name, lines in sorted(by_file.items())}


def short_name(path: str) -> str:
    """``.../site-packages/torch/_inductor/codegen/simd.py`` as ``torch/_inductor/codegen/simd.py``
    (one name for a file whichever machine or torch install reached it)."""
    at = path.rfind(ROOT)
    return (path[at:] if at >= 0 else path).replace(os.sep, "/")


class Reached:
    """The campaign's side: the lines its workers report (``BatchResult.coverage``), each kept
    once, until the campaign stores them (``take``). Workers report from the pool's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: set[tuple[str, int]] = set()
        self._waiting: list[tuple[str, int]] = []
        self.decided: Counter = Counter()  # every decision combination, with its kernels
        self._decided_waiting: Counter = Counter()
        self._owned: set[str] = set()  # the combinations some program was told apart taking
        self._novel: dict[str, int] = {}  # program id -> combinations it took first (0: none)

    def add(self, by_file: dict[str, list[int]], decided: dict[str, int] | None = None,
            by_program: dict[str, list[str]] | None = None) -> None:
        with self._lock:
            self.decided.update(decided or {})
            self._decided_waiting.update(decided or {})
            for program_id, combinations in (by_program or {}).items():
                new = set(combinations) - self._owned
                self._owned |= new
                self._novel[program_id] = self._novel.get(program_id, 0) + len(new)
            for name, lines in by_file.items():
                for line in lines:
                    if (name, line) not in self._known:
                        self._known.add((name, line))
                        self._waiting.append((name, line))

    def take(self) -> list[tuple[str, int]]:
        """The lines added since the last call, new to this campaign."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
        return waiting

    def take_novel(self, program_ids: list[str]) -> dict[str, int]:
        """For each of ``program_ids`` whose own combinations have come, how many of them no
        program had taken before (0 for none): what the guided campaign learns from. (The
        other programs' stay: their batches are still in flight.)"""
        with self._lock:
            return {p: self._novel.pop(p) for p in program_ids if p in self._novel}

    def take_decisions(self) -> dict[str, int]:
        """The decision combinations added since the last call, with their kernels since."""
        with self._lock:
            waiting, self._decided_waiting = dict(self._decided_waiting), Counter()
        return waiting

    def __len__(self) -> int:
        return len(self._known)

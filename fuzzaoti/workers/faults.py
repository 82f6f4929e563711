"""Which member of a merged batch a worker died in, from where its CPU kernel faulted.

A batch compiles many programs into one module, and one call of it runs every member's code;
a segfault in generated code kills the worker with nothing said of which member's code it was
in, and pinning it by compiling members again costs a compile each and a restart per death.
So a worker on the CPU knows three things its parent reads when it dies:

* where the fault was: a signal handler (a few lines of C, built once with the compiler AOTI
  uses, then loaded) writes the faulting instruction's shared object, offset and nearest
  symbol to the worker's stderr, and hands the signal on to whatever handled it before;
* which members' nodes each loop nest of each kernel computes (``compat.cpp_kernel_nests``:
  Inductor puts all loops between two extern calls into one C++ function, so a kernel spans
  members, its loop nests seldom do), written to the worker's notes file after each prepare;
* which members were fed their own run in the call under way (the rest run their export-time
  examples), written there before each call.

The parent maps the offset to a line of the kernel's source with ``addr2line`` (AOTI builds
with line tables), the line to its loop nest by the kernel's braces, and the nest to its
members. A death in a nest of one member's (or in a kernel all of whose nests are one
member's), fed its own run, is that member's finding at once (the pool still compiles it
alone to confirm it). Where any step is missing (no compiler for the handler, no
``addr2line``, a kernel of another shape, a GPU, whose faults surface asynchronously) nothing
is pinned and the pool bisects as before.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Mapping

_HANDLER_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction previous[65];

static void on_fault(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = (ucontext_t *)context;
    void *ip = 0;
#if defined(__x86_64__)
    ip = (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    ip = (void *)uc->uc_mcontext.pc;
#endif
    Dl_info where;
    memset(&where, 0, sizeof where);
    dladdr(ip, &where);
    char line[4096];
    int n = snprintf(line, sizeof line, "\nfuzzaoti-fault: signal %d ip %p object %s base %p symbol %s\n", sig, ip,
                     where.dli_fname ? where.dli_fname : "?", where.dli_fbase,
                     where.dli_sname ? where.dli_sname : "?");
    if (n > 0) write(2, line, n < (int)sizeof line ? n : (int)sizeof line - 1);
    sigaction(sig, &previous[sig], 0); /* the instruction faults again, into the handler before */
    if (info->si_code <= 0) raise(sig); /* (sent, not a fault: nothing would raise it again) */
}

int fuzzaoti_fault_install(void) {
    int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < 4; i++)
        if (sigaction(signals[i], &action, &previous[signals[i]]) != 0) return -1;
    return 0;
}
"""

_FAULT = re.compile(r"fuzzaoti-fault: signal (\d+) ip (0x[0-9a-f]+|\(nil\)) object (.+?) base (0x[0-9a-f]+|\(nil\)) "
                    r"symbol (\S+)")

_notes_path: str | None = None  # the worker's notes file; None: not a worker (nothing noted)
_notes: dict = {}


# ---- in the worker ---------------------------------------------------------------------------
def enable(notes_path: str) -> bool:
    """Start noting kernels and runs to ``notes_path`` and install the fault handler; whether
    the handler is in (a worker without it still runs, unpinned)."""
    global _notes_path
    _notes_path = notes_path
    try:
        library = ctypes.CDLL(_built_handler())
        return library.fuzzaoti_fault_install() == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _built_handler() -> str:
    """The handler's shared object, built once per compiler into the user's cache (by a rename,
    so workers starting together never load a half-written one)."""
    compiler = os.environ.get("CXX") or "g++"
    digest = hashlib.sha256((compiler + _HANDLER_C).encode()).hexdigest()[:16]
    folder = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fuzzaoti")
    path = os.path.join(folder, f"fault-handler-{digest}.so")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        source, built = os.path.join(scratch, "handler.c"), os.path.join(scratch, "handler.so")
        with open(source, "w") as f:
            f.write(_HANDLER_C)
        subprocess.run([compiler, "-x", "c", "-O2", "-shared", "-fPIC", "-o", built, source, "-ldl"],
                       check=True, capture_output=True, timeout=120)
        os.replace(built, path)
    return path


def note_job() -> None:
    """A new job: nothing of the last one's kernels or runs holds."""
    _notes.clear()
    _write()


def note_kernels(kernels: Mapping[str, list[list[int]]], positions: list[int]) -> None:
    """The kernels of the package about to run (``Prepared.kernels``: for each, the merged
    members whose nodes each of its loop nests computes), noted by the members' job
    ``positions``."""
    _notes["kernels"] = {name: [[positions[k] for k in nest if k < len(positions)] for nest in nests]
                         for name, nests in kernels.items()}
    _write()


def note_call(run: int, fed: list[int]) -> None:
    """A call of the package is about to start: run ``run``, for the members at job positions
    ``fed`` (the others run their export-time examples)."""
    _notes["call"] = {"run": run, "fed": fed}
    _write()


def _write() -> None:
    if _notes_path is not None:
        with open(_notes_path, "w") as f:
            json.dump(_notes, f)


# ---- in the parent ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Site:
    """Where a worker's kernel faulted: the kernel, its source line (0: unknown), the job
    positions of the members whose nodes the faulting loop nest computes (all the kernel's
    where the nest is unknown), and the call under way (its run, and whom it fed their own)."""

    kernel: str
    line: int
    members: tuple[int, ...]
    run: int | None
    fed: tuple[int, ...]

    @property
    def member(self) -> int | None:
        """The one member whose code faulted: the nest's, or the kernel's where the nest is
        unknown and every nest of the kernel is that member's."""
        return self.members[0] if len(self.members) == 1 else None

    @property
    def pinned(self) -> bool:
        """Whether the faulting member was running its own run (not its export-time examples):
        then that run is its finding, without compiling it again."""
        return self.member is not None and self.member in self.fed

    def describe(self, merged: bool) -> str:
        """The site in words, for the outcome's message; of a ``merged`` batch, whose code it was."""
        where = f" at line {self.line} of its source" if self.line else ""
        if not merged:
            return f"the fault was in kernel {self.kernel}{where}"
        whose = (f"a loop nest of member {self.member}'s nodes" if self.member is not None
                 else f"a kernel of members {', '.join(map(str, self.members))}")
        return f"the fault was in kernel {self.kernel}{where}, {whose} of a merged batch"


def site_of_death(stderr: str, notes_path: str) -> Site | None:
    """Where the dead worker's kernel faulted (the handler's last line in ``stderr``), or None
    when the fault was not in a kernel of the package it had noted. The kernel is the one whose
    source holds the faulting line (the handler's nearest exported symbol can be another's: a
    parallel loop runs in an outlined function of its own), else the handler's symbol."""
    faults = list(_FAULT.finditer(stderr))
    try:
        with open(notes_path) as f:
            notes = json.load(f)
    except (OSError, ValueError):
        return None
    if not faults or not isinstance(notes, dict) or not isinstance(notes.get("kernels"), dict):
        return None
    fault, kernels, call = faults[-1], notes["kernels"], notes.get("call") or {}
    line, place = _place(fault[3], int(fault[2], 16) - int(fault[4], 16))
    kernel, block, blocks = place if place is not None else (fault[5], None, None)
    nests = kernels.get(kernel)
    if not nests:
        return None
    known = block is not None and blocks == len(nests)
    members = nests[block] if known else sorted({k for nest in nests for k in nest})
    return Site(kernel, line, tuple(members), call.get("run"), tuple(call.get("fed") or ()))


_COMPILE_ERROR = re.compile(r"(/[^\s:'\"]+\.kernel\.cpp):(\d+):\d+: error")


def compile_error_member(message: str, kernels: Mapping[str, list[list[int]]]) -> int | None:
    """The merged member whose loop nest holds the first error the C++ compiler reported in
    ``message`` in a kernel's source (``kernels``: ``Prepared.kernels`` of the compile that
    failed), if that nest is one member's: the pool compiles it alone first, not the batch in
    halves."""
    found = _COMPILE_ERROR.search(message)
    if found is None or not kernels:
        return None
    try:
        with open(found[1], errors="replace") as f:
            place = _place_in(f.read().splitlines(), int(found[2]))
    except OSError:
        return None
    if place is None:
        return None
    kernel, block, blocks = place
    nests = kernels.get(kernel)
    if not nests or block is None or blocks != len(nests) or len(nests[block]) != 1:
        return None
    return nests[block][0]


def _place(library: str, offset: int) -> tuple[int, tuple[str, int | None, int] | None]:
    """The kernel source line at ``offset`` into ``library`` (0: unknown) and its place there
    (``_place_in``), from the line tables AOTI builds with and the source beside the library."""
    folder = os.path.dirname(library)
    try:
        located = subprocess.run(["addr2line", "-i", "-e", library, hex(offset)], capture_output=True, text=True,
                                 timeout=30).stdout.split()
        sources = [name for name in os.listdir(folder) if name.endswith(".kernel.cpp")]
    except (OSError, subprocess.SubprocessError):
        return 0, None
    ours = [entry for entry in located if ".kernel.cpp:" in entry and entry.rsplit(":", 1)[1].isdigit()]
    if not ours or len(sources) != 1:
        return 0, None
    line = int(ours[-1].rsplit(":", 1)[1])  # (the outermost of an inlined chain: the kernel's own line)
    with open(os.path.join(folder, sources[0]), errors="replace") as f:
        return line, _place_in(f.read().splitlines(), line)


_DEFINITION = re.compile(r'extern "C"[\w\s*]*?\b(\w+)\s*\(')


def _place_in(text: list[str], line: int) -> tuple[str, int | None, int] | None:
    """In C++ kernel source ``text``: the kernel whose definition holds 1-based ``line``, the
    index of the brace block at the top of its body that holds it (None: none does), and how
    many such blocks the body has (Inductor writes one per loop nest); None if no kernel holds it."""
    starts = [(k, found[1]) for k, source in enumerate(text[:line]) if (found := _DEFINITION.search(source))]
    if not starts:
        return None
    start, kernel = starts[-1]
    depth, blocks, holder, opened = 0, 0, None, False
    for k in range(start, len(text)):
        code = _code(text[k])
        for column, char in enumerate(code):
            if char == "{":
                depth += 1
                opened = True
                # (a block opens a line of its own; a brace initializer, ``error{0};``, does not)
                blocks += depth == 2 and not code[:column].strip()
            elif char == "}":
                depth -= 1
        if k + 1 == line:
            holder = blocks - 1 if depth >= 2 else None
        if opened and depth == 0:
            return (kernel, holder, blocks) if k + 1 >= line else None
    return None


def _code(source: str) -> str:
    """A C++ line without its comment and string literals (whose braces are no code)."""
    source = re.sub(r'"(?:\\.|[^"\\])*"', '""', source)
    return source.split("//", 1)[0]

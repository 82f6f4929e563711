"""Failure signatures: the same bug found twice must hash the same, different bugs must not.

A signature is ``stage/symptom/detail``. For exceptions and crashes the detail is the error
type plus the first message line (or the most telling stderr line) with volatile parts
removed: symbol names (``s0``, ``u12``), buffer and kernel names, addresses, hex ids, line
numbers, paths, and numbers in general. For a wrong result it is which output is wrong and how.

A wrong result, and an illegal memory access while running (or surfacing as its outputs are
compared), also name the core ops behind them (``via index_put``): their text says nothing of
which kernel went wrong, so without the ops an index_put fault and a bmm fault would be one
finding, and the second never shrunk or triaged.
"""

from __future__ import annotations

import re

from fuzzaoti.model.ops import OPS
from fuzzaoti.check.outcome import Outcome
from fuzzaoti.model.program import Program

_VOLATILE = [
    # g++ quotes names as 'x' in the C locale and as ‘x’ in a UTF-8 one (the H200's)
    (re.compile("[\u2018\u2019`]"), "'"),
    (re.compile("[\u201c\u201d]"), '"'),
    (re.compile(r"; did you mean '[^']*'\?"), ""),  # g++'s guess depends on the symbols around
    (re.compile(r"0x[0-9a-fA-F]+"), "ADDR"),
    (re.compile(r"(/[\w.\-+]+)+"), "PATH"),
    (re.compile(r"\b[su]\d+\b"), "SYM"),
    (re.compile(r"\b(buf|arg|tmp|ks|x|y|r|xindex|kernel|triton_\w+?_|cpp_fused_\w+?_)\d+\b"), r"\1N"),
    (re.compile(r"\b(triton|cpp)_(\w+?)_\w+\b"), r"\1_\2_KERNEL"),
    (re.compile(r"\bline \d+\b"), "line N"),
    (re.compile(r"\b\d+L?\b"), "N"),  # (C++ prints a long as 74L)
    (re.compile(r"\s+"), " "),
]

_STDERR_MARKERS = ("error", "Error", "Assertion", "illegal", "Segmentation", "terminate called")
#: A C++ exception nothing caught (thrown in an OpenMP region, say) ends in std::terminate:
#: ``terminate called after throwing an instance of 'c10::Error'`` and its ``what():`` line.
#: Thrown in several threads at once, their lines interleave ("terminate called after throwing
#: an instance of 'terminate called recursively"), a thread's ``what():`` may follow or not,
#: and the type may be split over two lines: one bounds check gave three texts in six crashes of
#: one program. So the signature is the first ``what():`` message alone (the frames printed
#: below it name only the exception's constructor, the same for every such bug), or one fixed
#: text when every thread's message was lost.
_TERMINATE = re.compile(r"terminate called (?:recursively|after throwing)")
_MESSAGE_LOST = "uncaught C++ exception in several threads (terminate called recursively: no message)"
_WHAT = re.compile(r"^\s*what\(\):\s*(\S[^\n]*)", re.M)
_FRAME = re.compile(r"^\s*frame #\d+:")
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception)\b[:(]")
# how Inductor introduces the error of a kernel it could not compile, which varies with where
# the kernel was compiled (in a compile worker or in-process): never part of the signature
_KERNEL_INTRO = re.compile(r":\s*(?:An exception occurred in a subprocess|at \d+:\d+)\s*:?\s*$")


#: a printed set of names (``placeholders={arg1_1, arg0_1}``): its order is the hash seed's
_NAME_SET = re.compile(r"\{(\w+(?:, \w+)+)\}")


def normalize(text: str) -> str:
    """``text`` with volatile parts replaced by placeholders, and each printed set of names in
    sorted order."""
    text = _NAME_SET.sub(lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text.strip()[:200]


def _telling_line(outcome: Outcome) -> str:
    first = outcome.message.strip().splitlines()[0] if outcome.message.strip() else ""
    if outcome.symptom in ("crash", "timeout") or "API call failed" in first:
        lines = outcome.stderr.splitlines()
        if _TERMINATE.search(outcome.stderr):
            what = _WHAT.search(outcome.stderr)
            return f"uncaught C++ exception: {what.group(1).strip()}" if what else _MESSAGE_LOST
        for line in reversed(lines):
            if any(m in line for m in _STDERR_MARKERS) and not _FRAME.match(line):
                return line
    if "CppCompileError" in first or "compile error" in first:  # which C++ error, not just that one
        compiler = next((line for line in outcome.message.splitlines() if " error: " in line), None)
        if compiler is not None:
            return f"{first.rstrip(': ')}: {compiler.split(' error: ', 1)[1]}"
    if _KERNEL_INTRO.search(first):  # a kernel that did not compile: which error, not just that one
        inner = [line.strip() for line in outcome.message.splitlines()[1:]
                 if _ERROR_LINE.match(line) and not _KERNEL_INTRO.search(line)]
        if inner:
            return f"{_KERNEL_INTRO.sub('', first)}: {inner[-1]}"
    return first


def core_ops(program: Program, output: str) -> list[str]:
    """The matmul and indexing ops ``output`` is computed from: where a wrong value can come from."""
    ops: dict[str, set[str]] = {i.name: set() for i in program.leaves}
    for node in program.nodes:
        mine = {node.op} if OPS[node.op].family in ("matmul", "indexing") else set()
        ops[node.name] = mine.union(*(ops[a] for a in node.args))
    return sorted(ops.get(output, set()))


def _via(program: Program, outputs: tuple[str, ...]) -> str:
    return " via " + "+".join(sorted({op for o in outputs for op in core_ops(program, o)}) or ["pointwise"])


def signature(outcome: Outcome, program: Program | None = None) -> str:
    """``stage/symptom/detail``; a wrong result names its reason and the core ops behind it, a
    fault while running the core ops of the whole program (it does not say which output)."""
    if outcome.symptom == "mismatch" and outcome.verdict:
        v = outcome.verdict
        detail = str(v.get("reason"))
        index = v.get("output")
        if program is not None and index is not None and index < len(program.outputs):
            detail += _via(program, (program.outputs[index],))
    elif (outcome.symptom == "illegal_memory_access" and outcome.stage in ("run", "compare")
          or outcome.symptom == "unchecked_index") and program is not None:
        detail = normalize(_telling_line(outcome)) + _via(program, program.outputs)
    elif outcome.symptom == "timeout":
        detail = "no answer"
    else:
        detail = normalize(_telling_line(outcome))
        if len(detail) < 40 and outcome.frames:  # a bare "AssertionError:" says little: add where
            detail += " @ " + outcome.frames[-1]
    return f"{outcome.stage}/{outcome.symptom}/{detail}"


def lost_message(sig: str) -> bool:
    """Whether ``sig`` is a crash whose every thread lost the exception's message: the shrinker
    takes the first message a candidate prints as its target from then on, so it does not drift
    from one exception to another."""
    return sig.endswith(_MESSAGE_LOST)


def same_bug(sig: str, target: str) -> bool:
    """The shrinker's test: is ``sig`` the bug ``target`` names?

    A wrong result may lose core ops while shrinking and stay the same bug. A target without a
    ``@ frame`` (stored before frames were captured, or whose run had no traceback) matches any
    frame; two frames must agree.
    """
    sig, target = sig.split(" via ")[0], target.split(" via ")[0]
    if " @ " in sig and " @ " not in target:
        sig = sig.split(" @ ")[0]
    if sig.endswith(_MESSAGE_LOST) or target.endswith(_MESSAGE_LOST):  # one exception in several threads,
        # which print its message or lose it as they race: the same bug either way
        return sig.split("/")[:2] == target.split("/")[:2] and all(
            s.split("/", 2)[-1].startswith("uncaught C++ exception") for s in (sig, target))
    return sig == target

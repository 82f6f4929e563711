"""Triage a finding the way the seed write-ups do by hand, automatically.

*Ladder*: run the (shrunk) case under eager, ``torch.compile(backend="aot_eager")``,
``torch.compile`` with Inductor and dynamic shapes, and AOTI: the first rung that fails is the
stage that introduced the bug. *Workarounds*: the remedies people apply by hand, each a
Program transform checked with AOTI: a bounded ``Dim`` max instead of an unbounded or automatic
dim, the same dims exported at the failing size (their hints), int32 instead of int64 indices,
static shapes at the failing size, the batch of each bmm split into chunks (static, as a
hand-written chunk loop exports), contiguous inputs, module state as inputs, in-place writes
into copies of the inputs and buffers they wrote, freezing off, default configs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator

from fuzzaoti.corpus.known_bugs import mark_member
from fuzzaoti.model import sizes
from fuzzaoti.model.ops import OPS
from fuzzaoti.model.program import Node, Program
from fuzzaoti.check.signature import same_bug, signature
from fuzzaoti.check.verdict import RungResult, Verdict
from fuzzaoti.model.case import Case

LADDER = ("eager", "aot_eager", "inductor", "aoti")


def _verdict(outcome, program: Program, target: str) -> RungResult:
    if outcome.passed:
        return RungResult(Verdict.PASSES)
    if outcome.symptom == "invalid":
        return RungResult(Verdict.INVALID, outcome.message.splitlines()[0][:120])
    sig = signature(outcome, program)
    return RungResult(Verdict.FAILS_SAME) if same_bug(sig, target) else RungResult(Verdict.FAILS_DIFFERENTLY, sig)


def ladder(case: Case, target: str, check: Callable, log: Callable[[str], None] = lambda line: None,
           ) -> dict[str, RungResult]:
    """``{backend: verdict}`` for each rung; the last rung is the pool's own backend (AOTI). Each
    verdict is logged as it comes: a rung is a compile of its own (a minute on a GPU), and a
    triage cut by a time limit had printed nothing of the rungs it had done."""
    verdicts = {}
    for rung in LADDER:
        verdicts[rung] = _verdict(check([case], backend=None if rung == "aoti" else rung)[0], case.program, target)
        log(_line("ladder", rung, verdicts[rung]))
    return verdicts


def workaround_cases(case: Case) -> Iterator[tuple[str, Case]]:
    p, (env, seed) = case.program, case.runs[0]
    values = dict(env)
    loose = [d for d in p.dims if d.unbounded]
    if loose:
        # (the largest size any of its runs feeds: a max below one of them makes that run invalid)
        bounded = tuple(replace(d, kind="range", max=max(d.max or 0, d.hint, d.min + 1,
                                                         *(dict(e)[d.name] for e, _ in case.runs)))
                        if d in loose else d for d in p.dims)
        yield "bounded Dim max", Case(p.with_(dims=bounded), case.runs)
    hinted = tuple(replace(d, hint=_hint_at(d, values[d.name])) for d in p.dims)
    if hinted != p.dims:  # the same ranges, exported at the failing size: a pass says the export
        # hint decided the bug (Inductor picks index width, split sizes, cascade sums from it)
        yield "exported at the failing size", Case(p.with_(dims=hinted), case.runs)
    for old, new in (("int64", "int32"), ("int32", "int64")):
        index = [i for i in p.inputs if i.dtype == old and i.values.kind == "int"]
        if index:
            yield f"{new} indices", Case(p.with_(inputs=tuple(replace(i, dtype=new) if i in index else i
                                                              for i in p.inputs)), case.runs)
    if any(i.layout != "contiguous" for i in p.inputs):  # a pass says the layout decided it
        yield "contiguous inputs", Case(p.with_(inputs=tuple(replace(i, layout="contiguous") for i in p.inputs)),
                                        case.runs)
    if p.state:  # a pass says the package's constants decided it (folded, prepacked, swapped)
        yield "constants as inputs", Case(p.state_as_inputs(), case.runs)
    if p.write_roots({t.name for t in p.leaves}):  # a pass says writing back into an input or a
        yield "writes into copies", Case(_writes_into_copies(p), case.runs)  # buffer decided it
    if ("freezing", True) in p.configs:
        yield "freezing off", Case(p.with_(configs=tuple(c for c in p.configs if c[0] != "freezing")), case.runs)
    if p.dims:
        yield "static shapes", Case(_static(p, values), (((), seed),))
    if any(n.op == "bmm" for n in p.nodes):
        yield "chunked bmm (static)", Case(_chunked(_static(p, values)), (((), seed),))
    if p.configs:
        yield "default inductor configs", Case(p.with_(configs=()), case.runs)


def _writes_into_copies(p: Program) -> Program:
    """``p`` with each input and buffer it writes into in place cloned just before the first
    write, that write and the later ones landing in the clone: the same writes, none of them into
    a tensor the caller holds (a read of the input itself after the write now sees it unwritten)."""
    leaves = {t.name for t in p.leaves}
    taken = leaves | {n.name for n in p.nodes}
    copies: dict[str, str] = {}
    nodes = []
    for n in p.nodes:
        target = n.args[0] if n.args else None
        if OPS[n.op].mutates and target in leaves:
            if target not in copies:
                copies[target] = next(f"{target}_copy{k or ''}" for k in range(len(taken) + 1)
                                      if f"{target}_copy{k or ''}" not in taken)
                nodes.append(Node(copies[target], "clone", (target,)))
            n = replace(n, args=(copies[target],) + n.args[1:])
        nodes.append(n)
    return p.with_(nodes=tuple(nodes))


def _hint_at(d, size: int) -> int:
    """``size`` as ``d``'s export hint: at least 2 (export specializes a size of 1), at most its max."""
    hint = max(size, d.min, 2)
    return hint if d.max is None else min(hint, d.max)


def _static(p: Program, values: dict[str, int]) -> Program:
    """``p`` with every dim replaced by its runtime value: no dynamic shapes at all."""
    def fix(s):
        return None if s is None else sizes.evaluate(s, values)

    inputs = tuple(replace(i, shape=tuple(fix(s) for s in i.shape),
                           values=replace(i.values, low=fix(i.values.low), high=fix(i.values.high)))
                   for i in p.inputs)
    return p.with_(dims=(), inputs=inputs)


CHUNK = 32768  # a bmm batch chunk safely below the CUDA grid's 65535


def _chunked(p: Program) -> Program:
    """``p`` (static) with every bmm split into batch chunks and concatenated, as the seeds do by
    hand: chunks of ``CHUNK``, or two halves of a smaller batch."""
    batch = {i.name: i.shape[0] for i in p.inputs if i.shape}
    nodes = []
    for n in p.nodes:
        size = (batch.get(n.args[0]) or batch.get(n.args[1])) if n.op == "bmm" else None
        if isinstance(size, int) and size >= 2:
            n = replace(n, op="bmm_chunked", attrs=(("size", min(CHUNK, -(-size // 2))),))
        nodes.append(n)
    return p.with_(nodes=tuple(nodes))


def workarounds(case: Case, target: str, check: Callable, log: Callable[[str], None] = lambda line: None,
                ) -> dict[str, RungResult]:
    """``{remedy: verdict}``: does the bug survive each hand remedy (checked together, one batch)?"""
    named = list(workaround_cases(case))
    if named:
        log(f"  workarounds checking {', '.join(name for name, _ in named)} (one batch)")
    outcomes = check([c for _, c in named]) if named else []
    verdicts = {name: _verdict(o, c.program, target) for (name, c), o in zip(named, outcomes)}
    for name, verdict in verdicts.items():
        log(_line("workarounds", name, verdict))
    return verdicts


def _line(part: str, name: str, verdict: RungResult) -> str:
    return f"  {part:<11} {name:<24} {verdict.render()}"


def triage_finding(corpus, finding_id: int, check: Callable, log: Callable[[str], None] = print) -> dict:
    """Ladder and workarounds of a finding, stored; a new finding whose verdicts show it one
    more member of a known family (``known_bugs.family_member``) is marked known, the
    family named under ``member``."""
    finding = corpus.finding(finding_id)
    case = finding.case
    result = {"ladder": ladder(case, finding.signature, check, log),
              "workarounds": workarounds(case, finding.signature, check, log)}
    corpus.set_triage(finding_id, result["ladder"], result["workarounds"])
    result["member"] = mark_member(corpus, finding_id, log)  # another case of a family's root cause
    return result

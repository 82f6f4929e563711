"""Shrink a failing case to the smallest program and runtime shape that fail the same way.

The one thing a shrink step preserves is the failure's *signature* (``fuzzaoti.check.signature``):
a smaller program that fails differently is a different bug, and is rejected. Candidates are
plain Program transforms, checked many at a time: a round's candidates go to the worker pool
as one batch (merged into one compile where their configs agree), and the smallest candidate
that keeps the signature wins the round. Runtime shapes shrink without recompiling: smaller
shapes are extra runs of the same compiled candidate, checked smallest first.

A bug that fails whole compiles fails every merged batch holding a candidate that keeps it, and
when most candidates keep it (the usual case early on) bisecting costs more compiles than there
are candidates: such rounds compile each candidate on its own, as long as the last round's
candidates mostly kept the bug.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from fuzzaoti.model import sizes
from fuzzaoti.check.outcome import Outcome, fails_whole_batch
from fuzzaoti.model.dtypes import FLOAT_DTYPES
from fuzzaoti.model.program import DimSpec, Node, Program
from fuzzaoti.model.scale import reach, size_classes
from fuzzaoti.check.signature import lost_message, same_bug, signature
from fuzzaoti.model.case import Case
from fuzzaoti.strategies._shapes import crossing_shapes

Check = Callable[..., list[Outcome]]  # (cases, alone=indices compiled on their own) -> outcomes

# A round compiled one candidate per compile checks this many at a time and stops at the first
# chunk with a keeper: a CPU campaign spent 186 s of its 300 on one such shrink, 19 candidates
# of about 10 s each in one round, whose smallest candidate already kept the crash.
ALONE_CHUNK = 4


@dataclass(frozen=True)
class ShrinkResult:
    case: Case
    outcome: Outcome
    rounds: int
    candidates_checked: int
    seconds: float


def size_key(case: Case) -> tuple:
    """What "smaller" means: fewer ops, tensors (inputs and state) and dims, simpler configs,
    fewer constants (an input in place of module state), layouts, simpler dims and dtypes, then a
    smaller runtime shape (the smallest of the case's runs)."""
    p = case.program
    smallest_run = min(sum(v for _, v in env) for env, _ in case.runs) if case.runs else 0
    return (len(p.nodes), len(p.leaves), len(p.dims), len(p.outputs), len(p.configs), len(p.state),
            sum(i.layout != "contiguous" for i in p.inputs),
            sum(d.kind != "range" for d in p.dims), sum(d.max is None for d in p.dims),
            sum(d != "float32" for d in p.float_dtypes()),
            sum(i.dtype == "int32" for i in p.inputs), smallest_run, sum(d.hint for d in p.dims))


def shrink(case: Case, target: str, check: Check, budget_s: float = 600.0,
           log: Callable[[str], None] = lambda line: None, alone_chunk: int = ALONE_CHUNK) -> ShrinkResult:
    """Greedily shrink ``case`` while ``signature(outcome) == target``, within ``budget_s``.
    ``alone_chunk``: how many candidates a round compiled one by one checks at a time."""
    started = time.monotonic()
    best, best_outcome, rounds, checked = _pinned(case), None, 0, 0
    stage, symptom = target.split("/")[:2]
    one_by_one = fails_whole_batch(stage, symptom)  # until a round shows most candidates lose the bug
    while time.monotonic() - started < budget_s:
        candidates = sorted({c.program.id + str(c.runs): c for c in _candidates(best)}.values(), key=size_key)
        candidates = [c for c in candidates if size_key(c) < size_key(best)]
        if not candidates:
            break
        rounds += 1
        keep, tried = _round(candidates, target, check, alone_chunk if one_by_one else None,
                             lambda: time.monotonic() - started >= budget_s)
        checked += tried
        # (a round cut short at its first keeper says nothing against compiling one by one)
        one_by_one = one_by_one and (tried < len(candidates) or 2 * len(keep) >= tried)
        if not keep:
            break
        best, best_outcome = _pinned(*keep[0]), keep[0][1]
        target = signature(best_outcome, best.program) if lost_message(target) else target  # (pinned: see same_bug)
        log(f"  shrink round {rounds}: {len(best.program.nodes)} ops, {len(best.program.dims)} dims, "
            f"runs {[dict(e) for e, _ in best.runs]} ({len(keep)}/{tried} candidates kept the bug)")
    if best_outcome is None:  # nothing smaller failed: confirm the original once more
        best_outcome = check([best])[0]
    return ShrinkResult(best, best_outcome, rounds, checked, time.monotonic() - started)


def _round(candidates: list[Case], target: str, check: Check, alone_chunk: int | None,
           time_up: Callable[[], bool]) -> tuple[list[tuple[Case, Outcome]], int]:
    """Check one round's candidates: all in one merged batch (``alone_chunk`` None), or each
    compiled alone, smallest first, ``alone_chunk`` at a time up to the first chunk with a
    candidate that keeps the bug. Candidates are sorted by size, so that candidate is the round's
    winner whatever the rest would say. Returns the keepers found and how many were checked."""
    chunk = alone_chunk or len(candidates)
    keep, tried = [], 0
    for start in range(0, len(candidates), chunk):
        part = candidates[start:start + chunk]
        if start and time_up():
            break
        outcomes = check(part, alone=range(len(part)) if alone_chunk else ())
        tried += len(part)
        keep = [(c, o) for c, o in zip(part, outcomes) if o.is_finding and same_bug(signature(o, c.program), target)]
        if keep:
            break
    return keep, tried


def _pinned(case: Case, outcome: Outcome | None = None) -> Case:
    """Keep only the run that failed (when known): later rounds shrink from that shape."""
    if outcome is not None and outcome.env is not None:
        return Case(case.program, ((tuple(sorted(outcome.env.items())), outcome.seed),))
    return case


# ---- candidate transforms ----------------------------------------------------------------------
def _candidates(case: Case) -> Iterator[Case]:
    p = case.program
    for program in _program_candidates(p):
        if program is not None:
            yield Case(program, _fit_runs(program, case.runs))
    yield from _shape_candidates(case)


def _program_candidates(p: Program) -> Iterator[Program | None]:
    for name in p.outputs:  # one output only
        yield _pruned(p, (name,))
    for node in p.nodes:  # an earlier node as the output: drops everything after it
        yield _pruned(p, (node.name,))
    for node in p.nodes:  # skip an op (invalid results are caught by the eager check)
        yield _bypassed(p, node)
    if p.configs:
        yield p.with_(configs=())
    for some in ([None] if len(p.state) > 1 else []) + [{t.name} for t in p.state]:  # state as inputs
        yield p.state_as_inputs(some)
    laid = [i for i in p.inputs if i.layout != "contiguous"]
    for some in ([laid] if len(laid) > 1 else []) + [[i] for i in laid]:  # all contiguous, then one at a time
        yield p.with_(inputs=tuple(replace(i, layout="contiguous") if i in some else i for i in p.inputs))
    for d in p.dims:
        yield from _dim_candidates(p, d)
    floats = [i for i in p.inputs if i.dtype in FLOAT_DTYPES and i.dtype != "float32"]
    if floats:
        yield p.with_(inputs=tuple(replace(i, dtype="float32") if i in floats else i for i in p.inputs))
    ints = [i for i in p.inputs if i.dtype == "int32" and i.values.kind == "int"]
    if ints:
        yield p.with_(inputs=tuple(replace(i, dtype="int64") if i in ints else i for i in p.inputs))


def _dim_candidates(p: Program, d: DimSpec) -> Iterator[Program]:
    def with_dim(**changes) -> Program:
        return p.with_(dims=tuple(replace(x, **changes) if x is d else x for x in p.dims))

    if d.kind != "range":
        yield with_dim(kind="range")
    if d.max is None:
        yield with_dim(max=max(d.hint, d.min + 1) * 2)
    if d.hint > max(d.min, 2):
        yield with_dim(hint=max(d.min, 2))


def _pruned(p: Program, outputs: tuple[str, ...]) -> Program | None:
    """``p`` computing only ``outputs``: unused nodes, inputs and dims removed."""
    live = set(outputs)
    for node in reversed(p.nodes):
        if node.name in live:
            live |= set(node.args)
    inputs = tuple(i for i in p.inputs if i.name in live)
    used_dims = {n for i in inputs for s in i.shape + (i.values.low, i.values.high)
                 if s is not None for n in sizes.parse(s).dims}
    return _valid(p.with_(dims=tuple(d for d in p.dims if d.name in used_dims), inputs=inputs,
                          nodes=tuple(n for n in p.nodes if n.name in live), outputs=outputs,
                          state=tuple(t for t in p.state if t.name in live)))


def _bypassed(p: Program, node: Node) -> Program | None:
    """``p`` with ``node`` removed and its uses reading its first argument instead."""
    source = node.args[0]

    def swap(name: str) -> str:
        return source if name == node.name else name

    nodes = tuple(replace(n, args=tuple(swap(a) for a in n.args)) for n in p.nodes if n is not node)
    outputs = tuple(dict.fromkeys(swap(o) for o in p.outputs))
    if any(o in {i.name for i in p.leaves} for o in outputs):
        return None  # an input or a constant returned as-is is no program to compile
    return _pruned(p.with_(nodes=nodes, outputs=outputs), outputs)


def _valid(p: Program) -> Program | None:
    try:
        return p.validate() if p.nodes else None
    except Exception:  # noqa: BLE001 - an invalid transform is simply not a candidate
        return None


def _fit_runs(p: Program, runs) -> tuple:
    """The runs restricted to ``p``'s dims and clamped into its (maybe narrowed) ranges."""
    dims = p.dim
    fitted = []
    for env, seed in runs:
        new = {}
        for name, value in env:
            if name in dims:
                d = dims[name]
                new[name] = max(d.min, value if d.max is None else min(d.max, value))
        fitted.append((tuple(sorted(new.items())), seed))
    return tuple(fitted)


def _shape_candidates(case: Case) -> Iterator[Case]:
    """The same program at smaller runtime sizes, as extra runs checked smallest first."""
    (env, seed), = case.runs[:1]
    mins = {d.name: d.min for d in case.program.dims}
    smaller = []
    for name, value in env:
        for new in sorted({mins[name], max(mins[name], value // 2), max(mins[name], value - 1)}):
            if new < value:
                smaller.append(tuple(sorted({**dict(env), name: new}.items())))
    all_min = tuple(sorted({n: mins[n] for n, _ in env}.items()))
    runs = set([all_min] + smaller)
    size_class = size_classes(reach(case.program, dict(env)))
    if size_class:  # a failure past 2**31 stays past it: smaller shapes of the same size class only,
        # the least of them just past its crossings (a bug that needs 2**31 elements is not "shrunk"
        # into another one at 2**30)
        runs = {e for e in runs | {tuple(sorted(c.items())) for c in crossing_shapes(case.program, None)}
                if size_classes(reach(case.program, dict(e))) == size_class and sum(v for _, v in e) < sum(
                    v for _, v in env)}
    runs = sorted(runs, key=lambda e: sum(v for _, v in e))
    if runs and runs[0] != env:
        yield Case(case.program, tuple((e, seed) for e in runs if e != env))


def shrink_finding(corpus, finding_id: int, check: Check, budget_s: float,
                   log: Callable[[str], None] = lambda line: None) -> ShrinkResult:
    """Shrink a stored finding and store its minimal program and runs beside the original."""
    finding = corpus.finding(finding_id)
    program = finding.found_case.program
    result = shrink(finding.found_case, finding.signature, check, budget_s, log)
    final = signature(result.outcome, result.case.program)
    same = result.outcome.is_finding and same_bug(final, finding.signature)
    note = (f"{len(program.nodes)} -> {len(result.case.program.nodes)} ops in {result.rounds} rounds, "
            f"{result.candidates_checked} candidates, {result.seconds:.0f} s"
            + (f"; shrunk signature {final}" if same else f"; did NOT reproduce alone: {final}"))
    if same:
        corpus.set_shrunk(finding_id, result.case.program.to_json(), result.case.run_dicts(), note)
    log(f"  finding {finding_id} shrunk: {note}")
    return result

"""Findings and campaigns as text: one finding as a maintainer reads it (``show``): what failed, where (the first and worst wrong
elements, whose index tells a 32-bit offset at once), the shrunk program and its shapes; a line per finding (``list``) and per campaign (``stats``)."""

from __future__ import annotations


from fuzzaoti.compile.render import module_source
from fuzzaoti.corpus.campaign_record import CampaignRecord
from fuzzaoti.corpus.finding import Finding
from fuzzaoti.campaign.slowest import describe


def describe_finding(f: Finding) -> str:
    """``fuzzaoti show``'s text for the stored finding row ``f``."""
    out: list[str] = []
    case = f.case  # the shrunk program and shapes once shrunk: what a maintainer reads
    program = case.program
    out.append(f"finding {f.id} [{f.status}] hits={f.hits} first {f.first_seen} last {f.last_seen}")
    if f.known_note:
        out.append(f"known upstream: {f.known_note}")
    out.append(f"signature: {f.signature}")
    out.append(f"device {f.device} torch {f.torch_version} cuda {f.cuda_version} {f.device_name or ''}"
               + (f" canary {f.canary}" if f.canary else ""))
    if f.replays:
        out.append(f"replayed: {f.torch_results()}")
    out.append(f"message: {f.message[:1000]}")
    verdict = f.verdict
    if verdict and verdict.get("worst"):  # an index past 2**31 is the tell-tale of a 32-bit offset
        first = verdict.get("first")
        out.append((f"first wrong element: {first['index']} (flat {first['flat']}); " if first else "")
                   + "worst: " + "; ".join(f"{w['index']} actual {w['actual']} expected {w['expected']}"
                                           for w in verdict["worst"]))
    if f.assumptions:
        out.append(f"broke what Inductor assumed, unchecked by AOTI: {'; '.join(a.text() for a in f.assumptions)}")
    if f.shrink_note:
        out.append(f"shrunk: {f.shrink_note}")
    out.append(f"failing runs: {[{'env': dict(env), 'seed': seed} for env, seed in case.runs]}")
    out.append("dims: " + ", ".join(f"{d.name}[{d.min}..{d.max if d.max is not None else 'inf'}] {d.kind} hint={d.hint}"
                                    for d in program.dims))
    out.append("inputs: " + ", ".join(_input_line(i) for i in program.inputs))
    if program.state:
        out.append("module state: " + ", ".join(f"{t.name}:{t.dtype}{list(t.shape)} {t.kind}" for t in program.state))
    out.append(module_source(program))
    if f.stderr.strip():
        out.append("stderr (tail):\n" + f.stderr[-2000:])
    return "\n".join(out)


def _input_line(i) -> str:
    """``x1:int64['d0'] offset, an index eager rejects``: its layout when not contiguous
    (``Program.LAYOUTS``) and an index drawn out of range on purpose."""
    notes = ([i.layout] if i.layout != "contiguous" else []) + (["an index eager rejects"] if i.values.kind == "oob" else [])
    return f"{i.name}:{i.dtype}{list(i.shape)}" + (f" ({', '.join(notes)})" if notes else "")


def finding_line(f: Finding) -> str:
    """One line of ``fuzzaoti list``."""
    canary = f" canary={f.canary}" if f.canary else ""
    return (f"{f.id:>4}  {f.status:<5} {f.device:<4} hits={f.hits:<3} "
            f"torch {f.torch_version}{canary}  {f.signature[:100]}")


def campaign_line(c: CampaignRecord) -> str:
    """One line of ``fuzzaoti stats``."""
    canary = f" canary={c.canary}" if c.canary else ""
    n = c.counts
    return (f"{c.id:>4}  {c.status:<11} {c.backend}/{c.device}{canary} started {c.started_at} "
            f"updated {c.updated_at}: {n['programs']} programs in {n['batches']} batches, "
            f"{n['runs_checked']} shapes checked ({n['runs_skipped']} skipped), {n['invalid']} invalid, "
            f"{n['failures']} failures, {n['new_findings']} new findings, {n['worker_restarts']} worker restarts, "
            f"{n['quarantined']} quarantined"
            + (describe(c.slowest, c.id) if c.slowest else ""))

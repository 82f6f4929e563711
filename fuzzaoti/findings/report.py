"""A finding → a Markdown bug report in the shape PyTorch's pt2 template asks of fuzzer findings.

What a campaign knows (the program, its failing runs, the oracle's verdict, triage, where it was
replayed) comes from the finding. What a person learned reading PyTorch's source and tracker (the
code site and why it is wrong, the closest upstream reports, the workaround, a fix) lives in the
built-in known entry the finding is an instance of (``corpus/known/*.json``, ``Analysis``), so the
next finding of that bug gets the same report, and a new bug's analysis is written once, as data.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

from fuzzaoti.check.verdict import RungResult
from fuzzaoti.compile.render import module_source
from fuzzaoti.corpus.known_entry import KnownEntry
from fuzzaoti.findings.repro import finding_repro
from fuzzaoti.corpus.finding import Finding


def collect_env() -> str:
    """The output of ``python -m torch.utils.collect_env`` (or why it could not be had)."""
    try:
        done = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True,
                              text=True, timeout=120)
        return done.stdout.strip() or done.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(collect_env failed: {exc})"


@dataclass(frozen=True)
class Analysis:
    """What a person found out about a bug, from its known entry: rendered as the report's
    sections on the code site, upstream, the workaround and a fix."""

    entry: str  # the entry's name (its file name without .json)
    title: str
    where: str = ""  # the code site, and why it is wrong there
    upstream: str = ""  # where it is reported ("" while unreported)
    relatives: str = ""  # the closest upstream issues and PRs, and how this one differs
    workaround: str = ""
    fix: str = ""  # a fix the source makes clear
    torch_only_repro: tuple[str, ...] = ()  # the shortest repro, minimized by hand (shown first)

    @classmethod
    def from_entry(cls, entry: KnownEntry) -> Analysis:
        return cls(entry.name, entry.title, entry.where, entry.upstream, entry.relatives, entry.workaround,
                   entry.fix, entry.torch_only_repro)

    def lines(self) -> list[str]:
        """The report's sections on the code site, upstream, the workaround and the fix (those it has)."""
        out = []
        for title, text in (("Where it goes wrong", self.where), ("Upstream", self.upstream),
                            ("Closest upstream relatives", self.relatives), ("Workaround", self.workaround),
                            ("Suggested fix", self.fix)):
            if text:
                out += [f"### {title}", "", text, ""]
        return out


def _versions_table(finding: Finding) -> list[str]:
    """Each torch and device the finding was checked on (found, then each ``recheck``/replay)."""
    rows = [] if any((r.torch_version, r.device) == (finding.torch_version, finding.device) for r in finding.replays) \
        else [f"| {finding.torch_version} | {finding.device} | fails (found) | {finding.signature} |"]
    rows += [f"| {r.torch_version} | {r.device}{' (' + r.device_name + ')' if r.device_name else ''} | {r.result} | "
             f"{r.signature} |" for r in finding.replays]
    return ["**Checked on:**", "", "| torch | device | result | signature |", "| --- | --- | --- | --- |", *rows, ""]


def _table(title: str, rows: dict[str, RungResult]) -> list[str]:
    if not rows:
        return [f"**{title}:** not run yet (`fuzzaoti triage ID`).", ""]
    return ([f"**{title}:**", "", "| | result |", "| --- | --- |"]
            + [f"| {k} | {v.render()} |" for k, v in rows.items()] + [""])


def render_report(finding: Finding, repro_name: str, env_text: str, relatives: list[int] = (),
                  analysis: Analysis | None = None) -> str:
    case = finding.case
    p = case.program
    ops = ", ".join(dict.fromkeys(n.op for n in p.nodes))
    where = finding.device.upper() if finding.device == "cuda" else "CPU"
    component = "torch.export" if finding.stage == "export" else "AOTInductor"  # the stage that broke
    title = analysis.title if analysis else (f"[{component}] {finding.symptom.replace('_', ' ')} at {finding.stage} "
                                             f"for {ops} with dynamic shapes on {where}")
    dims = ", ".join(f"`{d.name}` in [{d.min}, {d.max if d.max is not None else 'inf'}] ({d.kind}, example {d.hint})"
                     for d in p.dims) or "none (static)"
    lines = [
        f"# {title}", "",
        "### 🐛 Describe the bug", "",
        f"Found by [fuzzaoti](https://pypi.org/project/fuzzaoti/) (finding {finding.id}, signature "
        f"`{finding.signature}`, {finding.hits} hit(s)). A program exported with `torch.export` with "
        f"dynamic dims {dims} and compiled with `torch._inductor.aoti_compile_and_package` "
        f"{_what_goes_wrong(finding.stage, finding.symptom)} "
        f"at runtime dims {dict(case.runs[0][0]) if case.runs else {}}.",
        "",
    ]
    if finding.canary:
        lines += [f"**Note:** found under the canary fault `{finding.canary}` (a fault injected on purpose); "
                  "this is a test of fuzzaoti, not a PyTorch bug.", ""]
    lines += ["The program:", "", "```python", module_source(p).rstrip(), "```", ""]
    if analysis and analysis.torch_only_repro:
        lines += ["The same bug in a few lines of torch, minimized by hand:", "",
                  "```python", *analysis.torch_only_repro, "```", ""]
    lines += [f"Minimal standalone repro (needs only torch; exits 1 while the bug is there): `{repro_name}`, "
              "attached and reproduced here:", "",
              "```python", finding_repro(finding).rstrip(), "```", ""]
    if finding.shrink_note:
        lines += [f"Shrunk by fuzzaoti: {finding.shrink_note}.", ""]
    if relatives:
        lines += [f"Likely the same root cause as fuzzaoti findings {', '.join(map(str, relatives))} "
                  "(same stage, symptom, core ops and remedies after shrinking).", ""]
    lines += _expected_and_actual(finding)
    if analysis:
        lines += [""] + analysis.lines()
    if finding.assumptions:
        lines += ["", "The failing run breaks a size guard Inductor added while compiling, which the AOTI package "
                      "never checks (as pytorch#150364 describes): " + "; ".join(f"`{a.text()}`" for a in finding.assumptions)
                  + ". The package's code was chosen for sizes where it holds."]
    lines += ["", "### Triage", ""] + _table("Ladder (which stage introduces it)", finding.triage)
    lines += _table("Workarounds (does the bug survive the usual hand remedies?)", finding.workarounds)
    lines += ["### Versions", "", *_versions_table(finding),
              f"Found on torch {finding.torch_version} (CUDA {finding.cuda_version}, {finding.device_name or 'CPU'}); "
              "`python -m torch.utils.collect_env` where this report was written:", "", "```", env_text, "```", "",
              "cc: labels `topic: fuzzer`, `oncall: export`, `module: aotinductor`", ""]
    return "\n".join(lines)


def _expected_and_actual(finding: Finding) -> list[str]:
    """The oracle's verdict (the worst and first wrong elements), or the error a stage raised."""
    verdict = finding.verdict
    lines = ["### Expected and actual", "",
             "Expected: every output element equals eager (integers exactly; floats within 4x eager's own "
             "error against a float64 reference plus the dtype's rounding)."]
    if verdict:
        lines += ["", f"Actual: {verdict.get('detail', '')}. Worst elements:", "", "| index | actual | expected | tolerance |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {w['index']} | {w['actual']} | {w['expected']} | {w['tolerance']} |" for w in verdict.get("worst", [])]
        if verdict.get("first"):
            first = verdict["first"]
            lines += ["", f"The first wrong element is at index {first['index']} (flat offset {first['flat']} of "
                          f"{verdict.get('numel')}).", ""]
    else:
        lines += ["", "Actual:", "", "```", finding.message[:3000].rstrip(), "```"]
    return lines


def write_report(finding: Finding, directory: str, relatives: list[int] = (),
                 analysis: Analysis | None = None) -> tuple[str, str]:
    """Write ``finding-ID.md`` and ``repro-ID.py`` into ``directory``; return both paths."""
    os.makedirs(directory, exist_ok=True)
    repro_path = os.path.join(directory, f"repro-{finding.id}.py")
    report_path = os.path.join(directory, f"finding-{finding.id}.md")
    with open(repro_path, "w") as f:
        f.write(finding_repro(finding))
    with open(report_path, "w") as f:
        f.write(render_report(finding, os.path.basename(repro_path), collect_env(), relatives, analysis))
    return report_path, repro_path


def _what_goes_wrong(stage: str, symptom: str) -> str:
    """The report's one-phrase summary of a failure, by the stage it happened in."""
    if symptom == "mismatch":
        return "disagrees with eager"
    verb = {"crash": "crashes", "timeout": "hangs"}.get(symptom, "raises")
    where = {"export": "in torch.export", "compile": "while compiling", "load": "while loading the package",
             "run": "when run"}.get(stage, f"at stage {stage}")
    return f"{verb} {where}, checked"

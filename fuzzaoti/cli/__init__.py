"""The ``fuzzaoti`` command: thin click functions over the library.

The group and its shared options are in ``_base``; the commands on corpora as files (``fuzzaoti
corpus merge``) in ``corpora``; compiler coverage in ``coverage``; a campaign (``fuzzaoti fuzz``) in ``fuzz`` and a launch of
many in ``launch``; the rest, one per phase a user drives, here.

Every error that is the user's input (a bad flag, a missing or foreign corpus, an unknown id)
becomes one line on stderr and exit code 2; findings that still fail make ``replay`` exit 1.
"""

from __future__ import annotations

import json
import sys

import click

from fuzzaoti.compile.backends import BACKENDS, CAMPAIGN_BACKENDS, DEVICES
from fuzzaoti.compile.canaries import CANARIES
from fuzzaoti.corpus import FINDING_STATUSES
from fuzzaoti.strategies.profiles import PROFILES

from fuzzaoti.cli._base import (CANARY_HELP, DEFAULT_CORPUS, EXIT_USAGE, corpus_option, known_option, main,
                               max_bytes_option, require_cuda)
from fuzzaoti.cli.corpora import corpus as corpus_group
from fuzzaoti.cli.coverage import coverage as coverage_command
from fuzzaoti.cli.fuzz import fuzz as fuzz_command
from fuzzaoti.cli.launch import launch as launch_command

__all__ = ["DEFAULT_CORPUS", "EXIT_USAGE", "main"]

@main.command()
@corpus_option
@click.option("--corpus-dir", "corpus_dir", type=click.Path(), default=None,
              help="A launch directory (fuzzaoti launch): each task's programs per minute, findings and worker "
                   "restarts, and the merged corpus's, instead of one corpus's campaigns.")
@click.option("--slowest", "slowest_of", type=int, default=None, metavar="ID",
              help="Print campaign ID's slowest compiled big run as a 'fuzzaoti check' file (JSON) instead.")
def stats(corpus_path, corpus_dir, slowest_of) -> None:
    """Campaigns stored in the corpus: settings, duration and counts."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.coverage.report import Decided
    from fuzzaoti.findings.show import campaign_line
    from fuzzaoti.launch.status import status_lines
    from fuzzaoti.campaign.slowest import stored_case

    if corpus_dir is not None:
        for line in status_lines(corpus_dir):
            click.echo(line)
        return
    with Corpus.open(corpus_path) as corpus:
        rows = corpus.campaigns()
        decided = {c.id: Decided.of(corpus.compiler_decisions(c.id)) for c in rows}
    if slowest_of is not None:
        click.echo(stored_case(rows, slowest_of))
        return
    if not rows:
        click.echo("no campaigns")
    for c in rows:
        click.echo(campaign_line(c))
        single = decided[c.id].histogram()
        if single:  # (a campaign run with --coverage)
            click.echo(f"      decisions by kernels ({len(decided[c.id].by_combination)} combinations): "
                       + ", ".join(f"{d} {n}" for d, n in single.most_common()))


@main.command(name="list")
@corpus_option
@click.option("--status", type=click.Choice(FINDING_STATUSES), default=None, help="Only findings with this status.")
@click.option("--families", "by_family", is_flag=True,
              help="One line per family: findings that likely share a root cause (see 'fuzzaoti triage').")
def list_(corpus_path, status, by_family) -> None:
    """List the findings in the corpus, one line each."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.families import families
    from fuzzaoti.findings.show import finding_line

    with Corpus.open(corpus_path) as corpus:
        rows = list(corpus.findings(status))
        if not rows:
            click.echo("no findings")
        if by_family:
            for key, members in families(rows).items():
                ids = ",".join(str(f.id) for f in members)
                click.echo(f"{len(members)} finding(s) [{ids}], {sum(f.hits for f in members)} hits: {key}")
            return
        for f in rows:
            click.echo(finding_line(f))


@main.command()
@click.argument("finding_id", type=int)
@corpus_option
@click.option("--json", "as_json", is_flag=True, help="Print the whole stored record as JSON.")
def show(finding_id, corpus_path, as_json) -> None:
    """Show one finding: its signature, program, failing shapes and error."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.show import describe_finding

    with Corpus.open(corpus_path) as corpus:
        f = corpus.finding(finding_id)
    if as_json:
        click.echo(json.dumps(f.to_dict(), indent=2))
        return
    click.echo(describe_finding(f))


@main.command()
@click.argument("finding_id", type=int)
@corpus_option
@click.option("--inject", type=click.Choice(sorted(CANARIES)), default=None,
              help="Replay with this canary installed (to re-check a canary finding).")
@click.option("--device", type=click.Choice(DEVICES), default=None, help="Replay on another device.")
@max_bytes_option
def replay(finding_id, corpus_path, inject, device, max_bytes) -> None:
    """Re-run a finding on the installed torch: exit 1 while it fails, 0 once it passes."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.replay import replay as do_replay

    with Corpus.open(corpus_path) as corpus:
        if (device or corpus.finding(finding_id).device) == "cuda":
            require_cuda()
        result = do_replay(corpus, finding_id, canary=inject, device=device, max_bytes=max_bytes)
    click.echo(result.describe())
    if result.outcome.symptom == "invalid":
        sys.exit(EXIT_USAGE)
    sys.exit(1 if result.still_fails else 0)


@main.command()
@click.argument("finding_id", type=int)
@corpus_option
@click.option("--minutes", type=click.FloatRange(min=0), default=10.0, show_default=True, help="Time budget.")
@click.option("--inject", type=click.Choice(sorted(CANARIES)), default=None,
              help="Shrink with this canary installed.  [default: the finding's own canary]")
@click.option("--backend", type=click.Choice(CAMPAIGN_BACKENDS), default="aoti", show_default=True)
def shrink(finding_id, corpus_path, minutes, inject, backend) -> None:
    """Shrink a finding to the smallest program and shape with the same signature."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.shrink import shrink_finding

    with Corpus.open(corpus_path) as corpus:
        pool = _finding_pool(corpus, finding_id, inject, backend)
        try:
            shrink_finding(corpus, finding_id, pool.check, minutes * 60, click.echo)
        finally:
            pool.close()


@main.command()
@click.argument("finding_id", type=int)
@corpus_option
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the script here instead of stdout.")
def repro(finding_id, corpus_path, output) -> None:
    """Print a standalone repro script (needs only torch) that exits 1 while the bug is there."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.repro import finding_repro

    with Corpus.open(corpus_path) as corpus:
        script = finding_repro(corpus.finding(finding_id))
    if output is None:
        click.echo(script)
    else:
        with open(output, "w") as f:
            f.write(script)
        click.echo(f"wrote {output}")


@main.command()
@click.option("--sample", "n", type=click.IntRange(min=1), default=1000, show_default=True,
              help="How many programs to draw.")
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--profile", type=click.Choice(list(PROFILES)), default="small", show_default=True)
@click.option("--max-bytes", type=click.IntRange(min=1), default=None,
              help="Bytes of one checked run.  [default: the profile's; large on a CUDA node: as a campaign's]")
@click.option("--seed", type=int, default=0, show_default=True)
def strategies(n, device, profile, max_bytes, seed) -> None:
    """Histograms of what a campaign checks: ops, dtypes, input layouts, module state, dim kinds,
    size classes, configs; and its runtime shapes by size class, per op family and per big dim
    kind (drawn as a campaign draws its batches, programs repeated from an earlier batch left
    out; not run)."""
    from fuzzaoti.strategies import histograms as coverage
    from fuzzaoti.workers.placement import default_max_bytes, default_workers

    if max_bytes is None and device == "cuda" and _cuda_available():
        max_bytes = default_max_bytes(device, profile, None, default_workers(device, None))
    drawn = coverage.sample_as_checked(n, device, profile, max_bytes, seed)
    click.echo(coverage.render(coverage.histograms([c.program for c in drawn]), len(drawn)))
    click.echo(coverage.render_tables(coverage.run_tables(drawn)))
    click.echo(coverage.crossing_summary(drawn))


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _finding_pool(corpus, finding_id: int, inject: str | None, backend: str = "aoti"):
    """The finding's worker pool (``findings.replay.finding_pool``), its device checked to exist."""
    from fuzzaoti.findings.replay import finding_pool

    finding = corpus.finding(finding_id)
    if finding.device == "cuda":
        require_cuda()
    return finding_pool(finding, inject, backend, click.echo)


@main.command()
@click.argument("finding_id", type=int)
@corpus_option
@click.option("--inject", type=click.Choice(sorted(CANARIES)), default=None,
              help="Triage with this canary installed.  [default: the finding's own canary]")
def triage(finding_id, corpus_path, inject) -> None:
    """Which stage introduces a finding (eager, aot_eager, inductor, AOTI) and which hand
    remedies (bounded Dim max, int32 indices, static shapes, default configs) make it pass."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.triage import triage_finding

    with Corpus.open(corpus_path) as corpus:
        pool = _finding_pool(corpus, finding_id, inject)
        try:
            triage_finding(corpus, finding_id, pool.check, click.echo)
        finally:
            pool.close()


@main.command()
@click.argument("finding_id", type=int)
@corpus_option
@click.option("--dir", "directory", type=click.Path(file_okay=False), default="reports", show_default=True,
              help="Where finding-ID.md and repro-ID.py are written.")
@click.option("--entry", default=None, metavar="NAME",
              help="Take the code site, upstream relatives, workaround and fix from this built-in known entry "
                   "(fuzzaoti/corpus/known/NAME.json).  [default: the entry the finding matches, if any]")
def report(finding_id, corpus_path, directory, entry) -> None:
    """Write an upstream-ready Markdown bug report and its standalone repro script."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.corpus.known_bugs import builtin_entry, entry_for
    from fuzzaoti.findings.families import relatives
    from fuzzaoti.findings.report import Analysis, write_report

    with Corpus.open(corpus_path) as corpus:
        finding = corpus.finding(finding_id)
        related = relatives(finding, corpus.findings())
    found = builtin_entry(entry) if entry else entry_for(finding)
    analysis = Analysis.from_entry(found) if found else None
    report_path, repro_path = write_report(finding, directory, related, analysis)
    click.echo(f"wrote {report_path} and {repro_path}" + (f" (analysis from known entry {analysis.entry})"
                                                          if analysis else ""))


@main.command()
@click.argument("finding_ids", nargs=-1, type=int)
@corpus_option
@click.option("--backend", type=click.Choice(CAMPAIGN_BACKENDS), default="aoti", show_default=True)
def recheck(finding_ids, corpus_path, backend) -> None:
    """Replay findings on the installed torch and record the result on each: an open one that
    passes is marked fixed, a fixed one that fails again is marked new. Without FINDING_IDS:
    every finding not found under a canary."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.findings.replay import recheck as recheck_all

    with Corpus.open(corpus_path) as corpus:
        done = recheck_all(corpus, backend, click.echo,
                           lambda f: require_cuda() if f.device == "cuda" else None, finding_ids)
    click.echo(done.describe())


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--inject", type=click.Choice(sorted(CANARIES)), default=None, help=CANARY_HELP)
@click.option("--backend", type=click.Choice(list(BACKENDS)), default="aoti",
              show_default=True)
@click.option("--record", "record_path", default=None, type=click.Path(dir_okay=False),
              help="Also store each failure as a finding in this corpus (for report, replay, triage).")
@max_bytes_option
def check(files, device, inject, backend, record_path, max_bytes) -> None:
    """Check hand-written program files (JSON: a program, or {"program", "runs"} as in
    corpus/known/) against eager, all compiled as one batch. Exits 1 if any fails."""
    from fuzzaoti.corpus.record import record_checked
    from fuzzaoti.findings.check_files import check_files, read_case_file

    cases = [read_case_file(path) for path in files]
    if device == "cuda":
        require_cuda()
    checked = check_files(cases, device, inject, backend, max_bytes, list(files))
    for path, (case, outcome, verdict) in zip(files, checked):
        click.echo(f"{path}: {verdict}")
    if record_path is not None:
        record_checked(record_path, device, inject, [(c, o) for c, o, _ in checked], click.echo)
    if any(o.is_finding for _, o, _ in checked):
        sys.exit(1)


@main.command()
@corpus_option
@known_option
def known(corpus_path, known_file) -> None:
    """Mark stored 'new' findings that match the known-bug list, or that triage shows members
    of a built-in family (the same root cause in another op), as 'known', naming the entry."""
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.corpus.known_bugs import KnownList, mark_known

    bugs = KnownList.load(corpus_path, known_file)
    with Corpus.open(corpus_path) as corpus:
        marked = mark_known(corpus, bugs, click.echo)
    click.echo(f"{len(bugs.bugs)} known bugs; {marked} findings newly marked known")


main.add_command(fuzz_command)
main.add_command(coverage_command)
main.add_command(corpus_group)
main.add_command(launch_command)

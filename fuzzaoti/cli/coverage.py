"""``fuzzaoti coverage``: the Inductor lines a campaign's compiles ran (``fuzz --coverage``)."""

from __future__ import annotations


import click

from fuzzaoti.cli._base import corpus_option


@click.command()
@corpus_option
@click.option("--campaign", "campaign_id", type=int, default=None,
              help="The campaign.  [default: the newest that recorded coverage]")
@click.option("--file", "part", default=None, metavar="NAME",
              help="Each Inductor file whose name contains NAME (e.g. codegen/simd.py): its lines reached "
                   "and not reached.")
@click.option("--function", "function", default=None, metavar="NAME",
              help="Each Inductor function whose name contains NAME (e.g. can_use_32bit_indexing): its lines "
                   "reached and not reached (did a decision ever go both ways?); and each decision "
                   "combination with NAME in it (e.g. tail, int64, welford).")
@click.option("--against", "other_id", type=int, default=None,
              help="Another campaign: the lines each reached that the other did not, by file.")
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True, help="Files listed.")
def coverage(corpus_path, campaign_id, part, function, other_id, top) -> None:
    """How much of torch/_inductor a campaign's compiles ran (recorded by 'fuzz --coverage'): lines
    reached in all and by minute (a count that stops growing is a generator that stopped reaching
    new compiler code), the files most reached with their share of lines, one file's or
    function's lines, or what one campaign reached that another did not; and the decisions its
    kernels took (vector lanes, tails, reductions, Triton heuristics, index widths, externs)."""
    import torch

    from fuzzaoti.corpus import Corpus
    from fuzzaoti.coverage import report

    with Corpus.open(corpus_path) as corpus:
        recorded = corpus.campaigns_with_lines()
        if campaign_id is None and not recorded:
            raise click.UsageError(f"no campaign in {corpus_path} recorded coverage (run 'fuzzaoti fuzz --coverage')")
        campaign_id = recorded[-1] if campaign_id is None else campaign_id
        ids = [campaign_id] + ([other_id] if other_id is not None else [])
        for cid in ids:
            ran_on = corpus.campaign(cid).versions.get("torch")
            if cid not in recorded:
                raise click.UsageError(f"campaign {cid} recorded no coverage (run 'fuzzaoti fuzz --coverage')")
            if ran_on and ran_on != torch.__version__:
                click.echo(f"campaign {cid} ran torch {ran_on}; lines of code are counted in the installed "
                           f"{torch.__version__}")
        lines = [report.Lines.of(corpus.compiler_lines(cid)) for cid in ids]
        decided = [report.Decided.of(corpus.compiler_decisions(cid)) for cid in ids]
    click.echo(f"campaign {campaign_id}:")
    if other_id is not None:
        out = report.against(lines[0], lines[1], f"campaign {campaign_id}", f"campaign {other_id}", top)
        out += report.decisions_against(decided[0], decided[1], f"campaign {campaign_id}", f"campaign {other_id}")
    elif part is not None:
        out = report.one_file(lines[0], part)
    elif function is not None:
        out = report.functions(lines[0], function) + ["decision combinations:"] + [
            f"  {line}" for line in report.decision_matches(decided[0], function)]
    else:
        out = report.summary(lines[0], top) + report.decision_summary(decided[0], top)
    click.echo("\n".join(out))

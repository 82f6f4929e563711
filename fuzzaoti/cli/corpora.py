"""``fuzzaoti corpus ...``: commands on corpus files as a whole (merging shards)."""

from __future__ import annotations

import click


@click.group()
def corpus() -> None:
    """Whole corpora: merge the shards of a campaign spread over many tasks into one."""


@corpus.command()
@click.argument("shards", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", "target", required=True, type=click.Path(dir_okay=False),
              help="The corpus to merge into (created when missing; an existing one keeps its findings).")
def merge(shards, target) -> None:
    """Merge SHARDS into one corpus: a finding hit in several is one finding with their hits
    summed, the smaller shrunk program kept; campaigns keep the shard they came from. Merging a
    shard again adds only what it gained since; a shard that is not a corpus writes nothing."""
    from fuzzaoti.corpus.merge import merge_corpora

    counts = merge_corpora(list(shards), target, click.echo)
    click.echo(f"{counts.describe()} into {target}")

"""``fuzzaoti fuzz``: a campaign, from its flags to its summary (``fuzzaoti.campaign`` does the work)."""

from __future__ import annotations

import os
import signal
import sys

import click

from fuzzaoti.cli._base import CANARY_HELP, corpus_option, known_option, require_cuda
from fuzzaoti.compile.backends import CAMPAIGN_BACKENDS, DEVICES
from fuzzaoti.compile.canaries import CANARIES
from fuzzaoti.corpus.quarantine import DEFAULT_RATE
from fuzzaoti.strategies.profiles import PROFILES


@click.command()
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True,
              help="Where programs are compiled and run.")
@click.option("--minutes", type=click.FloatRange(min=0), default=None,
              help="How long to fuzz.  [default: 5, or the resumed campaign's own]")
@corpus_option
@click.option("--seed", type=int, default=0, show_default=True, help="Hypothesis seed: same seed, same programs.")
@click.option("--inject", type=click.Choice(sorted(CANARIES)), default=None, help=CANARY_HELP)
@click.option("--batch-size", type=click.IntRange(min=1), default=None,
              help="Programs compiled together as one AOTI module.  [default: adaptive, 4 to 64, "
                   "starting at 16 (large: 4 to 32, from 8), climbing to the size that checks the most "
                   "programs per minute]")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes.  [default: 1 on cpu; on cuda, per GPU one for every 5 of its CPU cores, 1 to 3]")
@click.option("--gpus", default=None, help="GPU ids the cuda workers are pinned to, round-robin (e.g. 0,1,3). "
              "[default: the visible GPUs]")
@click.option("--max-batches", type=click.IntRange(min=1), default=None, help="Stop after this many batches.")
@click.option("--backend", type=click.Choice(CAMPAIGN_BACKENDS), default="aoti", show_default=True,
              help="'fake' is the fast test double (no compiles).")
@click.option("--shrink-minutes", type=click.FloatRange(min=0), default=3.0, show_default=True,
              help="Time to shrink each new finding (0: do not shrink).")
@click.option("--follow-up-minutes", type=click.FloatRange(min=0), default=None,
              help="Time after --minutes to shrink and triage the wrong results and one-op crashes found "
                   "(a crash or failed compile of several ops is followed up at once, to quarantine it).  "
                   "[default: --minutes]")
@click.option("--triage/--no-triage", default=True, show_default=True,
              help="Triage each new finding after shrinking (ladder of backends, hand remedies).")
@click.option("--profile", type=click.Choice(list(PROFILES)), default="small", show_default=True,
              help="Program sizes: 'large' runs every op family past 2**31 and 2**32 elements and bmm batches past 65535 (GPU nodes).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None,
              help="Bytes of one checked run: inputs, intermediates, outputs and the reference.  "
                   "[default: 32 MiB small, 4 GiB large; large on cuda: half the GPU's free memory, shared by its workers]")
@click.option("--configs", default=None, metavar="NAME",
              help="Draw only this compile config set: default, or on cuda max_autotune or native_matmul "
                   "(Triton GEMM templates).  [default: all, the dear ones less often]")
@known_option
@click.option("--quarantine-rate", type=click.FloatRange(0, 1), default=DEFAULT_RATE, show_default=True,
              help="Share of drawn programs that would trip a compile-failing bug already found (a known "
                   "bug's trigger, a finding's shrunk program) still checked, each alone; the rest are set "
                   "aside. 1: check them all, alone; 0: set them all aside.")
@click.option("--resume", "resume_id", type=int, default=None,
              help="Carry on this campaign (its stored settings; --minutes may be given anew).")
@click.option("--shard", default="0/1", show_default=True, metavar="K/N",
              help="Task K (from 0) of a campaign spread over N: its own seed stream and a part of the "
                   "programs no other task checks (merge the shards with 'fuzzaoti corpus merge').")
@click.option("--coverage", is_flag=True, default=False,
              help="Record the lines of torch/_inductor the compiles run (on CPU 1.08x the compile time), for "
                   "'fuzzaoti coverage': how much of Inductor a campaign reached, and when.")
@click.option("--guided", is_flag=True, default=False,
              help="Replace a share of drawn programs by mutants of those whose compile took a decision "
                   "combination new to the campaign (CPU, small profile; records coverage too; the share "
                   "follows what each kind of program yields).")
def fuzz(device, minutes, corpus_path, seed, inject, batch_size, workers, gpus, max_batches, backend,
         shrink_minutes, follow_up_minutes, triage, profile, max_bytes, configs, known_file, quarantine_rate,
         resume_id, shard, coverage, guided) -> None:
    """Run a fuzz campaign and store its findings in the corpus."""
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.corpus import Corpus
    from fuzzaoti.corpus.store import check_corpus
    from fuzzaoti.launch.shards import parse_shard
    from fuzzaoti.campaign.progress import Display

    settings = None
    if resume_id is None:  # built before the corpus is opened: a bad flag leaves no empty corpus behind
        shard, shards = parse_shard(shard)
        settings = CampaignSettings(
            device=device, backend=backend, minutes=5.0 if minutes is None else minutes, seed=seed,
            canary=inject, batch_size=batch_size, workers=workers, gpus=gpus, max_batches=max_batches,
            shrink_minutes=shrink_minutes, follow_up_minutes=follow_up_minutes, triage=triage, profile=profile,
            max_bytes=max_bytes, configs=configs, known_file=known_file, quarantine_rate=quarantine_rate,
            shard=shard, shards=shards, coverage=coverage, guided=guided)
        if device == "cuda":
            require_cuda()
    if os.path.exists(corpus_path):  # its findings' programs are replayed and quarantined: validated first
        check_corpus(corpus_path)
    display = Display()
    with Corpus.open(corpus_path, create=resume_id is None) as corpus:
        if settings is None:
            campaign = Campaign.resume(corpus, resume_id, minutes, echo=display)
        else:
            campaign = Campaign(corpus, settings, echo=display)
        if resume_id is not None and campaign.settings.device == "cuda":  # a new one was checked above
            require_cuda()
        campaign.progress_every = display.every
        # a SIGTERM (scancel, a Slurm preemption or requeue, a soak's kill) ends it as Ctrl-C does:
        # the campaign is stored as interrupted, its batches in flight abandoned, and it resumes
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            campaign.run()
        except KeyboardInterrupt:
            display.close()
            click.echo("interrupted: campaign stored as interrupted; carry on with --resume "
                       f"{campaign.campaign_id}", err=True)
            sys.exit(130)
        display.close()


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt

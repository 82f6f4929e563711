"""``fuzzaoti launch``: one campaign as many tasks (processes here, or a Slurm job array)."""

from __future__ import annotations

import os
import sys

import click

from fuzzaoti.launch.tasks import EXECUTORS


@click.command(context_settings={"ignore_unknown_options": True})
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="Where the tasks run: processes on this machine, or a Slurm job array (through submitit).")
@click.option("--tasks", type=click.IntRange(min=1), default=2, show_default=True, help="Tasks (shards).")
@click.option("--minutes", type=click.FloatRange(min=0), default=None, help="Each task's campaign length.")
@click.option("--hours", type=click.FloatRange(min=0), default=None, help="The same, in hours.")
@click.option("--corpus-dir", "corpus_dir", required=True, type=click.Path(file_okay=False),
              help="The launch directory: launch.json, shard-K.db and shard-K.log per task, merged.db.")
@click.option("--seed", type=int, default=0, show_default=True, help="The campaign's seed (each task draws its own stream).")
@click.option("--gpus-per-task", type=click.IntRange(min=0), default=0, show_default=True,
              help="GPUs Slurm gives each task (a task uses all it gets, as one campaign does).")
@click.option("--partition", default=None, help="Slurm partition.")
@click.option("--detach", is_flag=True, help="Submit and return; '--status' shows the tasks later.")
@click.option("--resume", is_flag=True,
              help="Start again the tasks of --corpus-dir that did not finish: each resumes its own shard.")
@click.option("--status", is_flag=True, help="Show each task's campaign and the merged counts, and exit.")
@click.option("--plan-only", is_flag=True,
              help="Write DIR/launch.json and print the sbatch line for scripts/fuzzaoti.sbatch; submit nothing.")
@click.argument("fuzz_args", nargs=-1, type=click.UNPROCESSED)
def launch(executor, tasks, minutes, hours, corpus_dir, seed, gpus_per_task, partition, detach, resume, status,
           plan_only, fuzz_args) -> None:
    """Run one campaign as TASKS shards, each 'fuzzaoti fuzz --shard K/N' into its own corpus
    (FUZZ_ARGS, after '--', go to every task: e.g. -- --device cuda --profile large), and merge
    the shards into merged.db as they go."""
    from fuzzaoti.launch.executors import launch as start
    from fuzzaoti.launch.status import status_lines
    from fuzzaoti.launch.tasks import LaunchPlan, shard_finished

    if status:
        for line in status_lines(corpus_dir):
            click.echo(line)
        return
    if resume:
        plan = LaunchPlan.load(corpus_dir)
        left = [k for k in range(plan.tasks) if not shard_finished(plan.shard_path(k))]
        if not left:
            click.echo(f"every task of {corpus_dir} has finished; nothing to resume")
            return
        sys.exit(0 if start(plan, wait=not detach, only=left, echo=click.echo) else 1)
    length = hours * 60 if hours is not None else (5.0 if minutes is None else minutes)
    plan = LaunchPlan(corpus_dir, tasks, length, seed, executor, tuple(fuzz_args), gpus_per_task, partition)
    if plan_only:
        os.makedirs(corpus_dir, exist_ok=True)
        plan.save()
        gpus = f" --gpus-per-task={gpus_per_task}" if gpus_per_task else ""
        click.echo(f"sbatch --array=0-{tasks - 1}{gpus} --time={int(length) + 15} scripts/fuzzaoti.sbatch {corpus_dir}")
        return
    sys.exit(0 if start(plan, wait=not detach, echo=click.echo) else 1)


"""Programs checked per minute: fuzzaoti's campaign engine against a naive Hypothesis loop.

Both run on this machine, one after the other, for the same number of minutes:

* naive: a plain ``@given`` test that exports, AOTI-compiles, loads, runs and checks one
  generated program per example, in one process (what a hand-written Hypothesis test does),
  started again after a check that leaves it unusable (an illegal memory access);
* fuzzaoti: a campaign (worker processes, programs batched into one AOTI compile); one such arm
  per count given to ``--workers``, each against the same naive arm.

Prints programs checked per minute for each, their ratio, and the per-program cost against the
cost of one AOTI compile (the naive loop's seconds per program); then both rates again after
each arm's cold start (its first program or first batch), which a short run feels most; and
the naive loop's seconds per program at the config mix fuzzaoti checked against fuzzaoti's (the
raw rates compare different mixes when the naive loop's few programs happen to be dear or cheap
ones). ``--configs NAME`` has both arms draw one config set only: like against like.

    python3 scripts/bench_throughput.py --minutes 3 --device cpu
    python3 scripts/bench_throughput.py --minutes 8 --device cuda --configs default
    python3 scripts/bench_throughput.py --minutes 5 --device cuda --profile large
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, settings

from fuzzaoti.corpus.quarantine import DEFAULT_RATE


class _Done(BaseException):
    pass


@dataclass
class Arm:
    """One arm's result: programs checked in ``seconds``, and where its cold start ended (the
    first program of the naive loop, the first batch of the campaign: CUDA, Triton and compile
    caches warm up there, once per process, which a short run feels and a days-long one does not)."""

    programs: int
    seconds: float
    warm_programs: int = 0  # checked by the end of the cold start
    warm_at: float = 0.0
    warm_large_programs: int = 0  # large programs and runs checked by then
    warm_large_runs: int = 0
    set_aside: int = 0
    large_programs: int = 0  # checked at one run past a crossing at least (fuzzaoti.model.scale)
    large_runs: int = 0  # runs checked past a crossing
    compiles: int = 0  # the campaign's AOTI compiles (bisections included) and its worker restarts:
    restarts: int = 0  # few programs a compile, or many restarts, is where large-profile time goes
    by_configs: Counter = field(default_factory=Counter)  # seconds spent on each config set...
    programs_by_configs: Counter = field(default_factory=Counter)  # ...and programs

    def per_program(self, label: str) -> float:
        """Seconds per program of config set ``label``."""
        return self.by_configs[label] / self.programs_by_configs[label]

    def describe_configs(self) -> str:
        return ", ".join(f"{label} {self.per_program(label):.1f} s ({self.programs_by_configs[label]})"
                         for label, _ in self.by_configs.most_common())

    def per_minute(self) -> float:
        return self.rate(self.programs)

    def rate(self, count: int) -> float:
        """``count`` (programs, large programs, large runs) per minute of this arm."""
        return 60 * count / max(self.seconds, 1e-9)

    def warm_per_minute(self) -> float:
        return self.warm_rate(self.programs, self.warm_programs)

    def warm_rate(self, count: int, by_warm: int) -> float:
        """``count`` per minute after the cold start, of which ``by_warm`` were checked in it."""
        return 60 * (count - by_warm) / max(self.seconds - self.warm_at, 1e-9)


def naive(minutes: float, device: str, seed: int, config_sets: list[dict], profile: str = "small",
          max_bytes: int | None = None) -> Arm:
    """The naive loop, in a process of its own that is started again after a check that leaves it
    unusable (``fatal_for_process``: an illegal memory access, and on a GPU a wrong value).

    A hand-written test's process is done at that point: CUDA's context stays broken, and every
    later example fails at once without compiling anything. Its user reruns it, paying the cold
    start again; so does this arm (a new Hypothesis seed each time, as a rerun without a fixed
    seed draws new programs). An H100 bench whose naive loop went on in its poisoned process
    counted 856 "programs" in 6 minutes, 0.4 s each.
    """
    arm, started = Arm(0, 0.0), time.monotonic()
    deadline = started + minutes * 60
    restarts = 0
    while True:
        part, poisoned = _naive_process(started, deadline, device, seed + restarts, config_sets, profile, max_bytes)
        _add(arm, part)
        if not poisoned or time.monotonic() >= deadline:
            break
        restarts += 1
    arm.seconds = time.monotonic() - started
    arm.restarts = restarts
    return arm


def _add(arm: Arm, part: Arm) -> None:
    """Counts of one naive process added to the arm's; the cold start is the first process's."""
    if not arm.programs and part.programs:
        arm.warm_programs, arm.warm_at = part.warm_programs, part.warm_at
        arm.warm_large_programs, arm.warm_large_runs = part.warm_large_programs, part.warm_large_runs
    arm.programs += part.programs
    arm.large_programs += part.large_programs
    arm.large_runs += part.large_runs
    arm.by_configs.update(part.by_configs)
    arm.programs_by_configs.update(part.programs_by_configs)


def _naive_process(started: float, deadline: float, device: str, seed: int, config_sets: list[dict],
                   profile: str, max_bytes: int | None) -> tuple[Arm, bool]:
    """One naive process until ``deadline`` (monotonic seconds, one clock for every process),
    or until a check leaves it unusable: its counts, and whether that happened (a process that
    died, a segfault say, counts too). Its times are from ``started``, the arm's start."""
    spec = dict(started=started, deadline=deadline, device=device, seed=seed, config_sets=config_sets,
                profile=profile, max_bytes=max_bytes)
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--naive-process", json.dumps(spec)],
                             stdout=subprocess.PIPE, text=True)
    last: dict = {"arm": {}, "poisoned": True}  # a process that dies before its first line
    for line in child.stdout:
        if line.startswith(_LINE):
            last = json.loads(line[len(_LINE):])
    if child.wait() != 0:
        last["poisoned"] = True
    fields = last["arm"]
    part = Arm(**{**fields, "by_configs": Counter(fields.get("by_configs", {})),
                  "programs_by_configs": Counter(fields.get("programs_by_configs", {}))}) if fields else Arm(0, 0.0)
    return part, last["poisoned"]


_LINE = "naive-process "  # the child's progress lines on its stdout (whatever else prints there is passed over)


def _serve_naive_process(spec: dict) -> None:
    """The child of ``_naive_process``: the plain ``@given`` loop, one program per example,
    compiled and checked in this process. Prints its counts after each program; stops at the
    deadline (after one program at least: a process that only imported torch measured nothing)
    or after a check that leaves the process unusable."""
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    from fuzzaoti import compat
    from fuzzaoti.strategies import cases, programs
    from fuzzaoti.workers.execute import check_batch
    from fuzzaoti.workers.pool_stats import configs_label
    from fuzzaoti.workers.protocol import Job

    faulthandler.enable()  # a compiled program that segfaults ends this process: say where
    compat.set_default_cxx()  # the same compiler as the workers
    device, profile, max_bytes, started = spec["device"], spec["profile"], spec["max_bytes"], spec["started"]
    arm = Arm(0, 0.0)
    # the same mix of compile configs as the campaign draws (dear ones less often, or just the
    # one set --configs names), so both arms check programs of the same kinds
    drawn = st.sampled_from(spec["config_sets"]).flatmap(
        lambda c: cases(programs(device=device, configs=c, profile=profile, max_bytes=max_bytes), profile=profile,
                        max_bytes=max_bytes))

    def report(poisoned: bool) -> None:
        arm.seconds = time.monotonic() - started
        fields = {**vars(arm), "by_configs": dict(arm.by_configs), "programs_by_configs": dict(arm.programs_by_configs)}
        print(_LINE + json.dumps({"arm": fields, "poisoned": poisoned}), flush=True)  # (asdict miscopies Counters)

    @settings(max_examples=10**6, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(spec["seed"])
    @given(drawn)
    def one(case):
        if time.monotonic() > spec["deadline"] and arm.programs:
            raise _Done
        job = Job(backend="aoti", device=device, cases=(case,), max_bytes=max_bytes)
        began = time.monotonic()
        result = check_batch(job, lambda stage: None)
        large = result.outcomes()[0].runs_large
        arm.large_runs += large
        arm.large_programs += large > 0
        label = configs_label(case.program.configs)
        arm.by_configs[label] += time.monotonic() - began
        arm.programs_by_configs[label] += 1
        arm.programs += 1
        if arm.programs == 1:
            arm.warm_programs, arm.warm_at = 1, time.monotonic() - started
            arm.warm_large_programs, arm.warm_large_runs = arm.large_programs, arm.large_runs
        poisoned = result.fatal(device)
        report(poisoned)
        if poisoned:
            raise _Done

    try:
        one()
    except _Done:
        pass


def fuzzaoti(minutes: float, device: str, seed: int, batch_size: int | None, workers: int | None,
             path: str | None, quarantine_rate: float, configs: str | None, profile: str = "small",
             max_bytes: int | None = None) -> Arm:
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.corpus import Corpus

    path = path or os.path.join(tempfile.mkdtemp(prefix="fuzzaoti-bench-"), "bench.db")
    started = time.monotonic()
    with Corpus.open(path, create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(device=device, minutes=minutes, seed=seed, batch_size=batch_size,
                                                     workers=workers, shrink_minutes=0, triage=False,
                                                     quarantine_rate=quarantine_rate, configs=configs,
                                                     profile=profile, max_bytes=max_bytes),
                            echo=lambda line: print("  fuzzaoti |", line, file=sys.stderr, flush=True))
        counts = campaign.run()
    from fuzzaoti.campaign.settings import Mark

    warm = campaign.timeline[0] if campaign.timeline else Mark(0.0, 0, 0, 0)
    arm = Arm(counts.programs, time.monotonic() - started, warm_programs=warm.programs, warm_at=warm.seconds,
              warm_large_programs=warm.programs_large, warm_large_runs=warm.runs_large, set_aside=counts.quarantined,
              large_programs=counts.programs_large, large_runs=counts.runs_large)
    stats = campaign.pool.stats
    arm.compiles, arm.restarts = stats.compiles, campaign.pool.restarts
    for label, seconds in stats.configs_s.items():  # wall seconds: worker-seconds over the workers
        arm.by_configs[label] = seconds / len(campaign.pool.workers)
        arm.programs_by_configs[label] = stats.configs_programs[label]
    return arm


def at_fuzzaotis_mix(base: Arm, fuzz: Arm) -> str:
    """The naive loop's seconds per program at the config mix fuzzaoti checked (its own seconds
    per program of each config set, weighted by fuzzaoti's counts) against fuzzaoti's: the two
    arms' raw rates compare programs of different mixes. Hypothesis draws configs in long runs
    (seed 0's first 96 naive examples all drew the default configs, the cheapest), and one dear
    set (native_matmul: 28 s a program alone on the H200 against 6 for a default one) moves a
    naive arm of 60 programs a lot. Both arms' cold starts stay in."""
    counts = fuzz.programs_by_configs
    if not fuzz.programs or not counts:
        return "at fuzzaoti's config mix: fuzzaoti checked no program"
    missing = [label for label in counts if not base.programs_by_configs[label]]
    if missing:
        return f"at fuzzaoti's config mix: the naive loop checked no {', '.join(missing)} program"
    naive_s = sum(n * base.per_program(label) for label, n in counts.items()) / sum(counts.values())
    fuzz_s = fuzz.seconds / fuzz.programs
    return (f"at fuzzaoti's config mix ({', '.join(f'{n} {label}' for label, n in counts.most_common())}): naive "
            f"{naive_s:.1f} s, fuzzaoti {fuzz_s:.2f} s per program, {naive_s / max(fuzz_s, 1e-9):.1f}x "
            f"(cold starts included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=3.0, help="minutes for each of the two runs")
    parser.add_argument("--naive-minutes", type=float, default=None,
                        help="minutes for the naive arm alone (default: --minutes): its rate is steady (one "
                             "compile a program), so a shorter baseline leaves a short GPU lease more for fuzzaoti")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--batch-size", type=int, default=None, help="fixed batch size (default: adaptive)")
    parser.add_argument("--workers", type=int, nargs="+", default=None,
                        help="fuzzaoti's worker processes (default: the campaign's own default); several "
                             "counts run one fuzzaoti arm each, after the one naive arm, for an A/B in one run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quarantine-rate", type=float, default=DEFAULT_RATE,
                        help="the campaign's --quarantine-rate (1: check every program that would trip a known "
                             "bug, each alone, as the naive loop does)")
    parser.add_argument("--configs", default=None, metavar="NAME",
                        help="both arms draw only this compile config set (fuzz --configs): a ratio of like with "
                             "like, which the mix of all sets gives only over long runs (Hypothesis draws a "
                             "config set in long runs of examples, and a naive arm checks few)")
    parser.add_argument("--profile", choices=["small", "large"], default="small",
                        help="both arms draw this profile; 'large' also reports large programs and runs (past "
                             "2**31 elements or a 65535 batch) per minute")
    parser.add_argument("--max-bytes", type=int, default=None,
                        help="bytes of one checked run, both arms (default: the profile's; large on cuda: the GPU's)")
    parser.add_argument("--corpus", default=None,
                        help="keep the fuzzaoti run's corpus (its findings) here (default: a temporary one); with "
                             "several --workers counts, one corpus per arm: PATH with .<workers>w before its extension")
    args = parser.parse_args()
    from fuzzaoti.errors import InvalidArgument
    from fuzzaoti.strategies import batch_config_sets

    try:
        config_sets = batch_config_sets(args.device, args.configs)
    except InvalidArgument as exc:
        parser.error(str(exc))

    if args.max_bytes is None:  # both arms draw, and run, within the campaign's own budget
        from fuzzaoti.workers.placement import default_max_bytes, default_workers

        args.max_bytes = default_max_bytes(args.device, args.profile, None, default_workers(args.device, None))
    naive_minutes = args.minutes if args.naive_minutes is None else args.naive_minutes
    base = naive(naive_minutes, args.device, args.seed, config_sets, args.profile, args.max_bytes)
    print(f"naive loop: {base.programs} programs in {base.seconds:.0f} s = {base.per_minute():.1f} programs/min "
          f"({base.seconds / max(base.programs, 1):.1f} s per program, about one AOTI compile each; by configs: "
          f"{base.describe_configs()}; {base.restarts} restarts of its process after a check that left it "
          f"unusable)", flush=True)
    from fuzzaoti.workers.placement import default_workers

    counts = args.workers or [default_workers(args.device, None)]
    for workers in counts:
        fuzz = fuzzaoti(args.minutes, args.device, args.seed, args.batch_size, workers,
                        arm_corpus(args.corpus, workers, len(counts)), args.quarantine_rate, args.configs,
                        args.profile, args.max_bytes)
        report(base, fuzz, args, workers)


def arm_corpus(path: str | None, workers: int, arms: int) -> str | None:
    """The corpus of the arm with ``workers`` workers: ``path`` itself when it is the only
    arm, else ``path`` with ``.<workers>w`` before its extension. Each arm starts from an empty
    corpus, since a campaign replays the failing batches stored in its corpus first and sets
    aside programs that match its findings; a shared corpus would hand the second arm the first
    arm's failures."""
    if path is None or arms == 1:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}.{workers}w{ext}"


def report(base: Arm, fuzz: Arm, args: argparse.Namespace, workers: int) -> None:
    """One fuzzaoti arm against the naive one: raw rates, after the cold starts, at fuzzaoti's mix."""
    print(f"fuzzaoti:   {fuzz.programs} programs in {fuzz.seconds:.0f} s = {fuzz.per_minute():.1f} programs/min "
          f"({fuzz.seconds / max(fuzz.programs, 1):.2f} s per program; {fuzz.set_aside} more drawn and set aside by "
          f"the quarantine at rate {args.quarantine_rate:g}, not counted)", flush=True)
    ratio = fuzz.per_minute() / max(base.per_minute(), 1e-9)
    per_compile = (fuzz.seconds / max(fuzz.programs, 1)) / max(base.seconds / max(base.programs, 1), 1e-9)
    print(f"ratio: fuzzaoti checks {ratio:.1f}x the programs per minute of the naive loop; "
          f"per-program cost = {per_compile:.2f} of one AOTI compile "
          f"(device {args.device}, configs {args.configs or 'all'}, batch {args.batch_size or 'adaptive'}, "
          f"workers {workers}, {args.minutes:g} min each)")
    print(f"after the cold start (the naive loop's first program, {base.warm_at:.0f} s; fuzzaoti's first batch, "
          f"{fuzz.warm_at:.0f} s): naive {base.warm_per_minute():.1f} programs/min, fuzzaoti "
          f"{fuzz.warm_per_minute():.1f}/min, {fuzz.warm_per_minute() / max(base.warm_per_minute(), 1e-9):.1f}x")
    print(at_fuzzaotis_mix(base, fuzz), flush=True)
    if args.profile == "large":
        print(f"large (past 2**31 elements, a 65535 batch or an index past 2**31): naive "
              f"{base.rate(base.large_programs):.1f} programs and {base.rate(base.large_runs):.1f} runs/min; "
              f"fuzzaoti {fuzz.rate(fuzz.large_programs):.1f} programs and {fuzz.rate(fuzz.large_runs):.1f} "
              f"runs/min ({fuzz.large_programs} programs, {fuzz.large_runs} runs; {fuzz.compiles} compiles, "
              f"{fuzz.programs / max(fuzz.compiles, 1):.1f} programs a compile; {fuzz.restarts} worker restarts)",
              flush=True)
        print(f"large after the cold start: naive {base.warm_rate(base.large_programs, base.warm_large_programs):.1f} "
              f"programs and {base.warm_rate(base.large_runs, base.warm_large_runs):.1f} runs/min; fuzzaoti "
              f"{fuzz.warm_rate(fuzz.large_programs, fuzz.warm_large_programs):.1f} programs and "
              f"{fuzz.warm_rate(fuzz.large_runs, fuzz.warm_large_runs):.1f} runs/min", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--naive-process"]:
        _serve_naive_process(json.loads(sys.argv[2]))
    else:
        main()

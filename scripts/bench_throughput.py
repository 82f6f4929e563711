"""Programs checked per minute: fuzzaoti's campaign engine against a naive Hypothesis loop.

Both run on this machine, one after the other, for the same number of minutes:

* naive: a plain ``@given`` test that exports, AOTI-compiles, loads, runs and checks one
  generated program per example, in one process (what a hand-written Hypothesis test does);
* fuzzaoti: a campaign (worker processes, programs batched into one AOTI compile).

Prints programs checked per minute for each, their ratio, and the per-program cost against the
cost of one AOTI compile (the naive loop's seconds per program).

    python3 scripts/bench_throughput.py --minutes 3 --device cpu
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from hypothesis import HealthCheck, Phase, given, settings

from fuzzaoti.quarantine import DEFAULT_RATE


class _Done(BaseException):
    pass


def naive(minutes: float, device: str, seed: int) -> tuple[int, float]:
    from hypothesis import seed as hypothesis_seed

    from hypothesis import strategies as st

    from fuzzaoti.execute import check_batch
    from fuzzaoti.strategies import batch_config_sets, cases, programs

    done, started = [0], time.monotonic()
    # the same mix of compile configs as the campaign draws (dear ones less often), so both
    # arms check programs of the same kinds
    drawn = st.sampled_from(batch_config_sets(device)).flatmap(lambda c: cases(programs(device=device, configs=c)))

    @settings(max_examples=10**6, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(drawn)
    def one(case):
        if time.monotonic() - started > minutes * 60:
            raise _Done
        job = {"backend": "aoti", "device": device,
               "cases": [{"program": case.program.to_json(), "runs": case.run_dicts()}]}
        check_batch(job, lambda stage: None)
        done[0] += 1

    try:
        one()
    except _Done:
        pass
    return done[0], time.monotonic() - started


def fuzzaoti(minutes: float, device: str, seed: int, batch_size: int | None, workers: int | None,
             path: str | None, quarantine_rate: float) -> tuple[int, int, float]:
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.corpus import Corpus

    path = path or os.path.join(tempfile.mkdtemp(prefix="fuzzaoti-bench-"), "bench.db")
    started = time.monotonic()
    with Corpus.open(path, create=True) as corpus:
        counts = Campaign(corpus, CampaignSettings(device=device, minutes=minutes, seed=seed, batch_size=batch_size,
                                                   workers=workers, shrink_minutes=0, triage=False,
                                                   quarantine_rate=quarantine_rate),
                          echo=lambda line: print("  fuzzaoti |", line, file=sys.stderr, flush=True)).run()
    return counts.programs, counts.quarantined, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=3.0, help="minutes for each of the two runs")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--batch-size", type=int, default=None, help="fixed batch size (default: adaptive)")
    parser.add_argument("--workers", type=int, default=None,
                        help="fuzzaoti's worker processes (default: the campaign's own default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quarantine-rate", type=float, default=DEFAULT_RATE,
                        help="the campaign's --quarantine-rate (1: check every program that would trip a known "
                             "bug, each alone, as the naive loop does)")
    parser.add_argument("--corpus", default=None,
                        help="keep the fuzzaoti run's corpus (its findings) here (default: a temporary one)")
    args = parser.parse_args()
    from fuzzaoti import compat

    compat.set_default_cxx()  # the naive loop compiles in this process: same compiler as the workers

    n_naive, t_naive = naive(args.minutes, args.device, args.seed)
    print(f"naive loop: {n_naive} programs in {t_naive:.0f} s = {60 * n_naive / t_naive:.1f} programs/min "
          f"({t_naive / max(n_naive, 1):.1f} s per program, about one AOTI compile each)", flush=True)
    from fuzzaoti.campaign import default_workers

    workers = args.workers or default_workers(args.device, None)
    n_fuzz, set_aside, t_fuzz = fuzzaoti(args.minutes, args.device, args.seed, args.batch_size, workers,
                                         args.corpus, args.quarantine_rate)
    print(f"fuzzaoti:   {n_fuzz} programs in {t_fuzz:.0f} s = {60 * n_fuzz / t_fuzz:.1f} programs/min "
          f"({t_fuzz / max(n_fuzz, 1):.2f} s per program; {set_aside} more drawn and set aside by the quarantine "
          f"at rate {args.quarantine_rate:g}, not counted)", flush=True)
    ratio = (n_fuzz / t_fuzz) / max(n_naive / t_naive, 1e-9)
    per_compile = (t_fuzz / max(n_fuzz, 1)) / max(t_naive / max(n_naive, 1), 1e-9)
    print(f"ratio: fuzzaoti checks {ratio:.1f}x the programs per minute of the naive loop; "
          f"per-program cost = {per_compile:.2f} of one AOTI compile "
          f"(device {args.device}, batch {args.batch_size or 'adaptive'}, workers {workers}, {args.minutes:g} min each)")


if __name__ == "__main__":
    main()

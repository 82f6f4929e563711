"""What one AOTI compile costs against the number of programs merged into it.

The adaptive batch size (``fuzzaoti.workers.batch_size``) and the large profile's ceiling
(``strategies.profiles``) rest on a compile's cost being mostly fixed: export, the C++ build
and load are paid once per module, whatever it holds. This measures it: one batch of drawn
programs (one config set; those that fail to export alone left out), compiled through the
AOTI backend in modules of each ``--sizes`` count, each module's export, compile and load
timed; it prints seconds a compile and a program at each size, and each size's seconds a
program against one program alone (the baseline, in the same run). Nothing is run or checked:
the throughput bench does that.

    python3 scripts/bench_compile.py --profile large --device cpu --sizes 1 8
    python3 scripts/bench_compile.py --profile large --device cuda --sizes 1 4 16 32

(On CPU, torch 2.13, 2 cores, seed 0: one large program 5.5 s a compile, 16 11.5 s, 32 15.4 s:
0.48 s a program at 32, 11.4x one alone.)

``--coverage`` prices ``fuzz --coverage`` instead: each module compiled twice, plainly and with
its Inductor lines traced (``fuzzaoti.coverage.record``), Inductor's caches off for both, and
the traced compiles' seconds against the plain ones'.

    python3 scripts/bench_compile.py --profile small --device cpu --sizes 8 --repeats 3 --coverage
"""

from __future__ import annotations

import argparse
import tempfile

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from fuzzaoti.compile import merge, render
from fuzzaoti.compile.backends import StageFailure, get_backend
from fuzzaoti.model.concrete import input_specs
from fuzzaoti.model.inputs import make_inputs
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.strategies import batch_config_sets, batches, get_profile
from fuzzaoti.workers.clock import StageClock  # the same clock the workers keep


def draw_programs(count: int, device: str, profile: str, max_bytes: int | None, configs: dict, seed: int) -> list:
    """``count`` programs of one drawn batch (as a campaign draws it), less those that fail to export."""
    got: list = []

    @settings(max_examples=1, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(batches([configs], count, device, profile, max_bytes, 4))
    def one(cases):
        got.extend(c.program for c in cases)

    one()
    return [p for p in got if exports(p, device)]


def _example(program, device: str) -> list:
    return make_inputs(input_specs(program, program.hint_env(), example=True), 0, device)


def exports(program, device: str) -> bool:
    """Whether ``program`` exports alone: one that trips a known export bug (the flatten
    constraint, say) would fail every module it is merged into."""
    try:
        get_backend("aoti").export(render.load_program(program), _example(program, device))
    except Exception:  # noqa: BLE001
        return False
    return True


def compile_module(programs: list, device: str) -> dict[str, float]:
    """Seconds in each stage of one AOTI compile of ``programs`` merged into one module (the
    workers' own stage clock)."""
    clock = StageClock(lambda stage: None)
    merged = merge.merge(programs)
    example = sum((_example(p, device) for p in programs), [])
    with tempfile.TemporaryDirectory(prefix="fuzzaoti-bench-") as workdir:
        get_backend("aoti").prepare(merged, render.load_program(merged), example, device, workdir, clock)
    return clock.totals()


def coverage_ratio(groups: list, device: str) -> None:
    """Each group compiled plainly, then traced (``fuzz --coverage``), caches off: the ratio."""
    import torch

    from fuzzaoti.coverage import record

    plain = traced = 0.0
    with torch._inductor.config.patch(force_disable_caches=True):
        for group in groups:
            try:
                record.enable(False)
                a = sum(compile_module(group, device).values())
                record.enable(True)
                b = sum(compile_module(group, device).values())
            except StageFailure as failure:  # a compile bug of one member: timed no further
                print(f"  {len(group)} programs: failed ({str(failure)[:160]})", flush=True)
                continue
            lines = sum(map(len, record.take().values()))
            print(f"  {len(group)} programs: plain {a:.1f} s, traced {b:.1f} s ({lines} new Inductor lines)", flush=True)
            plain, traced = plain + a, traced + b
    print(f"coverage: traced compiles took {traced / max(plain, 1e-9):.2f}x the plain ones' time", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--profile", choices=["small", "large"], default="large")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8], help="programs a module, each size timed")
    parser.add_argument("--repeats", type=int, default=2, help="modules compiled at each size")
    parser.add_argument("--configs", default="default", help="the config set drawn (default, max_autotune ...)")
    parser.add_argument("--max-bytes", type=int, default=None, help="the draw's byte budget [default: the profile's]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--coverage", action="store_true", help="price 'fuzz --coverage': plain against traced compiles")
    args = parser.parse_args()
    from fuzzaoti import compat

    compat.set_default_cxx()  # compiles in this process: the workers' compiler (the GPU image's g++ 13 segfaults)
    try:
        (configs,) = batch_config_sets(args.device, args.configs)
    except InvalidArgument as exc:
        parser.error(str(exc))
    need = max(size * args.repeats for size in args.sizes)
    programs = draw_programs(min(need, get_profile(args.profile).draw_batch), args.device, args.profile,
                             args.max_bytes, configs, args.seed)
    compile_module(programs[:1], args.device)  # untimed: a process's first compile warms its caches
    if args.coverage:
        return coverage_ratio([[programs[(r * size + k) % len(programs)] for k in range(size)]
                               for size in args.sizes for r in range(args.repeats)], args.device)
    baseline = None
    for size in args.sizes:
        seconds = []
        for r in range(args.repeats):
            group = [programs[(r * size + k) % len(programs)] for k in range(size)]
            try:
                stages = compile_module(group, args.device)
            except StageFailure as failure:  # a compile bug of one member: timed no further
                print(f"  {size} programs: failed ({str(failure)[:160]})", flush=True)
                continue
            seconds.append(sum(stages.values()))
            print(f"  {size} programs: {seconds[-1]:.1f} s ({', '.join(f'{s} {v:.1f}' for s, v in stages.items())})",
                  flush=True)
        if not seconds:
            continue
        per_program = sum(seconds) / len(seconds) / size
        baseline = per_program if baseline is None else baseline
        print(f"{size:3d} programs a module: {sum(seconds) / len(seconds):6.1f} s a compile, {per_program:5.2f} s a "
              f"program, {baseline / per_program:4.1f}x the first size's programs per compile-second", flush=True)


if __name__ == "__main__":
    main()

"""The benchmark scripts: bench_compile.py and bench_restart.py on real compiles; bench_throughput.py's report, every
line it prints for both profiles, from arms of made-up counts (its measurements need minutes of
real compiles; its arithmetic does not), and its naive arm."""

import argparse
import importlib.util
import os
import sys
import time

import pytest


def _bench(name="bench_throughput"):
    path = os.path.join(os.path.dirname(__file__), "..", "scripts", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_large_report_gives_large_programs_and_runs_per_minute(capsys):
    # the H200's first large-profile bench (2026-12-04) died here, after both arms had run
    bench = _bench()
    base = bench.Arm(programs=1, seconds=87.0)
    fuzz = bench.Arm(programs=6, seconds=150.0, large_programs=3, large_runs=10, compiles=4, restarts=2,
                     warm_programs=2, warm_at=90.0, warm_large_programs=1, warm_large_runs=4)
    args = argparse.Namespace(device="cuda", configs=None, batch_size=None, minutes=1.0, profile="large",
                              quarantine_rate=0.05)
    bench.report(base, fuzz, args, 3)
    out = capsys.readouterr().out
    assert "fuzzaoti 1.2 programs and 4.0 runs/min (3 programs, 10 runs; 4 compiles, 1.5 programs a compile; " \
        "2 worker restarts)" in out
    # a short arm's cold start (its first batch) weighs on the raw rates: 2 programs and 6 runs
    # checked in the 60 s after it
    assert "large after the cold start: naive 0.0 programs and 0.0 runs/min; fuzzaoti 2.0 programs and " \
        "6.0 runs/min" in out
    bench.report(base, fuzz, argparse.Namespace(**{**vars(args), "profile": "small"}), 3)
    assert "large (" not in capsys.readouterr().out


@pytest.mark.aoti
def test_the_naive_arm_compiles_and_checks_one_program_at_a_time():
    # the arm the speed-up is measured against: session 12's worker protocol change broke it
    # (it built a wire dict by hand), and the H200 bench died in it before the fuzzaoti arm ran
    from fuzzaoti.strategies import batch_config_sets

    bench = _bench()
    arm = bench.naive(0.05, "cpu", 7, batch_config_sets("cpu", "default"))
    assert arm.programs == 1  # the first compile outlasts the 3 s: no second program starts
    assert arm.programs_by_configs["default"] == 1 and arm.per_program("default") > 0


def test_the_naive_arm_starts_a_new_process_after_one_is_poisoned(monkeypatch):
    # an H100 bench's naive loop went on in a process an illegal memory access had broken: 856
    # "programs" in 6 minutes, 0.4 s each; a user would rerun the test instead
    bench = _bench()
    parts = iter([(bench.Arm(2, 40.0, warm_programs=1, warm_at=30.0, large_programs=1, large_runs=5), True),
                  (bench.Arm(3, 90.0, warm_programs=1, warm_at=60.0, large_runs=2), False)])
    seeds = []

    def process(started, deadline, device, seed, config_sets, profile, max_bytes):
        seeds.append(seed)
        return next(parts)

    monkeypatch.setattr(bench, "_naive_process", process)
    arm = bench.naive(5, "cuda", 7, [{}])
    assert seeds == [7, 8]  # a rerun draws new programs
    assert (arm.programs, arm.large_programs, arm.large_runs, arm.restarts) == (5, 1, 7, 1)
    assert (arm.warm_programs, arm.warm_at) == (1, 30.0)  # the cold start is the first process's


@pytest.mark.aoti
def test_the_compile_bench_times_real_modules_of_each_size(monkeypatch, capsys):
    # the measurement the large profile's batch ceiling rests on (strategies.profiles)
    bench = _bench("bench_compile")
    monkeypatch.setattr(sys, "argv", ["bench_compile.py", "--profile", "small", "--sizes", "1", "3", "--repeats", "1"])
    # it compiles in its own process: with the workers' compiler (on the H100 node it ran g++ 13
    # and segfaulted loading its first module)
    monkeypatch.setenv("FUZZAOTI_CXX", "g++")
    monkeypatch.setenv("CXX", "not-this-one")
    bench.main()
    assert os.environ["CXX"] == "g++"
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0].strip() for line in lines if "a module" in line] == \
        ["1 programs a module", "3 programs a module"], lines
    assert all("compile" in line for line in lines if line.startswith("  ")), lines  # each stage timed


@pytest.mark.aoti
def test_the_restart_bench_replaces_a_crashed_worker_by_its_warm_standby():
    # the arm with a standby must time a warm replacement, or its ratio says nothing
    bench = _bench("bench_restart")
    seconds, warm = bench.arm("cpu", 1, standby=True)
    assert len(seconds) == 1 and seconds[0] > 0 and warm == 1


def test_the_first_finding_bench_stops_a_loop_at_its_first_finding_line_or_at_the_limit():
    bench = _bench("bench_first_finding")
    lines = "import time\nprint('batch 1', flush=True)\nprint('  NEW finding 1: compare/mismatch', flush=True)\ntime.sleep(60)"
    began = time.monotonic()
    seconds = bench._first([sys.executable, "-c", lines], 30, lambda line: "NEW finding" in line, "test")
    assert seconds is not None and time.monotonic() - began < 20  # the sleeping child was killed
    assert bench._first([sys.executable, "-c", "print('batch 1')"], 30, lambda line: "NEW" in line, "test") is None
    assert bench._first([sys.executable, "-c", "import time; time.sleep(60)"], 1, lambda line: True, "t") is None
    died = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    assert bench._first(died, 30, lambda line: False, "t") is None  # (a campaign's worker death is a line)
    assert bench._first(died, 30, lambda line: False, "t", death_counts=True) is not None
    from fuzzaoti.corpus.known_bugs import builtin_bugs

    pattern = next(b.pattern for b in builtin_bugs() if "[" not in b.pattern)  # (no character class:
    known = pattern.replace("*", "x").replace("?", "x")  # a signature its glob fits)
    assert bench._unknown("compare/mismatch/a new bug via bmm") and not bench._unknown(known)

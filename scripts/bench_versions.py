#!/usr/bin/env python3
"""Distinct programs checked per minute: this working tree's campaign against another revision's.

Each arm is ``fuzzaoti fuzz`` (no shrinking, no triage, a fresh corpus) for the same minutes and
seed, one after the other on this machine; the baseline runs from ``git archive REV`` of this
repository, the candidate from this checkout. Both arms count the same thing, by the same hook
on the worker pool's ``submit`` (a method every revision has): the distinct programs that came
back checked, and all checks with repeats. Hypothesis draws a program again when its choices
repeat (about half of a 10-minute CPU campaign's draws); a revision that compiles the repeats
counts them as programs, one that skips them does not, so the raw counts of two such revisions
compare different things and the distinct counts the same one.

    python3 scripts/bench_versions.py --baseline b4b818a --minutes 10 --seed 5150
    python3 scripts/bench_versions.py --baseline HEAD~3 --minutes 4 --device cuda

Prints one line per arm and the ratio of their distinct programs per minute (candidate over
baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

_LINE = "bench-versions "  # the arm's count, on its stdout

# run in the arm's process, with the revision's package first on sys.path: counts at exit what
# the pool's submitted batches came back with
_HOOK = r"""
import atexit, hashlib, json, runpy, sys, time
from fuzzaoti.workers import pool as _pool

started, batches = time.monotonic(), []
_submit = _pool.WorkerPool.submit

def submit(self, cases, *args, **kwargs):
    batch = _submit(self, cases, *args, **kwargs)
    batches.append((list(cases), batch))
    return batch

def report():
    keys = [hashlib.sha1(repr(c.program).encode()).hexdigest()
            for cases, batch in batches for c, r in zip(cases, batch.results) if r is not None]
    print(%r + json.dumps({"checked": len(keys), "distinct": len(set(keys)),
                          "seconds": time.monotonic() - started}), flush=True)

_pool.WorkerPool.submit = submit
atexit.register(report)
sys.argv = ["fuzzaoti"] + sys.argv[1:]
runpy.run_module("fuzzaoti.cli", run_name="__main__")
""" % _LINE


def arm(source: str, minutes: float, seed: int, device: str, label: str) -> dict:
    """One campaign from the package under ``source``: its counts, echoed as it goes."""
    corpus = os.path.join(tempfile.mkdtemp(prefix="fuzzaoti-versions-"), "c.db")
    command = [sys.executable, "-c", _HOOK, "fuzz", "--device", device, "--minutes", str(minutes),
               "--seed", str(seed), "--shrink-minutes", "0", "--no-triage", "--corpus", corpus]
    env = {**os.environ, "PYTHONPATH": source + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                             cwd=tempfile.gettempdir())
    counts = None
    for line in child.stdout:
        if line.startswith(_LINE):
            counts = json.loads(line[len(_LINE):])
        else:
            print(f"  {label} | {line.rstrip()}", file=sys.stderr, flush=True)
    child.wait()
    if counts is None:
        sys.exit(f"bench_versions: the {label} arm printed no count (exit {child.returncode})")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="the revision to compare against (a git rev)")
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes for each arm")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    baseline = tempfile.mkdtemp(prefix="fuzzaoti-baseline-")
    archive = subprocess.run(["git", "-C", root, "archive", args.baseline], capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"bench_versions: git archive {args.baseline}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", baseline], input=archive.stdout, check=True)
    rates = {}
    for label, source in ((f"baseline {args.baseline}", baseline), ("candidate (this tree)", root)):
        began = time.monotonic()
        counts = arm(source, args.minutes, args.seed, args.device, label)
        per_min = 60 * counts["distinct"] / max(counts["seconds"], 1e-9)
        rates[label] = per_min
        print(f"{label}: {counts['distinct']} distinct programs checked ({counts['checked']} checks with repeats) "
              f"in {counts['seconds']:.0f} s = {per_min:.1f} distinct programs/min "
              f"(arm wall {time.monotonic() - began:.0f} s)", flush=True)
    base, cand = rates.values()
    print(f"ratio: the candidate checks {cand / max(base, 1e-9):.2f}x the baseline's distinct programs per minute "
          f"(device {args.device}, seed {args.seed}, {args.minutes:g} min each)", flush=True)


if __name__ == "__main__":
    main()

"""Preemption, as Slurm does it: kill a running campaign again and again, resume it each time,
and check that nothing committed is ever lost.

Each round starts the campaign (the first time) or resumes it, lets it run for a random while,
snapshots the corpus (findings with their hits, the campaign's counts), then kills it: SIGKILL
(``--mode kill``: the OOM killer, a node lost) or SIGTERM with a grace period before SIGKILL
(``--mode term``: what scancel and a requeue send). After each kill the corpus must pass
``pragma integrity_check``, hold every finding of the snapshot with at least its hits, and the
campaign's counts must not have gone down. A scripted fault (the fake backend's, or a canary
with real AOTI) makes findings to lose.

    python3 scripts/soak_kill.py --kills 20 --mode kill
    python3 scripts/soak_kill.py --kills 20 --mode term --grace 10
    python3 scripts/soak_kill.py --kills 3 --backend aoti --inject index-shift --min-s 20 --max-s 60
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

COUNTS = ("batches", "programs", "runs_checked", "failures")


def snapshot(db: str) -> tuple[dict[int, int], dict[str, int]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        findings = dict(conn.execute("select id, hits from findings"))
        row = conn.execute(f"select {', '.join(COUNTS)} from campaigns where id = 1").fetchone()
        return findings, dict(zip(COUNTS, row or (0,) * len(COUNTS)))
    except sqlite3.Error:
        return {}, dict.fromkeys(COUNTS, 0)
    finally:
        conn.close()


def has_campaign(db: str) -> bool:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("select count(*) from campaigns").fetchone()[0] > 0
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def check(db: str, before: tuple[dict[int, int], dict[str, int]]) -> list[str]:
    problems = []
    conn = sqlite3.connect(db)
    try:
        if conn.execute("pragma integrity_check").fetchone() != ("ok",):
            problems.append("integrity_check failed")
    finally:
        conn.close()
    findings, counts = snapshot(db)
    for fid, hits in before[0].items():
        if findings.get(fid, -1) < hits:
            problems.append(f"finding {fid}: {hits} hits before the kill, {findings.get(fid)} after")
    problems += [f"{k} went down: {before[1][k]} -> {counts[k]}" for k in COUNTS if counts[k] < before[1][k]]
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--mode", choices=["kill", "term"], default="kill")
    parser.add_argument("--grace", type=float, default=10.0, help="seconds between SIGTERM and SIGKILL (term)")
    parser.add_argument("--backend", choices=["fake", "aoti"], default="fake")
    parser.add_argument("--inject", default=None, help="a canary (with --backend aoti): findings to lose")
    parser.add_argument("--min-s", type=float, default=2.0, help="least seconds a round runs before its kill")
    parser.add_argument("--max-s", type=float, default=8.0)
    parser.add_argument("--corpus", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    db = args.corpus or os.path.join(tempfile.mkdtemp(prefix="fuzzaoti-soak-"), "soak.db")
    env = dict(os.environ)
    if args.backend == "fake":
        env["FUZZAOTI_FAKE_FAULT"] = "gather:wrong"
    first = [sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--backend", args.backend, "--minutes", "600",
             "--shrink-minutes", "0", "--no-triage", "--corpus", db, "--seed", str(args.seed)]
    if args.inject:
        first += ["--inject", args.inject]
    resume = [sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--resume", "1", "--corpus", db]
    failed = 0
    for k in range(1, args.kills + 1):
        started = os.path.exists(db) and has_campaign(db)
        proc = subprocess.Popen(resume if started else first, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        wait = rng.uniform(args.min_s, args.max_s)
        time.sleep(wait)
        before = snapshot(db)
        if args.mode == "kill":
            proc.send_signal(signal.SIGKILL)
        else:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(args.grace)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        code = proc.wait()
        problems = check(db, before)
        failed += bool(problems)
        findings, counts = snapshot(db)
        print(f"kill {k:2d} ({args.mode}) after {wait:4.1f} s, exit {code}: {counts['batches']} batches, "
              f"{counts['programs']} programs, {len(findings)} findings, {sum(findings.values())} hits; "
              + ("; ".join(problems) if problems else "integrity ok, nothing lost"), flush=True)
    print(f"{args.kills} kills, {failed} with a loss; corpus {db}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

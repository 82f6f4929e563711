"""Guided against unguided: the same campaign, one after the other on this machine, with
``fuzz --coverage`` and with ``fuzz --guided``, compared by the Inductor lines and decision
combinations each reached, and their programs per minute (the cost of guiding).

    python3 scripts/bench_guided.py --minutes 30 --seed 7 [--device cpu] [--out DIR]

Prints one line per arm and the ratios guided/unguided; each arm's corpus stays in DIR (a
temporary directory by default) for 'fuzzaoti coverage --corpus DIR/ARM.db --against ...'.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from fuzzaoti.corpus import Corpus


def arm(name: str, flag: str, args, out: str) -> dict[str, float]:
    """Run one arm's campaign; what it reached."""
    db = os.path.join(out, f"{name}.db")
    cmd = [sys.executable, "-m", "fuzzaoti.cli", "fuzz", flag, "--device", args.device, "--minutes", str(args.minutes),
           "--seed", str(args.seed), "--shrink-minutes", "0", "--no-triage", "--corpus", db]
    with open(os.path.join(out, f"{name}.log"), "w") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False)
    with Corpus.open(db) as corpus:
        (campaign,) = corpus.campaigns()
        lines = len(corpus.compiler_lines(campaign.id))
        combinations = len(corpus.compiler_decisions(campaign.id))
        programs = campaign.counts["programs"]
        findings = len(corpus.findings())
    return {"lines": lines, "combinations": combinations, "programs_per_min": programs / args.minutes,
            "findings": findings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="fuzzaoti-guided-")
    os.makedirs(out, exist_ok=True)
    results = {}
    for name, flag in (("unguided", "--coverage"), ("guided", "--guided")):
        results[name] = arm(name, flag, args, out)
        r = results[name]
        print(f"{name}: {r['lines']} lines, {r['combinations']} decision combinations, "
              f"{r['programs_per_min']:.1f} programs/min, {r['findings']} findings ({out}/{name}.db)", flush=True)
    g, u = results["guided"], results["unguided"]
    print("guided/unguided: " + ", ".join(f"{key} {g[key] / max(u[key], 1e-9):.2f}x"
                                            for key in ("lines", "combinations", "programs_per_min")))


if __name__ == "__main__":
    main()

"""Which large-profile cases cross the limits the seeds are about, and files to check them with.

Draws N cases of the large profile (as a campaign on a GPU node does), counts the runs whose bmm
batch (plain, or a flattened batch*heads) passes 65535 and whose expanded index space passes
2**31 elements, all inside --max-bytes, and writes up to --keep of each kind as program files
for ``fuzzaoti check --device cuda DIR/*.json`` (the H200 run of issue 3's acceptance).

    python3 scripts/large_crossings.py --cases 300 --max-bytes $((8<<30)) --out .whl/check
"""

from __future__ import annotations

import argparse
import json
import math
import os

from fuzzaoti.model import sizes
from fuzzaoti.model.concrete import input_bytes
from fuzzaoti.strategies.histograms import sample
from fuzzaoti.strategies import cases, programs


def bmm_batch(program, env) -> int:
    """The largest batch a bmm of this program runs at ``env`` (0 without one)."""
    shapes = {i.name: i.shape for i in program.inputs}
    batches = [0]
    for n in program.nodes:
        if n.op in ("bmm", "baddbmm") and n.args[-1] in shapes:
            batches.append(sizes.evaluate(shapes[n.args[-1]][0], env))
        if n.op == "flatten" and n.args[0] in shapes:
            batches.append(math.prod(sizes.evaluate(s, env) for s in shapes[n.args[0]][:2]))
    return max(batches)


def index_space(program, env) -> int:
    """Elements of the largest stride-0 expanded view (rows x length), 0 without one."""
    shapes = {i.name: i.shape for i in program.inputs}
    spaces = [0]
    for n in program.nodes:
        if n.op == "cast" and n.args[0] in shapes:  # the int8 row is cast before it is expanded
            shapes[n.name] = shapes[n.args[0]]
        if n.op == "expand_lead":
            row, sizer = shapes[n.args[0]], shapes[n.args[1]]
            spaces.append(sizes.evaluate(sizer[0], env) * math.prod(sizes.evaluate(s, env) for s in row[1:]))
    return max(spaces)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--max-bytes", type=int, default=8 << 30)
    parser.add_argument("--keep", type=int, default=3, help="files to write of each kind")
    parser.add_argument("--out", default=None, help="directory for the program files")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    drawn = sample(cases(programs(device="cuda", profile="large", max_bytes=args.max_bytes), profile="large",
                         max_bytes=args.max_bytes), args.cases, seed=args.seed)
    kinds = {"batch>65535": [], "index space>=2^31": []}
    runs = over_budget = 0
    for case in drawn:
        for env, seed in case.runs:
            env = dict(env)
            runs += 1
            over_budget += input_bytes(case.program, env) > args.max_bytes
            if bmm_batch(case.program, env) > 65535:
                kinds["batch>65535"].append((case, env, seed))
            if index_space(case.program, env) >= 2**31:
                kinds["index space>=2^31"].append((case, env, seed))
    print(f"{len(drawn)} large cases, {runs} runs, {over_budget} over --max-bytes {args.max_bytes}")
    for kind, hits in kinds.items():
        print(f"  {kind}: {len(hits)} runs")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for kind, hits in kinds.items():
            for k, (case, env, seed) in enumerate(hits[:args.keep]):
                name = f"large-{'batch' if 'batch' in kind else 'space'}-{k}.json"
                with open(os.path.join(args.out, name), "w") as f:
                    json.dump({"program": json.loads(case.program.to_json()), "runs": [{"env": env, "seed": seed}]}, f)
        print(f"wrote program files to {args.out}")


if __name__ == "__main__":
    main()

"""What the generator generates: histograms of ops, dtypes, dim kinds and size classes."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from fuzzaoti import sizes
from fuzzaoti.program import Program


def dim_kinds(program: Program) -> set[str]:
    """bounded / unbounded / auto / dynamic / derived / shared / static / from data, as this
    program uses them (from data: a size read with ``.item()`` and bounded by ``torch._check``)."""
    kinds = {("unbounded" if d.max is None else "bounded") if d.kind == "range" else d.kind for d in program.dims}
    uses: Counter = Counter()
    for spec in program.inputs:
        for s in spec.shape:
            affine = sizes.parse(s)
            if not affine.coefs:
                kinds.add("static")
            elif affine.const or affine.coefs[0][1] != 1:
                kinds.add("derived")
            uses.update({name for name, _ in affine.coefs})
    if any(n > 1 for n in uses.values()):
        kinds.add("shared")
    if any(n.op in ("narrow_item", "narrow_to_item") for n in program.nodes):
        kinds.add("from data (.item)")
    return kinds


def size_class(limit: int | None) -> str:
    if limit is None:
        return "unbounded"
    for bound in (16, 64, 1024, 65535, 2**31 - 1):
        if limit <= bound:
            return f"<={bound}"
    return ">=2^31"


def sample(strategy, n: int, seed: int = 0) -> list[Program]:
    drawn: list[Program] = []

    @settings(max_examples=n, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(strategy)
    def draw(program):
        drawn.append(program)

    draw()
    return drawn


def histograms(programs: list[Program]) -> dict[str, Counter]:
    out = {name: Counter() for name in ("ops", "input dtypes", "dim kinds", "dim max size", "configs")}
    for p in programs:
        out["ops"].update(set(p.ops))
        out["input dtypes"].update({i.dtype for i in p.inputs})
        out["dim kinds"].update(dim_kinds(p))
        out["dim max size"].update({size_class(d.max) for d in p.dims if d.kind == "range"})
        out["configs"].update({",".join(f"{k}={v}" for k, v in p.configs) or "default"})
    return out


def render(hists: dict[str, Counter], n: int, width: int = 40) -> str:
    lines = [f"{n} programs drawn (a program counts once per bucket it uses)"]
    for title, counter in hists.items():
        lines.append(f"\n{title}:")
        for key, count in counter.most_common():
            bar = "#" * max(1, round(width * count / n))
            lines.append(f"  {key:<40} {count:>6}  {bar}")
    return "\n".join(lines)

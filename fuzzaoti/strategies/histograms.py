"""What the generator generates: histograms of ops, dtypes, dim kinds and size classes, and, for
drawn cases, tables of their runs by size class (past 2**31 and 2**32 elements, a bmm batch
past 65535, an index past 2**31) per op family and per big dim kind."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from fuzzaoti.model import sizes
from fuzzaoti.model.program import Program
from fuzzaoti.model.scale import CROSSINGS, FAMILY, family_reach, is_large, reach, size_classes


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


def sample_as_checked(n: int, device: str = "cpu", profile: str = "small", max_bytes: int | None = None,
                      seed: int = 0, per_batch: int = 16) -> list:
    """``n`` cases drawn the way a campaign draws and checks them: batches of one config set
    each (``batches``), from each the first ``per_batch`` whose programs no earlier batch held
    (``Campaign._submit`` skips a repeated program).

    One Hypothesis run builds most examples by copying choices from earlier ones, so ``sample``
    of single programs clumps (in one thousand, one core op drawn twice and another a hundred
    times); the campaign's batches with their repeats skipped are what it checks, and spread
    the core ops evenly (each 29 or more times in 1383 programs of 100 batches)."""
    from fuzzaoti.strategies._batches import batches, cases_per_batch
    from fuzzaoti.strategies._configs import batch_config_sets

    drawn: list = []
    seen: set[str] = set()
    strategy = batches(batch_config_sets(device), cases_per_batch(profile, None), device, profile, max_bytes, 4)

    @settings(max_examples=10**6, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(strategy)
    def draw(batch):
        fresh = [case for case in batch if case.program.id not in seen][:min(per_batch, n - len(drawn))]
        seen.update(case.program.id for case in fresh)
        drawn.extend(fresh)
        if len(drawn) >= n:
            raise _Enough

    try:
        draw()
    except _Enough:
        pass
    return drawn


class _Enough(BaseException):
    """Ends ``sample_as_checked``'s Hypothesis run without counting as a test failure."""


def histograms(programs: list[Program]) -> dict[str, Counter]:
    out = {name: Counter() for name in ("ops", "input dtypes", "input layouts", "module state", "index values",
                                        "dim kinds", "dim max size", "configs")}
    for p in programs:
        out["ops"].update(set(p.ops))
        out["input dtypes"].update({i.dtype for i in p.inputs})
        out["input layouts"].update({i.layout for i in p.inputs})
        out["module state"].update({t.kind + "s" for t in p.state} | ({"buffers it writes"} if p.mutated_state() else set())
                                   or {"none"})
        out["index values"].update({"one eager rejects" if p.rejects_indices else "all in range"})
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


def run_tables(cases) -> dict[str, dict[str, Counter]]:
    """Runs of drawn ``cases`` by size class: per op family (the reach of that family's nodes)
    and per big dim kind (``strategies._big_dims.BIG_KINDS``, of any big axis the program has)."""
    from fuzzaoti.strategies._big_dims import big_kind

    families: dict[str, Counter] = {f: Counter() for f in dict.fromkeys(FAMILY.values())}
    kinds: dict[str, Counter] = {}
    for case in cases:
        p = case.program
        big = {big_kind(p, s) for i in p.inputs for s in i.shape} - {None}
        for env, _ in case.runs:
            env = dict(env)
            for family, measures in family_reach(p, env).items():
                families[family].update(("runs",) + size_classes(measures))
            classes = size_classes(reach(p, env))
            for kind in big:
                kinds.setdefault(kind, Counter()).update(("runs",) + classes)
    return {"runs by op family": families, "runs by big dim kind": kinds}


def crossing_summary(cases) -> str:
    """One line: how many drawn runs pass a crossing, and how many programs have such a run."""
    runs = large = programs = 0
    for case in cases:
        passed = [is_large(case.program, dict(env)) for env, _ in case.runs]
        runs, large, programs = runs + len(passed), large + sum(passed), programs + any(passed)
    return (f"runs past a crossing: {large} of {runs} ({100 * large / max(runs, 1):.0f}%); "
            f"programs with one: {programs} of {len(cases)}")


def render_tables(tables: dict[str, dict[str, Counter]]) -> str:
    columns = ["runs"] + [name for name, _, _ in CROSSINGS]
    lines = []
    for title, rows in tables.items():
        lines += ["", f"{title} (runs past each crossing; a run counts in every class it passes):",
                  f"  {'':<20}" + "".join(f"{c:>16}" for c in columns)]
        for name, counter in rows.items():
            lines.append(f"  {name:<20}" + "".join(f"{counter[c]:>16}" for c in columns))
    return "\n".join(lines)

"""Program → Python source: the module, its export dynamic shapes, and standalone repro scripts.

The worker executes exactly the source a repro script contains (``program_source``), so a
repro reproduces what the fuzzer ran, not a re-implementation of it.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Mapping, Sequence

from fuzzaoti.model import inputs as inputs_module
from fuzzaoti.check import oracle as oracle_module
from fuzzaoti.model import sizes
from fuzzaoti.model.concrete import input_specs
from fuzzaoti.model.ops import HELPERS, OPS
from fuzzaoti.model.program import SWAP_SEED, Program


def module_source(program: Program) -> str:
    """``class Repro(torch.nn.Module)`` whose forward computes the program (after the source of
    any helper its op templates call). Its state is built in ``__init__`` by ``make_tensor``
    (``fuzzaoti.model.inputs``, which a repro script holds too) from each tensor's own seed, or,
    ``swapped``, the values swapped in after loading (``Program.swaps_state``), on the CPU:
    ``instantiate`` moves it to the device."""
    args = ", ".join(["self"] + [i.name for i in program.inputs])
    used = [src for name, src in HELPERS.items() if any(name + "(" in OPS[n.op].template for n in program.nodes)]
    lines = used + ["class Repro(torch.nn.Module):"]
    if program.state:
        lines += ["    def __init__(self, swapped=False):", "        super().__init__()"]
        for t in program.state:
            value = (f"make_tensor({t.dtype!r}, {list(t.shape)!r}, {t.values.kind!r}, {t.values.low!r}, "
                     f"{t.values.high!r}, {t.seed!r} + ({SWAP_SEED} if swapped else 0), 'cpu')")
            lines.append(f"        self.{t.name} = torch.nn.Parameter({value}, requires_grad=False)"
                         if t.kind == "parameter" else f"        self.register_buffer({t.name!r}, {value})")
    lines.append(f"    def forward({args}):")
    lines += [f"        {t.name} = self.{t.name}" for t in program.state]
    for node in program.nodes:
        lines.append(f"        {node.name} = {OPS[node.op].render(node)}")
    lines.append(f"        return ({''.join(o + ', ' for o in program.outputs)})")
    return "\n".join(lines) + "\n"


def dynamic_shapes_source(program: Program) -> str:
    """``def dynamic_shapes(Dim)`` returning the ``dynamic_shapes`` dict for torch.export."""
    lines = ["def dynamic_shapes(Dim):"]
    for d in program.dims:
        if d.kind == "auto":
            lines.append(f"    {d.name} = Dim.AUTO")
        elif d.kind == "dynamic":
            lines.append(f"    {d.name} = Dim.DYNAMIC")
        elif d.max is None:
            lines.append(f"    {d.name} = Dim({d.name!r}, min={d.min})")
        else:
            lines.append(f"    {d.name} = Dim({d.name!r}, min={d.min}, max={d.max})")
    entries = []
    for spec in program.inputs:
        axes = {k: _dim_expr(s) for k, s in enumerate(spec.shape) if not isinstance(sizes.canonical(s), int)}
        body = ", ".join(f"{k}: {expr}" for k, expr in axes.items())
        entries.append(f"{spec.name!r}: {{{body}}}" if axes else f"{spec.name!r}: None")
    lines.append(f"    return {{{', '.join(entries)}}}")
    return "\n".join(lines) + "\n"


def _dim_expr(size: sizes.Size) -> str:
    affine = sizes.parse(size)
    (name, coef), = affine.coefs  # validated by strategies: one root dim per input axis
    text = name if coef == 1 else f"{coef} * {name}"
    if affine.const:
        text += f" {'+' if affine.const > 0 else '-'} {abs(affine.const)}"
    return text


def program_source(program: Program) -> str:
    """Module plus dynamic shapes: everything a worker or a repro needs to export the program."""
    return module_source(program) + "\n\n" + dynamic_shapes_source(program)


def load_program(program: Program) -> dict[str, Any]:
    """Execute ``program_source`` and return its namespace (``Repro``, ``dynamic_shapes``)."""
    import torch

    namespace: dict[str, Any] = {"torch": torch, "make_tensor": inputs_module.make_tensor}
    exec(compile(program_source(program), f"<fuzzaoti program {program.id}>", "exec"), namespace)
    return namespace


def instantiate(namespace: Mapping[str, Any], device: str, swapped: bool = False):
    """The program's module (``namespace`` from ``load_program``) with its state on ``device``:
    the state it is compiled with, or, ``swapped``, the values swapped in after loading."""
    return (namespace["Repro"](swapped=True) if swapped else namespace["Repro"]()).to(device)


def swap_constants(loaded, namespace: Mapping[str, Any], device: str) -> None:
    """Swap ``loaded``'s (a loaded AOTI package's) constants for the swapped values of the
    module's state (``Program.swaps_state``): each state tensor the package kept as a constant."""
    kept = set(loaded.get_constant_fqns())
    new = instantiate(namespace, device, swapped=True).state_dict()
    loaded.load_constants({k: v for k, v in new.items() if k in kept}, check_full_update=False)


def _torch_only_source(module) -> str:
    text = inspect.getsource(module)
    return "\n".join(line for line in text.splitlines() if line.strip() != "import torch")


def repro_script(
    program: Program,
    device: str,
    runs: Sequence[tuple[Mapping[str, int], int]],
    header: str = "",
) -> str:
    """A standalone script (needs only torch) that exports, AOTI-compiles and checks ``program``.

    ``runs`` are (dim assignment, input seed) pairs: the failing runtime shapes. The script
    prints each verdict and exits 1 while any run is wrong, 0 when all agree with eager.
    """
    runs_data = [{"env": dict(env), "seed": seed, "specs": input_specs(program, env)} for env, seed in runs]
    hint_specs = input_specs(program, program.hint_env(), example=True)
    return _REPRO_TEMPLATE.format(
        header="".join(f"# {line}\n" for line in header.splitlines()),
        inputs_source=_torch_only_source(inputs_module),
        oracle_source=_torch_only_source(oracle_module),
        program_source=program_source(program),
        device=device,
        configs=json.dumps(dict(program.configs), sort_keys=True),
        hint_specs=json.dumps(hint_specs),
        runs=json.dumps(runs_data, indent=1),
        working_eps=program.working_eps(),
        mutated=program.mutated_inputs(),
        swapped=program.swaps_state,
        stateful=bool(program.mutated_state()),
    )


_REPRO_TEMPLATE = '''\
"""Standalone AOTInductor repro generated by fuzzaoti. Needs only torch.

Exports the module below with its dynamic shapes, compiles it with AOTInductor, runs it at the
failing runtime shapes and compares every output element with eager (float outputs against a
float64 reference). Exits 1 while export, the compile or the load fails, or the compiled model
raises or disagrees with eager; 0 when it agrees.
"""
{header}
import json
import os
import sys
import tempfile
import traceback

import torch
from torch.export import Dim

# ---- inputs (copied from fuzzaoti.model.inputs) ----
{inputs_source}

# ---- oracle (copied from fuzzaoti.check.oracle) ----
{oracle_source}

# ---- the program ----
{program_source}

DEVICE = {device!r}
INDUCTOR_CONFIGS = json.loads({configs!r})
EXPORT_INPUTS = json.loads({hint_specs!r})
WORKING_EPS = {working_eps!r}  # rounding unit of the least precise float dtype computed in
MUTATED = {mutated!r}  # the inputs it writes into, judged after each call as its outputs are
SWAPPED = {swapped!r}  # the loaded package's constants swapped for new values before it runs
STATEFUL = {stateful!r}  # it writes into its buffers: each run is a call after the last, in both
RUNS = json.loads("""{runs}""")


def first_line(exc):
    """The error's first line, and the compiler's first error line where it quotes one."""
    lines = str(exc).strip().splitlines() or [""]
    said = next((line.strip() for line in lines[1:] if "error:" in line), "")
    return f"{{type(exc).__name__}}: {{lines[0][:500]}}" + (f" ({{said[:500]}})" if said else "")


def main():
    model = (Repro(swapped=True) if SWAPPED else Repro()).to(DEVICE)  # eager: the values the package runs with
    example = tuple(make_inputs(EXPORT_INPUTS, 0, DEVICE))
    stage = "export"
    try:
        ep = torch.export.export(Repro().to(DEVICE), example, dynamic_shapes=dynamic_shapes(Dim))
        stage = "compile"
        path = os.path.join(tempfile.mkdtemp(prefix="fuzzaoti-repro-"), "model.pt2")
        path = torch._inductor.aoti_compile_and_package(ep, package_path=path, inductor_configs=INDUCTOR_CONFIGS)
        stage = "load"
        compiled = torch._inductor.aoti_load_package(path)
        if SWAPPED:  # new weights without recompiling, as a user updates them
            kept = set(compiled.get_constant_fqns())
            compiled.load_constants({{k: v for k, v in model.state_dict().items() if k in kept}},
                                    check_full_update=False)
    except Exception as exc:  # eager runs this program: a failure here is the bug
        traceback.print_exc()
        print(f"torch {{torch.__version__}}: {{stage}} FAILS: {{first_line(exc)}}")
        return 1
    failed = 0
    wide = copy.deepcopy(model).to(torch.float64) if STATEFUL else None  # the reference's own buffers
    for run in RUNS:
        inputs = make_inputs(run["specs"], run["seed"], DEVICE)
        with torch.no_grad():  # (each call gets its own copy of an input the program writes into)
            try:
                eager = called(model, fresh(inputs, MUTATED), MUTATED)
            except Exception as exc:  # an index out of range on purpose: the compiled must raise too
                refused = first_line(exc)
                try:
                    called(compiled, fresh(inputs, MUTATED), MUTATED)
                except Exception as exc:
                    print("dims", run["env"], "-> OK: raises as eager does:", first_line(exc))
                    continue
                print("dims", run["env"], "-> RETURNS where eager raised:", refused)
                failed += 1
                continue
            reference = (reference_outputs(wide, inputs, mutated=MUTATED, widened=True) if STATEFUL
                         else reference_outputs(model, inputs, mutated=MUTATED))
            eager, reference = [t.clone() for t in eager], [t.clone() for t in reference]  # (a buffer changes)
            poison_like(eager)  # no stale eager output where the compiled outputs go
            try:
                actual = [t.clone() for t in called(compiled, fresh(inputs, MUTATED), MUTATED)]
            except Exception as exc:
                print("dims", run["env"], "-> RAISES:", first_line(exc))
                failed += 1
                continue
        verdict = compare_outputs(actual, eager, reference, min_eps=WORKING_EPS)
        print("dims", run["env"], "->", "OK" if verdict is None else "WRONG: " + json.dumps(verdict))
        failed += verdict is not None
    print(f"torch {{torch.__version__}}: {{failed}} of {{len(RUNS)}} runs wrong")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
'''

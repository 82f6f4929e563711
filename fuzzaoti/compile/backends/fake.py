"""A fast test double: eager execution plus scripted faults, for unit tests of the pipeline.

``FUZZAOTI_FAKE_FAULT=<op>:<mode>`` makes every program that uses ``<op>`` (``*``: any op) misbehave, where
mode is ``wrong`` (one output element off by one, and no index checked: ``lenient``),
``raise`` (an exception at run),
``raise-large`` (an exception at run when an input of an ``<op>`` node has a size of
``LARGE`` or more: a launch refused past a grid limit, while export-time examples run),
``crash`` (the worker aborts), ``crash-large`` (it aborts at such a size: an illegal memory
access past 2**31), ``lost-write`` (the inputs it writes into are left as they were: a package
that never writes a mutation back), ``spill`` (it writes into the element just before each
written input that lies at a storage offset: a write outside the view), ``stale-state`` (the
module's state is not swapped after loading, ``Program.swaps_state``), ``slow`` (each run
takes 5 s, its outputs right: big runs on a CPU), ``lenient`` (a run that raises returns
its inputs instead: a package that never checks an index eager rejects), ``forgets-writes``
(each call starts from the module's first buffers: a package that never keeps what it wrote
into them), or
``hang`` (the run never returns). ``FUZZAOTI_FAKE_ASSUME=<guard>`` makes each compile
"assume" that guard of its first dim, ``{d}`` (``{d} <= 8``), as Inductor assumes sizes AOTI
never checks (``compile.assumptions``): the runs directed at it, in a worker process. Never the
only proof: real AOTI is tested for real in tests marked ``aoti``.
"""

from __future__ import annotations

import os
import time

from fuzzaoti.check.assumption import Assumption
from fuzzaoti.compile import render
from fuzzaoti.compile.backends.base import Prepared, Progress
from fuzzaoti.model.program import Program


LARGE = 64  # raise-large: the size from which an input of the faulty op makes a run raise
SLOW_S = 5.0  # slow: the seconds each run takes


class FakeBackend:
    name = "fake"

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        # a "package" as AOTI keeps one: a check of the same program in the same workdir loads it
        package = os.path.join(workdir, f"{program.id}.fake")
        progress("load" if os.path.exists(package) else "compile")
        open(package, "w").close()
        op, _, mode = os.environ.get("FUZZAOTI_FAKE_FAULT", ":").partition(":")
        tainted = _outputs_using(program, op)
        stale = mode == "stale-state" and any(tainted)  # (the model keeps the state it was compiled with)
        model = render.instantiate(namespace, device, program.swaps_state and not stale)
        written = program.mutated_inputs()
        feeding = [i.name in _inputs_of(program, op) for i in program.inputs]

        def run(*inputs):
            if mode == "forgets-writes" and any(tainted):
                return list(render.instantiate(namespace, device, program.swaps_state)(*inputs))
            if mode == "lenient" and any(tainted):
                try:
                    return list(model(*inputs))
                except Exception:  # noqa: BLE001 - the unchecked package: no error, some outputs
                    return [t.clone() for t in inputs[:len(program.outputs)]]
            if mode == "lost-write" and any(tainted):  # computed on copies: the inputs stay unwritten
                return list(model(*[t.clone() for t in inputs]))
            try:
                outputs = list(model(*inputs))
            except Exception:  # noqa: BLE001
                if mode == "wrong" and any(tainted):  # (no index checked either, as ``lenient``)
                    return [t.clone() for t in inputs[:len(program.outputs)]]
                raise
            if not any(tainted):
                return outputs
            if mode == "spill":
                for t in (inputs[k] for k in written if inputs[k].storage_offset() > 0):
                    t.new_empty(0).set_(t.untyped_storage(), t.storage_offset() - 1, (1,), (1,)).fill_(0)
            if mode in ("spill", "stale-state"):
                return outputs
            if mode in ("raise-large", "crash-large"):
                if any(f and max(t.shape, default=0) >= LARGE for t, f in zip(inputs, feeding)):
                    if mode == "crash-large":
                        os.abort()
                    raise RuntimeError(f"fake backend fault in {op}: launch refused past a grid limit")
                return outputs
            if mode == "raise":
                raise RuntimeError(f"fake backend fault in {op} at 0x{id(outputs):x}")
            if mode == "crash":
                os.abort()
            if mode == "hang":
                time.sleep(3600)
            if mode == "slow":
                time.sleep(SLOW_S)
                return outputs
            return [_off_by_one(t) if bad else t for t, bad in zip(outputs, tainted)]

        guard = os.environ.get("FUZZAOTI_FAKE_ASSUME")
        assumed = (Assumption(guard.format(d=program.dims[0].name), "fake.py", "prepare"),) if guard and program.dims else ()
        return Prepared(run=run, ranges={}, assumptions=assumed)


def _outputs_using(program: Program, op: str) -> list[bool]:
    """For each output: does ``op`` occur among the nodes it is computed from?"""
    uses = {i.name: False for i in program.leaves}
    for node in program.nodes:
        uses[node.name] = node.op == op or op == "*" or any(uses[a] for a in node.args)
    return [uses[o] for o in program.outputs]


def _inputs_of(program: Program, op: str) -> set[str]:
    """The inputs that ``op``'s nodes are computed from."""
    upstream: dict[str, set[str]] = {i.name: {i.name} for i in program.inputs}
    found: set[str] = set()
    for node in program.nodes:
        upstream[node.name] = set().union(*(upstream[a] for a in node.args if a in upstream))
        if node.op == op or op == "*":
            found |= upstream[node.name]
    return found


def _off_by_one(tensor):
    import torch  # not at module level: the parent imports the backends without needing torch

    wrong = tensor.clone(memory_format=torch.contiguous_format)  # view(-1) needs it (outputs may be transposed)
    if wrong.numel():
        wrong.view(-1)[:1] += 1
    return wrong

"""How big one run is: the bytes it materializes, and how far it reaches past the limits.

Two questions decide whether a runtime shape is worth a run on a GPU, and both are answered here
without torch (``fuzzaoti.model.shapes`` infers every tensor's shape):

* **bytes**: every tensor a checked run holds at once: the inputs, eager's intermediates and
  outputs (the program's locals live until it returns), the compiled model's (at most as many),
  and the reference run on upcast inputs. A run over ``--max-bytes`` is not run (counted), so a
  campaign never trades its GPU for an out-of-memory error;
* **reach**: the largest element count a tensor, a view's base or an op's operand spans (an
  int32 offset overflows past 2**31), the largest index value an input or an ``arange`` product
  holds, and the largest bmm batch (the CUDA grid's y/z limit is 65535). These name a run's
  *size class*, which the strategies aim at and the shrinker keeps.

The reference is float64 where that fits the budget. Where it does not and every float the
program computes in is half precision (fp16/bf16, eps 2**-10 and 2**-7), it is float32 (eps
2**-23): still thousands of times finer than what it judges, at half the bytes.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

from fuzzaoti.errors import OverBudget

from fuzzaoti.model import sizes
from fuzzaoti.model.concrete import storage_elements
from fuzzaoti.model.dtypes import FLOAT_DTYPES, ITEMSIZE
from fuzzaoti.model.program import Program
from fuzzaoti.model.shapes import tensors

INT32_LIMIT = 2**31
UINT32_LIMIT = 2**32
GRID_LIMIT = 65535  # CUDA grid y/z
#: the crossings a run's reach is classed by, in order
CROSSINGS = (("batch>65535", "batch", GRID_LIMIT + 1), ("elements>=2^31", "elements", INT32_LIMIT),
             ("elements>=2^32", "elements", UINT32_LIMIT), ("index>=2^31", "index", INT32_LIMIT))
#: the oracle compares in chunks of this many elements, with a dozen float64 temporaries each
ORACLE_CHUNK = 1 << 22
#: the most elements one op of a checked run may read or write, views counted at full size: past
#: the 2**32 crossing with room to spare. Bytes alone do not bound a run's time: a sum over a
#: stride-0 view of 2**39 elements holds a few MiB and keeps eager busy for minutes
MAX_WORK = 1 << 33
FEED_MAX = 2**34  # the largest size fuzzaoti feeds an auto/dynamic dim (or a directed run, a dim of no max)
HALF = ("float16", "bfloat16")

FAMILY = {
    **dict.fromkeys(("bmm", "baddbmm", "matmul", "bmm_chunked"), "bmm"),
    "index_select": "index_select", "gather": "gather", "take": "take", "index": "advanced indexing",
    **dict.fromkeys(("index_put", "scatter"), "index_put/scatter"),
    **dict.fromkeys(("narrow", "select", "narrow_item", "narrow_to_item"), "slices"),
    **dict.fromkeys(("cat", "split"), "cat/split"),
    **dict.fromkeys(("relu", "neg", "abs", "sigmoid", "tanh", "sin", "add", "sub", "mul", "affine", "cast", "clone"),
                    "pointwise"),
    **dict.fromkeys(("sum", "amax", "var"), "reduction"),
    "arange_index": "index arithmetic",
}
"""The op families the large profile must take past the limits; glue ops (views) belong to none."""


def _bytes(dtype: str, numel: int) -> int:
    return numel * ITEMSIZE.get(dtype, 1)


def _extra_eager(program: Program, infos) -> int:
    """Temporaries eager makes inside one op: ``arange_index``'s int64 index arithmetic (arange,
    product, sum, remainder) and ``bmm_chunked``'s per-chunk products before the cat."""
    extra = 0
    for node in program.nodes:
        if node.op == "arange_index":
            extra += 4 * 8 * infos[node.name].shape[0]
        elif node.op == "bmm_chunked":
            extra += _bytes(infos[node.name].dtype, infos[node.name].numel)
    return extra


def reference_dtype(program: Program, env: Mapping[str, int], max_bytes: int | None) -> str | None:
    """The dtype floats are upcast to for the reference run: ``float64``, ``float32`` where only
    that fits ``max_bytes`` (half-precision programs only), None when no output is a float (the
    oracle compares integers with eager exactly and needs no reference)."""
    return _reference(program, tensors(program, env), max_bytes)[0]


def _reference(program: Program, infos, max_bytes: int | None) -> tuple[str | None, int]:
    """``reference_dtype`` and the run's bytes with it, the float64 bytes counted once (the
    runtime-shape solver asks at thousands of sizes a program)."""
    if not any(infos[o].dtype in FLOAT_DTYPES for o in program.outputs):
        return None, _run_bytes(program, infos, None)
    wide = _run_bytes(program, infos, "float64")
    if max_bytes is None or wide <= max_bytes or not all(d in HALF for d in program.float_dtypes()):
        return "float64", wide
    return "float32", _run_bytes(program, infos, "float32")


def run_bytes(program: Program, env: Mapping[str, int], reference: str | None = "float64") -> int:
    """Bytes a checked run of ``program`` at ``env`` holds at its peak (an upper bound). The run
    goes eager, reference, compiled, and a forward's locals die when it returns, so the peak is
    the inputs plus the largest of: eager's tensors while it runs; eager's outputs with the
    reference's upcast inputs and tensors while that runs; both outputs with the compiled model's
    buffers (at most eager's tensors). And the oracle's chunk."""
    return _run_bytes(program, tensors(program, env), reference)


def _run_bytes(program: Program, infos, reference: str | None) -> int:
    inputs = [infos[i.name] for i in program.inputs]
    made = [infos[n.name] for n in program.nodes if not infos[n.name].view]
    outputs = [infos[o] for o in dict.fromkeys(program.outputs)]
    extra = _extra_eager(program, infos)
    eager = sum(_bytes(t.dtype, t.numel) for t in made) + extra
    eager_out = sum(_bytes(t.dtype, t.numel) for t in outputs)
    peaks = [eager, eager_out + eager]
    if reference is not None:
        width = ITEMSIZE[reference]

        def wide(ts) -> int:
            return sum(t.numel * width if t.dtype in FLOAT_DTYPES else _bytes(t.dtype, t.numel) for t in ts)

        upcast = sum(t.numel * width for t in inputs if t.dtype in FLOAT_DTYPES)
        peaks = [eager, eager_out + upcast + wide(made) + extra,
                 eager_out + wide(outputs) + eager]
    chunk = 12 * 8 * min(ORACLE_CHUNK, max(t.numel for t in outputs))
    # each input's whole storage (``layout``); one the program writes into is copied for eager's
    # call and for the compiled one's
    stored = [_bytes(t.dtype, storage_elements(t.shape, spec.layout)) for t, spec in zip(inputs, program.inputs)]
    copies = 2 * sum(stored[k] for k in program.mutated_inputs())
    state = 2 * sum(_bytes(t.dtype, math.prod(t.shape)) for t in program.state)  # eager's module and the package's
    return sum(stored) + copies + state + max(peaks) + chunk


def checked_bytes(program: Program, env: Mapping[str, int], max_bytes: int | None) -> int:
    """``run_bytes`` with the reference dtype the run would use."""
    return _checked_bytes(program, tensors(program, env), max_bytes)


def _checked_bytes(program: Program, infos, max_bytes: int | None) -> int:
    return _reference(program, infos, max_bytes)[1]


def fits(program: Program, env: Mapping[str, int], max_bytes: int | None) -> bool:
    """A checked run at ``env`` holds at most ``max_bytes`` (None: any) and no op of it works on
    more than ``MAX_WORK`` elements: the one rule the strategies draw shapes by and a worker
    skips runs by. The runtime-shape solver asks it tens of times a program, so the tensors are
    inferred once here, not once per measure."""
    return _why_unfit(program, tensors(program, env), max_bytes) is None


def _why_unfit(program: Program, infos, max_bytes: int | None) -> str | None:
    """Why a run of these tensors does not ``fit`` (past ``MAX_WORK``, or over ``max_bytes``), in
    words; None where it fits. The bytes are weighed only where the work fits and a budget is set."""
    if _work(infos) > MAX_WORK:
        return f"has an op over {_work(infos)} elements, past the {MAX_WORK} one checked run may work on"
    need = None if max_bytes is None else _checked_bytes(program, infos, max_bytes)
    if need is not None and need > max_bytes:
        return f"needs {need} bytes, over the budget of {max_bytes} (--max-bytes to change it)"
    return None


def refuse_unfit(program: Program, envs: Iterable[Mapping[str, int]], max_bytes: int, where: str) -> None:
    """Raise OverBudget, in one line, for the first run at ``envs`` that ``fits`` refuses: a run
    handed in from outside (a program file, a corpus) is weighed before anything is allocated."""
    for env in envs:
        why = _why_unfit(program, tensors(program, env), max_bytes)
        if why is not None:
            raise OverBudget(f"{where}: the run at {dict(env)} {why}")


def reach(program: Program, env: Mapping[str, int]) -> dict[str, int]:
    """``elements``: the largest numel an op's result, operands or a view's base span;
    ``index``: the largest index value; ``batch``: the largest bmm batch (0 without one)."""
    return _reach(program, env, program.nodes)


def work(program: Program, env: Mapping[str, int]) -> int:
    """The numel of the largest tensor any op of ``program`` reads or writes at ``env``, views
    (stride-0 expansions too) counted at their full size: what bounds a run's time."""
    return _work(tensors(program, env))


def _work(infos) -> int:
    return max(info.numel for info in infos.values())


def family_reach(program: Program, env: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """``reach`` of the nodes of each op family the program uses, by family."""
    families: dict[str, list] = {}
    for node in program.nodes:
        if node.op in FAMILY:
            families.setdefault(FAMILY[node.op], []).append(node)
    return {family: _reach(program, env, nodes) for family, nodes in families.items()}


def _reach(program: Program, env: Mapping[str, int], nodes) -> dict[str, int]:
    infos = tensors(program, env)
    values = {i.name: i.values for i in program.leaves}
    elements = index = batch = 0
    for node in nodes:
        elements = max([elements, infos[node.name].base] + [infos[a].base for a in node.args])
        for a in node.args:
            v = values.get(a)
            if v is not None and v.kind in ("int", "distinct") and node.op in FAMILY and FAMILY[node.op] != "pointwise":
                index = max(index, abs(sizes.evaluate(v.high, env)) - 1, abs(sizes.evaluate(v.low, env)))
        if node.op == "arange_index":
            n = infos[node.name].shape[0]
            index = max(index, node.attr["mult"] * (n - 1) + node.attr["offset"])
        if FAMILY.get(node.op) == "bmm" and node.op != "matmul":
            size = infos[node.name].shape[0]
            batch = max(batch, min(size, node.attr["size"]) if node.op == "bmm_chunked" else size)
    return {"elements": elements, "index": index, "batch": batch}


def size_classes(measures: Mapping[str, int]) -> tuple[str, ...]:
    """The crossings a run's ``reach`` passes, e.g. ``("elements>=2^31",)``; empty: small."""
    return tuple(name for name, key, limit in CROSSINGS if measures.get(key, 0) >= limit)


def is_large(program: Program, env: Mapping[str, int]) -> bool:
    """Does this run pass one of the crossings (its elements, indices or bmm batch)?"""
    return bool(size_classes(reach(program, env)))

"""Module state: some of a drawn program's inputs made the module's parameters and buffers.

A constant is where AOTInductor's own machinery starts: it is embedded in the package, folded
into kernels under ``freezing`` or at load under runtime constant folding, and an index buffer
can become a compile-time constant the code generator sees through. A module tensor has a
static shape, so every dim an input uses is pinned at its export hint before the input becomes
state, everywhere the program uses that dim (the program stays valid at every runtime shape
its remaining dims allow). An input the program writes into may become a buffer, whose
values then carry from call to call (``Program.mutated_state``), never a parameter (export
refuses a write into one) nor state that a swap replaces after loading (``Program.swaps_state``);
the node that writes it last is then an output, so every call shows what it holds.
"""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import strategies as st

from fuzzaoti.model import sizes
from fuzzaoti.model.program import SWAP_CONFIG, STATE_KINDS, Program, StateSpec


#: Elements of a drawn module tensor at most: a constant is embedded in the package, and
#: 64 Ki elements keep a batch's constants a few MiB (validation allows ``STATE_MAX``).
DRAWN_MAX = 1 << 16


def with_state(draw, program: Program) -> Program:
    """``program``, or, half the time, the same with some inputs it never writes into made
    module state, each a parameter or a buffer (at least one input stays an input, and one over
    ``DRAWN_MAX`` elements at its hints is never chosen: about a quarter of the programs drawn
    end with state)."""
    written = {program.inputs[k].name for k in program.mutated_inputs()}
    swapped = SWAP_CONFIG in program.configs  # (its state is swapped after loading: never written)
    hints = program.hint_env()
    candidates = [i for i in program.inputs if (i.name not in written or not swapped)
                  and math.prod(sizes.evaluate(s, hints) for s in i.shape) <= DRAWN_MAX]
    if not candidates or not draw(st.booleans()):
        return program
    chosen = [i for i in candidates if draw(st.booleans())] or candidates[:1]
    if len(chosen) == len(program.inputs):
        chosen = chosen[:-1]
    if not chosen:
        return program
    pinned = {n for i in chosen for s in i.shape + (i.values.low, i.values.high) if s is not None
              for n in sizes.parse(s).dims}
    hints = {d.name: d.hint for d in program.dims if d.name in pinned}

    def fix(size):
        return size if size is None or not set(sizes.parse(size).dims) <= set(hints) else sizes.evaluate(size, hints)

    inputs = [replace(i, shape=tuple(fix(s) for s in i.shape),
                      values=replace(i.values, low=fix(i.values.low), high=fix(i.values.high)))
              for i in program.inputs]
    names = {i.name for i in chosen}
    state = tuple(StateSpec(i.name, i.dtype, tuple(i.shape), i.values,
                            "buffer" if i.name in written else draw(st.sampled_from(STATE_KINDS)), seed=k)
                  for k, i in enumerate(i for i in inputs if i.name in names))
    program = program.with_(dims=tuple(d for d in program.dims if d.name not in pinned),
                            inputs=tuple(i for i in inputs if i.name not in names), state=state)
    return program.with_(outputs=program.outputs + _last_writes(program)).validate()


def _last_writes(program: Program) -> tuple[str, ...]:
    """The node that writes each buffer last, where it is not an output already."""
    last = {buffer: node for node, buffer in program.write_roots({t.name for t in program.state}).items()}
    return tuple(node for node in dict.fromkeys(last.values()) if node not in program.outputs)

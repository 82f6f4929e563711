"""Merge independent programs into one, so one AOTI compile checks many programs.

A compile costs about the same for 1 or 32 small programs (measured: CPU 17 s for 32 against
9.5 s for one), so workers compile batches. Merging is a pure Program transform: each
member's names get a ``p<k>_`` prefix, the merged forward takes every member's inputs and
returns every member's outputs, and ``split_outputs`` hands each member its own back.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Sequence

from fuzzaoti.model import sizes
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.program import Program


def prefix(k: int) -> str:
    return f"p{k}_"


_PROGRAM_LINE = re.compile(r'File "<fuzzaoti program (\w+)>", line (\d+)')
_MEMBER = re.compile(r"\bp(\d+)_")


def traced_members(traces: Iterable[str], merged: Program, count: int, innermost: bool = False,
                   source: list[str] | None = None) -> set[int]:
    """The members of ``merged`` (``count`` programs) whose code the Python ``traces`` (a
    traceback, an FX node's ``stack_trace``) pass through: each line of the merged module
    names one member's inputs and nodes by its prefix. With ``innermost``, the answer is the one
    member of the last line a trace names that is one member's (a traceback's deepest frame in
    the module). A lone program is member 0. ``source``: the merged module's lines, where the
    caller has them (rendering a batch of 64 programs takes milliseconds, per call)."""
    if count == 1:
        return {0}
    from fuzzaoti.compile import render

    lines = source if source is not None else render.program_source(merged).splitlines()
    found: set[int] = set()
    for trace in traces:
        for match in reversed(list(_PROGRAM_LINE.finditer(trace))):
            number = int(match[2])
            if match[1] != merged.id or not 0 < number <= len(lines):
                continue
            owners = {int(k) for k in _MEMBER.findall(lines[number - 1])} & set(range(count))
            if innermost:
                if len(owners) == 1:
                    return owners
                continue
            found |= owners
            break  # (an FX node's trace: its innermost line of the module is the node's own)
    return found


def _rename_size(size: sizes.Size, pre: str) -> sizes.Size:
    affine = sizes.parse(size)
    if not affine.coefs:
        return affine.const
    return str(sizes.Affine(affine.const, tuple((pre + n, c) for n, c in affine.coefs)))


def namespaced(program: Program, pre: str) -> Program:
    """``program`` with every dim, input, state and node name prefixed by ``pre``."""
    def size(s):
        return None if s is None else _rename_size(s, pre)

    return replace(
        program,
        dims=tuple(replace(d, name=pre + d.name) for d in program.dims),
        inputs=tuple(
            replace(i, name=pre + i.name, shape=tuple(size(s) for s in i.shape),
                    values=replace(i.values, low=size(i.values.low), high=size(i.values.high)))
            for i in program.inputs
        ),
        nodes=tuple(replace(n, name=pre + n.name, args=tuple(pre + a for a in n.args)) for n in program.nodes),
        outputs=tuple(pre + o for o in program.outputs),
        state=tuple(replace(t, name=pre + t.name) for t in program.state),
    )


def merge(programs: Sequence[Program]) -> Program:
    """One program computing all of ``programs``; they must share their compile configs."""
    if not programs:
        raise InvalidArgument("merge needs at least one program")
    if len({p.configs for p in programs}) != 1:
        raise InvalidArgument("programs merged into one compile must share configs")
    if len(programs) == 1:
        return programs[0]
    parts = [namespaced(p, prefix(k)) for k, p in enumerate(programs)]
    return Program(
        dims=sum((p.dims for p in parts), ()),
        inputs=sum((p.inputs for p in parts), ()),
        nodes=sum((p.nodes for p in parts), ()),
        outputs=sum((p.outputs for p in parts), ()),
        configs=programs[0].configs,
        state=sum((p.state for p in parts), ()),
    ).validate()


def member_count(program: Program) -> int:
    """How many programs ``merge`` made ``program`` of (1: one not merged), by its outputs'
    prefixes (every member returns at least one output)."""
    found = [int(m[1]) for name in program.outputs if (m := re.match(r"p(\d+)_", name))]
    return max(found) + 1 if found and len(found) == len(program.outputs) else 1


def split(items: Sequence, programs: Sequence[Program], per_program) -> list[list]:
    """Cut a flat list (merged inputs or outputs) into per-member lists."""
    out, start = [], 0
    for p in programs:
        n = per_program(p)
        out.append(list(items[start:start + n]))
        start += n
    return out


def split_outputs(outputs: Sequence, programs: Sequence[Program]) -> list[list]:
    return split(outputs, programs, lambda p: len(p.outputs))

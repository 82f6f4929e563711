"""What Inductor assumed of a program's sizes while compiling it, that AOTInductor never checks.

Export decides each dynamic dim's range, and an AOTI package checks its inputs against those
ranges only. Inductor, compiling after export, still guards on sizes where a choice depends on
them, evaluated at export's example (the *hint*): a float sum of at most 4096 rows gets no
cascade summation (``cpp.py need_use_acc_helper``: ``d0 <= 4096``), a kernel whose numel fits
in int32 gets 32-bit indexing (``simd.py can_use_32bit_indexing``). In ``torch.compile`` such a
guard recompiles when it fails; in an AOTI package nothing checks it (pytorch#150364), so a
size in range that breaks it runs code built for sizes it is not. These guards are the seeds'
bug class seen from inside the compiler: ``fuzzaoti.workers.directed`` runs each program at
sizes that break them, and a failing run says which it broke.

An ``Assumption`` is such a guard written over the program's own dim names (``d0 <= 4096``),
with the Inductor frame that added it; it is evaluated only through ``check.guards.evaluate``'s
whitelist, never by handing torch's text to ``eval`` as is.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping

from fuzzaoti.check.assumption import Assumption
from fuzzaoti.model import sizes
from fuzzaoti.model.program import Program


def from_guards(guards: Iterable[tuple[Any, str, str]], exprs: Mapping[tuple[int, int], Any],
                program: Program) -> tuple[Assumption, ...]:
    """The guards ``compat.aoti_compile_noting_guards`` returned, over ``program``'s dim names:
    each export symbol is named by an input axis whose size is that symbol alone (or an affine
    function of it, ``2*d+1``) in both export's ``exprs`` and the program. A guard over a symbol
    no axis names is left out (it cannot be steered)."""
    import sympy

    names: dict[Any, sympy.Symbol] = {}
    for (index, axis), expr in exprs.items():
        if index >= len(program.inputs) or len(expr.free_symbols) != 1:
            continue
        affine = sizes.parse(program.inputs[index].shape[axis])
        if len(affine.coefs) == 1:
            names.setdefault(next(iter(expr.free_symbols)), sympy.Symbol(affine.coefs[0][0], integer=True))
    found = []
    for expr, site, function in guards:
        if not expr.free_symbols or not expr.free_symbols <= names.keys():
            continue
        assumption = Assumption(str(expr.xreplace(names)), site, function)
        if assumption not in found:
            found.append(assumption)
    return tuple(found)


def of_member(assumptions: Iterable[Assumption], prefix: str) -> tuple[Assumption, ...]:
    """The assumptions of the merged program's member whose names start with ``prefix``
    (``compile.merge.prefix``; "" for a program compiled alone), over its own dim names."""
    import re

    own = []
    for a in assumptions:
        if a.dims and all(d.startswith(prefix) for d in a.dims):
            guard = re.sub(rf"\b{re.escape(prefix)}(\w+)", r"\1", a.guard) if prefix else a.guard
            own.append(Assumption(guard, a.site, a.function))
    return tuple(own)


def broken(assumptions: Iterable[Assumption], env: Mapping[str, int] | None) -> tuple[Assumption, ...]:
    """The assumptions that runtime sizes ``env`` break (what a failing run tells)."""
    if env is None:
        return ()
    return tuple(a for a in assumptions if a.holds(env) is False)


def save(path: str, assumptions: Iterable[Assumption]) -> None:
    """Write a package's assumptions beside it (before its ranges, which mark it complete)."""
    with open(path + ".tmp", "w") as f:
        json.dump([a.to_data() for a in assumptions], f)
    os.replace(path + ".tmp", path)


def load(path: str) -> tuple[Assumption, ...]:
    """What ``save`` wrote; none for a package saved before assumptions were noted."""
    try:
        with open(path) as f:
            return tuple(Assumption.from_data(a, path) for a in json.load(f))
    except FileNotFoundError:
        return ()

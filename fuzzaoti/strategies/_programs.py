"""The program strategy: random bmm / int64-indexing programs with dynamic shape ranges.

Programs are built forwards from a *core* op (a batched matmul or an indexing op) whose
operands are made to fit it, then extended with fusable epilogues. Every index tensor's values
are declared as a range in terms of the dims it indexes, so a program is valid at every
runtime shape inside its declared ranges by construction: a failure is a compiler bug, never
a bad input. Hypothesis shrinks towards the first choice everywhere: one bounded dim, float32,
``bmm``, no epilogue, default compile configs.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.program import Program
from fuzzaoti.strategies._builder import Builder
from fuzzaoti.strategies._configs import config_sets
from fuzzaoti.strategies._around import AROUND
from fuzzaoti.strategies._core import CORE, CORE_OPS
from fuzzaoti.strategies._mutation import MUTATION
from fuzzaoti.strategies._glue import epilogue, glue, large_epilogue
from fuzzaoti.strategies._large import LARGE_CORE
from fuzzaoti.strategies.profiles import Profile, get_profile

LARGE_OPS = tuple(LARGE_CORE)
_CORE = {**CORE, **AROUND, **MUTATION, **LARGE_CORE}


#: Hypothesis draws the first elements of a list far more often than the last (in 1000
#: programs of one sampled_from over 41 ops, bmm 83 times and addmm 8), and its wide integers
#: cluster on boundaries and powers of two (picked modulo 41: 3 to 100 times). A core op is
#: picked by a pseudo-random generator seeded with a drawn integer: evenly spread, replayed
#: from the same choices, and the seed 0 a shrink ends at is the first op, bmm
def _core_op(draw, ops: tuple[str, ...]) -> str:
    """One of ``ops``, each about as often as any other."""
    seed = draw(st.integers(0, 2**32 - 1))
    return ops[0] if seed == 0 else random.Random(seed).choice(ops)  # (Random of an int: not salted per process)


@st.composite
def _programs(draw, profile: Profile, ops: tuple[str, ...], max_epilogue: int,
              configs: tuple[dict[str, Any], ...], rejected_index: bool = False) -> Program:
    b = Builder(draw, profile)
    t = _CORE[_core_op(draw, ops)](b)
    if profile.big_sizes:  # one big family a program, and at most a unary op fused onto it: every
        # extra big tensor halves the sizes a run can reach within --max-bytes
        if max_epilogue and draw(st.booleans()):
            t = large_epilogue(b, t)
        return b.program((t,), draw(st.sampled_from(configs)))
    outputs = [t]
    if draw(st.booleans()):  # chain a second core op onto the first one's result, maybe reshaped
        if draw(st.booleans()):
            glue(b, t)  # the second core op reads the latest node
        t = _CORE[_core_op(draw, ops)](b)
        outputs = [t]
    for _ in range(draw(st.integers(0, max_epilogue))):
        t = epilogue(b, t)
    if len(b.nodes) > 1 and draw(st.booleans()):
        outputs.append(b.nodes[0].name)
    if outputs[-1] != t:
        outputs.insert(0, t)
    return b.program(tuple(dict.fromkeys(outputs)), draw(st.sampled_from(configs)), small=True,
                     rejected_index=rejected_index)


def programs(device: str = "cpu", profile: str = "small", ops: tuple[str, ...] | None = None,
             max_epilogue: int = 3, max_bytes: int | None = None,
             configs: dict[str, Any] | None = None) -> st.SearchStrategy[Program]:
    """Valid AOTI test programs: a bmm/matmul or int64-indexing core op, maybe a second one
    chained on its result, then up to ``max_epilogue`` fusable pointwise/cast/reduction ops.

    Dims are bounded, unbounded, ``Dim.AUTO`` or ``Dim.DYNAMIC``, shared across inputs or
    derived (``2*d``, ``d+1``); index tensors are int64 or int32 with values valid at every
    size in range (on the CPU, one program in 8 with an index feeds one value eager rejects:
    ``Values`` kind ``oob``). Shrinks towards one bounded dim, float32 ``bmm``, no epilogue, default configs.
    ``profile="large"`` draws the large core ops (``strategies/_large.py``) within ``max_bytes``.
    ``configs`` fixes the Inductor configs (one of ``config_sets(device)``) instead of drawing
    them: programs that share configs can be compiled as one module.
    """
    supported = config_sets(device)
    if configs is not None and configs not in supported:
        raise InvalidArgument(f"configs={configs!r} must be one of {supported}")
    prof = get_profile(profile, max_bytes)
    if ops is None:
        ops = LARGE_OPS if prof.big_sizes else CORE_OPS
    unknown = set(ops) - set(_CORE)
    if not ops or unknown:
        raise InvalidArgument(f"ops={ops!r} must be a non-empty subset of {CORE_OPS + LARGE_OPS}")
    if set(ops) & set(LARGE_OPS) and not prof.big_sizes:
        raise InvalidArgument(f"ops {sorted(set(ops) & set(LARGE_OPS))} need profile='large', not {profile!r}")
    if max_epilogue < 0:
        raise InvalidArgument(f"Cannot have max_epilogue={max_epilogue} < 0")
    return _programs(prof, tuple(ops), max_epilogue, tuple(supported) if configs is None else (configs,),
                     rejected_index=device == "cpu")

"""Which view/reshape regroupings torch.export traces without a guard on a dim's value.

Export traces ``view`` and ``reshape`` through torch's reshape algorithm
(``torch._refs._reshape_view_helper_core_alg``): it builds the output axes left to right,
comparing each output length with the input axes it accumulates (``length == size``,
``accum % length != 0``, ``accum != length``). When such a comparison involves a dynamic dim,
export records its outcome at the example as a guard: ``(d, 4) -> (2, -1)`` compares ``d`` with
2 and ``d % 2`` with 0, so export guards ``d != 2`` and ``d % 2 != 0`` at an odd example and
refuses every range that holds an even size (the ``Ne(Mod(s0, 20), 0)`` of pytorch#126607),
although the view is valid at every size. ``(d, 4) -> (-1, 2)`` compares ``d`` with ``2*d``,
which no size flips. A regrouping is drawn only where no sampled size flips a comparison.
"""

from __future__ import annotations

import itertools
from typing import Iterator, Mapping, Sequence

from fuzzaoti.model import sizes

#: the sizes sampled past a dim's low end: residues up to 16 (the largest part a regroup
#: splits off) and a few far sizes, of both parities
_NEAR = 18
_FAR = (2**20, 2**20 + 1, 3 * 2**20 + 1)
_UNBOUNDED_TOP = 2**32
_MAX_ASSIGNMENTS = 4096


def traced_alike(before: Sequence[sizes.Size], after: Sequence[sizes.Size],
                 ranges: Mapping[str, tuple[int, int | None]]) -> bool:
    """Whether the reshape algorithm takes the same branches from ``before`` to ``after`` at
    every sampled assignment of the dims they use (``ranges``: each root dim's min and max,
    None for unbounded): if it does, export adds no guard a size in the range breaks."""
    names = sorted({n for s in (*before, *after) for n in sizes.parse(s).dims})
    paths = {_branches([sizes.evaluate(s, env) for s in before], [sizes.evaluate(s, env) for s in after])
             for env in _assignments(names, ranges)}
    return len(paths) <= 1


def _branches(before: list[int], after: list[int]) -> tuple[bool, ...]:
    """The outcomes of the algorithm's size comparisons for concrete sizes (it assumes the
    numels agree, which the generator guarantees): its path through the shape."""
    path, shape, idx = [], list(before), 0
    for length in after:
        if idx >= len(shape):  # a tail unsqueeze: only a length of 1 is valid
            path.append(length == 1)
            shape.append(1)
            idx += 1
            continue
        path.append(length == shape[idx])
        if path[-1]:
            idx += 1
            continue
        accum, end = shape[idx], idx
        while accum % length != 0 and end + 1 < len(shape):
            path.append(True)
            end += 1
            accum *= shape[end]
        path.append(accum != length)
        shape[idx:end + 1] = [length, accum // length] if path[-1] else [length]
        idx += 1
    return tuple(path)


def _assignments(names: list[str], ranges: Mapping[str, tuple[int, int | None]]) -> Iterator[dict[str, int]]:
    """Assignments of ``names``: every combination of each dim's sampled sizes, or, where that
    is too many, each dim's sizes with the others at their low ends."""
    values = [_sampled(*ranges[n]) for n in names]
    if len(names) <= 1 or len(values[0]) ** len(names) <= _MAX_ASSIGNMENTS:
        yield from (dict(zip(names, combo)) for combo in itertools.product(*values))
        return
    for k, name in enumerate(names):
        for low in (0, 1):
            base = {n: v[min(low, len(v) - 1)] for n, v in zip(names, values)}
            yield from ({**base, name: v} for v in values[k])


def _sampled(low: int, high: int | None) -> list[int]:
    """A dim's sizes to try. Export's symbols start at 2 whatever the declared min (sizes 0 and
    1 are specialized apart), so a branch that flips only at 1 is no guard it checks."""
    low, top = max(low, 2), _UNBOUNDED_TOP if high is None else high
    return sorted({v for v in (*range(low, low + _NEAR), *_FAR, top, top - 1) if low <= v <= top})

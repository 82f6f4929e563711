"""fuzzaoti.model.regroup: which view regroupings export traces without guarding a dim's value,
checked against torch.export itself."""

import random

import pytest

from fuzzaoti.check.guards import refuted_guard
from fuzzaoti.compile import render
from fuzzaoti.compile.backends.aoti import AotiBackend
from fuzzaoti.model import regroup, sizes
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program


def test_splitting_a_part_off_a_dynamic_axis_is_refused_and_off_its_static_neighbour_is_not():
    unbounded = {"d": (1, None)}
    assert not regroup.traced_alike(("d", 4), (2, "2*d"), unbounded)  # d == 2? d % 2 == 0?
    assert regroup.traced_alike(("d", 4), ("2*d", 2), unbounded)
    assert regroup.traced_alike((4, "d"), (2, "2*d"), unbounded)
    assert regroup.traced_alike((2, "d"), ("2*d",), unbounded)  # a merge
    assert not regroup.traced_alike(("d", 6), (3, "2*d"), {"d": (1, 7)})  # d == 3 in the range


def _program(before, after, low, high, hint):
    """x0 of shape ``before`` viewed as ``after``; x1 sizes the root dim ``d`` (a derived axis
    needs its root on an input of its own)."""
    new = tuple(-1 if isinstance(s, str) else s for s in after)
    return Program((DimSpec("d", low, high, hint),),
                   (InputSpec("x0", "float32", tuple(before)), InputSpec("x1", "float32", ("d",))),
                   (Node("t0", "view", ("x0",), (("start", 0), ("end", len(before)), ("new", new))),),
                   ("t0",)).validate()


def _regroupings(count, rng):
    """``count`` random regroupings of one to three axes over one dim, each with a range."""
    drawn = []
    while len(drawn) < count:
        low = rng.choice((1, 2, 3))
        high = rng.choice((None, low + rng.randint(1, 40)))
        before = tuple(rng.choice(("d", "2*d", "d+1", 2, 3, 4, 6, 8)) for _ in range(rng.randint(1, 3)))
        total = sizes.product(before)
        parts = [a for a in range(2, 17) if total is not None and sizes.content(total) % a == 0]
        if not parts or isinstance(total, int):
            continue
        a = rng.choice(parts)
        after = (a, sizes.divide(total, a)) if rng.random() < 0.5 else (sizes.divide(total, a), a)
        drawn.append((before, after, low, high, rng.randint(max(low, 2), high or 100)))
    return drawn


@pytest.mark.aoti
@pytest.mark.parametrize("before,after,low,high,hint", _regroupings(40, random.Random(0)))
def test_the_model_agrees_with_export(before, after, low, high, hint):
    """Where the model sees no flipping branch, export exports, or refuses with a guard that
    holds on the whole range (export's own false constraint, pytorch#164375's family, which
    fuzzaoti reports); where it sees one, export refuses with a guard some size breaks. The
    second half fails if the model misses a branch of torch's reshape algorithm (d != 2 of
    (d, 4) -> (2, -1), say), the first if it sees one torch does not take."""
    program = _program(before, after, low, high, hint)
    env = {"d": hint}
    import torch

    example = [torch.zeros([sizes.evaluate(s, env) for s in before]), torch.zeros(hint)]
    try:
        AotiBackend.export(render.load_program(program), example)
        refused = None
    except Exception as exc:  # noqa: BLE001
        refused = str(exc)
        assert "Constraints violated" in refused, refused
    if regroup.traced_alike(before, after, {"d": (low, high)}):
        assert refused is None or refuted_guard(refused, program) is not None, refused
    else:
        assert refused is not None and refuted_guard(refused, program) is None

import pytest
import torch
from hypothesis import given, settings, strategies as st

from fuzzaoti.check.oracle import compare_outputs, reference_outputs


def _bmm_case(dtype):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(8, 64, 48, generator=g).to(dtype)
    b = torch.randn(8, 48, 32, generator=g).to(dtype)
    reference = torch.bmm(a.double(), b.double())
    eager = torch.bmm(a, b)
    other_kernel = torch.bmm(a.float(), b.float()).to(dtype)  # fp32 accumulation, one rounding
    return eager, reference, other_kernel


def test_rounding_differences_between_kernels_are_not_reported():
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        eager, reference, other = _bmm_case(dtype)
        assert compare_outputs([other], [eager], [reference]) is None, dtype


def test_one_wrong_element_among_a_million_is_caught():
    g = torch.Generator().manual_seed(1)
    eager = torch.randn(1024, 1024, generator=g)
    actual = eager.clone()
    actual[517, 3] = eager[517, 4]  # an off-by-one read: a plausible value, wrong place
    verdict = compare_outputs([actual], [eager], [eager.double()])
    assert verdict is not None and verdict["wrong"] == 1
    assert verdict["worst"][0]["index"] == [517, 3]


def test_integers_compare_exactly_and_report_worst():
    eager = torch.arange(10)
    verdict = compare_outputs([eager + (eager == 3)], [eager], [eager])
    assert verdict["reason"] == "values" and verdict["worst"][0] == {
        "index": [3], "actual": 4, "expected": 3, "tolerance": None}


def test_nan_positions_must_agree():
    eager = torch.tensor([float("nan"), 1.0, float("inf")])
    assert compare_outputs([eager.clone()], [eager], [eager.double()]) is None
    verdict = compare_outputs([torch.tensor([1.0, 1.0, float("inf")])], [eager], [eager.double()])
    assert verdict["reason"] == "nonfinite"


def test_shape_dtype_and_count():
    x = torch.zeros(3)
    assert compare_outputs([torch.zeros(4)], [x], [x])["reason"] == "shape"
    assert compare_outputs([torch.zeros(3, dtype=torch.float64)], [x], [x])["reason"] == "dtype"
    assert compare_outputs([x, x], [x], [x])["reason"] == "count"


def test_error_carried_through_a_reduction_into_sin_is_not_reported():
    # sin(sum(x)): the sum's float32 rounding (scale |x| * sqrt(n) * eps) passes through sin,
    # whose output is small; a kernel that sums in another order must not count as wrong.
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4096, 50, generator=g) * 3
    reference = torch.sin(x.double().sum(1))
    eager = torch.sin(x.sum(1))
    running = torch.zeros(4096)
    for j in reversed(range(50)):  # float32 running sum, the other way round
        running = running + x[:, j]
    other_order = torch.sin(running)
    assert compare_outputs([other_order], [eager], [reference]) is None
    wrong = other_order.clone()
    wrong[7] = eager[8]
    assert compare_outputs([wrong], [eager], [reference])["wrong"] == 1


class _CastThenSin(torch.nn.Module):
    """The program of a false alarm the quickstart's CPU campaign (seed 0) reported: a float32 value
    near 5, cast to fp16, then sin (outputs near 0.2)."""

    def forward(self, t):
        return (torch.sin((t * 1.0).to(torch.float16)),)


def _near_fp16_midpoints(n=4096):
    """float32 values a hair either side of the midpoint between neighbouring fp16 values in
    [4, 8) (fp16's unit there is 2**-8): each rounds to fp16 one way, and a kernel whose float32
    value is a few float32 units off (an FMA, another order) can round it the other way."""
    g = torch.Generator().manual_seed(5)
    low = (4 + torch.randint(0, 4 * 256, (n,), generator=g).double() / 256)
    mid = low + 2.0**-9
    side = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
    return (mid + side * 2.0**-20).float(), (mid - side * 2.0**-20).float()


def test_the_reference_keeps_full_precision_through_a_float_cast():
    t, _ = _near_fp16_midpoints(8)
    (reference,) = reference_outputs(_CastThenSin(), [t])
    assert reference.dtype == torch.float64
    assert torch.equal(reference, torch.sin(t.double()))  # not sin of the fp16-rounded value
    ints = torch.arange(6)
    assert torch.equal(reference_outputs(lambda x: (x.to(torch.int8) * 2,), [ints])[0], ints.to(torch.int8) * 2)


def test_a_kernel_that_rounds_the_other_way_at_a_cast_is_not_reported():
    # eager rounds each value to its fp16 neighbour; the "kernel" got float32 values on the
    # other side of the midpoint and rounds to the other neighbour: sin's outputs (magnitudes
    # below 1) differ by up to 2**-8 = 0.0039. A reference that rounded as eager did (the model
    # run on float64 inputs, its cast kept) calls that wrong; the wide reference does not
    model = _CastThenSin()
    t, flipped = _near_fp16_midpoints()
    (eager,), (actual,) = model(t), model(flipped)
    assert (t.half() != flipped.half()).all()  # every value rounds the other way
    eps = torch.finfo(torch.float16).eps
    rounded_reference = model(t.double())
    assert compare_outputs([actual], [eager], rounded_reference, min_eps=eps) is not None
    assert compare_outputs([actual], [eager], reference_outputs(model, [t]), min_eps=eps) is None
    # a wrong value (another element's) is still wrong against the wide reference
    shifted = actual.roll(1)
    assert compare_outputs([shifted], [eager], reference_outputs(model, [t]), min_eps=eps) is not None


def test_a_wrong_element_past_a_chunk_boundary_is_first_and_worst_with_its_index(monkeypatch):
    # outputs larger than one chunk are judged chunk by chunk: the verdict must still name the
    # first wrong element and the worst one by their index in the whole tensor
    from fuzzaoti.check import oracle

    monkeypatch.setattr(oracle, "CHUNK", 1000)
    g = torch.Generator().manual_seed(3)
    eager = torch.randn(7, 1001, generator=g)
    actual = eager.clone()
    actual[2, 5] += 0.5  # flat 2007: in the third chunk
    actual[6, 1000] += 50.0  # flat 7006: the last chunk, and the worst
    verdict = compare_outputs([actual], [eager], [eager.double()])
    assert verdict["wrong"] == 2 and verdict["numel"] == 7007
    assert verdict["first"] == {"index": [2, 5], "flat": 2007}
    assert [w["index"] for w in verdict["worst"]] == [[6, 1000], [2, 5]]
    ints = torch.arange(5000)
    bad = ints.clone()
    bad[4321] = 0
    assert compare_outputs([bad], [ints], [ints])["first"]["flat"] == 4321


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32, torch.float64]),
       seed=st.integers(0, 2**31 - 1), spread=st.sampled_from([0.0, 1e-8, 1e-3, 1.0, 1e3]),
       scale=st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0, 2.0, 3.0, 6.0]), mult=st.sampled_from([2.0, 4.0, 8.0]))
def test_what_the_quick_pass_accepts_the_full_rule_accepts_whatever_the_reference(dtype, seed, spread, scale, mult):
    # the quick pass's bound is proved sufficient for any reference (the triangle inequality):
    # a reference far from eager, zeros, values near the bound and past it must never make the
    # full rule call wrong what the quick pass let through; if it could, a quick pass would
    # hide real miscompiles
    from fuzzaoti.check.oracle import _plainly_agrees, full_rule

    g = torch.Generator().manual_seed(seed)
    eager = (torch.randn(257, generator=g) * torch.randint(0, 2, (257,), generator=g)).to(dtype)
    eps = torch.finfo(dtype).eps
    step = (torch.rand(257, generator=g, dtype=torch.float64) * 2 - 1) * scale * mult / 2 * eps
    actual = (eager.double() * (1 + step)).to(dtype)
    reference = eager.double() + torch.randn(257, generator=g, dtype=torch.float64) * spread
    if _plainly_agrees(actual, eager, mult):
        assert full_rule(actual, eager, reference, mult) is None


def test_the_quick_pass_spares_agreeing_runs_the_full_rule_and_not_wrong_ones(monkeypatch):
    # the point of the quick pass: an equal or closely agreeing output never pays the float64
    # passes; a wrong one still gets its verdict from them
    from fuzzaoti.check import oracle

    calls = []
    real = oracle.full_rule
    monkeypatch.setattr(oracle, "full_rule", lambda *a, **k: calls.append(1) or real(*a, **k))
    eager, reference, other = _bmm_case(torch.float32)
    assert compare_outputs([eager.clone()], [eager], [reference]) is None
    assert compare_outputs([eager * (1 + 1e-7)], [eager], [reference]) is None
    assert compare_outputs([torch.arange(9)], [torch.arange(9)], [torch.arange(9)]) is None
    assert calls == []
    wrong = eager.clone()
    wrong[3, 5, 7] += 1.0
    assert compare_outputs([wrong], [eager], [reference])["wrong"] == 1 and calls == [1]


def test_poisoning_leaves_cpu_tensors_alone():
    from fuzzaoti.check.oracle import poison_like

    ints = torch.arange(10, dtype=torch.int8)
    poison_like([ints, torch.ones(3).expand(4, 3), None])
    assert torch.equal(ints, torch.arange(10, dtype=torch.int8))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,poison", [(torch.int8, 127), (torch.bfloat16, float("nan")), (torch.int64, 2**63 - 1)])
def test_the_next_output_of_a_poisoned_size_finds_the_poison_not_stale_eager_values(dtype, poison):
    # a kernel that stores nothing must leave its output visibly wrong: the block a compiled
    # output of eager's size is given holds the poison, not the eager values freed before it
    from fuzzaoti.check.oracle import poison_like

    eager = torch.zeros(2**26, dtype=dtype, device="cuda")
    stale = eager.clone()  # a copy of eager's output, freed as an eager pass's would be
    del stale
    poison_like([eager])
    output = torch.empty_like(eager)  # what an output allocation of that size is given
    if dtype.is_floating_point:
        assert torch.isnan(output).all()
    else:
        assert (output == poison).all()


def test_a_package_that_hands_back_none_for_an_output_is_a_mismatch_not_a_crash():
    import torch

    from fuzzaoti.check.oracle import compare_outputs

    eager = [torch.ones(3)]
    assert compare_outputs([None], eager, eager)["reason"] == "type"

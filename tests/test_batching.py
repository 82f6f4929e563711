"""Adaptive batch size: climb to the size that checks the most programs per second."""

from fuzzaoti.workers.batch_size import MAX_BATCH, MIN_BATCH, AdaptiveBatch, BatchSizes


def _run(batch, seconds_for, steps):
    sizes = []
    for _ in range(steps):
        sizes.append(batch.update(seconds_for(batch.size), False))
    return sizes


def test_grows_while_bigger_batches_are_cheaper_per_program():
    b = AdaptiveBatch(16, target_s=1000)
    assert _run(b, lambda n: 10 + 0.5 * n, 4) == [32, 64, MAX_BATCH, MAX_BATCH]


def test_settles_where_per_program_cost_starts_to_grow():
    # fixed 10 s + superlinear per-program cost: best near 16-32 programs
    b = AdaptiveBatch(16, target_s=1000)
    sizes = _run(b, lambda n: 10 + 0.02 * n * n, 8)
    assert sizes[-1] in (16, 32) and sizes[-3:] == [sizes[-1]] * 3


def test_slow_or_troubled_batches_halve_down_to_the_floor():
    b = AdaptiveBatch(16, target_s=100)
    assert b.update(200, False) == 8
    assert b.update(60, True) == MIN_BATCH
    assert b.update(60, True) == MIN_BATCH


def test_a_size_the_user_gave_never_changes():
    b = AdaptiveBatch(12, fixed=True, target_s=100)
    assert b.update(1, False) == 12 and b.update(1000, True) == 12


def test_the_last_batch_fits_the_time_left():
    sizes = BatchSizes(16)
    b = sizes.of("default")
    b.target_s = 1000
    assert sizes.fitting("default", 5) == 16  # nothing measured yet: no estimate
    b.update(20, False)  # 16 programs in 20 s: 0.8 per second; the next size is 32
    assert sizes.fitting("default", 1000) == 32
    assert sizes.fitting("default", 10) == 8  # 0.8/s for 10 s
    assert sizes.fitting("default", 0) == MIN_BATCH
    assert BatchSizes(12, fixed=True).fitting("default", 1) == 12
    b.update(1, False, checked=8)  # a cut batch: no rate learned, no step
    assert b.size == 32 and set(b.rate) == {16}


def test_each_config_set_climbs_on_its_own_rates():
    sizes = BatchSizes(16)
    sizes.of("default").update(16, False)  # 1 program/s: the defaults climb to 32
    sizes.of("max_autotune").update(120, False)  # 16 in 120 s: twice that would pass 1.5x the target
    assert sizes.of("default").size == 32 and sizes.of("max_autotune").size == 16
    sizes.of("default").update(24, False)  # 32 in 24 s beats 16 in 16 s: on to 64
    assert sizes.of("default").size == 64 and sizes.of("max_autotune").size == 16
    assert sizes.describe() == "default 64, max_autotune 16"
    # a set not yet measured is estimated at the slowest rate measured: its last batch errs small
    assert sizes.rate("triton.native_matmul") == 16 / 120
    assert sizes.fitting("triton.native_matmul", 60) == 8
    assert BatchSizes(16).describe() == "16"


def test_a_batch_drawn_before_the_size_changed_only_adds_its_rate():
    b = AdaptiveBatch(16, target_s=1000)
    assert b.update(20, False) == 32  # batch 1 (16 programs); batch 2 was queued at 16 meanwhile
    assert b.update(10, False, checked=16, size=16) == 32  # batch 2: its rate is noted, no step
    assert b.rate[16] == (16 / 20 + 16 / 10) / 2
    assert b.update(500, True, checked=16, size=16) == 8  # trouble halves from the smaller size

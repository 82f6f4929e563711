"""Adaptive batch size: grow while batches are quick, shrink when slow or troubled."""

from fuzzaoti.batching import MAX_BATCH, MIN_BATCH, AdaptiveBatch


def test_quick_batches_double_up_to_the_cap():
    b = AdaptiveBatch(16, target_s=100)
    assert [b.update(10, False) for _ in range(4)] == [32, 64, MAX_BATCH, MAX_BATCH]


def test_slow_or_troubled_batches_halve_down_to_the_floor():
    b = AdaptiveBatch(16, target_s=100)
    assert b.update(200, False) == 8
    assert b.update(60, True) == MIN_BATCH
    assert b.update(60, True) == MIN_BATCH
    assert b.update(80, False) == MIN_BATCH  # within the target band: stays


def test_a_size_the_user_gave_never_changes():
    b = AdaptiveBatch(12, fixed=True, target_s=100)
    assert b.update(1, False) == 12 and b.update(1000, True) == 12

"""Hypothesis strategies for AOTInductor test cases (``fuzzaoti.strategies``).

Use them in your own tests::

    from hypothesis import given
    from fuzzaoti.strategies import programs, runtime_shapes

    @given(programs(device="cpu"))
    def test_exports(program): ...

This module only re-exports; the implementations live in the private modules beside it, and
each loads (Hypothesis with it) on first use: the CLI reads ``PROFILES`` for its options at
start-up, before any command draws a program.
"""

import importlib

_HOMES = {
    "PROFILES": "_profiles", "Profile": "_profiles", "get_profile": "_profiles",
    "batch_config_sets": "_configs", "config_sets": "_configs", "CORE_OPS": "_core", "programs": "_programs",
    "cases": "_shapes", "runtime_shapes": "_shapes", "batches": "_batches", "cases_per_batch": "_batches",
    "crossing_first": "_batches",
}

__all__ = sorted([*_HOMES, "Case", "Run"])


def __getattr__(name: str):
    if name in ("Case", "Run"):  # the data types live in fuzzaoti.model.case
        return getattr(importlib.import_module("fuzzaoti.model.case"), name)
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

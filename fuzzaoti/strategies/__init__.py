"""Hypothesis strategies for AOTInductor test cases (``fuzzaoti.strategies``).

Use them in your own tests::

    from hypothesis import given
    from fuzzaoti.strategies import programs, runtime_shapes

    @given(programs(device="cpu"))
    def test_exports(program): ...

This module only re-exports; the implementations live in the private modules beside it, and
the profiles (``profiles``) in a public one the CLI reads for its options.
"""

from fuzzaoti.model.case import Case, Run
from fuzzaoti.strategies._batches import batches, cases_per_batch, crossing_first
from fuzzaoti.strategies._configs import batch_config_sets, config_sets
from fuzzaoti.strategies._core import CORE_OPS
from fuzzaoti.strategies._programs import programs
from fuzzaoti.strategies._shapes import cases, runtime_shapes
from fuzzaoti.strategies.profiles import PROFILES, Profile, get_profile

__all__ = ["CORE_OPS", "Case", "PROFILES", "Profile", "Run", "batch_config_sets", "batches", "cases",
           "cases_per_batch", "config_sets", "crossing_first", "get_profile", "programs", "runtime_shapes"]

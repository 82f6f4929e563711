"""Hypothesis strategies for AOTInductor test cases (``fuzzaoti.strategies``).

Use them in your own tests::

    from hypothesis import given
    from fuzzaoti.strategies import programs, runtime_shapes

    @given(programs(device="cpu"))
    def test_exports(program): ...

This module only re-exports; the implementations live in the private modules beside it.
"""

from fuzzaoti.strategies._profiles import PROFILES, Profile, get_profile
from fuzzaoti.model.case import Case, Run
from fuzzaoti.strategies._configs import batch_config_sets, config_sets
from fuzzaoti.strategies._core import CORE_OPS
from fuzzaoti.strategies._programs import programs
from fuzzaoti.strategies._shapes import cases, runtime_shapes

__all__ = ["CORE_OPS", "PROFILES", "Case", "Profile", "Run", "batch_config_sets", "cases", "config_sets", "get_profile", "programs",
           "runtime_shapes"]

"""Batches: the cases one campaign batch checks, drawn as one Hypothesis example.

One example per batch lets the corpus replay a failing batch from its choices (the example
database), and keeps the batch's compile configs shared: only programs of one config set
compile as one module.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.errors import InvalidArgument
from fuzzaoti.model.case import Case
from fuzzaoti.model.scale import is_large
from fuzzaoti.strategies.profiles import get_profile
from fuzzaoti.strategies._programs import programs
from fuzzaoti.strategies._shapes import cases


def cases_per_batch(profile: str, batch_size: int | None) -> int:
    """How many cases a batch draws: the profile's ``draw_batch`` for an adaptive size, twice a
    fixed size (spares for the quarantine) up to that; a fixed size past it cannot be drawn
    (``Profile`` says why) and is refused."""
    prof = get_profile(profile)
    if batch_size is None:
        return prof.draw_batch
    if batch_size > prof.draw_batch:
        raise InvalidArgument(f"--batch-size {batch_size}: the {profile} profile draws at most "
                              f"{prof.draw_batch} programs a batch")
    return min(2 * batch_size, prof.draw_batch)


def batches(config_sets: list[dict], count: int, device: str, profile: str, max_bytes: int | None,
            runs: int) -> st.SearchStrategy[list[Case]]:
    """``count`` cases of distinct programs that share one config set of ``config_sets`` (dear
    sets are listed less often by ``batch_config_sets``, so each gets about the same compile time)."""
    def of(configs: dict) -> st.SearchStrategy[list[Case]]:
        drawn = programs(device=device, profile=profile, max_bytes=max_bytes, configs=configs)
        return st.lists(cases(drawn, runs=runs, profile=profile, max_bytes=max_bytes),
                        min_size=count, max_size=count, unique_by=lambda case: case.program.id)

    return st.sampled_from(config_sets).flatmap(of)


def crossing_first(drawn: list[Case]) -> list[Case]:
    """``drawn`` with the cases that have a run past a crossing (``scale.is_large``) first, each
    part in drawn order: a batch checks the first cases the quarantine keeps, so a large batch
    takes the programs that reach 2**31 or a 65535 batch within ``--max-bytes`` before those
    that reach none (about 3 in 10 drawn on an H200's budget: a float program's reference needs
    8 bytes an element), and fills up with those only when it must. Only for the large profile:
    in the small one the runs that cross are index arithmetic past 2**31 (its values), and
    putting them first would crowd its batches with that one op."""
    return sorted(drawn, key=lambda case: not any(is_large(case.program, dict(run.env)) for run in case.runs))

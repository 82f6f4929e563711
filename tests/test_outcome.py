"""fuzzaoti.check.outcome: an outcome names a known stage and symptom, or it is not made."""

import pytest

from fuzzaoti.check.outcome import STAGES, SYMPTOMS, Outcome


def test_an_outcome_of_an_unknown_stage_or_symptom_is_refused():
    assert all(Outcome(stage, symptom) for stage in STAGES for symptom in SYMPTOMS)
    with pytest.raises(ValueError, match="unknown outcome stage 'runn'"):
        Outcome("runn", "exception")
    with pytest.raises(ValueError, match="unknown outcome symptom 'segfault'; one of pass, invalid"):
        Outcome("run", "segfault")

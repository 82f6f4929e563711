import pytest

from fuzzaoti.model import sizes
from fuzzaoti.errors import InvalidProgram


@pytest.mark.parametrize("text,env,value", [("b", {"b": 5}, 5), ("2*b+1", {"b": 5}, 11), ("n-2", {"n": 7}, 5),
                                           ("b+c-1", {"b": 5, "c": 2}, 6), (3, {}, 3)])
def test_evaluate(text, env, value):
    assert sizes.evaluate(text, env) == value


@pytest.mark.parametrize("bad", ["", "2b", "b*2", "+-b", "b c", 1.5, True])
def test_rejects_malformed(bad):
    with pytest.raises(InvalidProgram):
        sizes.parse(bad)


def test_canonical_and_helpers():
    assert sizes.canonical(" 2 * b ") == "2*b"
    assert sizes.canonical("b-b+4") == 4
    assert sizes.negate("n") == "-n"
    assert sizes.add("n", -3) == "n-3"
    assert sizes.parse("2*b+1").bounds({"b": (1, 10)}) == (3, 21)

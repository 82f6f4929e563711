"""Big dims: the dynamic sizes the large profile runs past 2**31, of every kind a user declares.

The seeds' remedy, a bounded ``Dim`` max, works because Inductor picks its index width from what
it knows of a dim's range, and for a dim it knows nothing about it falls back on the size it saw
at export. So each big dim is exported at a *small* hint (2 to 64) and declared as one of:

* ``bounded-far``: ``Dim(max=2**33 or 2**34)``, far past every crossing;
* ``bounded-just``: a max just past the size at which the family's big tensor crosses 2**31
  (or 2**32): the seeds' bounded max, set a little too high;
* ``unbounded``: ``Dim(min=...)`` with no max: valid at every size, so running it at 3*2**30
  is no undefined behaviour but the very test the seeds ask for;
* ``auto`` / ``dynamic``: ``Dim.AUTO`` / ``Dim.DYNAMIC`` (export decides the range; fuzzaoti
  feeds sizes up to ``FEED_MAX``);
* ``derived``: the input axis is ``2*d`` or ``d+1`` of a big bounded or unbounded root ``d``,
  which a small companion input declares directly (torch.export needs the root on some axis).

Runtime sizes are solved per program (``strategies/_shapes.py``), never drawn from the range.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzzaoti.model import sizes
from fuzzaoti.model.program import DimSpec
from fuzzaoti.model.scale import FEED_MAX

BIG_KINDS = ("bounded-far", "bounded-just", "unbounded", "auto", "dynamic", "derived")
FAR_MAXES = (2**33, 2**34)
BIG_MIN = 2**15  # a dim whose max passes this (or has none) is big: its runtime sizes are solved


def is_big(d: DimSpec) -> bool:
    return d.max is None or d.max > BIG_MIN


def _dim(b, kind: str, low: int, high: int | None) -> str:
    name = f"d{len(b.dims)}"
    hint = b.draw(st.integers(max(low, 2), 64))
    b.dims.append(DimSpec(name, low, high, hint, kind))
    return name


def big_axis(b, per: int, low: int = 2) -> sizes.Size:
    """The size of a new input axis that runs past 2**31 elements: a big dim of a drawn kind, or
    a size derived from one. ``per``: elements of the family's big tensor per unit of this axis
    (its other axes' product), which a ``bounded-just`` max is solved from; ``low``: the least
    size the family needs (an index of ``low`` distinct values into it, say)."""
    kind = b.draw(st.sampled_from(BIG_KINDS))
    low = max(low, b.draw(st.sampled_from((2, 1, 3))))
    if kind in ("auto", "dynamic"):
        return _dim(b, kind, low, FEED_MAX)
    if kind == "derived":
        root = _dim(b, "range", low, b.draw(st.sampled_from((None,) + FAR_MAXES)))
        b.add_input("int8", (root,))  # the companion: the root on an axis of its own
        return b.draw(st.sampled_from((f"2*{root}", f"{root}+1")))
    if kind == "unbounded":
        return _dim(b, "range", low, None)
    if kind == "bounded-far":
        return _dim(b, "range", low, b.draw(st.sampled_from(FAR_MAXES)))
    crossing = b.draw(st.sampled_from((2**31, 2**32)))
    return _dim(b, "range", low, -(-crossing // per) + b.draw(st.integers(0, 3)))


def big_kind(program, size: sizes.Size) -> str | None:
    """Which ``BIG_KINDS`` entry an axis of ``size`` is (None: not a big axis): for histograms."""
    affine = sizes.parse(size)
    if len(affine.coefs) != 1:
        return None
    (name, coef), = affine.coefs
    d = program.dim[name]
    if not is_big(d):
        return None
    if coef != 1 or affine.const:
        return "derived"
    if d.kind != "range":
        return d.kind
    if d.max is None:
        return "unbounded"
    return "bounded-far" if d.max in FAR_MAXES else "bounded-just"

"""Size profiles: how large generated programs and their runtime shapes may get."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fuzzaoti.errors import InvalidArgument


@dataclass(frozen=True)
class Profile:
    """``big_sizes``: the static batches a chunked big bmm may take (past the CUDA grid's
    65535); a profile with any is *large*: its programs come from ``strategies/_large.py``, with
    big dims of every kind (``_big_dims``) run past 2**31 and 2**32 elements. ``max_bytes``:
    what one checked run may hold (``fuzzaoti.model.scale.run_bytes``: inputs, intermediates,
    outputs, the reference).

    ``start_batch``/``max_batch``: where a campaign's adaptive batch size starts and its
    ceiling; ``draw_batch``: how many cases one batch draws (one Hypothesis example: the spares
    replace those the quarantine sets aside), which Hypothesis's 8 KiB choice buffer bounds. A
    large case of 12 runs cost about 150 bytes of it: 64 of them overran it on every try, and a
    campaign would wait forever for its first batch. At 16 runs a
    case cost some 230, and a draw of 32 came within 20 bytes of the end; one seed for all its
    runs and no draws for the big dims a past-crossing run grows anyway bring it to about 125,
    so a draw of 48 uses at most 6.7 KiB (test_strategies checks it fits). A large compile's
    cost is mostly fixed (``scripts/bench_compile.py`` on CPU: one large program 5.5 s, 16 as
    one module 11.5 s, 32 15.4 s), so the ceiling of 32 lets the batch climb past the 16 the
    buffer held it to before; a batch of 16 large programs holds some 250 runs of gigabytes."""

    name: str
    max_dim: int  # largest declared max of a bounded small dim
    cap: int  # largest runtime size fed to an unbounded small dim
    max_const: int  # largest static size
    max_bytes: int  # bytes of one checked run
    big_sizes: tuple[int, ...] = ()
    start_batch: int = 16
    max_batch: int = 64
    draw_batch: int = 64


PROFILES = {
    "small": Profile("small", max_dim=64, cap=96, max_const=8, max_bytes=32 << 20),
    # for GPU nodes: every op family past 2**31 and 2**32 elements and bmm batches past 65535, in
    # cheap dtypes (int8, fp16); a campaign on cuda sets the budget from the GPU's free memory
    "large": Profile("large", max_dim=64, cap=96, max_const=8, max_bytes=4 << 30,
                     big_sizes=(65535, 65536, 65537, 2**17 + 3, 2**18 + 1),
                     start_batch=8, max_batch=32, draw_batch=48),
}


def get_profile(name: str, max_bytes: int | None = None) -> Profile:
    """The named profile, with its byte budget replaced by ``max_bytes`` when given."""
    if name not in PROFILES:
        raise InvalidArgument(f"unknown profile={name!r}; choose from {', '.join(PROFILES)}")
    if max_bytes is not None and max_bytes < 1:
        raise InvalidArgument(f"Cannot have max_bytes={max_bytes} < 1")
    profile = PROFILES[name]
    return profile if max_bytes is None else replace(profile, max_bytes=max_bytes)

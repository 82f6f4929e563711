"""Size profiles: how large generated programs and their runtime shapes may get."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fuzzaoti.errors import InvalidArgument


@dataclass(frozen=True)
class Profile:
    """``big_sizes``: declared maxima for the dims the large core ops make big (CUDA grid
    limits at 65535/65536, index spaces past 2**31 and 2**32); empty for the small profile."""

    name: str
    max_dim: int  # largest declared max of a bounded dim
    cap: int  # largest runtime size fed to an unbounded dim
    max_const: int  # largest static size
    max_bytes: int  # input bytes per runtime shape
    big_sizes: tuple[int, ...] = ()


PROFILES = {
    "small": Profile("small", max_dim=64, cap=96, max_const=8, max_bytes=8 << 20),
    # for GPU nodes: batches past 65535 and stride-0 index spaces past 2**31 / 2**32 elements,
    # with small inputs (int8, expanded views) so that one case fits in --max-bytes
    "large": Profile("large", max_dim=64, cap=96, max_const=8, max_bytes=4 << 30,
                     big_sizes=(65535, 65536, 65537, 2**17 + 3, 2**18 + 1)),
}


def get_profile(name: str, max_bytes: int | None = None) -> Profile:
    """The named profile, with its byte budget replaced by ``max_bytes`` when given."""
    if name not in PROFILES:
        raise InvalidArgument(f"unknown profile={name!r}; choose from {', '.join(PROFILES)}")
    if max_bytes is not None and max_bytes < 1:
        raise InvalidArgument(f"Cannot have max_bytes={max_bytes} < 1")
    profile = PROFILES[name]
    return profile if max_bytes is None else replace(profile, max_bytes=max_bytes)

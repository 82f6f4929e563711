"""Size profiles: how large generated programs and their runtime shapes may get."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzaoti.errors import InvalidArgument


@dataclass(frozen=True)
class Profile:
    name: str
    max_dim: int  # largest declared max of a bounded dim
    cap: int  # largest runtime size fed to an unbounded dim
    max_const: int  # largest static size
    max_bytes: int  # input bytes per runtime shape


PROFILES = {
    "small": Profile("small", max_dim=64, cap=96, max_const=8, max_bytes=8 << 20),
}


def get_profile(name: str) -> Profile:
    if name not in PROFILES:
        raise InvalidArgument(f"unknown profile={name!r}; choose from {', '.join(PROFILES)}")
    return PROFILES[name]

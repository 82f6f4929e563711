"""Backends by name. Adding one is one entry in ``BACKENDS``; nothing else dispatches on names."""

from __future__ import annotations

from fuzzaoti.compile.backends.aoti import AotiBackend
from fuzzaoti.compile.backends.base import Backend, Prepared, StageFailure
from fuzzaoti.compile.backends.dynamo import AotEagerBackend, InductorBackend
from fuzzaoti.compile.backends.eager import EagerBackend
from fuzzaoti.compile.backends.fake import FakeBackend
from fuzzaoti.errors import UnknownName

BACKENDS: dict[str, type] = {
    b.name: b for b in (AotiBackend, EagerBackend, AotEagerBackend, InductorBackend, FakeBackend)
}
DEVICES = ("cpu", "cuda")
#: the backends a campaign (or recheck) checks programs with; the rest are triage's ladder rungs
CAMPAIGN_BACKENDS = ("aoti", "fake")


def get_backend(name: str) -> Backend:
    if name not in BACKENDS:
        raise UnknownName(f"unknown backend {name!r}; choose from {', '.join(BACKENDS)}")
    return BACKENDS[name]()


__all__ = ["BACKENDS", "CAMPAIGN_BACKENDS", "DEVICES", "Backend", "Prepared", "StageFailure", "get_backend"]

"""The backend protocol: turn a Program into something callable on runtime inputs.

A backend does its work in named stages (export, compile, load) and reports each through
``progress`` before starting it, so a crash inside a stage is attributed to that stage by the
worker's parent. A failure inside a stage is raised as ``StageFailure``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from fuzzaoti.program import Program

Progress = Callable[[str], None]


class StageFailure(Exception):
    """An exception raised inside a backend stage, tagged with that stage."""

    def __init__(self, stage: str, error: BaseException):
        super().__init__(f"{stage}: {type(error).__name__}: {error}")
        self.stage = stage
        self.error = error


@dataclass
class Prepared:
    """A compiled program: call it with input tensors; ``accepts`` says which runtime sizes it
    may legally be fed (inside the ranges export decided), so no undefined input is ever run."""

    run: Callable[..., Any]
    ranges: Mapping[tuple[int, int], tuple[int, int | None]]

    def accepts(self, shapes: list[tuple[int, ...]], offset: int = 0) -> bool:
        """True if inputs of these shapes, fed from input ``offset`` on, are in range."""
        for (index, axis), (lo, hi) in self.ranges.items():
            if not offset <= index < offset + len(shapes):
                continue
            size = shapes[index - offset][axis]
            if size < lo or (hi is not None and size > hi):
                return False
        return True


class Backend(Protocol):
    name: str

    def prepare(self, program: Program, namespace: dict, example: list, device: str,
                workdir: str, progress: Progress) -> Prepared:
        """Export/compile/load ``program`` (``namespace`` holds its rendered source)."""
        ...


def stage(name: str, progress: Progress, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` as stage ``name``: announce it, and tag any exception with the stage."""
    progress(name)
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - every failure of the compiler is data here
        raise StageFailure(name, exc) from exc

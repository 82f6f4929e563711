"""A campaign's settings (what ``fuzzaoti fuzz`` was asked, stored with the campaign so that
``--resume`` carries on alike), its counts (stored after every batch) and its timeline.

The settings check themselves when built: each flag a campaign cannot honour fails here,
before a corpus is opened, so a bad flag leaves no empty corpus behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from fuzzaoti.corpus.campaign_record import COUNT_COLUMNS
from fuzzaoti.corpus.quarantine import DEFAULT_RATE
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.launch.shards import check_shard
from fuzzaoti.strategies import batch_config_sets, cases_per_batch


@dataclass(frozen=True)
class CampaignSettings:
    device: str = "cpu"
    backend: str = "aoti"
    minutes: float = 5.0
    seed: int = 0
    canary: str | None = None
    batch_size: int | None = None  # None: adaptive (fuzzaoti.workers.batch_size), from the profile's start_batch
    runs_per_program: int = 4
    workers: int | None = None  # None: 1 on cpu, one per GPU on cuda
    gpus: str | None = None  # comma-separated GPU ids for the cuda workers; None: the visible ones
    profile: str = "small"
    max_bytes: int | None = None  # bytes of one checked run; None: the profile's (large on cuda: the GPU's)
    max_batches: int | None = None
    shrink_minutes: float = 3.0
    follow_up_minutes: float | None = None  # after the deadline, for follow_up.deferred findings; None: minutes
    triage: bool = True  # triage each new finding (ladder + remedies) after shrinking; AOTI only
    known_file: str | None = None  # the user's known-bug list; None: fuzzaoti-known.txt beside the corpus
    compile_timeout: float = 900.0
    run_timeout: float = 300.0
    quarantine_rate: float = DEFAULT_RATE  # share of programs that would trip a found bug still checked (alone)
    configs: str | None = None  # the one compile config set to draw (strategies.CONFIG_SETS); None: all
    shard: int = 0  # this task's part of a campaign spread over ``shards`` tasks (fuzzaoti.launch.shards)
    shards: int = 1
    coverage: bool = False  # record the Inductor lines the compiles run (fuzzaoti.coverage)
    guided: bool = False  # draw a share of programs as mutants of new-decision seeds (campaign.guided); records coverage

    def __post_init__(self) -> None:
        check_shard(self.shard, self.shards)  # each flag the campaign cannot honour fails here, before a corpus opens
        cases_per_batch(self.profile, self.batch_size)  # a size the profile cannot draw
        batch_config_sets(self.device, self.configs)  # a config set this device or torch lacks
        if self.guided and (self.device != "cpu" or self.profile != "small"):
            # (its seeds are told apart by their C++ loop nests; a mutant's runs are a small program's)
            raise InvalidArgument("--guided needs --device cpu and the small profile: it learns from the "
                                  "C++ loop nests each program's compile took")


@dataclass
class Counts:
    batches: int = 0
    programs: int = 0
    runs_checked: int = 0
    runs_skipped: int = 0
    programs_large: int = 0  # programs checked at one run past a crossing at least
    runs_large: int = 0  # runs checked past a crossing: 2**31 elements, a 65535 batch (fuzzaoti.model.scale)
    runs_over_budget: int = 0  # runs not run: predicted over --max-bytes
    runs_oom: int = 0  # runs not run: out of memory (never a finding)
    runs_cut: int = 0  # runs not run: the deadline came first (their programs count, checked at the rest)
    runs_directed: int = 0  # runs at sizes breaking what Inductor assumed (fuzzaoti.workers.directed)
    invalid: int = 0
    failures: int = 0
    new_findings: int = 0
    worker_restarts: int = 0
    quarantined: int = 0  # drawn programs set aside: they would trip a bug already found
    finding_ids: list[int] = field(default_factory=list)
    replayed: int = 0  # batches replayed from the corpus's example database (not stored)
    repeats: int = 0  # drawn programs this run had checked before, not checked again (not stored)

    def stored(self) -> dict[str, int]:
        """The counts a campaign's row keeps (``corpus.campaign_record.COUNT_COLUMNS``)."""
        return {k: getattr(self, k) for k in COUNT_COLUMNS}

    def runs_note(self) -> str:
        """`` (N past a crossing, N breaking an Inductor assumption, N over budget, N out of memory,
        N not run at the deadline)`` where any is non-zero."""
        c = self
        parts = [f"{n} {what}" for n, what in ((c.runs_large, f"past a crossing, of {c.programs_large} programs"),
                                              (c.runs_directed, "breaking an Inductor assumption"),
                                              (c.runs_over_budget, "over --max-bytes"),
                                              (c.runs_oom, "out of memory"),
                                              (c.runs_cut, "not run at the deadline")) if n]
        return f" ({', '.join(parts)})" if parts else ""


class Mark(NamedTuple):
    """Where a campaign stood after one of its batches: seconds since this run started, and
    what this run had checked by then (a resumed campaign's earlier runs not counted). The
    first mark ends the cold start, which ``scripts/bench_throughput.py`` reports apart."""

    seconds: float
    programs: int
    programs_large: int
    runs_large: int


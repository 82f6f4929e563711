"""The campaign runner, in named phases: generate → check → record, until the time is up; then
the follow-up (shrink and triage) of the findings left for after the deadline (campaign.follow_up).

Generation is driven by Hypothesis (``@given`` over a list of cases, one list per batch), so
every program, runtime shape and input seed comes from Hypothesis's choice sequence and a
campaign with the same ``--seed`` draws the same batches. Checking happens in the worker pool;
recording deduplicates failures by signature into the corpus, committing after every batch,
so a killed campaign loses at most the batch in flight.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, replace
from typing import Callable

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import FailedHealthCheck

from fuzzaoti import compat
from fuzzaoti.campaign.settings import CampaignSettings, Counts, Mark
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.launch.shards import in_shard, shard_seed
from fuzzaoti.corpus import Corpus
from fuzzaoti.campaign.in_flight import InFlight, settle
from fuzzaoti.corpus.store import refuse_if_alive
from fuzzaoti.corpus.hypothesis_db import CorpusExampleDatabase, batch_key
from fuzzaoti.workers.batch_size import BatchSizes
from fuzzaoti.corpus.known_bugs import KnownList, builtin_entries
from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import signature
from fuzzaoti.corpus.finding import ReplayResult
from fuzzaoti.corpus.migrations import now
from fuzzaoti.workers.pool import WorkerPool
from fuzzaoti.workers.pool_stats import configs_label
from fuzzaoti.corpus.record import store_failure
from fuzzaoti.corpus.quarantine import Quarantine, finding_trigger, known_triggers
from fuzzaoti.model.case import Case
from fuzzaoti.campaign.slowest import SlowestRun
from fuzzaoti.strategies import batch_config_sets, batches, cases_per_batch, crossing_first, get_profile
from fuzzaoti.campaign.follow_up import FollowUps, deferred
from fuzzaoti.campaign.guided import Guide
from fuzzaoti.workers.placement import default_max_bytes, default_workers, pin_gpu, wants_standby
from fuzzaoti.workers.worker import WorkerConfig


PROGRESS_EVERY_S = 5.0
WAITING_EVERY_S = 30.0  # progress while one batch takes long (a large compile, a bisection)
#: the first batch of a campaign (not resumed), whatever the adaptive size; each next one is
#: twice its size until the adaptive size is reached (4, 8, then 16 on the CPU). On the 2-core
#: CPU a first batch of 4 was done 13 to 15 s after the start (scripts/bench_throughput.py's
#: cold start), of 16 21 s, while the naive one-compile-a-program loop's first program took
#: 11 s; a second batch of 8 was done about 4 s sooner than one of 16 (index-wild's findings
#: in the second batch, scripts/bench_first_finding.py)
FIRST_BATCH = 4
GRACE_S = 60.0  # past --minutes, groups being checked get this long before the campaign ends without them
# (after half of it their workers answer with the runs done: a group compiled just before the
# deadline still gets its runs; one whose big runs would take minutes counts those it has done)


class _TimeUp(BaseException):
    """Ends the Hypothesis run without counting as a test failure (a BaseException)."""


class Campaign:
    def __init__(self, corpus: Corpus, settings_: CampaignSettings, echo: Callable[[str], None] = print,
                 resume_id: int | None = None):
        self.corpus, self.settings, self.echo = corpus, settings_, echo
        self.counts = Counts()
        self.started = 0.0
        self.campaign_id: int | None = resume_id
        self.last_echo = 0.0
        self.progress_every = PROGRESS_EVERY_S
        self.before = Counts()  # the counts this run started from (a resumed campaign's are not 0)
        self.timeline: list[Mark] = []  # after each batch
        self.versions: dict = {}
        self.known = KnownList.load(corpus.path, settings_.known_file)
        self.pool: WorkerPool | None = None  # while running: per-worker progress and the pool's stats
        self.follow_ups: FollowUps | None = None  # while running: shrink and triage through the pool
        self.quarantine = Quarantine(rate=settings_.quarantine_rate)
        profile = get_profile(settings_.profile)
        self.batching = BatchSizes(settings_.batch_size or profile.start_batch, fixed=settings_.batch_size is not None,
                                   high=profile.max_batch)
        self.in_flight: list[InFlight] = []  # batches submitted to the pool, oldest first
        self.config_sets = batch_config_sets(settings_.device, settings_.configs)  # a bad name fails here, not later
        self.followed_up_s = 0.0  # seconds shrinking and triaging after the deadline
        self.last_done = 0.0  # when the last recorded batch was done (its outcomes all in)
        self.max_bytes = settings_.max_bytes  # set for the run: the GPU's free memory may decide it
        self.slowest = SlowestRun()  # the slowest compiled big run, kept for 'fuzzaoti stats --slowest'
        self.guide: Guide | None = None  # fuzz --guided (made in run: it needs the byte budget)
        self.guide_draws = 0  # batches drawn, the guide's generator's key
        self.submitted: set[str] = set()  # ids of the programs this run has sent to be checked
        # batches submitted under _ramp_cap's cap; -1 once ramped up, or resumed (it ramped before)
        self.ramped = 0 if resume_id is None else -1
        self._held: dict[str, tuple[list[Case], list[bytes]]] = {}  # per config set: a short draw, its choices

    @classmethod
    def resume(cls, corpus: Corpus, campaign_id: int, minutes: float | None = None,
               echo: Callable[[str], None] = print) -> Campaign:
        """Carry on campaign ``campaign_id`` with its stored settings and counts.

        Hypothesis is re-seeded with the stored seed and the number of batches already done,
        so the resumed run draws fresh batches rather than repeating the first ones.
        """
        stored = corpus.campaign(campaign_id)
        refuse_if_alive(stored)
        known = {k: v for k, v in stored.settings.items() if k in CampaignSettings.__dataclass_fields__}
        if minutes is not None:
            known["minutes"] = minutes
        campaign = cls(corpus, CampaignSettings(**known), echo, resume_id=campaign_id)
        campaign.counts = Counts(**stored.counts)
        campaign.slowest = SlowestRun(stored.slowest)
        return campaign

    # ---- phases ----------------------------------------------------------------------------
    def run(self) -> Counts:
        s = self.settings
        workers = s.workers or default_workers(s.device, s.gpus)
        self.max_bytes = s.max_bytes or default_max_bytes(s.device, s.profile, s.gpus, workers)
        self.guide = Guide(get_profile(s.profile, self.max_bytes), s.runs_per_program) if s.guided else None
        pool = self.pool = WorkerPool(
            WorkerConfig(device=s.device, backend=s.backend, canary=s.canary,
                         compile_timeout=s.compile_timeout, run_timeout=s.run_timeout, max_bytes=self.max_bytes,
                         coverage=s.coverage or s.guided),
            workers=workers,
            worker_env=(lambda k: pin_gpu(k, s.gpus)) if s.device == "cuda" else None,
            standby=wants_standby(s.device),
        )
        self.follow_ups = FollowUps(self.corpus, pool.check, lambda: pool.stats.mean_compile_s,
                                    s.shrink_minutes * 60, s.triage and s.backend == "aoti", self.echo)
        pool.launch()  # the workers import torch while this process does (versions) and sets up
        try:
            self.versions = compat.torch_versions(s.device)
            resumed = self.campaign_id is not None
            if resumed:
                self.corpus.claim_campaign(self.campaign_id)
                self.follow_ups.waiting = self._left_raw()
            else:
                self.campaign_id = self.corpus.start_campaign(
                    s.device, s.backend, s.canary, s.seed, asdict(s), self.versions)
            self._load_quarantine()
        except BaseException:
            pool.close()
            raise
        self.started = time.monotonic()
        self.before = replace(self.counts)
        status = "interrupted"
        self.echo(f"campaign {self.campaign_id}{' resumed' if resumed else ''}: {s.backend} on {s.device}, "
                  f"{s.minutes:g} min, seed {s.seed}{', canary ' + s.canary if s.canary else ''}"
                  f"{', configs ' + s.configs if s.configs else ''}, "
                  f"corpus {self.corpus.path}")
        try:
            pool.start()
            self._generate(pool)
            self._follow_up_deferred()
            status = "finished"
        finally:
            self.counts.worker_restarts = pool.restarts
            pool.close()
            self._store_coverage(pool, time.monotonic() - self.started)
            self.corpus.update_campaign(self.campaign_id, self.counts.stored(), status)
            self.echo(self.summary(status))
        return self.counts

    def _left_raw(self) -> list[int]:
        """This campaign's new findings that its last run left for after the deadline and never
        shrank or triaged (killed in its follow-up, say, by a job's time limit): the resumed
        run follows them up after its own deadline."""
        return [f.id for f in self.corpus.findings()
                if f.campaign_id == self.campaign_id and f.status == "new" and f.shrunk_case is None
                and not f.triage and deferred(f.stage, f.symptom, len(f.found_case.program.nodes))]

    def _follow_up_deferred(self) -> None:
        """Shrink and triage the findings left for after the deadline (``follow_up.deferred``)."""
        s = self.settings
        minutes = s.minutes if s.follow_up_minutes is None else s.follow_up_minutes
        began = time.monotonic()
        for fid in self.follow_ups.after_deadline(minutes * 60):
            self._count_member(fid, True)
        self.followed_up_s = time.monotonic() - began
        self.corpus.update_campaign(self.campaign_id, self.counts.stored())

    def _load_quarantine(self) -> None:
        """Triggers of the bugs already known: built-in entries (AOTInductor's bugs: under another
        backend, the fake one of the tests say, they quarantine nothing) and this corpus's findings."""
        device = self.settings.device
        aoti = self.settings.backend == "aoti"
        for trigger in known_triggers(builtin_entries(), device, self.versions["torch"], self.settings.profile) if aoti else ():
            self.quarantine.add(trigger)
        for row in self.corpus.findings():
            self.quarantine.add(finding_trigger(row, device))
        q = self.quarantine
        if q.triggers and q.rate < 1:
            kept = f"{q.rate:.0%} of them checked, each alone, the rest" if q.rate else "all"
            self.echo(f"quarantine: {len(q.triggers)} triggers of bugs already found; programs that match one: "
                      f"{kept} set aside")

    def _generate(self, pool: WorkerPool) -> None:
        s = self.settings
        # a batch checks the first `size` drawn cases the quarantine does not set aside (a task
        # of N shards keeps one in N: drawing N times more stalled Hypothesis for minutes)
        count = cases_per_batch(s.profile, s.batch_size)
        batch = batches(self.config_sets, count, s.device, s.profile, self.max_bytes, s.runs_per_program)

        # the corpus is Hypothesis's example database: a new campaign first replays the batches
        # that failed before (Phase.reuse), then generates; a resumed one just goes on generating
        database = CorpusExampleDatabase(self.corpus)
        key = batch_key(s.device, s.profile, s.batch_size or "auto", s.runs_per_program, s.canary, s.configs)
        past = set(database.fetch(key)) if self.counts.batches == 0 else set()
        phases = (Phase.reuse, Phase.generate) if past else (Phase.generate,)
        if past:
            self.echo(f"replaying up to {len(past)} past failing batches from the corpus first")

        def finish(flight: InFlight) -> None:
            if self._record_batch(pool, flight):
                for choices in flight.choices:
                    database.save(key, choices)

        seed = shard_seed(s.seed, s.shard, s.shards)

        # data_too_large stays on: a batch that overruns Hypothesis's choice buffer on every try
        # would otherwise stall the campaign before its first batch, silently (strategies.profiles)
        @settings(max_examples=10**9, deadline=None, database=database, phases=phases,
                  suppress_health_check=[h for h in HealthCheck if h != HealthCheck.data_too_large])
        @hypothesis_seed(seed if not self.counts.batches else f"{seed}:{self.counts.batches}")
        @given(batch)
        def one_batch(drawn: list[Case]) -> None:
            if self._time_up() or (self.in_flight and self._seconds_left() <= self._queued_seconds()):
                raise _TimeUp  # (or the batch already queued takes the time left)
            choices = compat.current_choices_bytes()
            self.counts.replayed += choices in past
            if self.guide is not None:  # (after the draw: Hypothesis never sees the seeds)
                self.guide_draws += 1
                drawn = self.guide.substitute(drawn, f"{seed}:{self.guide_draws}", lambda program_id: in_shard(
                    program_id, s.shard, s.shards) and program_id not in self.submitted)
            flight = self._submit(pool, drawn, choices)
            if flight is not None:
                self.in_flight.append(flight)
            # one batch stays queued behind the one being recorded, more while a straggler
            # holds the oldest and a worker idles (in_flight.settle)
            settle(self.in_flight, pool, finish, self._waiting, self._time_up)
            if self._time_up():
                raise _TimeUp

        compat.set_database_key(one_batch, key)
        try:
            one_batch()
        except _TimeUp:
            pass
        except FailedHealthCheck as exc:
            raise InvalidArgument(f"a batch of {count} {s.profile} programs of {s.runs_per_program} runs is more "
                                  "than Hypothesis can draw as one example: use a smaller --batch-size") from exc
        while self.in_flight:  # not on Ctrl-C: that abandons the batches in flight
            finish(self.in_flight.pop(0))

    def _submit(self, pool: WorkerPool, drawn: list[Case], choices: bytes | None) -> InFlight | None:
        """Queue one batch: the first ``size`` drawn cases of programs not checked before in this
        run that the quarantine does not set aside (in the large profile those with a run past a
        crossing first: ``crossing_first``), ``size`` cut to what fits in the time left after the
        batch queued before it; None where none is left, or where too few are and they are held.

        Hypothesis builds most examples by copying choices from earlier ones, so a batch repeats
        many programs already checked (of the first 16 programs of 100 small-profile batches,
        678 of 1600 were distinct); a repeat costs a compile as dear as a new program's. Without
        them a draw of 64 falls short of a batch of 64 (a 10-minute CPU campaign compiled 16
        programs a module instead of 27), so a short one is held (``_held``) and checked with the
        next draw of its config set, the two draws' choices saved together if the batch fails."""
        configs = configs_label(drawn[0].program.configs)  # a batch shares its configs
        size = self.batching.of(configs).size
        fits = self.batching.fitting(configs, self._seconds_left() - self._queued_seconds())
        ramp = self._ramp_cap(size)
        if ramp is not None:
            fits = min(fits, ramp)  # a first result early (it teaches the adaptive size nothing)
        drawn = [c for c in drawn if in_shard(c.program.id, self.settings.shard, self.settings.shards)]
        held, held_choices = self._held.pop(configs, ([], []))
        seen = self.submitted | {c.program.id for c in held}
        self.counts.repeats += sum(c.program.id in seen for c in drawn[:size])
        drawn = held + [c for c in drawn if c.program.id not in seen]
        choices_of = held_choices + ([choices] if choices is not None else [])
        if not drawn:
            return None
        if get_profile(self.settings.profile).big_sizes:  # (the large profile: in the small one, it
            drawn = crossing_first(drawn)  # would only crowd batches with index arithmetic past 2**31)
        picked = self.quarantine.sort([c.program for c in drawn], fits)
        if len(picked.chosen) < fits and not held and ramp is None:  # short: wait for one more draw
            self._held[configs] = (drawn, choices_of)
            return None
        self.counts.quarantined += picked.set_aside
        drawn = [drawn[i] for i in picked.chosen]
        self.submitted.update(c.program.id for c in drawn)
        self.ramped += ramp is not None
        stop_at = time.time() + self._deadline() + GRACE_S / 2 - time.monotonic()  # (workers' clock: wall time)
        return InFlight(pool.submit(drawn, alone=picked.alone, stop_at=stop_at if stop_at < float("inf") else None),
                         drawn, choices_of, configs, size, time.monotonic())

    def _ramp_cap(self, size: int) -> int | None:
        """The most programs the next batch may hold while a new campaign ramps up (``FIRST_BATCH``,
        doubled for each batch after it, while under the adaptive ``size``); None once ramped, in
        a resumed campaign or under a fixed --batch-size."""
        if self.settings.batch_size or self.ramped < 0:
            return None
        cap = FIRST_BATCH << self.ramped
        if cap >= size:
            self.ramped = -1
            return None
        return cap

    def _queued_seconds(self) -> float:
        """Estimated seconds until the workers are done with the batches in flight: their
        programs at their config sets' measured rates, less the time the oldest has been worked
        on (since it was queued, or since the batch before it was done, whichever is later)."""
        rates = [self.batching.rate(f.configs) for f in self.in_flight]
        if not self.in_flight or min(rates) <= 0:
            return 0.0
        began = max(self.in_flight[0].submitted_at, self.last_done)
        work = sum(len(f.drawn) / rate for f, rate in zip(self.in_flight, rates))
        return max(0.0, work - (time.monotonic() - began))

    def _record_batch(self, pool: WorkerPool, flight: InFlight) -> bool:
        """Wait for a batch in flight and store its failures (those ``_record_early`` has not);
        True if it had any."""
        drawn = flight.drawn
        outcomes = flight.batch.outcomes(lambda: self._waiting(flight), until=self._deadline() + GRACE_S)
        failed = any(outcome is not None and outcome.is_finding for outcome in outcomes)
        cut_bisecting = False  # cut at the deadline while pinning a failure: saved, replayed first next time
        if None in outcomes:  # cut at the deadline: what was checked counts, the rest was never run
            cut_bisecting = flight.batch.troubled
            self.echo(f"  deadline: {outcomes.count(None)} of the batch's {len(drawn)} programs left unchecked"
                      + (" (it was being bisected: saved, replayed first next time)" if cut_bisecting else ""))
        recorded = [k in flight.recorded for k, outcome in enumerate(outcomes) if outcome is not None]
        confirmed = [(fid, drawn[k], outcomes[k]) for k, (fid, stored) in flight.stored.items()
                     if outcomes[k] is not None and outcomes[k] is not stored]
        drawn = [case for case, outcome in zip(drawn, outcomes) if outcome is not None]
        outcomes = [outcome for outcome in outcomes if outcome is not None]
        self.last_done = time.monotonic()
        # its worker time, spread over the workers: its span from submit to done also holds
        # the wait behind the batch queued before it
        self.batching.of(flight.configs).update(flight.batch.worker_s / len(pool.workers), flight.batch.blind,
                                                checked=len(drawn), size=flight.size)
        c = self.counts
        c.batches += 1
        c.programs += len(drawn)
        done_at = time.monotonic() - self.started  # (before a crash's inline follow-up in _record)
        self._store_coverage(pool, done_at)
        if self.guide is not None:
            self.guide.learn(drawn, pool.reached.take_novel([c.program.id for c in drawn]))
        for case, outcome, early in zip(drawn, outcomes, recorded):
            c.runs_checked += outcome.runs_checked
            c.runs_skipped += outcome.runs_skipped
            c.runs_large += outcome.runs_large
            c.programs_large += outcome.runs_large > 0
            c.runs_over_budget += outcome.runs_over_budget
            c.runs_oom += outcome.runs_oom
            c.runs_cut += outcome.runs_cut
            c.runs_directed += outcome.runs_directed
            self.slowest.add(case, outcome)
            if outcome.symptom == "invalid":
                c.invalid += 1
            elif outcome.is_finding and not early:
                c.failures += 1
                self._record(pool, case, outcome)
        for fid, case, outcome in confirmed:
            self._confirm(pool, fid, case, outcome)
        c.worker_restarts = pool.restarts
        self.timeline.append(Mark(done_at, c.programs - self.before.programs,
                                  c.programs_large - self.before.programs_large, c.runs_large - self.before.runs_large))
        self.corpus.update_campaign(self.campaign_id, {**c.stored(), **self.slowest.stored()})
        if time.monotonic() - self.last_echo >= self.progress_every:
            self.last_echo = time.monotonic()
            self.echo(self.progress_line())
        return failed or cut_bisecting

    def _store_coverage(self, pool: WorkerPool, seconds: float) -> None:
        """The Inductor lines and decision combinations the workers reported, into the corpus."""
        self.corpus.add_lines(self.campaign_id, pool.reached.take(), seconds)
        self.corpus.add_decisions(self.campaign_id, pool.reached.take_decisions(), seconds)

    def _record(self, pool: WorkerPool, case: Case, outcome: Outcome) -> int:
        """Store a failure (a new finding, or one more hit of a stored one): its finding's id."""
        s = self.settings
        fid, new, sig, known = store_failure(self.corpus, self.known, self.campaign_id, s.device, s.canary,
                                             case, outcome, self.versions)
        if new and known:
            self.echo(f"  known finding {fid} ({known.note}): {sig}")
        elif new:
            self.counts.new_findings += 1
            self.counts.finding_ids.append(fid)
            self.echo(f"  NEW finding {fid}: {sig}")
            if deferred(outcome.stage, outcome.symptom, len(case.program.nodes)):  # after the deadline
                self._quarantine(fid)  # (a one-op program's own trigger, if it fails whole batches)
                self.follow_ups.waiting.append(fid)
                return fid
            # within the campaign's clock: a finding near the end is stored raw, for 'fuzzaoti
            # shrink/triage ID' later, rather than overrunning --minutes
            member = self.follow_ups.one(fid, self._seconds_left)
            self._quarantine(fid)  # its shrunk program's trigger
            self._count_member(fid, member)
        return fid

    def _confirm(self, pool: WorkerPool, fid: int, case: Case, outcome: Outcome) -> None:
        """A finding stored as soon as its worker's fault pinned it (``workers.faults``), now
        compiled alone: kept as a replay of the finding on this torch and device. A crash that
        needs the rest of its batch (a wild write another member's read ran into) does not fail
        alone, and the replay says so; a different failure alone is stored as well."""
        sig = signature(outcome, case.program) if outcome.is_finding else ""
        self.corpus.record_replay(fid, ReplayResult(self.versions.get("torch") or "", self.settings.device,
                                                    "fails" if sig else "passes", sig,
                                                    self.versions.get("device_name"), now()))
        if not sig:
            self.echo(f"  finding {fid} does not fail compiled alone: its crash needed the rest of its batch")
        elif sig != self.corpus.finding(fid).signature:
            self.counts.failures += 1
            self._record(pool, case, outcome)

    def _quarantine(self, fid: int) -> None:
        trigger = finding_trigger(self.corpus.finding(fid), self.settings.device)
        if self.quarantine.add(trigger) and self.quarantine.rate < 1:
            self.echo(f"  quarantine: programs with {trigger}")

    def _count_member(self, fid: int, member: bool) -> None:
        if member:  # one more case of a known family's root cause, not a new finding
            self.counts.new_findings -= 1
            if fid in self.counts.finding_ids:  # (not one found before a resume)
                self.counts.finding_ids.remove(fid)

    def _waiting(self, flight: InFlight) -> None:
        """While a batch is being checked: past the deadline, drop what of it is still queued;
        a progress line now and then, with what each worker is doing (a long compile, a
        bisection, a run of 3*2**30 elements), so a long wait is never silent."""
        if time.monotonic() >= self._deadline():  # (the batches queued behind it too)
            for queued in (flight, *self.in_flight):
                queued.batch.cancel()
        for queued in (flight, *self.in_flight):
            self._record_early(queued)
        if time.monotonic() - self.last_echo >= max(self.progress_every, WAITING_EVERY_S):
            self.last_echo = time.monotonic()
            self.echo(self.progress_line(workers=True))

    def _record_early(self, flight: InFlight) -> None:
        """Store each finding the pool has pinned in a batch still being checked, at once: the
        rest of a failed batch can take another compile or two (its members reloaded, or compiled
        without the one that failed), and a user who watches the first minutes, or a campaign cut
        short, should not wait for them."""
        for k, outcome in enumerate(flight.batch.results):
            if outcome is not None and outcome.is_finding and k not in flight.recorded:
                flight.recorded.add(k)
                self.counts.failures += 1
                flight.stored[k] = (self._record(self.pool, flight.drawn[k], outcome), outcome)

    def _deadline(self) -> float:
        return self.started + self.settings.minutes * 60 if self.settings.max_batches is None else float("inf")

    def _seconds_left(self) -> float:
        return self.settings.minutes * 60 - (time.monotonic() - self.started)

    def _time_up(self) -> bool:
        s = self.settings
        if s.max_batches is not None and self.counts.batches + len(self.in_flight) >= s.max_batches:
            return True
        return time.monotonic() - self.started >= s.minutes * 60

    # ---- reporting -------------------------------------------------------------------------
    def progress_line(self, workers: bool = False) -> str:
        """The progress line; with each worker's programs, restarts and stage where there are
        several, on a GPU, or when ``workers`` (a batch that takes long)."""
        c, elapsed = self.counts, time.monotonic() - self.started
        rate = (c.programs - self.before.programs) / max(elapsed / 60, 1e-9)
        line = (f"[{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}] batch {c.batches}: {c.programs} programs "
                f"({rate:.1f}/min), {c.runs_checked} shapes checked{self.counts.runs_note()}, {c.runs_skipped} skipped, "
                f"{c.invalid} invalid, {c.failures} failures ({c.new_findings} new findings), "
                f"{c.worker_restarts} worker restarts, {c.quarantined} quarantined, next batch {self.batching.describe()}")
        pool = self.pool
        if pool is not None and (workers or len(pool.workers) > 1 or self.settings.device == "cuda"):
            line += " | " + pool.describe_workers()
        return line

    def summary(self, status: str) -> str:
        c = self.counts
        took = time.monotonic() - self.started
        took_note = f"{took:.0f} s"
        if self.followed_up_s >= 1:
            took_note += f" ({took - self.followed_up_s:.0f} s generating, {self.followed_up_s:.0f} s following up)"
        waiting = self.follow_ups.waiting if self.follow_ups is not None else []
        return (f"campaign {self.campaign_id} {status} after {took_note}: "
                f"{c.programs} programs in {c.batches} batches, {c.runs_checked} shapes checked{self.counts.runs_note()}, "
                f"{c.failures} failures, {c.quarantined} quarantined, new findings: {json.dumps(c.finding_ids)}"
                + (f", {c.replayed} past failing batches replayed" if c.replayed else "")
                + (f", {c.repeats} repeated programs not checked again" if c.repeats else "")
                + (f", not yet shrunk or triaged: {json.dumps(waiting)} ('fuzzaoti shrink ID', "
                   "'fuzzaoti triage ID')" if waiting else "")
                + self.slowest.describe(self.campaign_id)
                + (f"; {len(self.pool.reached)} lines of torch/_inductor run by its compiles and "
                   f"{len(self.pool.reached.decided)} decision combinations taken ('fuzzaoti coverage "
                   f"--campaign {self.campaign_id}')" if (self.settings.coverage or self.settings.guided)
                   and self.pool is not None else "")
                + (f"; {self.guide.describe()}" if self.guide is not None else "")
                + (f"; {self.pool.describe()}" if self.pool is not None else ""))

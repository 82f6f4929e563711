"""Campaign engine: crashes become findings, SIGKILL never corrupts the corpus, --resume carries on."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus


def test_a_worker_dying_mid_case_is_a_finding_and_the_campaign_goes_on(tmp_path, fake_fault):
    # a cast is in about one program in five: 24 programs without one are about 0.5% of seeds
    # (a core op such as bmm is one of 48 drawn: a seed may give 24 programs without it)
    fake_fault("cast:crash")
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "4", "--batch-size", "6",
                                       "--shrink-minutes", "0", "--corpus", db], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with Corpus.open(db) as corpus:
        (campaign,) = corpus.campaigns()
        crashes = [f for f in corpus.findings() if f.symptom == "crash"]
    assert campaign.status == "finished" and campaign.counts["batches"] == 4
    assert crashes and "SIGABRT" in crashes[0].message
    assert campaign.counts["worker_restarts"] >= 1


def _wait_for(predicate, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def _count(db, sql):
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            return conn.execute(sql).fetchone()[0] or 0
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_sigkill_keeps_every_stored_finding_and_resume_continues(tmp_path):
    db = str(tmp_path / "c.db")
    env = {**os.environ, "FUZZAOTI_FAKE_FAULT": "gather:wrong"}
    proc = subprocess.Popen([sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--backend", "fake", "--minutes", "10",
                             "--batch-size", "4", "--shrink-minutes", "0", "--corpus", db],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _wait_for(lambda: _count(db, "select count(*) from findings") >= 2
                         and _count(db, "select max(batches) from campaigns") >= 5)
        before = {r: _count(db, f"select count(*) from findings where id = {r}") for r in range(1, 3)}
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert before == {1: 1, 2: 1}
    conn = sqlite3.connect(db)
    assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
    conn.close()
    with Corpus.open(db) as corpus:
        (campaign,) = corpus.campaigns()
        kept = [f.id for f in corpus.findings()]
    assert campaign.status == "running" and {1, 2} <= set(kept)
    batches = campaign.counts["batches"]

    # 12 s: the pool's start counts in them (its workers importing torch took 2.7 s of 2 busy cores)
    result = subprocess.run([sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--resume", "1", "--minutes", "0.2",
                             "--corpus", db], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "campaign 1 resumed" in result.stdout
    with Corpus.open(db) as corpus:
        (campaign,) = corpus.campaigns()
    assert campaign.status == "finished" and campaign.counts["batches"] > batches


def test_resume_unknown_campaign_is_a_one_line_error(tmp_path):
    db = str(tmp_path / "c.db")
    CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "1", "--batch-size", "1", "--corpus", db])
    done = subprocess.run([sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--resume", "9", "--corpus", db],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip() == f"error: no campaign with id 9 in {db}"


def test_stats_lists_campaigns(tmp_path):
    db = str(tmp_path / "c.db")
    CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "2", "--batch-size", "3", "--corpus", db])
    out = CliRunner().invoke(main, ["stats", "--corpus", db]).output
    assert "finished" in out and "6 programs in 2 batches" in out


def test_two_campaigns_hitting_the_same_bug_leave_one_finding_with_two_hits(tmp_path, fake_fault):
    fake_fault("*:wrong")  # every program is wrong: the same single program, found twice
    db = str(tmp_path / "c.db")
    for _ in range(2):
        result = CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "1", "--batch-size", "1",
                                           "--seed", "7", "--shrink-minutes", "0", "--corpus", db])
        assert result.exit_code == 0, result.output
    with Corpus.open(db) as corpus:
        findings = list(corpus.findings())
        assert len(corpus.campaigns()) == 2
    assert [f.hits for f in findings] == [2]



def test_two_campaigns_write_one_corpus_at_the_same_time(tmp_path):
    db = str(tmp_path / "c.db")
    env = {**os.environ, "FUZZAOTI_FAKE_FAULT": "gather:wrong"}
    procs = [subprocess.Popen([sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--backend", "fake", "--max-batches", "12",
                               "--batch-size", "6", "--seed", str(seed), "--shrink-minutes", "0", "--corpus", db],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for seed in (1, 2)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-800:] for _, err in results]
    conn = sqlite3.connect(db)
    assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
    conn.close()
    with Corpus.open(db) as corpus:
        campaigns = corpus.campaigns()
        findings = list(corpus.findings())
    assert [c.status for c in campaigns] == ["finished", "finished"]
    assert all(c.counts["batches"] == 12 for c in campaigns)
    signatures = [f.signature for f in findings]
    assert findings and len(signatures) == len(set(signatures))  # one finding per bug across both
    assert sum(f.hits for f in findings) == sum(c.counts["failures"] for c in campaigns)


def test_the_batch_queued_ahead_counts_from_when_the_workers_began_it(tmp_path):
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.campaign.in_flight import InFlight

    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(backend="fake"))
        sizes = campaign.batching.of("default")
        sizes.rate[sizes.size] = 2.0  # programs per second
        now = time.monotonic()
        # queued 30 s ago, but the batch before it was done only 4 s ago: 20 programs, 4 s in
        campaign.in_flight = [InFlight(None, [None] * 20, [], "default", sizes.size, now - 30)]
        campaign.last_done = now - 4
        assert 5.5 < campaign._queued_seconds() <= 6.0
        campaign.last_done = now - 40  # worked on since it was queued: done by now
        assert campaign._queued_seconds() == 0.0


@pytest.mark.parametrize("cores, gpus, expected", [
    (16, "0", 3),  # the H200 node: 3 measured faster than 2
    (12, "0", 2),
    (8, "0", 1),
    (16, "0,1", 2),  # 8 cores a GPU: one worker each
    (128, "0,1,2,3", 12),  # capped at 3 a GPU
])
def test_default_workers_follow_the_cores_each_gpu_has(monkeypatch, cores, gpus, expected):
    from fuzzaoti.workers.placement import default_workers

    # the cores this process may use (a scheduler's cpuset), not the node's
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4 * cores)
    assert default_workers("cuda", gpus) == expected
    assert default_workers("cpu", gpus) == 1


def test_a_campaign_of_one_config_set_draws_only_that_set(tmp_path):
    from fuzzaoti.campaign.runner import Campaign, CampaignSettings, _TimeUp
    from fuzzaoti.workers.pool_stats import configs_label

    drawn_labels = []

    def submit(pool, drawn, choices):
        drawn_labels.extend(configs_label(case.program.configs) for case in drawn)
        raise _TimeUp  # one batch is enough: nothing is compiled

    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        for seed in range(4):
            campaign = Campaign(corpus, CampaignSettings(device="cuda", backend="fake", seed=seed,
                                                         configs="native_matmul"))
            campaign.started, campaign._submit = time.monotonic(), submit
            campaign._generate(pool=None)
    assert len(drawn_labels) >= 4 * 4 and set(drawn_labels) == {"native_matmul"}  # (its set's name)


def test_an_unknown_config_set_is_a_one_line_error_and_makes_no_corpus(tmp_path):
    db = tmp_path / "c.db"
    done = subprocess.run([sys.executable, "-m", "fuzzaoti.cli", "fuzz", "--backend", "fake", "--configs", "max_autotune",
                           "--corpus", str(db)], capture_output=True, text=True)
    from fuzzaoti.strategies._configs import named_config_sets

    assert done.returncode == 2 and done.stderr.strip() == (
        f"error: config set 'max_autotune' is not drawn on cpu: use one of {', '.join(named_config_sets('cpu'))}")
    assert not db.exists()


def _six_second_campaign(tmp_path, monkeypatch, grace_s: float, **settings):
    """A fake-backend campaign of 0.1 minutes whose groups get ``grace_s`` past the deadline:
    its counts, printed lines, stored row and how long it took."""
    from fuzzaoti.campaign import runner as campaign_module
    from fuzzaoti.campaign import Campaign, CampaignSettings

    monkeypatch.setattr(campaign_module, "GRACE_S", grace_s)
    lines = []
    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(backend="fake", minutes=0.1, shrink_minutes=0, **settings),
                            echo=lines.append)
        started = time.monotonic()
        counts = campaign.run()
        took = time.monotonic() - started
        (row,) = corpus.campaigns()
    return counts, lines, row, took


def test_a_campaign_ends_at_its_deadline_even_while_a_batch_hangs(tmp_path, fake_fault, monkeypatch):
    # every run hangs (as a huge kernel would): the campaign still ends about --minutes after it
    # began, the batch's programs counted as never checked, instead of waiting out each worker's
    # run timeout and a bisection of restarts (17 minutes for a 10-minute campaign on the H200)
    fake_fault("*:hang")
    counts, lines, row, took = _six_second_campaign(tmp_path, monkeypatch, 2.0, batch_size=4, run_timeout=120)
    assert took < 60, lines
    assert row.status == "finished" and counts.programs == 0
    assert any("deadline: 4 of the batch's 4 programs left unchecked" in line for line in lines), lines


def test_a_batch_hypothesis_cannot_draw_is_a_clear_error_not_a_stall(tmp_path):
    # 64 large cases overran Hypothesis's choice buffer on every try: the H200 campaign waited
    # for its first batch until it was killed. Now the overrun health check ends it with a message
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.errors import InvalidArgument

    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(backend="fake", profile="large", batch_size=16, max_batches=1,
                                                     runs_per_program=200, shrink_minutes=0), echo=lambda line: None)
        with pytest.raises(InvalidArgument, match="more than Hypothesis can draw as one example"):
            campaign.run()
        (row,) = corpus.campaigns()
    assert row.status == "interrupted"


def test_the_timeline_marks_what_each_batch_left_checked(tmp_path):
    # bench_throughput's rates after the cold start come from the first mark
    from fuzzaoti.campaign import Campaign, CampaignSettings

    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(backend="fake", profile="large", batch_size=4, max_batches=2,
                                                     max_bytes=16_000_000, shrink_minutes=0), echo=lambda line: None)
        counts = campaign.run()
    first, last = campaign.timeline[0], campaign.timeline[-1]
    assert len(campaign.timeline) == 2 and 0 < first.seconds <= last.seconds
    assert first.programs == 4 and 0 <= first.programs_large <= first.programs
    assert last.runs_large >= first.runs_large  # (a count: how many cross 2**31 is the draws' to say)
    assert (last.programs, last.programs_large, last.runs_large) == \
        (counts.programs, counts.programs_large, counts.runs_large)


def test_a_campaign_keeps_its_slowest_compiled_run_as_a_check_file(tmp_path, monkeypatch):
    # every run a big run (timed); 'stats' names the slowest, '--slowest' gives its case as a file
    # 'fuzzaoti check' reads, and a campaign without one, or an unknown id, is a one-line error
    from fuzzaoti.findings.check_files import read_case_file

    monkeypatch.setenv("FUZZAOTI_KEEP_BYTES", "0")
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--profile", "large", "--max-batches", "1",
                                       "--batch-size", "4", "--max-bytes", "16000000", "--shrink-minutes", "0",
                                       "--corpus", db], catch_exceptions=False)
    assert result.exit_code == 0 and "slowest compiled run: " in result.output, result.output
    assert "'fuzzaoti stats --slowest 1'" in CliRunner().invoke(main, ["stats", "--corpus", db]).output
    printed = CliRunner().invoke(main, ["stats", "--slowest", "1", "--corpus", db])
    (tmp_path / "slow.json").write_text(printed.output)
    case = read_case_file(str(tmp_path / "slow.json"))
    with Corpus.open(db) as corpus:
        stored = corpus.campaigns()[0].slowest
    assert case.run_dicts() == stored["runs"] and stored["compiled_s"] >= 0 and stored["eager_s"] >= 0
    monkeypatch.delenv("FUZZAOTI_KEEP_BYTES")  # (small runs: none timed)
    CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "1", "--batch-size", "1",
                              "--shrink-minutes", "0", "--corpus", db], catch_exceptions=False)
    for campaign, why in (("2", "campaign 2 timed no big run"), ("9", "no campaign 9")):
        done = subprocess.run([sys.executable, "-m", "fuzzaoti.cli", "stats", "--slowest", campaign, "--corpus", db],
                              capture_output=True, text=True)
        assert done.returncode == 2 and done.stderr.startswith(f"error: {why}"), done.stderr


def test_a_batch_still_running_at_the_deadline_counts_the_runs_it_had_checked(tmp_path, fake_fault, monkeypatch):
    # each run takes 5 s (big runs on a CPU: a 3-minute large-profile campaign there once counted
    # 0 programs, its one batch dropped whole at the deadline): half way through the grace the
    # workers stop and answer with the runs they had checked, so the batch's programs count, the
    # rest of their runs counted as not run; before, a batch still running at the end of the
    # grace was dropped whole
    fake_fault("*:slow")
    # (the large profile: 16 runs a case, 80 s a group, so the cut never depends on a draw)
    counts, lines, _, _ = _six_second_campaign(tmp_path, monkeypatch, 16.0, batch_size=2, workers=1, seed=3,
                                               profile="large", max_bytes=16_000_000)
    assert counts.programs >= 1 and 0 < counts.runs_checked and counts.runs_cut > 0, lines
    assert "not run at the deadline" in lines[-1], lines


class _Straggler:
    """A batch in flight whose groups are all in once ``done_after`` waits have passed."""

    def __init__(self, done_after: int):
        self.waits_left = done_after

    @property
    def done(self) -> bool:
        return self.waits_left <= 0

    def wait(self, seconds: float) -> bool:
        self.waits_left -= 1
        return self.done


def _settle(batches: list, starving: bool, workers: int = 3):
    """``in_flight.settle`` over stand-in batches and pool: the names of the batches it
    recorded, of those left in flight, and how many times it called ``waiting``."""
    from types import SimpleNamespace

    from fuzzaoti.campaign.in_flight import InFlight, settle

    in_flight = [InFlight(b, [], [], "default", 8, 0.0) for b in batches]
    pool = SimpleNamespace(workers=[None] * workers, starving=starving)
    recorded, waited = [], []
    settle(in_flight, pool, lambda f: recorded.append(batches.index(f.batch)), waited.append, lambda: False)
    return recorded, [batches.index(f.batch) for f in in_flight], len(waited)


def test_a_straggling_batch_leaves_no_worker_idle():
    # the oldest batch's last group runs for minutes (a 27 s kernel, eight big runs: on an H100 the
    # other two workers idled for about 90 s each): with a worker starving, the campaign draws
    # another batch instead of waiting for the oldest; before, it waited whenever two were in flight
    assert _settle([_Straggler(10**6), _Straggler(0)], starving=True) == ([], [0, 1], 0)
    # with every worker busy it waits, and records the oldest once it is done (in order: the
    # batch after it, done first, waits its turn)
    assert _settle([_Straggler(3), _Straggler(0), _Straggler(10**6)], starving=False) == ([0, 1], [2], 3)
    # at most one batch a worker beyond the oldest: then the oldest is recorded, whatever it takes
    stragglers = [_Straggler(10**6) for _ in range(5)]
    assert _settle(stragglers, starving=True, workers=3) == ([0], [1, 2, 3, 4], 0)


def test_the_slowest_run_line_keeps_a_fast_runs_digits():
    # an H100 campaign whose big runs were all fast printed "0.0 s against 0.03 s in eager, 1x"
    from fuzzaoti.campaign.slowest import describe

    def line(compiled_s, eager_s):
        case = {"program": {"nodes": [{"op": "baddbmm"}]}, "runs": [{"env": {"d0": 31654772}}],
                "compiled_s": compiled_s, "eager_s": eager_s}
        return describe(case, 1)

    fast = line(0.0042, 0.031)
    assert "slowest compiled run: 0.0042 s against 0.031 s in eager, 0.1x (baddbmm at d0=31654772" in fast
    assert "slowest compiled run: 27.0 s against 0.012 s in eager, 2252x (" in line(27.025, 0.012)
    assert "in eager, 2.5x (" in line(2.5, 1.0)


def test_a_campaign_never_checks_one_program_twice(tmp_path, monkeypatch):
    # Hypothesis copies choices from earlier examples, so about half the programs a batch draws
    # were drawn before; each costs a compile, and a campaign sends each program to be checked once
    from fuzzaoti.workers.pool import WorkerPool

    submitted = []
    real_submit = WorkerPool.submit

    def submit(self, cases, *args, **kwargs):
        submitted.extend(case.program.id for case in cases)
        return real_submit(self, cases, *args, **kwargs)

    monkeypatch.setattr(WorkerPool, "submit", submit)
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "30", "--batch-size", "8",
                                       "--seed", "5", "--shrink-minutes", "0", "--corpus", db])
    assert result.exit_code == 0, result.output
    assert len(submitted) >= 8 * 20  # (a batch whose every program was checked before is not sent)
    assert len(set(submitted)) == len(submitted)


def test_a_finding_is_stored_as_soon_as_the_pool_pins_it_and_once(tmp_path, five_op_program):
    # the rest of a failed batch can take another compile or two: its finding is stored while
    # the campaign waits, and the batch's own record later leaves it alone
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.check.outcome import Outcome
    from fuzzaoti.campaign.in_flight import InFlight
    from fuzzaoti.model.case import Case
    from fuzzaoti.workers.pool import Submitted

    cases = [Case(five_op_program, (((("b", 3), ("n", 7)), k),)) for k in range(3)]
    batch = Submitted(cases, "fake", priority=1)
    batch.results[1] = Outcome("compare", "mismatch", "output 0 differs")
    batch.results[2] = Outcome("done", "pass")
    recorded = []
    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(backend="fake"))
        campaign.started = time.monotonic()
        campaign._record = lambda pool, case, outcome: recorded.append((case, outcome.symptom))
        flight = InFlight(batch, cases, [], "default", 3, time.monotonic())
        campaign._waiting(flight)
        campaign._waiting(flight)
    assert recorded == [(cases[1], "mismatch")] and flight.recorded == {1} and campaign.counts.failures == 1


def test_a_draw_short_of_a_batch_waits_for_the_next_draw_of_its_config_set(tmp_path, five_op_program):
    # with the repeats left out, a draw of 64 falls short of a batch of 64: the short one is held
    # and checked with the next draw of its set, once, and both draws' choices go with the batch
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.model.case import Case
    from fuzzaoti.model.program import DimSpec

    def cases(maxes):
        return [Case(five_op_program.with_(dims=(five_op_program.dim["b"], DimSpec("n", 2, m, 9))),
                     (((("b", 3), ("n", 7)), 0),)) for m in maxes]

    submitted = []

    class Pool:
        def submit(self, drawn, alone=(), stop_at=None):
            submitted.append([c.program.id for c in drawn])

    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(backend="fake", batch_size=8))
        campaign.started, campaign.counts.batches = time.monotonic(), 1  # (not the first batch)
        first, second = cases(range(20, 25)), cases(range(22, 28))  # 5 programs, then 3 repeats and 3 new
        assert campaign._submit(Pool(), first, b"one") is None and submitted == []
        flight = campaign._submit(Pool(), second, b"two")
    assert flight.choices == [b"one", b"two"] and len(submitted[0]) == 8 == len(set(submitted[0]))
    assert campaign.counts.repeats == 3


def test_a_new_campaign_ramps_its_batches_up_from_a_few_programs_to_the_adaptive_size(tmp_path, five_op_program):
    # the first batches are 4 then 8 programs (a first result within the first minute, and one
    # soon after it), then the adaptive size; a resumed campaign or a fixed --batch-size never ramps
    from fuzzaoti.campaign import Campaign, CampaignSettings
    from fuzzaoti.model.case import Case
    from fuzzaoti.model.program import DimSpec

    class Pool:
        def submit(self, drawn, alone=(), stop_at=None):
            submitted.append(len(drawn))

    def cases(k):
        return [Case(five_op_program.with_(dims=(five_op_program.dim["b"], DimSpec("n", 2, 100 * k + m, 9))),
                     (((("b", 3), ("n", 7)), 0),)) for m in range(40)]

    def sizes(**settings):
        with Corpus.open(str(tmp_path / f"{len(settings)}.db"), create=True) as corpus:
            campaign = Campaign(corpus, CampaignSettings(backend="fake", minutes=60, **settings))
            campaign.started = time.monotonic()
            adaptive = campaign.batching.of("default").size
            for k in range(4):
                flight = campaign._submit(Pool(), cases(k), None)
                campaign.in_flight.append(flight)  # (queued: the next batch is not a campaign's first)
        return adaptive

    submitted = []
    adaptive = sizes()
    assert adaptive == 16 and submitted == [4, 8, 16, 16]
    submitted.clear()
    sizes(batch_size=12)
    assert submitted == [12] * 4

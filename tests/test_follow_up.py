"""When a campaign shrinks its findings: a wrong result after the deadline, a crash or a failed
compile at once (fake backend: the pipeline, not AOTI)."""

from click.testing import CliRunner

from fuzzaoti.campaign import Campaign, CampaignSettings
from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus


def _run(tmp_path, **settings):
    """A fake-backend campaign of 3 batches. Returns (batches recorded when each line was
    echoed, line) pairs, the counts, and the corpus's findings."""
    lines = []
    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        campaign = Campaign(corpus, CampaignSettings(backend="fake", max_batches=3, batch_size=8, **settings),
                            echo=lambda line: lines.append((campaign.counts.batches, line)))
        counts = campaign.run()
        findings = corpus.findings()
    return lines, counts, findings


def test_a_wrong_result_is_shrunk_after_the_last_batch_not_between_batches(tmp_path, fake_fault):
    fake_fault("*:wrong")
    lines, counts, findings = _run(tmp_path, shrink_minutes=0.5)
    shrunk = [batches for batches, line in lines if "shrink round" in line or " shrunk: " in line]
    assert shrunk and set(shrunk) == {3}, lines  # inline, they would come at the batch that found it
    assert any(line.startswith("follow-up: shrinking") for _, line in lines), lines
    assert counts.batches == 3 and counts.new_findings >= 1
    assert all(f.shrunk_case is not None for f in findings if f.symptom == "mismatch")


def test_a_failed_run_is_shrunk_at_once_so_its_trigger_quarantines(tmp_path, fake_fault):
    fake_fault("*:raise")  # fails the whole compiled batch: each hit again costs a bisection
    lines, _, findings = _run(tmp_path, shrink_minutes=0.5, triage=False)
    shrunk = [batches for batches, line in lines if " shrunk: " in line]
    assert shrunk and shrunk[0] < 3, lines
    assert not any(line.startswith("follow-up:") for _, line in lines), lines
    assert any(f.shrunk_case is not None for f in findings if f.stage == "run")


def test_no_follow_up_time_leaves_the_wrong_result_raw_and_says_how_to_shrink_it(tmp_path, fake_fault):
    fake_fault("*:wrong")
    db = str(tmp_path / "c.db")
    result = CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "2", "--batch-size", "8",
                                       "--shrink-minutes", "0.5", "--follow-up-minutes", "0", "--corpus", db],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "(no time left to shrink: run 'fuzzaoti shrink 1')" in result.output
    with Corpus.open(db) as corpus:
        assert corpus.finding(1).shrunk_case is None


def test_what_waits_for_the_deadline_a_wrong_result_or_a_one_op_crash():
    from fuzzaoti.campaign.follow_up import deferred

    assert deferred("compare", "mismatch", 5)  # hit again, it costs nothing
    assert not deferred("run", "exception", 3)  # fails whole batches: shrunk now, to quarantine it
    assert not deferred("run", "illegal_memory_access", 2)
    assert deferred("run", "illegal_memory_access", 1)  # its own trigger is the shrunk one's


def test_a_resumed_campaign_follows_up_what_its_last_run_left_raw(tmp_path, fake_fault):
    # a job killed in its follow-up (a Slurm time limit) leaves its wrong results raw; here the
    # first run's follow-up has no time at all, and the resumed one, with time, shrinks them
    from dataclasses import replace

    fake_fault("*:wrong")
    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        first = Campaign(corpus, CampaignSettings(backend="fake", max_batches=2, batch_size=8, shrink_minutes=0.5,
                                                  follow_up_minutes=0), echo=lambda line: None)
        first.run()
        raw = [f.id for f in corpus.findings() if f.status == "new" and f.shrunk_case is None]
        assert raw
        resumed = Campaign.resume(corpus, first.campaign_id, minutes=0.01, echo=lambda line: None)
        resumed.settings = replace(resumed.settings, follow_up_minutes=1.0)
        resumed.run()
        assert all(corpus.finding(fid).shrunk_case is not None for fid in raw)

"""fuzzaoti.launch: a campaign as shards (disjoint programs, each task its own corpus), run by
the local executor, merged into one corpus (fake backend: the tasks are real processes)."""

import pytest
from click.testing import CliRunner

from fuzzaoti.campaign import Campaign, CampaignSettings
from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus
from fuzzaoti.corpus.merge import merge_corpora
from fuzzaoti.errors import InvalidArgument
from fuzzaoti.launch.shards import parse_shard
from fuzzaoti.workers.pool import WorkerPool



def _checked_ids(tmp_path, monkeypatch, shard, name):
    """The program ids a 2-batch fake campaign of shard ``shard`` of 2 hands to its pool."""
    seen = []
    submit = WorkerPool.submit

    def spy(self, cases, *args, **kwargs):
        seen.extend(c.program.id for c in cases)
        return submit(self, cases, *args, **kwargs)

    monkeypatch.setattr(WorkerPool, "submit", spy)
    with Corpus.open(str(tmp_path / name), create=True) as corpus:
        Campaign(corpus, CampaignSettings(backend="fake", max_batches=2, batch_size=8, shrink_minutes=0,
                                          shard=shard, shards=2), echo=lambda line: None).run()
    monkeypatch.setattr(WorkerPool, "submit", submit)
    return seen


def test_the_shards_of_a_campaign_never_check_the_same_program(tmp_path, monkeypatch):
    first, second = (_checked_ids(tmp_path, monkeypatch, k, f"s{k}.db") for k in (0, 1))
    assert len(first) >= 8 and len(second) >= 8
    assert not set(first) & set(second)
    # a rerun of task 0 draws what task 0 drew: its seed is the campaign's and its index
    assert _checked_ids(tmp_path, monkeypatch, 0, "again.db") == first


def test_a_two_task_launch_runs_both_and_merges_them(tmp_path, fake_fault):
    fake_fault("*:wrong")  # a fault every shard hits: each finding, the sum of the shards' hits
    out = tmp_path / "launch"
    done = CliRunner().invoke(main, ["launch", "--tasks", "2", "--minutes", "5", "--corpus-dir", str(out), "--",
                                     "--backend", "fake", "--max-batches", "3", "--shrink-minutes", "0"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "all tasks completed" in done.output
    shards = [str(out / f"shard-{k}.db") for k in range(2)]
    hits = {}
    for path in shards:
        with Corpus.open(path) as shard:
            (campaign,) = shard.campaigns()
            assert campaign.status == "finished" and campaign.counts["batches"] == 3
            for f in shard.findings():
                hits[f.signature] = hits.get(f.signature, 0) + f.hits
    with Corpus.open(str(out / "merged.db")) as merged:
        assert sorted(c.origin for c in merged.campaigns()) == shards
        assert {f.signature: f.hits for f in merged.findings()} == hits and hits
    merge_corpora(shards, str(out / "merged.db"), lambda line: None)  # again: nothing changes
    with Corpus.open(str(out / "merged.db")) as merged:
        assert {f.signature: f.hits for f in merged.findings()} == hits
        assert len(merged.campaigns()) == 2
    status = CliRunner().invoke(main, ["launch", "--status", "--corpus-dir", str(out)]).output
    assert "task 0: finished" in status and "task 1: finished" in status and "merged: finished" in status
    stats = CliRunner().invoke(main, ["stats", "--corpus-dir", str(out)])
    assert stats.exit_code == 0 and stats.output == status
    # (unshrunk, each finding is one set of ops around the gather: as many as the shards' signatures)
    assert "programs in" in stats.output and f"/min), {len(hits)} findings, 0 worker restarts" in stats.output


def test_resume_starts_again_only_the_task_that_was_killed_and_it_resumes_its_own_shard(tmp_path):
    import sqlite3

    out = tmp_path / "launch"
    args = ["launch", "--tasks", "2", "--minutes", "5", "--corpus-dir", str(out), "--",
            "--backend", "fake", "--max-batches", "2", "--shrink-minutes", "0"]
    assert CliRunner().invoke(main, args, catch_exceptions=False).exit_code == 0
    # task 1 killed mid-campaign (SIGKILL, a node lost): its shard's campaign is left 'running'
    conn = sqlite3.connect(out / "shard-1.db")
    with conn:
        conn.execute("update campaigns set status = 'running', finished_at = null")
    conn.close()  # (checkpoints its WAL: a WAL left beside a shard the task replaces would corrupt it)
    before = (out / "shard-0.db").stat().st_mtime_ns
    resumed = CliRunner().invoke(main, ["launch", "--resume", "--corpus-dir", str(out)], catch_exceptions=False)
    assert resumed.exit_code == 0, resumed.output
    assert "task 1" in resumed.output and "task 0" not in resumed.output, resumed.output
    assert (out / "shard-0.db").stat().st_mtime_ns == before  # the finished task was left alone
    with Corpus.open(str(out / "shard-1.db")) as shard:
        (campaign,) = shard.campaigns()  # its own campaign resumed, not a fresh one
        assert campaign.status == "finished" and campaign.counts["batches"] == 2
    assert "campaign 1 resumed" in (out / "shard-1.log").read_text()
    again = CliRunner().invoke(main, ["launch", "--resume", "--corpus-dir", str(out)], catch_exceptions=False)
    assert "every task of" in again.output and "nothing to resume" in again.output


@pytest.mark.parametrize("text", ["2/2", "1", "a/b", "-1/2", "0/0"])
def test_a_bad_shard_is_refused(text):
    with pytest.raises(InvalidArgument):
        parse_shard(text)

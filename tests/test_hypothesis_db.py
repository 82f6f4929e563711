"""The corpus serves Hypothesis as its example database: past failing batches are replayed first."""

from click.testing import CliRunner

from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus
from fuzzaoti.corpus.hypothesis_db import REPLAY_LIMIT, CorpusExampleDatabase


def test_saved_examples_persist_and_fetch_the_most_recent(tmp_path):
    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        db = CorpusExampleDatabase(corpus)
        for k in range(REPLAY_LIMIT + 4):
            db.save(b"key", bytes([k]))
        db.save(b"key", bytes([0]))  # saving twice keeps one copy
        db.save(b"other", b"x")
        db.delete(b"key", bytes([REPLAY_LIMIT + 3]))  # Hypothesis's clean-up: the corpus keeps it
        fetched = list(db.fetch(b"key"))
        assert len(fetched) == REPLAY_LIMIT and bytes([REPLAY_LIMIT + 3]) in fetched
        assert db.count() == REPLAY_LIMIT + 5
    with Corpus.open(str(tmp_path / "c.db")) as corpus:  # and it survives reopening
        assert list(CorpusExampleDatabase(corpus).fetch(b"other")) == [b"x"]


def _fuzz(db, seed, batches):
    args = ["fuzz", "--backend", "fake", "--max-batches", str(batches), "--batch-size", "8", "--seed", str(seed),
            "--shrink-minutes", "0", "--corpus", db]
    return CliRunner().invoke(main, args, catch_exceptions=False).output


def test_a_new_campaign_replays_the_batches_that_failed_before(tmp_path, fake_fault):
    fake_fault("*:wrong")  # (every batch fails: whatever one Hypothesis release draws)
    db = str(tmp_path / "c.db")
    first = _fuzz(db, seed=1, batches=3)
    assert "replaying" not in first
    with Corpus.open(db) as corpus:
        hits = {f.id: f.hits for f in corpus.findings()}
        saved = CorpusExampleDatabase(corpus).count()
    assert hits and saved >= 1
    second = _fuzz(db, seed=2, batches=saved)  # another seed: only the replay can repeat the batches
    assert f"{saved} past failing batches replayed" in second, second
    with Corpus.open(db) as corpus:
        again = {f.id: f.hits for f in corpus.findings() if f.id in hits}
    assert all(again[i] > hits[i] for i in hits)

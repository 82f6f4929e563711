"""fuzzaoti.corpus.merge: shard corpora into one, idempotently; a bad shard writes nothing."""

import shutil
import sqlite3

import pytest

from fuzzaoti.check.verdict import RungResult, Verdict
from fuzzaoti.corpus import Corpus
from fuzzaoti.corpus.merge import merge_corpora
from fuzzaoti.errors import CorpusError



def _program(*ops):
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program

    nodes, last = [], "x0"
    for k, op in enumerate(ops):
        nodes.append(Node(f"t{k}", op, (last,)))
        last = f"t{k}"
    return Program((DimSpec("d0", 2, None, 4),), (InputSpec("x0", "float32", ("d0",)),), tuple(nodes),
                   (last,)).validate().to_json()


def _shard(path, signatures, hits=1, shrunk=None, status=None):
    """A corpus with one campaign that hit each signature ``hits`` times."""
    with Corpus.open(str(path), create=True) as corpus:
        cid = corpus.start_campaign("cpu", "aoti", None, 0, {}, {})
        for sig in signatures:
            for _ in range(hits):
                fid, _ = corpus.record_failure(cid, "cpu", None, sig, {"stage": "run", "symptom": "crash"},
                                               _program("relu", "neg"), [{"env": {"d0": 2}, "seed": 1}], {"torch": "x"})
            if shrunk is not None:
                corpus.set_shrunk(fid, _program(*shrunk), [{"env": {"d0": 2}, "seed": 1}], "shrunk")
                corpus.set_triage(fid, {"aoti": RungResult(Verdict.FAILS_SAME)}, {"static shapes": RungResult(Verdict.PASSES)})
            if status is not None:
                corpus.set_status(fid, status, known_note="pytorch#1")
        corpus.update_campaign(cid, {"programs": 10 * hits}, status="finished")
    return str(path)


def _summary(path):
    with Corpus.open(path) as corpus:
        return ([(c.counts["programs"], c.origin) for c in corpus.campaigns()],
                {f.signature: (f.hits, f.status) for f in corpus.findings()})


def test_a_finding_hit_in_two_shards_is_one_with_the_sum_of_their_hits(tmp_path):
    a = _shard(tmp_path / "a.db", ["run/crash/both", "run/crash/a"], hits=2)
    b = _shard(tmp_path / "b.db", ["run/crash/both"], hits=3, shrunk=("neg",), status="known")
    out = str(tmp_path / "all.db")
    counts = merge_corpora([a, b], out, lambda line: None)
    assert (counts.campaigns_added, counts.findings_added, counts.findings_combined) == (2, 2, 1)
    campaigns, findings = _summary(out)
    assert campaigns == [(20, a), (30, b)]
    assert findings == {"run/crash/both": (5, "known"), "run/crash/a": (2, "new")}
    with Corpus.open(out) as corpus:
        both = next(f for f in corpus.findings() if f.signature == "run/crash/both")
        assert [n.op for n in both.case.program.nodes] == ["neg"]  # the smaller shrunk program wins
        assert both.triage == {"aoti": RungResult(Verdict.FAILS_SAME)} and both.known_note == "pytorch#1"
        assert {f.campaign_id for f in corpus.findings()} <= {c.id for c in corpus.campaigns()}


def test_merging_a_shard_again_changes_nothing_but_what_it_gained(tmp_path):
    a = _shard(tmp_path / "a.db", ["run/crash/x"], hits=2)
    out = str(tmp_path / "all.db")
    merge_corpora([a], out, lambda line: None)
    merge_corpora([a], out, lambda line: None)
    assert _summary(out) == ([(20, a)], {"run/crash/x": (2, "new")})
    with Corpus.open(a) as corpus:  # the shard's campaign goes on and hits it once more
        corpus.record_failure(1, "cpu", None, "run/crash/x", {"stage": "run", "symptom": "crash"},
                              _program("relu", "neg"), [], {})
        corpus.update_campaign(1, {"programs": 25})
    merge_corpora([a], out, lambda line: None)
    assert _summary(out) == ([(25, a)], {"run/crash/x": (3, "new")})


def test_a_bad_shard_or_a_newer_target_writes_nothing(tmp_path):
    a = _shard(tmp_path / "a.db", ["run/crash/x"])
    foreign = tmp_path / "notes.db"
    foreign.write_bytes(b"not a corpus\n" * 50)
    out = tmp_path / "all.db"
    with pytest.raises(CorpusError, match="not a fuzzaoti corpus"):
        merge_corpora([a, str(foreign)], str(out), lambda line: None)
    assert not out.exists()
    newer = tmp_path / "newer.db"
    shutil.copy(a, newer)
    conn = sqlite3.connect(newer)
    conn.execute("insert into _migrations values ('999_future', 'x')")
    conn.commit()
    conn.close()
    before = newer.read_bytes()
    with pytest.raises(CorpusError, match="newer fuzzaoti"):
        merge_corpora([a], str(newer), lambda line: None)
    assert newer.read_bytes() == before
    with pytest.raises(CorpusError, match="into itself"):
        merge_corpora([a], a, lambda line: None)


def test_an_old_corpus_gets_uids_and_merges(tmp_path):
    # a corpus of schema 007 (before merging existed, made so by undoing 008): migrated first,
    # then merged like any other
    old = _shard(tmp_path / "old.db", ["run/crash/x"], hits=2)
    conn = sqlite3.connect(old)
    for table in ("campaigns", "findings"):
        conn.execute(f"drop index idx_{table}_uid")
        conn.execute(f"alter table {table} drop column uid")
    conn.execute("alter table campaigns drop column origin")
    conn.execute("drop table merged_hits")
    conn.execute("delete from _migrations where name = '008_merge'")
    conn.commit()
    conn.close()
    out = str(tmp_path / "all.db")
    assert merge_corpora([old], out, lambda line: None).findings_added == 1
    merge_corpora([old], out, lambda line: None)
    assert _summary(out) == ([(20, old)], {"run/crash/x": (2, "new")})


def test_replays_come_along_and_the_newer_replay_of_a_torch_wins(tmp_path):
    from fuzzaoti.corpus.finding import ReplayResult

    a = _shard(tmp_path / "a.db", ["run/crash/one"])
    b = _shard(tmp_path / "b.db", ["run/crash/one"])
    with Corpus.open(a) as corpus:
        corpus.record_replay(1, ReplayResult("2.13.0+cpu", "cpu", "passes", "", None, "2026-12-01T00:00:00+00:00"))
    with Corpus.open(b) as corpus:
        corpus.record_replay(1, ReplayResult("2.13.0+cpu", "cpu", "fails", "run/crash/one", None,
                                             "2026-12-02T00:00:00+00:00"))
        corpus.record_replay(1, ReplayResult("2.12.0+cpu", "cpu", "fails", "run/crash/one", None,
                                             "2026-11-30T00:00:00+00:00"))
    into = str(tmp_path / "all.db")
    for _ in range(2):  # twice: nothing doubles
        merge_corpora([a, b], into, echo=lambda line: None)
    with Corpus.open(into) as corpus:
        (finding,) = corpus.findings()
    assert [(r.torch_version, r.result) for r in finding.replays] == [("2.12.0+cpu", "fails"), ("2.13.0+cpu", "fails")]

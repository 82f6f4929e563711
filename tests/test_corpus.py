import os
import sqlite3

import pytest

from fuzzaoti.corpus import Corpus
from fuzzaoti.corpus.migrations import MIGRATIONS
from fuzzaoti.errors import CorpusError, UnknownFinding


def _record(corpus, signature="run/crash/x"):
    cid = corpus.start_campaign("cpu", "aoti", None, 0, {}, {})
    return corpus.record_failure(cid, "cpu", None, signature, {"stage": "run", "symptom": "crash"},
                                 '{"nodes": [{"op": "bmm"}]}', [{"env": {"b": 2}, "seed": 1}], {"torch": "x"})


def test_same_signature_is_one_finding_with_hits(tmp_path):
    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        assert _record(corpus) == (1, True)
        assert _record(corpus) == (1, False)
        assert _record(corpus, "run/crash/other") == (2, True)
        assert corpus.finding(1).hits == 2


def test_missing_corpus_is_an_error_and_is_not_created(tmp_path):
    path = tmp_path / "missing.db"
    with pytest.raises(CorpusError, match="no corpus"):
        Corpus.open(str(path))
    assert not path.exists()


@pytest.mark.parametrize("content", [b"hello, not a database\n" * 100, b"SQLite format 3\x00" + b"\x01" * 200])
def test_foreign_file_is_refused_untouched(tmp_path, content):
    path = tmp_path / "other.db"
    path.write_bytes(content)
    with pytest.raises(CorpusError):
        Corpus.open(str(path), create=True)
    assert path.read_bytes() == content


def test_other_sqlite_database_is_refused_untouched(tmp_path):
    path = str(tmp_path / "app.db")
    conn = sqlite3.connect(path)
    conn.execute("create table users (id int)")
    conn.commit()
    conn.close()
    before = open(path, "rb").read()
    with pytest.raises(CorpusError, match="not a fuzzaoti corpus"):
        Corpus.open(path)
    assert open(path, "rb").read() == before


def test_corpus_from_a_newer_fuzzaoti_is_refused(tmp_path):
    path = str(tmp_path / "c.db")
    with Corpus.open(path, create=True) as corpus:
        corpus.db["_migrations"].insert({"name": "999_future", "applied_at": "later"})
    with pytest.raises(CorpusError, match="newer fuzzaoti"):
        Corpus.open(path)


def test_migrations_recorded_once(tmp_path):
    path = str(tmp_path / "c.db")
    Corpus.open(path, create=True).close()
    with Corpus.open(path) as corpus:
        assert [r["name"] for r in corpus.db["_migrations"].rows] == [name for name, _ in MIGRATIONS]


def test_unknown_finding(tmp_path):
    with Corpus.open(str(tmp_path / "c.db"), create=True) as corpus:
        with pytest.raises(UnknownFinding, match="no finding with id 7"):
            corpus.finding(7)


def test_survives_a_writer_killed_mid_campaign(tmp_path):
    """A process SIGKILLed between commits leaves every committed finding readable."""
    import subprocess
    import sys

    path = str(tmp_path / "c.db")
    script = f"""
import os, signal
from fuzzaoti.corpus import Corpus
c = Corpus.open({path!r}, create=True)
cid = c.start_campaign("cpu", "aoti", None, 0, {{}}, {{}})
for k in range(20):
    c.record_failure(cid, "cpu", None, f"sig{{k}}", {{"stage": "run", "symptom": "crash"}}, '{{"nodes": []}}', [], {{}})
c.db.execute("begin immediate")
c.db.execute("insert into findings (signature) values ('half-written')")
os.kill(os.getpid(), signal.SIGKILL)
"""
    subprocess.run([sys.executable, "-c", script], check=False)
    with Corpus.open(path) as corpus:
        signatures = [f.signature for f in corpus.findings()]
    assert signatures == [f"sig{k}" for k in range(20)]
    assert os.path.exists(path)


def test_a_corpus_from_the_first_schema_migrates_and_keeps_its_findings(tmp_path):
    """Build a corpus with only migration 001 applied, as the first release wrote it."""
    import sqlite_utils

    from fuzzaoti.corpus import migrations

    path = str(tmp_path / "old.db")
    db = sqlite_utils.Database(sqlite3.connect(path, isolation_level=None))
    first = migrations.MIGRATIONS[:1]
    original = migrations.MIGRATIONS
    try:
        migrations.MIGRATIONS = first
        migrations.migrate(db)
    finally:
        migrations.MIGRATIONS = original
    db["findings"].insert({"signature": "run/crash/x", "device": "cpu", "canary": "", "hits": 3, "status": "new",
                           "program": "{}", "runs": "[]"})
    db.close()
    with Corpus.open(path) as corpus:
        assert [r["name"] for r in corpus.db["_migrations"].rows] == [n for n, _ in MIGRATIONS]
        (finding,) = corpus.findings()
        assert finding.hits == 3 and finding.shrunk_case is None


OLD_CORPUS = os.path.join(os.path.dirname(__file__), "data", "corpus-written-before-rung-records.db")


def test_a_corpus_the_previous_release_wrote_migrates_and_every_finding_lists_shows_and_replays(tmp_path):
    # tests/data/corpus-written-before-rung-records.db: made by fuzzaoti at 001bf20 (schema 012,
    # triage tables stored as display text) from three real CPU campaigns, a shrink, two triages
    # and a recheck: 11 findings (a segfault, an export error, wrong values, a compile error)
    import json
    import shutil

    from click.testing import CliRunner

    from fuzzaoti.check.verdict import RungResult, Verdict
    from fuzzaoti.cli import main

    db = str(tmp_path / "old.db")
    shutil.copy(OLD_CORPUS, db)
    runner = CliRunner()
    listed = runner.invoke(main, ["list", "--corpus", db])
    assert listed.exit_code == 0, listed.output
    with Corpus.open(db) as corpus:
        ids = [f.id for f in corpus.findings()]
        assert ids == list(range(1, 12))
        same, passes = RungResult(Verdict.FAILS_SAME), RungResult(Verdict.PASSES)
        triaged = corpus.finding(11)
        assert triaged.triage == {"eager": passes, "aot_eager": passes, "inductor": passes, "aoti": same}
        assert triaged.workarounds["chunked bmm (static)"] == passes
        assert corpus.finding(4).shrunk_case is not None and corpus.finding(4).status == "fixed"
    stored = sqlite3.connect(db).execute("select triage from findings where id = 11").fetchone()[0]
    assert json.loads(stored)["aoti"] == {"verdict": "fails_same"}  # migration 013 rewrote the text
    for fid in ids:
        assert f"  {fid}  " in listed.output or listed.output.startswith(f"{fid:>4}"), listed.output
        shown = runner.invoke(main, ["show", str(fid), "--corpus", db])
        assert shown.exit_code == 0 and shown.output.startswith(f"finding {fid} "), shown.output
        as_json = runner.invoke(main, ["show", str(fid), "--corpus", db, "--json"])
        assert json.loads(as_json.output)["id"] == fid
    report = runner.invoke(main, ["report", "11", "--corpus", db, "--dir", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    assert "| chunked bmm (static) | passes |" in (tmp_path / "r" / "finding-11.md").read_text()
    # every stored program and run replays (the fake backend: eager, no canary, so each passes)
    replayed = runner.invoke(main, ["recheck", "--backend", "fake", "--corpus", db, *map(str, ids)])
    assert replayed.exit_code == 0 and "rechecked 11 findings" in replayed.output, replayed.output

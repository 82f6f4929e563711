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

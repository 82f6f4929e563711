"""The pytest plugin (``pytest --fuzzaoti-corpus``): a corpus as a regression suite, run the way a
user runs it, as ``python -m pytest`` in a fresh process outside this checkout (so only the
corpus is collected). The fake backend stands in for AOTI where the pipeline is the subject;
the canary test and the known entries' test (tests/test_known.py) compile with real AOTI."""

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points

import pytest
from click.testing import CliRunner

from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus


def run_suite(cwd, *args, fault=None):
    """``python -m pytest ARGS`` in ``cwd``; ``fault``: the fake backend's scripted fault."""
    env = {k: v for k, v in os.environ.items() if k != "FUZZAOTI_FAKE_FAULT"}
    if fault:
        env["FUZZAOTI_FAKE_FAULT"] = fault
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def summary(done) -> str:
    """The counts of pytest's last line, e.g. ``1 failed, 2 xfailed``."""
    line = done.stdout.strip().splitlines()[-1]
    return re.sub(r" in [\d.]+s.*", "", line.strip("= "))


@pytest.fixture
def fake_corpus(tmp_path, monkeypatch):
    """A corpus with fake-backend findings: every program wrong (``*:wrong``), whatever Hypothesis draws."""
    db = str(tmp_path / "c.db")
    monkeypatch.setenv("FUZZAOTI_FAKE_FAULT", "*:wrong")
    out = CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "1", "--batch-size", "4",
                                    "--shrink-minutes", "0", "--no-triage", "--corpus", db], catch_exceptions=False)
    monkeypatch.delenv("FUZZAOTI_FAKE_FAULT")
    assert "NEW finding 1" in out.output, out.output
    with Corpus.open(db) as corpus:
        return db, len(corpus.findings())


def test_the_plugin_is_there_once_fuzzaoti_is_installed(tmp_path):
    assert "fuzzaoti.pytest_plugin" in {e.value for e in entry_points(group="pytest11")}
    helped = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert "--fuzzaoti-corpus" in helped.stdout and "--fuzzaoti-known" in helped.stdout


def test_an_open_finding_must_fail_a_fixed_one_must_pass(fake_corpus, tmp_path):
    db, n = fake_corpus
    fake = ("--fuzzaoti-corpus", db, "--fuzzaoti-backend", "fake")
    still = run_suite(tmp_path, *fake, fault="*:wrong")
    assert summary(still) == f"{n} xfailed", still.stdout
    gone = run_suite(tmp_path, *fake)  # "torch upgraded": the bug is gone, strict xfail fails
    assert gone.returncode == 1 and summary(gone) == f"{n} failed", gone.stdout
    assert "[XPASS(strict)] finding 1 [new] still open" in gone.stdout
    assert "fixed? (--fuzzaoti-record marks it fixed)" in gone.stdout
    with Corpus.open(db) as corpus:
        assert not corpus.findings("fixed")  # not recorded without --fuzzaoti-record
    recorded = run_suite(tmp_path, *fake, "--fuzzaoti-record")
    assert "fuzzaoti: status changes" in recorded.stdout and "finding 1: new -> fixed" in recorded.stdout
    with Corpus.open(db) as corpus:
        assert len(corpus.findings("fixed")) == n
        assert corpus.finding(1).replays[0].result == "passes"
    passes = run_suite(tmp_path, *fake)
    assert passes.returncode == 0 and summary(passes) == f"{n} passed", passes.stdout
    back = run_suite(tmp_path, *fake, "--fuzzaoti-record", fault="*:wrong")  # a regression
    assert back.returncode == 1 and summary(back) == f"{n} failed", back.stdout
    assert "finding 1: fixed -> new: fails again (a regression)" in back.stdout
    with Corpus.open(db) as corpus:
        f = corpus.finding(1)
    assert f.status == "new" and f.replays[0].result == "fails"


def test_items_select_like_any_test_and_report_to_junit(fake_corpus, tmp_path):
    db, n = fake_corpus
    fake = ("--fuzzaoti-corpus", db, "--fuzzaoti-backend", "fake")
    assert summary(run_suite(tmp_path, *fake, "-m", "gpu")) == f"{n} deselected"
    assert summary(run_suite(tmp_path, *fake, "-m", "cpu and status_new and stage_compare",
                             fault="*:wrong")) == f"{n} xfailed"
    assert n < 10  # (-k finding-1 would select finding-10 too)
    picked = summary(run_suite(tmp_path, *fake, "-k", "finding-1", fault="*:wrong")).split(", ")
    assert sorted(picked) == sorted(["1 xfailed"] + ([f"{n - 1} deselected"] if n > 1 else [])), picked
    xml = tmp_path / "suite.xml"
    run_suite(tmp_path, *fake, f"--junitxml={xml}", fault="*:wrong")
    cases = ET.parse(xml).getroot().iter("testcase")
    assert sorted(c.get("name").split("[")[0] for c in cases) == sorted(f"finding-{i}" for i in range(1, n + 1))


def test_xdist_spreads_the_items(fake_corpus, tmp_path):
    pytest.importorskip("xdist")  # a test dependency (pyproject's [test]); CI installs it
    db, n = fake_corpus
    done = run_suite(tmp_path, "--fuzzaoti-corpus", db, "--fuzzaoti-backend", "fake", "-n", "2", fault="*:wrong")
    assert "created: 2/2 workers" in done.stdout and summary(done) == f"{n} xfailed", done.stdout


@pytest.mark.parametrize("make", ["missing", "text", "directory"])
def test_a_bad_corpus_is_refused_in_one_line_with_exit_2(tmp_path, make):
    path = tmp_path / "c.db"
    if make == "text":
        path.write_text("not sqlite\n")
    elif make == "directory":
        path.mkdir()
    done = run_suite(tmp_path, "--fuzzaoti-corpus", str(path))
    assert done.returncode == 2  # as the CLI refuses a bad corpus
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and done.stderr.startswith(
        "Exit: error: --fuzzaoti-corpus: "), done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.aoti
def test_a_canary_finding_xfails_under_its_canary_and_passes_once_rechecked_as_fixed(tmp_path, five_op_program):
    # issue acceptance, with real CPU AOTI: the five-op program fails under bmm-batch-rotate
    case_file = tmp_path / "five-op.json"
    case_file.write_text(json.dumps({"program": five_op_program.to_dict(), "runs": [{"env": {"b": 5, "n": 12},
                                                                                      "seed": 3}]}))
    db = str(tmp_path / "c.db")
    checked = CliRunner().invoke(main, ["check", str(case_file), "--inject", "bmm-batch-rotate", "--record", db])
    assert checked.exit_code == 1 and "stored as finding 1" in checked.output, checked.output
    own = run_suite(tmp_path, "--fuzzaoti-corpus", db, "--fuzzaoti-inject", "own")
    assert summary(own) == "1 xfailed", own.stdout
    named = run_suite(tmp_path, "--fuzzaoti-corpus", db, "--fuzzaoti-inject", "bmm-batch-rotate")
    assert summary(named) == "1 xfailed", named.stdout
    plain = run_suite(tmp_path, "--fuzzaoti-corpus", db)
    assert summary(plain) == "1 failed" and "[XPASS(strict)]" in plain.stdout, plain.stdout
    rechecked = CliRunner().invoke(main, ["recheck", "1", "--corpus", db])
    assert "finding 1: new -> fixed" in rechecked.output, rechecked.output
    shown = CliRunner().invoke(main, ["show", "1", "--corpus", db]).output
    assert re.search(r"replayed: passes on \S+ \(cpu\)", shown), shown
    assert summary(run_suite(tmp_path, "--fuzzaoti-corpus", db)) == "1 passed"
    regressed = run_suite(tmp_path, "--fuzzaoti-corpus", db, "--fuzzaoti-inject", "own")
    assert summary(regressed) == "1 failed" and "fails again" in regressed.stdout, regressed.stdout

"""Reports, repros and fix tracking, through the CLI with the fake backend."""

import re
import subprocess
import sys

from click.testing import CliRunner

from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus


def _campaign(db, monkeypatch, fault):
    """A fake-backend campaign whose workers misbehave as ``fault`` says (FUZZAOTI_FAKE_FAULT)."""
    monkeypatch.setenv("FUZZAOTI_FAKE_FAULT", fault)
    return CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "1", "--batch-size", "4",
                                     "--shrink-minutes", "0.5", "--corpus", db], catch_exceptions=False)


def test_report_has_the_template_sections_and_a_runnable_repro(tmp_path, monkeypatch):
    db = str(tmp_path / "c.db")
    assert "NEW finding 1" in _campaign(db, monkeypatch, "*:wrong").output
    monkeypatch.setattr("fuzzaoti.findings.report.collect_env", lambda: "PyTorch version: test")
    out = CliRunner().invoke(main, ["report", "1", "--corpus", db, "--dir", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    text = (tmp_path / "r" / "finding-1.md").read_text()
    for section in ("# [AOTInductor]", "### 🐛 Describe the bug", "```python", "### Expected and actual",
                    "### Triage", "### Versions", "PyTorch version: test", "topic: fuzzer", "Shrunk by fuzzaoti"):
        assert section in text, section
    assert "disagrees with eager at runtime dims" in text  # a wrong result, said as such
    repro = (tmp_path / "r" / "repro-1.py").read_text()
    compile(repro, "repro-1.py", "exec")
    assert not re.search(r"^\s*(import|from)\s+fuzzaoti", repro, re.M)


def test_recheck_marks_findings_that_now_pass_as_fixed(tmp_path, monkeypatch):
    db = str(tmp_path / "c.db")
    _campaign(db, monkeypatch, "*:wrong")
    with Corpus.open(db) as corpus:
        found = sorted(f.id for f in corpus.findings())
    assert found, "the campaign found nothing to recheck"
    runner = CliRunner()
    still = runner.invoke(main, ["recheck", "--backend", "fake", "--corpus", db])
    assert still.exit_code == 0 and f"rechecked {len(found)} findings: 0 now pass" in still.output
    assert still.output.count("STILL FAILS") == len(found)
    monkeypatch.setenv("FUZZAOTI_FAKE_FAULT", "nothing:wrong")  # "upgrade torch": the bug is gone
    fixed = runner.invoke(main, ["recheck", "--backend", "fake", "--corpus", db])
    assert f"rechecked {len(found)} findings: {len(found)} now pass and are marked fixed" in fixed.output
    with Corpus.open(db) as corpus:
        assert sorted(f.id for f in corpus.findings("fixed")) == found
        torch_version = corpus.finding(found[0]).torch_version
    shown = runner.invoke(main, ["show", str(found[0]), "--corpus", db]).output
    assert f"replayed: passes on {torch_version} (cpu)" in shown  # the found clause replaced: same torch
    # fixed ones are replayed too: a bug that comes back is a regression, marked new again
    monkeypatch.setenv("FUZZAOTI_FAKE_FAULT", "*:wrong")
    back = runner.invoke(main, ["recheck", "--backend", "fake", "--corpus", db, str(found[0])])
    assert "rechecked 1 findings: 0 now pass and are marked fixed, 1 fail again and are marked new" in back.output
    assert f"finding {found[0]}: fixed -> new: fails again (a regression)" in back.output
    with Corpus.open(db) as corpus:
        assert corpus.finding(found[0]).status == "new"


def test_replays_on_other_torches_are_kept_per_version_and_shown(tmp_path, monkeypatch):
    from fuzzaoti.corpus.finding import ReplayResult

    db = str(tmp_path / "c.db")
    _campaign(db, monkeypatch, "*:wrong")
    with Corpus.open(db) as corpus:
        corpus.record_replay(1, ReplayResult("2.99.0+cu999", "cpu", "passes", "", None, "2026-12-04T00:00:00+00:00"))
        found_on = corpus.finding(1).torch_version
    shown = CliRunner().invoke(main, ["show", "1", "--corpus", db]).output
    assert f"replayed: fails on {found_on} (cpu, found), passes on 2.99.0+cu999 (cpu)" in shown
    monkeypatch.setattr("fuzzaoti.findings.report.collect_env", lambda: "PyTorch version: test")
    CliRunner().invoke(main, ["report", "1", "--corpus", db, "--dir", str(tmp_path / "r")])
    text = (tmp_path / "r" / "finding-1.md").read_text()  # a row per torch it was checked on
    assert f"| {found_on} | cpu | fails (found) |" in text and "| 2.99.0+cu999 | cpu | passes |  |" in text


def test_report_and_replay_on_bad_ids_are_one_line_errors(tmp_path):
    db = str(tmp_path / "c.db")
    CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "1", "--batch-size", "1", "--corpus", db])
    for command in (["report", "9"], ["replay", "9"], ["triage", "9"], ["shrink", "9"], ["repro", "9"]):
        done = subprocess.run([sys.executable, "-m", "fuzzaoti.cli", *command, "--corpus", db],
                              capture_output=True, text=True)
        assert done.returncode == 2 and done.stderr.strip() == f"error: no finding with id 9 in {db}", command


def test_a_failure_that_raises_is_not_called_a_disagreement():
    from fuzzaoti.findings.report import _what_goes_wrong

    assert _what_goes_wrong("compile", "exception") == "raises while compiling, checked"
    assert _what_goes_wrong("run", "crash") == "crashes when run, checked"
    assert _what_goes_wrong("compare", "mismatch") == "disagrees with eager"


def test_a_report_renders_where_it_was_checked_and_its_known_entrys_analysis(tmp_path, monkeypatch):
    import json

    from fuzzaoti.corpus.finding import ReplayResult
    from fuzzaoti.corpus.known_bugs import builtin_entry

    entry = builtin_entry("export-derived-dim-keyerror-max")
    db = str(tmp_path / "c.db")
    with Corpus.open(db, create=True) as corpus:
        cid = corpus.start_campaign("cpu", "aoti", None, 0, {}, {})
        fid, _ = corpus.record_failure(cid, "cpu", None, entry.signature,
                                       {"stage": "export", "symptom": "exception", "message": "KeyError: 'max'"},
                                       json.dumps(entry.program), list(entry.runs), {"torch": "2.13.0+cpu"})
        corpus.record_replay(fid, ReplayResult("2.15.0+cu132", "cpu", "fails", entry.signature, None, "t1"))
        corpus.record_replay(fid, ReplayResult("2.16.0", "cpu", "passes", "", None, "t2"))
    monkeypatch.setattr("fuzzaoti.findings.report.collect_env", lambda: "PyTorch version: test")
    out = CliRunner().invoke(main, ["report", str(fid), "--corpus", db, "--dir", str(tmp_path / "r")])
    assert out.exit_code == 0 and "analysis from known entry export-derived-dim-keyerror-max" in out.output, out.output
    text = (tmp_path / "r" / f"finding-{fid}.md").read_text()
    assert text.startswith(f"# {entry.title}\n")
    for row in (f"| 2.13.0+cpu | cpu | fails (found) | {entry.signature} |",
                f"| 2.15.0+cu132 | cpu | fails | {entry.signature} |", "| 2.16.0 | cpu | passes |  |"):
        assert row in text, row
    for title, key in (("Where it goes wrong", "where"), ("Closest upstream relatives", "relatives"),
                       ("Workaround", "workaround"), ("Suggested fix", "fix")):
        assert f"### {title}\n\n{getattr(entry, key)}\n" in text, title
    bad = CliRunner().invoke(main, ["report", str(fid), "--corpus", db, "--entry", "nope"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: no known entry 'nope'"), bad.stderr

"""The CLI in-process: help everywhere, one-line errors with exit 2, and the fake-backend loop."""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fuzzaoti.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run_exit(*args):
    with pytest.raises(SystemExit) as exc:
        main.main(list(args), prog_name="fuzzaoti")
    return exc.value.code


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_help(command):
    assert main.commands[command].help
    assert run(command, "--help").exit_code == 0


def test_fuzz_help_lists_the_canaries():
    out = run("fuzz", "--help").output
    for name in ("index-shift", "bmm-batch-rotate", "index-wild"):
        assert name in out


@pytest.mark.parametrize("args", [
    ["fuzz", "--device", "tpu"],
    ["fuzz", "--inject", "nope"],
    # the campaign's settings refuse these before the corpus is opened: no empty corpus is left
    ["fuzz", "--shard", "3/2", "--corpus", "{tmp}/c.db"],
    ["fuzz", "--shard", "x", "--corpus", "{tmp}/c.db"],
    ["fuzz", "--profile", "large", "--batch-size", "49", "--corpus", "{tmp}/c.db"],
    ["fuzz", "--configs", "nope", "--corpus", "{tmp}/c.db"],
    ["list", "--corpus", "{tmp}/missing.db"],
    ["show", "5", "--corpus", "{tmp}/missing.db"],
    ["replay", "5", "--corpus", "{tmp}/notacorpus.txt"],
    ["corpus", "merge", "{tmp}/notacorpus.txt", "-o", "{tmp}/all.db"],
    ["corpus", "merge", "{tmp}/missing.db", "-o", "{tmp}/all.db"],
    ["corpus", "merge", "-o", "{tmp}/all.db"],
    ["launch", "--executor", "pbs", "--corpus-dir", "{tmp}/L"],
    ["launch", "--status", "--corpus-dir", "{tmp}/missing"],
    ["launch", "--resume", "--corpus-dir", "{tmp}/notacorpus.txt"],
    ["launch", "--corpus-dir", "{tmp}/L", "--", "--corpus", "x.db"],
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, args):
    (tmp_path / "notacorpus.txt").write_text("hello")
    before = sorted(p.name for p in tmp_path.iterdir())
    code = run_exit(*[a.format(tmp=tmp_path) for a in args])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "notacorpus.txt").read_text() == "hello"


def test_unknown_finding_id(tmp_path, capsys):
    db = str(tmp_path / "c.db")
    assert run("fuzz", "--backend", "fake", "--max-batches", "1", "--batch-size", "2", "--corpus", db).exit_code == 0
    capsys.readouterr()
    assert run_exit("show", "42", "--corpus", db) == 2
    assert capsys.readouterr().err.strip() == f"error: no finding with id 42 in {db}"


def test_fake_loop_finds_stores_and_lists(tmp_path, fake_fault):
    fake_fault("*:wrong")
    db = str(tmp_path / "c.db")
    result = run("fuzz", "--backend", "fake", "--max-batches", "3", "--batch-size", "8", "--corpus", db)
    assert result.exit_code == 0 and "NEW finding 1" in result.output
    listing = run("list", "--corpus", db).output
    assert "compare/mismatch" in listing
    shown = run("show", "1", "--corpus", db).output
    assert "def forward(" in shown and "signature: compare/mismatch" in shown  # (the program, as source)


def test_check_runs_program_files_and_exits_1_on_a_failure(tmp_path, fake_fault):
    import os

    known = os.path.join(os.path.dirname(__file__), "..", "fuzzaoti", "corpus", "known", "export-derived-dim-keyerror-max.json")
    ok = run("check", "--backend", "eager", known)
    assert ok.exit_code == 0 and ok.output.strip().endswith(": passes"), ok.output
    fake_fault("mul:wrong")
    db = str(tmp_path / "c.db")
    bad = run("check", "--backend", "fake", "--record", db, known)
    assert bad.exit_code == 1 and "FAILS compare/mismatch/" in bad.output and "stored as finding 1" in bad.output
    from fuzzaoti.corpus import Corpus

    with Corpus.open(db) as corpus:
        (finding,) = corpus.findings()
    assert finding.signature.startswith("compare/mismatch/") and finding.signature in bad.output
    garbage = tmp_path / "p.json"
    garbage.write_text('{"program": {"version": 1}}')
    assert run_exit("check", str(garbage)) == 2


def test_a_worker_that_cannot_start_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    # a canary this torch lacks, a broken install: WorkerDied is in the error tree, not a traceback
    from fuzzaoti.errors import WorkerDied
    from fuzzaoti.workers.pool import WorkerPool

    def broken(self):
        raise WorkerDied("canary 'index-shift': module 'torch._inductor' has no attribute 'x'\nTraceback ...")

    monkeypatch.setattr(WorkerPool, "start", broken)
    db = str(tmp_path / "c.db")
    assert run_exit("fuzz", "--backend", "fake", "--max-batches", "1", "--corpus", db) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: canary 'index-shift': module 'torch._inductor' has no attribute 'x'"], err


def test_strategies_prints_the_size_classes_and_the_share_of_runs_past_a_crossing():
    out = run("strategies", "--sample", "20", "--profile", "large", "--device", "cuda",
              "--max-bytes", str(24 << 30)).output
    assert "runs by op family" in out and "runs by big dim kind" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("runs past a crossing:"))
    past, runs = (int(w) for w in line.split(":")[1].split("(")[0].split(" of "))
    assert 0 < past <= runs, line


def test_a_command_leaves_no_hypothesis_folder_in_the_working_directory(tmp_path):
    # a fresh process: Hypothesis settles where its files go once per process
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    work = tmp_path / "pytorch-checkout"
    work.mkdir()
    done = subprocess.run([sys.executable, "-m", "fuzzaoti.cli", "strategies", "--sample", "10"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not any(work.rglob(".hypothesis"))
    # what Hypothesis keeps on disk (6.155 its constants cache; 6.170 keeps nothing here) goes
    # under fuzzaoti's own cache folder
    kept = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert all((tmp_path / "cache" / "fuzzaoti" / "hypothesis") in p.parents for p in kept), kept

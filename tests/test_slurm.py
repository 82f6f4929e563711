"""fuzzaoti launch on a real Slurm: a one-node cluster on this machine (scripts/slurm_local.sh,
started here when it is not running and we are root), a 2-task job array through submitit, each
task a real CPU AOTI campaign of one batch (within its minute), merged into one corpus."""

import os
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus

SETUP = os.path.join(os.path.dirname(__file__), "..", "scripts", "slurm_local.sh")


def _idle() -> bool:
    if shutil.which("sinfo") is None:
        return False
    out = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True)
    return out.returncode == 0 and "idle" in out.stdout


@pytest.fixture(scope="module")
def slurm():
    pytest.importorskip("submitit", reason="submitit is not installed (pip install -e '.[test]')")
    if not _idle():
        if os.geteuid() != 0:
            pytest.skip("no Slurm running, and starting one (scripts/slurm_local.sh) needs root")
        done = subprocess.run(["bash", SETUP], capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not _idle():
            pytest.skip(f"a one-node Slurm could not start here: {(done.stdout + done.stderr).strip()[-300:]}")


@pytest.mark.aoti
@pytest.mark.slurm
def test_a_two_task_slurm_array_runs_real_aoti_campaigns_and_merges_them(slurm, tmp_path):
    out = tmp_path / "launch"
    done = CliRunner().invoke(main, ["launch", "--executor", "slurm", "--tasks", "2", "--minutes", "1",
                                     "--corpus-dir", str(out), "--", "--max-batches", "1", "--shrink-minutes", "0",
                                     "--no-triage"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output + "".join(
        open(out / f"shard-{k}.log").read()[-2000:] for k in range(2) if (out / f"shard-{k}.log").exists())
    assert "(slurm)" in done.output and "all tasks completed" in done.output
    with Corpus.open(str(out / "merged.db")) as merged:
        campaigns = merged.campaigns()
    assert sorted(c.origin for c in campaigns) == [str(out / f"shard-{k}.db") for k in range(2)]
    assert all(c.status == "finished" and c.backend == "aoti" and c.counts["programs"] > 0 for c in campaigns)

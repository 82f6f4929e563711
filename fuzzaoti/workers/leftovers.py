"""What a campaign killed by SIGKILL leaves behind: its pool's package folders and its workers'
stderr files, each named by the campaign's pid, swept by the next pool on the machine."""

from __future__ import annotations

import glob
import os
import shutil
import tempfile


def sweep_leftovers_of_dead_pools() -> None:
    """Remove the package folders and worker stderr files of pools whose process is gone (both
    are named by it): a campaign killed by SIGKILL (a Slurm job preempted, say) never closes its
    pool, and would leave the packages of the groups it was reloading behind."""
    for kind in ("packages", "worker"):
        for path in glob.glob(os.path.join(tempfile.gettempdir(), f"fuzzaoti-{kind}-*-*")):
            pid = os.path.basename(path).split("-")[2]
            if pid.isdigit() and not _process_alive(int(pid)):
                _remove(path)


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        os.unlink(path)
    except OSError:
        pass


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True

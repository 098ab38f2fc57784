"""bench/sched_loop.py runs and measures what it says: the scheduler path starts every job once per interval, the
runner alone gives a CPU figure per run. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "bench" / "sched_loop.py")


@pytest.mark.external  # the measured checkout runs in a process of its own
@pytest.mark.timeout(120)
def test_the_no_op_scheduler_path_runs_every_job_once_per_interval_and_the_runner_alone() -> None:
    proc = subprocess.run([sys.executable, SCRIPT, "--jobs", "200", "--interval", "1", "--warmup", "1.5",
                           "--rounds", "1", "--json"], capture_output=True, text=True, timeout=100, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ((row,),) = json.loads(proc.stdout).values()
    assert row["probe_package"] == str(ROOT / "probe")
    assert 100 <= row["runs"] <= 300, row  # one interval's window: each of the 200 jobs about once
    assert row["us_per_run"] > 0 and row["finished"] >= row["runs"]
    proc = subprocess.run([sys.executable, SCRIPT, "--direct", "640", "--jobs", "64", "--rounds", "1", "--json"],
                          capture_output=True, text=True, timeout=100, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ((row,),) = json.loads(proc.stdout).values()
    assert row["runs"] == 640 and row["us_per_run"] > 0 and row["finished"] >= 640

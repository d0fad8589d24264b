"""Checks that a trial process survived a master restart (was re-adopted) rather than being run
again. A rerun from scratch with the same hyperparameters reports the same steps and values, and
the store merges repeated reports, so "steps 1..N stored once" cannot tell them apart; these
checks can. The trial must be flaky.py with the `start_log` hyperparameter set."""

import json
import pathlib
import re
from typing import Any, Dict, List

from cluster import Cluster


def read_starts(start_log: pathlib.Path) -> List[Dict[str, Any]]:
    """One entry per process start of the trial: {pid, run_id, latest_checkpoint}."""
    if not start_log.exists():
        return []
    return [json.loads(line) for line in start_log.read_text().splitlines() if line.strip()]


def metrics_by_step(c: Cluster, trial_id: int) -> Dict[int, Dict[str, Any]]:
    """The stored training metrics (values, run id and report time) keyed by step."""
    return {m["stepsCompleted"]: {"metrics": m["metrics"], "trialRunId": m["trialRunId"],
                                  "reportTime": m["reportTime"]}
            for m in c.metrics(trial_id, "training")}


def assert_readopted(c: Cluster, trial_id: int, start_log: pathlib.Path, start: Dict[str, Any],
                     before: Dict[int, Dict[str, Any]], total: int) -> None:
    """`start` is the single process start read before the master was killed, `before` the
    metrics read then."""
    starts = read_starts(start_log)
    if starts != [start]:
        # The trial's log (master lines included) says why it was started again.
        out = c.det("trial", "logs", str(trial_id), check=False).stdout
        raise AssertionError(f"the trial process started again after the master restart: "
                             f"{starts}\n--- trial log ---\n{out[-6000:]}")
    assert start["latest_checkpoint"] is None
    after = metrics_by_step(c, trial_id)
    for step, m in before.items():
        assert after.get(step) == m, f"step {step} changed across the restart: {m} -> {after.get(step)}"
    pids = {m["metrics"]["avgMetrics"]["pid"] for m in after.values()}
    assert pids == {start["pid"]}, f"metrics came from processes {pids}, not only {start['pid']}"
    runs = {m["trialRunId"] for m in after.values()}
    assert runs == {start["run_id"]}, f"metrics came from runs {runs}, not only {start['run_id']}"
    out = c.det("trial", "logs", str(trial_id)).stdout
    # A line in flight at the kill may be shipped twice; a second process would differ in pid.
    started = set(re.findall(r"flaky: started pid=(\d+) run_id=(\d+) from=(\S+)", out))
    assert started == {(str(start["pid"]), str(start["run_id"]), "none")}, started
    assert "flaky: resumed from" not in out, "the trial should have been re-adopted, not rerun"
    assert f"flaky: done at step {total}" in out

"""The same search, run many times at once with random timing, ends as the simulation says.

Issue #33: a 9-trial adaptive_asha search once ended without its promotion to 90 because a
trial's process had exited when the promotion came. Here that search and a PBT search run
DET_SEARCH_REPEATS times each (20 unless set), all at once on one agent with two slots, with a
trial script that sleeps at random and ends its own process at random (exit 0) mid-operation or
between operations. Every trial reports the same metric, so every run must end COMPLETED with
the trial lengths `det preview-search --metric constant` prints, with no restart counted.
"""

import collections
import os
import re
import subprocess

import pytest

from cluster import BIN, REPO, Cluster, brought_up, wait_for

FIXTURE = REPO / "tests" / "e2e" / "fixtures" / "repeat_search"
REPEATS = int(os.environ.get("DET_SEARCH_REPEATS", "20"))


def simulated_lengths(config):
    """{final length: trial count} from the offline simulation with a constant metric."""
    out = subprocess.run([str(BIN / "det"), "preview-search", str(config), "--metric", "constant"],
                         capture_output=True, text=True, check=True).stdout
    table = out.split("Training Length", 1)[1].split("Hyperparameters are drawn", 1)[0]
    counts = {int(m.group(2)): int(m.group(1))
              for m in re.finditer(r"^\s*(\d+)\s*\|\s*(\d+) batches", table, re.M)}
    assert counts, f"no outcome table in:\n{out}"
    return counts


@pytest.fixture(scope="module")
def busy_cluster():
    with brought_up(Cluster(agents=1, slots=2)) as c:
        yield c


@pytest.mark.parametrize("config", ["adaptive_asha.yaml", "pbt.yaml"])
def test_every_run_of_a_search_ends_as_the_simulation(busy_cluster, config):
    c = busy_cluster
    expected = simulated_lengths(FIXTURE / config)
    ids = [c.create(FIXTURE / config, FIXTURE) for _ in range(REPEATS)]
    terminal = {"STATE_COMPLETED", "STATE_CANCELED", "STATE_ERROR"}
    wait_for(lambda: all(c.experiment(i)["state"] in terminal for i in ids), 1500,
             f"{REPEATS} runs of {config} to end", interval=2)
    outcomes, reruns, failures = [], 0, []
    for exp_id in ids:
        state = c.experiment(exp_id)["state"]
        trials = c.trials(exp_id)
        got = dict(collections.Counter(t["totalBatchesProcessed"] for t in trials))
        restarted = [t["id"] for t in trials if t.get("restarts", 0)]
        outcomes.append(got)
        # A run that trained after a process of the trial had ended counts as one started again.
        reruns += sum(len({m["trialRunId"] for m in c.metrics(t["id"], "training")}) - 1
                      for t in trials)
        if state != "STATE_COMPLETED" or got != expected or restarted:
            failures.append(f"experiment {exp_id}: {state}, lengths {sorted(got.items())}, "
                            f"restarts counted on trials {restarted}")
    print(f"{config}: {REPEATS} runs, simulation {sorted(expected.items())}, "
          f"{REPEATS - len(failures)} equal, {reruns} processes started again after an exit")
    assert not failures, (f"simulation says {sorted(expected.items())}:\n" + "\n".join(failures))
    # The script's own exits must have happened, or the timing was not varied at all.
    assert reruns > 0, "no trial's process ended early in any run"

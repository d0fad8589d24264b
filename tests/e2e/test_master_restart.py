"""A kill -9 of the master while a trial runs loses nothing: the master restores the experiment,
the agent re-registers, the running trial is re-adopted, and no metric is lost or stored twice."""

import os
import pathlib
import signal

from cluster import Cluster, wait_for  # noqa: F401

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def test_master_kill9_while_trial_runs(own_cluster, tmp_path):
    c = own_cluster
    cfg = tmp_path / "slow.yaml"
    cfg.write_text((FIXTURES / "flaky.yaml").read_text().replace("sleep_per_step: 0.0",
                                                                 "sleep_per_step: 0.25"))
    exp_id = c.create(cfg, FIXTURES)
    trial = wait_for(lambda: (c.trials(exp_id) or [None])[0], 30, "trial")
    wait_for(lambda: len(c.metrics(trial["id"], "training")) >= 3, 60, "some training metrics")

    pid = int((c.data_dir / "master.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
    c.det("deploy", "local", "master-up", "--master-port", str(c.port), "--data-dir",
          str(c.data_dir))
    c._token = None

    def up():
        try:
            return c.request("GET", "/info", auth=False)
        except OSError:
            return None

    wait_for(up, 30, "master to come back")
    c.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    (t,) = c.trials(exp_id)
    assert t["restarts"] == 0
    steps = [m["stepsCompleted"] for m in c.metrics(t["id"], "training")]
    assert steps == list(range(1, 21)), steps
    logs = c.det("trial", "logs", str(t["id"])).stdout
    assert "flaky: resumed from" not in logs, "the trial should have been re-adopted, not rerun"

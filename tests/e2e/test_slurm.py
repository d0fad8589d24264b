"""The Slurm resource manager on a real (local) Slurm: `det deploy local cluster-up
--resource-manager slurm` starts munge, slurmctld and slurmd under the data dir and a master
whose pools are Slurm partitions; every trial runs as a Slurm job (one single-allocation agent
per node). Checks: a search completes, a 2-slot distributed trial runs, pause/activate resumes
from the checkpoint, `det job list` shows Slurm's pending reason and a priority change reaches
Slurm's nice value, a job scancel'ed from outside is an infrastructure failure (rescheduled, no
restart counted), a kill -9 of the master re-adopts the running job and a job still pending in
Slurm's queue (no second submission), and a trial with
environment.image runs in a podman container inside its Slurm job."""

import json
import os
import pathlib
import re
import signal
import subprocess

import pytest
import yaml

import container_image
from cluster import REPO, Cluster, free_port, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
DIGITS = REPO / "examples" / "digits-pytorch"

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/sbin/slurmctld") or not os.path.exists("/usr/sbin/munged"),
    reason="slurmctld or munged is not installed (Debian packages slurmctld slurmd munge)")


class SlurmCluster(Cluster):
    def up(self, attempts: int = 3) -> None:
        for attempt in range(attempts):
            proc = self.det("deploy", "local", "cluster-up", "--resource-manager", "slurm",
                            "--master-port", str(self.port), "--data-dir", str(self.data_dir),
                            timeout=180, check=False)
            if proc.returncode == 0 and self.master_running():
                return
            log = self.data_dir / "master.log"
            text = proc.stdout + proc.stderr + (log.read_text(errors="replace")
                                                if log.exists() else "")
            if "already in use" not in text or attempt == attempts - 1:
                raise AssertionError(f"cluster-up --resource-manager slurm exited "
                                     f"{proc.returncode}\n{proc.stdout}\n{proc.stderr}\n{text}")
            self.down()
            self._set_port(free_port())

    def slurm_env(self):
        env = dict(self.env)
        env["SLURM_CONF"] = str(self.data_dir / "slurm" / "slurm.conf")
        return env

    def settled_jobs_of(self, trial_id: int):
        """jobs_of once none is still PENDING, RUNNING or COMPLETING (Slurm shows COMPLETING for
        a moment after the trial has reported its end)."""
        def settled():
            jobs = self.jobs_of(trial_id)
            return jobs if all(j[1] not in ("PENDING", "RUNNING", "COMPLETING")
                               for j in jobs) else None

        return wait_for(settled, 60, f"trial {trial_id}'s Slurm jobs to end")

    def jobs_of(self, trial_id: int):
        """[(job id, state, reason, nice)] of the trial's Slurm jobs, oldest first."""
        out = subprocess.run(["squeue", "-h", "--states=all", "-o", "%i|%T|%r|%y|%j"],
                             env=self.slurm_env(), capture_output=True, text=True,
                             check=True).stdout
        jobs = []
        for line in out.splitlines():
            jid, state, reason, nice, name = line.split("|", 4)
            if name == f"det-trial-{trial_id}":
                jobs.append((int(jid), state, reason, int(nice)))
        return sorted(jobs)

    def logs(self, trial_id: int) -> str:
        return self.det("trial", "logs", str(trial_id)).stdout

    def one_trial(self, exp_id: int):
        return wait_for(lambda: (self.trials(exp_id) or [None])[0], 60, "the trial")


@pytest.fixture(scope="module")
def slurm():
    c = SlurmCluster(agents=0, slots=0)
    if container_image.podman() is not None:
        # The jobs' agents inherit the master's environment (sbatch exports it): podman in them
        # reads this containers.conf (no default ulimits, which this sandbox refuses).
        c.env["CONTAINERS_CONF"] = str(container_image.containers_conf(c.tmp))
    c.up()
    try:
        yield c
    finally:
        c.cleanup()


@pytest.fixture(scope="module")
def slurm_image(slurm):
    if container_image.podman() is None:
        pytest.skip("podman is not installed (Debian package podman; make setup installs it): "
                    "the Slurm container test is skipped")
    image = container_image.build(slurm.env)
    try:
        yield image
    finally:
        container_image.remove(image, slurm.env)


def flaky_config(tmp_path, name="flaky.yaml", **hp):
    cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
    cfg["hyperparameters"].update(hp)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_search_completes_as_slurm_jobs(slurm, tmp_path):
    cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
    cfg["hyperparameters"]["x"] = {"type": "double", "minval": 0.0, "maxval": 1.0}
    cfg["searcher"] = {"name": "random", "metric": "validation_loss", "max_trials": 3,
                       "max_concurrent_trials": 2, "max_length": {"batches": 6}}
    path = tmp_path / "search.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp_id = slurm.create(path, FIXTURES)
    slurm.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    trials = slurm.trials(exp_id)
    assert len(trials) == 3
    for t in trials:
        assert t["state"] == "STATE_COMPLETED"
        assert [m["stepsCompleted"] for m in slurm.metrics(t["id"], "validation")] == [6]
        logs = slurm.logs(t["id"])
        assert "to Slurm partition compute" in logs, logs
        assert "flaky: done at step 6" in logs, logs
        (job,) = slurm.settled_jobs_of(t["id"])  # one job per trial, ended cleanly
        assert job[1] == "COMPLETED", job
    # The jobs' agents left with their jobs: none is listed as a lost agent.
    wait_for(lambda: not [a for a in slurm.request("GET", "/api/v1/agents")["agents"]
                          if a["id"].startswith("slurm-")], 60, "the jobs' agents to leave")


def test_two_slot_distributed_trial(slurm):
    exp_id = slurm.create(DIGITS / "distributed.yaml", DIGITS, "--config",
                          "searcher.max_length.batches=50", "--config",
                          "min_validation_period.batches=50")
    slurm.wait_state(exp_id, "STATE_COMPLETED", timeout=300)
    (t,) = slurm.trials(exp_id)
    logs = slurm.logs(t["id"])
    assert "[rank=0]" in logs and "[rank=1]" in logs, logs
    assert [m["stepsCompleted"] for m in slurm.metrics(t["id"], "validation")] == [50]
    (job,) = slurm.jobs_of(t["id"])
    assert job[1] == "COMPLETED"


def test_pause_activate_resumes_from_checkpoint(slurm, tmp_path):
    path = flaky_config(tmp_path, sleep_per_step=0.3, checkpoint_every=3)
    exp_id = slurm.create(path, FIXTURES)
    t = slurm.one_trial(exp_id)
    wait_for(lambda: len(slurm.metrics(t["id"], "training")) >= 4, 120, "training metrics")
    slurm.det("experiment", "pause", str(exp_id))
    wait_for(lambda: slurm.experiment(exp_id)["state"] == "STATE_PAUSED"
             and slurm.trials(exp_id)[0]["state"] == "STATE_PAUSED", 60, "pause")
    # Its Slurm job ended with it.
    wait_for(lambda: [j for j in slurm.jobs_of(t["id"]) if j[1] == "COMPLETED"], 60,
             "the paused trial's job to end")
    ckpts = slurm.request("GET", f"/api/v1/trials/{t['id']}/checkpoints")["checkpoints"]
    assert ckpts
    at = max(c["metadata"]["steps_completed"] for c in ckpts)
    slurm.det("experiment", "activate", str(exp_id))
    slurm.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    (t,) = slurm.trials(exp_id)
    assert t["restarts"] == 0
    logs = slurm.logs(t["id"])
    assert f"flaky: resumed from" in logs and f"at step {at}" in logs, logs
    jobs = slurm.settled_jobs_of(t["id"])
    assert len(jobs) == 2 and all(j[1] == "COMPLETED" for j in jobs), jobs


def queue_behind_a_full_node(slurm, tmp_path):
    """(big, its trial, small, its trial, the small trial's PENDING Slurm job): a running trial
    that fills the node, then a small experiment whose job waits in Slurm's queue behind it."""
    cpus = os.cpu_count() or 1
    big = slurm.create(flaky_config(tmp_path, "big.yaml", sleep_per_step=1.0), FIXTURES,
                       "--config", f"resources.slots_per_trial={cpus}",
                       "--config", "searcher.max_length.batches=200")
    tb = slurm.one_trial(big)
    wait_for(lambda: slurm.metrics(tb["id"], "training"), 120, "the node-filling trial to run")
    small = slurm.create(flaky_config(tmp_path, "small.yaml"), FIXTURES)
    ts = slurm.one_trial(small)
    (job,) = wait_for(lambda: [j for j in slurm.jobs_of(ts["id"]) if j[1] == "PENDING"], 60,
                      "the second job to wait in Slurm")
    return big, tb, small, ts, job


def test_job_list_shows_slurm_queue_and_priority_reaches_nice(slurm, tmp_path):
    big, tb, small, ts, _ = queue_behind_a_full_node(slurm, tmp_path)
    out = wait_for(lambda: (lambda o: o if "Resources" in o else None)(
        slurm.det("job", "list").stdout), 30, "det job list to show the pending reason")
    line = next(l for l in out.splitlines() if f"({small})" in l)
    assert "STATE_QUEUED" in line or "Queued" in line, line
    assert re.search(r"Slurm job \d+ PENDING \(Resources", line), line

    job_id = slurm.experiment(small)["jobId"]
    slurm.det("job", "update", job_id, "--priority", "7")
    wait_for(lambda: slurm.jobs_of(ts["id"])[0][3] == 7, 30, "nice 7 on the pending job")

    slurm.det("experiment", "kill", str(small))
    slurm.det("experiment", "kill", str(big))
    slurm.wait_state(small, "STATE_CANCELED", timeout=60)
    slurm.wait_state(big, "STATE_CANCELED", timeout=60)
    wait_for(lambda: all(j[1] not in ("PENDING", "RUNNING", "COMPLETING")
                         for j in slurm.jobs_of(ts["id"]) + slurm.jobs_of(tb["id"])),
             60, "both jobs to leave Slurm")


def test_scancel_from_outside_is_an_infrastructure_failure(slurm, tmp_path):
    path = flaky_config(tmp_path, sleep_per_step=0.3, checkpoint_every=3)
    exp_id = slurm.create(path, FIXTURES)
    t = slurm.one_trial(exp_id)
    wait_for(lambda: len(slurm.metrics(t["id"], "training")) >= 4, 120, "training metrics")
    (job,) = [j for j in slurm.jobs_of(t["id"]) if j[1] == "RUNNING"]
    subprocess.run(["scancel", str(job[0])], env=slurm.slurm_env(), check=True)
    slurm.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    (t,) = slurm.trials(exp_id)
    assert t["restarts"] == 0, "a job Slurm cancelled must not count as a restart"
    logs = slurm.logs(t["id"])
    assert f"Slurm job {job[0]} ended CANCELLED" in logs, logs
    assert "flaky: resumed from" in logs, logs
    jobs = slurm.settled_jobs_of(t["id"])
    assert [j[1] for j in jobs] == ["CANCELLED", "COMPLETED"], jobs


def test_master_kill9_readopts_running_slurm_job(slurm, tmp_path):
    starts = tmp_path / "starts.jsonl"
    path = flaky_config(tmp_path, sleep_per_step=0.3, checkpoint_every=0, start_log=str(starts))
    exp_id = slurm.create(path, FIXTURES)
    t = slurm.one_trial(exp_id)
    wait_for(lambda: len(slurm.metrics(t["id"], "training")) >= 3, 120, "training metrics")
    (job,) = slurm.jobs_of(t["id"])
    pid = slurm.master_pid()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
    slurm.master_up("--master-config-path", str(slurm.data_dir / "master-slurm.yaml"))
    slurm.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    (t,) = slurm.trials(exp_id)
    assert t["restarts"] == 0
    assert [m["stepsCompleted"] for m in slurm.metrics(t["id"], "training")] == list(range(1, 21))
    runs = [json.loads(l) for l in starts.read_text().splitlines()]
    assert len(runs) == 1, f"the trial ran again instead of being re-adopted: {runs}"
    jobs = slurm.settled_jobs_of(t["id"])
    assert jobs == [(job[0], "COMPLETED", jobs[0][2], jobs[0][3])], (job, jobs)


def test_master_kill9_readopts_pending_slurm_job(slurm, tmp_path):
    # A queued allocation has no row in the store; the restored master queues the trial as the
    # same run, so the Slurm job submitted for it is re-adopted, not submitted again.
    big, _, small, ts, job = queue_behind_a_full_node(slurm, tmp_path)
    pid = slurm.master_pid()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
    slurm.master_up("--master-config-path", str(slurm.data_dir / "master-slurm.yaml"))
    # The restored allocation follows the re-adopted job: det job list shows it, pending.
    wait_for(lambda: (lambda o: o if re.search(rf"\({small}\).*Slurm job {job[0]} PENDING", o)
                      else None)(slurm.det("job", "list").stdout), 60,
             "det job list to show the re-adopted pending job")
    assert [j[0] for j in slurm.jobs_of(ts["id"])] == [job[0]], slurm.jobs_of(ts["id"])
    slurm.det("experiment", "kill", str(big))
    slurm.wait_state(small, "STATE_COMPLETED", timeout=240)
    (settled,) = slurm.settled_jobs_of(ts["id"])
    assert settled[:2] == (job[0], "COMPLETED"), settled


def test_trial_with_an_image_runs_in_a_container_in_its_slurm_job(slurm, slurm_image, tmp_path):
    rw = tmp_path / "rw"
    rw.mkdir()
    (rw / "input.txt").write_text("written on the host")
    cfg = {
        "name": "slurm-container",
        "entrypoint": "python3 inspect.py",
        "searcher": {"name": "single", "metric": "loss", "max_length": {"batches": 1}},
        "max_restarts": 0,
        "environment": {
            "image": {"cpu": slurm_image, "cuda": slurm_image},
            "environment_variables": ["GREETING=hello from slurm", f"RW_MOUNT={rw}"],
        },
        "bind_mounts": container_image.bind_mounts() + [
            {"host_path": str(rw), "container_path": str(rw), "read_only": False}],
    }
    path = tmp_path / "container.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp_id = slurm.create(path, FIXTURES / "containers")
    slurm.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    (t,) = slurm.trials(exp_id)
    logs = slurm.logs(t["id"])
    assert "to Slurm partition compute" in logs, logs
    line = re.search(r"INSPECT (\{.*\})$", logs, re.M)
    assert line, logs
    seen = json.loads(line.group(1))
    # Inside a container, with the config's variable, the DET_* ones and the bind mounts.
    assert seen["cgroup_container"], seen
    assert seen["greeting"] == "hello from slurm", seen
    assert seen["det_trial_id"] == str(t["id"]), seen
    assert seen["input"] == "written on the host", seen
    assert (rw / "from-container.txt").read_text() == f"trial {t['id']}\n"
    assert seen["usr_write"] in ("OSError", "PermissionError"), seen
    (job,) = slurm.settled_jobs_of(t["id"])
    assert job[1] == "COMPLETED", job
    # The job's agent ran it through podman, and nothing is left behind.
    agent_out = "".join(p.read_text(errors="replace")
                        for p in (slurm.data_dir / "slurm-jobs").glob(f"*/slurm-{job[0]}.out"))
    assert re.search(r"runs in container det-\S+ \(podman\)", agent_out), agent_out[-3000:]
    assert container_image.containers_of(slurm.data_dir, slurm.env) == []

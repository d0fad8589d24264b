"""`det trial download TRIAL_ID (--best | --latest | --uuid U)`, Determined's arguments: the
chosen checkpoint of a real trial lands in the output directory."""

import json
import pathlib

from cluster import wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def step_of(directory: pathlib.Path) -> int:
    return json.loads((directory / "state.json").read_text())["step"]


def test_trial_download_best_latest_uuid(cluster, tmp_path):
    cfg = tmp_path / "download.yaml"
    # The metric grows with the step (scale 1.1) and smaller is better: best is step 1, latest
    # step 10. Every checkpoint is kept, so GC cannot race the downloads.
    cfg.write_text((FIXTURES / "checkpoints.yaml").read_text()
                   .replace("save_trial_latest: 2", "save_trial_latest: 10"))
    exp_id = cluster.create(cfg, FIXTURES, "--config", "hyperparameters.scale=1.1")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    (trial,) = cluster.trials(exp_id)
    tid = str(trial["id"])
    wait_for(lambda: len(cluster.request("GET", f"/api/v1/trials/{tid}/checkpoints")["checkpoints"])
             == 10, 60, "the trial's 10 checkpoints")

    out = cluster.det("trial", "download", tid, "--latest", "-q", "-o", str(tmp_path / "latest"))
    assert out.stdout.strip() == str(tmp_path / "latest"), out.stdout
    assert step_of(tmp_path / "latest") == 10

    cluster.det("trial", "download", tid, "--best", "-o", str(tmp_path / "best"))
    assert step_of(tmp_path / "best") == 1

    cluster.det("trial", "download", tid, "--best", "--sort-by", "x", "--smaller-is-better",
                "false", "-o", str(tmp_path / "largest"))
    assert step_of(tmp_path / "largest") == 10

    ckpts = cluster.request("GET", f"/api/v1/trials/{tid}/checkpoints")["checkpoints"]
    five = next(c for c in ckpts if c["metadata"]["steps_completed"] == 5)
    cluster.det("trial", "download", tid, "--uuid", five["uuid"], "-o", str(tmp_path / "five"))
    assert step_of(tmp_path / "five") == 5

    none = cluster.det("trial", "download", tid, check=False)
    assert none.returncode != 0
    assert "one of --best, --latest or --uuid is required" in none.stderr, none.stderr
    unsorted = cluster.det("trial", "download", tid, "--best", "--sort-by", "x", check=False)
    assert unsorted.returncode != 0
    assert "--smaller-is-better must be given with --sort-by" in unsorted.stderr, unsorted.stderr

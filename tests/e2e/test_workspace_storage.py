"""A workspace's checkpoint storage (issue #34): `det workspace create|edit
--checkpoint-storage-config(-file)` stores it (checked as an experiment's storage is, and kept
under the master's checkpoint_storage_allowed_roots), it is shown with its secrets masked, an
experiment of the workspace that names no storage checkpoints there, one elsewhere keeps the
master's, and '{}' removes it."""

import json
import pathlib

import yaml

from cluster import Cluster, brought_up, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def test_experiments_of_a_workspace_checkpoint_to_its_storage(tmp_path):
    team_dir = tmp_path / "team-storage"
    team_dir.mkdir()
    master_yaml = tmp_path / "master.yaml"
    master_yaml.write_text(yaml.safe_dump({"checkpoint_storage_allowed_roots": [str(team_dir)]}))
    with brought_up(Cluster(agents=1, slots=1,
                            up_args=("--master-config-path", str(master_yaml)))) as c:
        storage_file = tmp_path / "storage.yaml"
        storage_file.write_text(yaml.safe_dump({"type": "shared_fs", "host_path": str(team_dir)}))
        c.det("workspace", "create", "team", "--checkpoint-storage-config-file", str(storage_file))
        described = c.det("workspace", "describe", "team", "--json").stdout
        assert json.loads(described)["checkpointStorageConfig"]["host_path"] == str(team_dir)

        # Outside the allowed roots, or incomplete: refused naming the field, nothing stored.
        outside = c.det("workspace", "create", "elsewhere", "--checkpoint-storage-config",
                        json.dumps({"type": "shared_fs", "host_path": "/etc"}), check=False)
        assert outside.returncode != 0 and "checkpointStorageConfig" in outside.stderr
        partial = c.det("workspace", "edit", "team", "--checkpoint-storage-config",
                        '{"type": "shared_fs"}', check=False)
        assert partial.returncode != 0 and "host_path" in partial.stderr, partial.stderr
        names = [w["name"] for w in c.request("GET", "/api/v1/workspaces")["workspaces"]]
        assert "elsewhere" not in names

        # Secrets are masked when shown.
        c.det("workspace", "create", "s3-team", "--checkpoint-storage-config",
              json.dumps({"type": "s3", "bucket": "b", "access_key": "a", "secret_key": "sekrit"}))
        shown = c.det("workspace", "describe", "s3-team", "--json").stdout
        assert "sekrit" not in shown and "********" in shown, shown

        # An experiment of the workspace checkpoints to its storage; one elsewhere does not.
        c.det("project", "create", "team", "p")
        ws = next(w for w in c.request("GET", "/api/v1/workspaces")["workspaces"]
                  if w["name"] == "team")
        project = c.request("GET", f"/api/v1/workspaces/{ws['id']}/projects")["projects"][0]["id"]
        made = c.det("experiment", "create", "--project_id", str(project),
                     str(FIXTURES / "checkpoints.yaml"), str(FIXTURES)).stdout
        exp = int(made.split("Created experiment ")[1].split()[0])
        storage = c.experiment(exp)["config"]["checkpoint_storage"]
        assert storage["host_path"] == str(team_dir), storage
        assert storage["save_trial_latest"] == 2  # the experiment's own fields stay
        c.wait_state(exp, "STATE_COMPLETED")

        # The experiment's checkpoint GC runs once it has ended (its state is stored first):
        # polled until the checkpoints it keeps are the ones whose files are there.
        def kept_on_disk():
            checkpoints = c.request("GET", f"/api/v1/experiments/{exp}/checkpoints")["checkpoints"]
            kept = [ck["uuid"] for ck in checkpoints if ck["state"] == "STATE_COMPLETED"]
            return kept if kept and all((team_dir / u).is_dir() for u in kept) else None

        wait_for(kept_on_disk, 60, "the kept checkpoints in the workspace's storage")
        other = c.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--paused")
        assert c.experiment(other)["config"]["checkpoint_storage"]["host_path"] != str(team_dir)

        c.det("workspace", "edit", "team", "--checkpoint-storage-config", "{}")
        assert json.loads(c.det("workspace", "describe", "team", "--json").stdout)[
            "checkpointStorageConfig"] is None

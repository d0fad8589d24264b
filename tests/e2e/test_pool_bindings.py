"""Workspace-resource pool bindings (issue #34), through det and the REST routes: a pool bound to
a workspace is available to it alone (its experiments, job updates and commands; any other
workspace is refused naming the pool and the workspace), the cluster's default pool cannot be
bound, only admins change bindings, a workspace's default compute pool is where an experiment
that names no pool runs, and a deleted workspace takes its bindings with it."""

import pathlib

import pytest
import yaml

from cluster import Cluster, brought_up
from determined.common import api
from determined.common.api import errors
from determined.common.experimental import resource_pool, workspace
from test_permissions import as_user, login, new_user

FIXTURES = pathlib.Path(__file__).parent / "fixtures"

MASTER_YAML = """
resource_pools:
  - pool_name: default
  - pool_name: gpu
  - pool_name: spare
"""


def experiment_yaml(tmp_path: pathlib.Path, pool: str = "") -> pathlib.Path:
    config = yaml.safe_load((FIXTURES / "checkpoints.yaml").read_text())
    if pool:
        config["resources"] = {"resource_pool": pool}
    path = tmp_path / f"exp-{pool or 'none'}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_bound_pools_serve_only_their_workspaces(tmp_path):
    master_yaml = tmp_path / "master.yaml"
    master_yaml.write_text(MASTER_YAML)
    with brought_up(Cluster(agents=1, slots=1,
                            up_args=("--master-config-path", str(master_yaml)))) as c:
        admin = ["-u", "admin"]
        for name in ("team-a", "team-b"):
            c.det(*admin, "workspace", "create", name)
            c.det(*admin, "project", "create", name, "p")
        ids = {w["name"]: w["id"] for w in c.request("GET", "/api/v1/workspaces")["workspaces"]}
        proj = {}
        for name in ("team-a", "team-b"):
            listed = c.request("GET", f"/api/v1/workspaces/{ids[name]}/projects")["projects"]
            proj[name] = listed[0]["id"]

        # The cluster's default pool cannot be bound; an ordinary user changes nothing.
        refused = c.det(*admin, "rp", "bindings", "add", "default", "team-a", check=False)
        assert refused.returncode != 0
        assert "default resource pool default cannot be bound to any workspace" in refused.stderr
        alice = new_user(c, "alice", "alice-pw")
        status, body = c.request_status(
            "POST", "/api/v1/resource-pools/gpu/workspace-bindings",
            {"workspaceNames": ["team-b"]}, headers=as_user(alice))
        assert status == 403, body
        # As Determined answers: the pool's rule before the caller's (its SDK test relies on it).
        status, body = c.request_status(
            "POST", "/api/v1/resource-pools/default/workspace-bindings",
            {"workspaceNames": ["team-b"]}, headers=as_user(alice))
        assert status == 400 and "cannot be bound to any workspace" in str(body), (status, body)
        missing = c.det(*admin, "rp", "bindings", "add", "gpu", "no-such-team", check=False)
        assert missing.returncode != 0 and "no-such-team" in missing.stderr, missing.stderr

        out = c.det(*admin, "rp", "bindings", "add", "gpu", "team-a").stdout
        assert out == ('added bindings between the resource pool "gpu" and the following '
                       "workspaces: ['team-a']\n"), out
        listed = c.det("rp", "bindings", "list-workspaces", "gpu").stdout
        assert "team-a" in listed and "team-b" not in listed, listed
        pools_a = c.det("workspace", "list-pools", "team-a").stdout
        assert "default, gpu, spare" in pools_a, pools_a
        pools_b = c.request("GET", f"/api/v1/workspaces/{ids['team-b']}/available-resource-pools")
        assert pools_b["resourcePools"] == ["default", "spare"], pools_b
        unbound = c.request("GET", "/api/v1/resource-pools?unbound=true")["resourcePools"]
        assert [p["name"] for p in unbound] == ["default", "spare"], unbound
        again = c.det(*admin, "rp", "bindings", "add", "gpu", "team-a", check=False)
        assert again.returncode != 0 and "exists" in again.stderr, again.stderr

        # Experiments: team-a may use gpu, team-b and the Uncategorized workspace may not.
        gpu = experiment_yaml(tmp_path, "gpu")
        created = c.det("experiment", "create", "--paused", "--project_id", str(proj["team-a"]),
                        str(gpu), str(FIXTURES))
        assert created.returncode == 0
        for project in (str(proj["team-b"]), "1"):
            no = c.det("experiment", "create", "--paused", "--project_id", project, str(gpu),
                       str(FIXTURES), check=False)
            assert no.returncode != 0, no.stdout
            assert "resource pool gpu does not exist or is not available to workspace id" in no.stderr

        # A job update or patch into the pool from another workspace is refused the same way.
        spare = c.create(experiment_yaml(tmp_path, "spare"), FIXTURES, "--paused")
        status, body = c.request_status(
            "PATCH", f"/api/v1/experiments/{spare}",
            {"resources": {"resourcePool": "gpu"}}, headers=as_user(c.token()))
        assert status == 400 or status == 412, body
        assert "not available to workspace id 1" in str(body), body

        # A command launched in team-b cannot run in gpu.
        cmd = c.det("cmd", "run", "-w", "team-b", "--config", "resources.resource_pool=gpu",
                    "true", check=False)
        assert cmd.returncode != 0 and "not available to workspace id" in cmd.stderr, cmd.stderr

        # team-a's default compute pool: an experiment naming no pool runs there.
        c.det(*admin, "workspace", "edit", "team-a", "--default-compute-pool", "gpu")
        described = c.det("workspace", "describe", "team-a").stdout
        assert "gpu" in described, described
        bad = c.det(*admin, "workspace", "edit", "team-b", "--default-compute-pool", "gpu",
                    check=False)
        assert bad.returncode != 0 and "not available to the workspace" in bad.stderr, bad.stderr
        plain = experiment_yaml(tmp_path)
        made = c.det("experiment", "create", "--paused", "--project_id", str(proj["team-a"]),
                     str(plain), str(FIXTURES)).stdout
        exp_id = int(made.split("Created experiment ")[1].split()[0])
        config = c.experiment(exp_id)["config"]
        assert config["resources"]["resource_pool"] == "gpu", config["resources"]

        # The SDK, as an admin: Determined's ResourcePool and Workspace calls.
        sess = api.Session(c.url, user_token=login(c, "admin"))
        with pytest.raises(errors.APIException, match="default resource pool default cannot be"):
            resource_pool.ResourcePool(sess, "default").add_bindings(["team-a"])
        sdk_pool = resource_pool.ResourcePool(sess, "spare")
        sdk_pool.add_bindings(["team-a", "team-b"])
        assert sorted(sdk_pool.list_workspaces()) == ["team-a", "team-b"]
        sdk_pool.remove_bindings(["team-b"])
        assert sdk_pool.list_workspaces() == ["team-a"]
        team_b = workspace.Workspace(sess, workspace_id=ids["team-b"])
        assert [p.name for p in team_b.list_pools()] == ["default"]

        # Replace moves the binding to team-b; deleting team-b removes it.
        c.det(*admin, "rp", "bindings", "replace", "gpu", "team-b")
        bound = c.request("GET", "/api/v1/resource-pools/gpu/workspace-bindings")
        assert bound["workspaceIds"] == [ids["team-b"]], bound
        c.det(*admin, "workspace", "delete", "-y", "team-b")
        bound = c.request("GET", "/api/v1/resource-pools/gpu/workspace-bindings")
        assert bound["workspaceIds"] == [], bound

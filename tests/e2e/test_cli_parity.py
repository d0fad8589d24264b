"""Our `det` and master against the commands and arguments of Determined's CLI: config
templates (det template ..., det experiment create --template), users, workspaces, projects,
experiment move, the log filters of `det trial logs` / `det experiment logs`, experiment
config / wait / download-model-def and the validation history. Real master, agent and det
processes on loopback; waits are polls."""

import json
import re

import yaml


def _write(path, obj):
    path.write_text(yaml.safe_dump(obj))
    return path


def test_template_lifecycle_and_output_lines(cluster, tmp_path):
    tpl = _write(tmp_path / "tpl.yaml", {"description": "from template",
                                         "resources": {"slots_per_trial": 1}})
    out = cluster.det("template", "create", "parity-a", str(tpl)).stdout
    assert "Created template parity-a" in out, out

    listed = cluster.det("template", "list").stdout
    row = [line for line in listed.splitlines() if line.strip().startswith("parity-a ")]
    assert row and "Uncategorized" in row[0], listed
    assert "Name" in listed.splitlines()[0] and "Workspace" in listed.splitlines()[0], listed
    details = cluster.det("tpl", "ls", "-d").stdout
    assert "slots_per_trial: 1" in details, details

    described = yaml.safe_load(cluster.det("template", "describe", "parity-a").stdout)
    assert described == {"description": "from template", "resources": {"slots_per_trial": 1}}

    # set replaces an existing template's config and creates a missing one.
    _write(tpl, {"description": "replaced"})
    assert "Set template parity-a" in cluster.det("template", "set", "parity-a", str(tpl)).stdout
    assert yaml.safe_load(cluster.det("template", "describe", "parity-a").stdout) == {
        "description": "replaced"}
    assert "Set template parity-b" in cluster.det("template", "set", "parity-b", str(tpl)).stdout
    _write(tpl, {"labels": ["x"]})
    out = cluster.det("template", "set-value", "config", "parity-b", str(tpl)).stdout
    assert "Updated template parity-b" in out, out
    assert yaml.safe_load(cluster.det("template", "describe", "parity-b").stdout) == {
        "labels": ["x"]}

    # Creating a taken name fails; removing a missing one fails; both name the template.
    dup = cluster.det("template", "create", "parity-a", str(tpl), check=False)
    assert dup.returncode == 1 and "parity-a" in dup.stderr, dup.stderr
    assert "Removed template parity-a" in cluster.det("template", "rm", "parity-a").stdout
    assert "Removed template parity-b" in cluster.det("template", "remove", "parity-b").stdout
    gone = cluster.det("template", "describe", "parity-a", check=False)
    assert gone.returncode == 1 and "not found" in gone.stderr, gone.stderr
    assert "parity-a" not in cluster.det("template", "list").stdout


def test_template_rest_shapes(cluster):
    created = cluster.request("POST", "/api/v1/templates/parity-rest",
                              {"name": "parity-rest", "config": {"max_restarts": 2},
                               "workspaceId": 0})
    assert created["template"] == {"name": "parity-rest", "config": {"max_restarts": 2},
                                   "workspaceId": 1}
    put = cluster.request("PUT", "/api/v1/templates/parity-rest",
                          {"name": "parity-rest", "config": {"max_restarts": 3}})
    assert put["template"]["config"] == {"max_restarts": 3}
    renamed = cluster.request("PATCH", "/api/v1/template/rename",
                              {"oldName": "parity-rest", "newName": "parity-rest2"})
    assert renamed["template"]["name"] == "parity-rest2"
    page = cluster.request("GET", "/api/v1/templates?name=REST2&limit=1")
    assert [t["name"] for t in page["templates"]] == ["parity-rest2"], page
    assert page["pagination"]["total"] == 1, page
    status, body = cluster.request_status(
        "POST", "/api/v1/templates/bad", {"name": "bad", "config": [1]},
        headers={"Authorization": f"Bearer {cluster.token()}"})
    assert status == 400 and "config" in body["error"]["error"], body
    status, body = cluster.request_status(
        "GET", "/api/v1/templates/nope", headers={"Authorization": f"Bearer {cluster.token()}"})
    assert status == 404, body
    assert cluster.request("DELETE", "/api/v1/templates/parity-rest2") == {}


def test_experiment_create_with_template_merges_config(cluster, tmp_path):
    tpl = _write(tmp_path / "tpl.yaml", {
        "description": "templated",
        "max_restarts": 0,
        "searcher": {"name": "single", "metric": "loss", "smaller_is_better": True},
        "environment": {"environment_variables": ["FROM_TEMPLATE=1", "SHARED=template"]},
    })
    cluster.det("template", "create", "parity-exp", str(tpl))
    # The config alone is incomplete (no metric); the template fills it in.
    cfg = _write(tmp_path / "exp.yaml", {
        "name": "with-template",
        "entrypoint": ["python3", "-c", "print('hi')"],
        "searcher": {"name": "single", "max_length": 1},
        "environment": {"environment_variables": ["SHARED=config"]},
    })
    alone = cluster.det("experiment", "create", str(cfg), "--paused", check=False)
    assert alone.returncode != 0 and "metric" in alone.stderr, alone.stderr
    out = cluster.det("experiment", "create", str(cfg), "--paused", "--template",
                      "parity-exp").stdout
    exp_id = int(re.search(r"Created experiment (\d+)", out).group(1))
    config = cluster.request("GET", f"/api/v1/experiments/{exp_id}")["config"]
    assert config["name"] == "with-template"
    assert config["description"] == "templated"
    assert config["searcher"]["metric"] == "loss"
    assert config["searcher"]["max_length"] == 1
    env = config["environment"]["environment_variables"]
    assert env["cpu"] == ["FROM_TEMPLATE=1", "SHARED=template", "SHARED=config"], env
    missing = cluster.det("experiment", "create", str(cfg), "--template", "no-such-template",
                          check=False)
    assert missing.returncode == 1 and "no-such-template" in missing.stderr, missing.stderr
    cluster.det("experiment", "kill", str(exp_id))


def _user(cluster, name):
    return cluster.request("GET", f"/api/v1/users/{name}/by-username")["user"]


def test_user_administration(own_cluster):
    # A cluster of its own: users cannot be deleted, and other files count the users.
    cluster = own_cluster
    out = cluster.det("-u", "admin", "user", "create", "parity-user", "--password", "Parity-Pass1")
    assert out.returncode == 0, out
    user = _user(cluster, "parity-user")
    assert user["active"] and not user["admin"], user
    # The new user can log in with the password (REST, as the CLI's login does).
    status, _ = cluster.request_status("POST", "/api/v1/auth/login",
                                       {"username": "parity-user", "password": "Parity-Pass1"})
    assert status == 200
    # Only admins create users.
    refused = cluster.det("-u", "determined", "user", "create", "parity-other", "--password", "x",
                          check=False)
    assert refused.returncode == 1 and "admin" in refused.stderr, refused.stderr

    cluster.det("-u", "admin", "user", "deactivate", "parity-user")
    assert not _user(cluster, "parity-user")["active"]
    status, _ = cluster.request_status("POST", "/api/v1/auth/login",
                                       {"username": "parity-user", "password": "Parity-Pass1"})
    assert status != 200
    cluster.det("-u", "admin", "user", "activate", "parity-user")
    assert _user(cluster, "parity-user")["active"]

    out = cluster.det("-u", "admin", "user", "edit", "parity-user", "--display-name", "Parity",
                      "--admin", "true").stdout
    assert "Changes made to the following fields: Display Name, Admin" in out, out
    edited = _user(cluster, "parity-user")
    assert edited["displayName"] == "Parity" and edited["admin"], edited
    cluster.det("-u", "admin", "user", "rename", "parity-user", "parity-user2")
    assert _user(cluster, "parity-user2")["id"] == user["id"]
    listed = cluster.det("user", "list").stdout
    assert "parity-user2" in listed and "User Id" in listed, listed
    none = cluster.det("-u", "admin", "user", "edit", "parity-user2", check=False)
    assert none.returncode == 1 and "No field provided" in none.stderr, none.stderr
    # `-u admin` logs admin in for those commands only, as Determined's CLI: the active user
    # (the one plain commands use) is still the default one.
    plain = cluster.det("user", "whoami").stdout
    assert "user 'determined'" in plain, plain
    assert "user 'admin'" in cluster.det("-u", "admin", "user", "whoami").stdout


def test_workspaces_projects_and_experiment_move(cluster, tmp_path):
    out = cluster.det("workspace", "create", "parity-ws").stdout
    assert "parity-ws" in out and "# Projects" in out, out
    assert "parity-ws" in cluster.det("workspace", "list").stdout
    out = cluster.det("project", "create", "parity-ws", "parity-proj", "--description", "d",
                      "--key", "ppj").stdout
    assert "PPJ" in out and "parity-proj" in out, out
    assert "parity-proj" in cluster.det("workspace", "list-projects", "parity-ws").stdout

    cfg = _write(tmp_path / "exp.yaml", {
        "name": "to-move", "entrypoint": ["python3", "-c", "print('x')"],
        "searcher": {"name": "single", "metric": "loss", "max_length": 1}})
    exp_id = int(re.search(r"Created experiment (\d+)",
                           cluster.det("experiment", "create", str(cfg), "--paused").stdout)[1])
    out = cluster.det("experiment", "move", str(exp_id), "parity-ws", "parity-proj").stdout
    assert f'Moved experiment {exp_id} to project "parity-proj"' in out, out
    exp = cluster.experiment(exp_id)
    project = cluster.request("GET", f"/api/v1/projects/{exp['projectId']}")["project"]
    assert project["name"] == "parity-proj" and project["numExperiments"] == 1, project
    assert exp["workspaceName"] == "parity-ws", exp
    listed = cluster.det("project", "list-experiments", "parity-ws", "parity-proj").stdout
    assert re.search(rf"^\s*{exp_id}\s*\|", listed, re.M), listed
    shown = cluster.det("experiment", "list", "--show_project", "--csv").stdout
    assert shown.startswith("Workspace,Project,ID,"), shown
    assert f"parity-ws,parity-proj,{exp_id}," in shown, shown
    assert cluster.det("project", "list", "parity-ws", "--limit", "1", "--offset", "1",
                       "--json").stdout.strip() == "[]"
    page = cluster.request("GET", "/api/v1/experiments?projectId=1&limit=1000")["experiments"]
    assert exp_id not in [e["id"] for e in page]

    # A project whose experiments have not all ended cannot be deleted (ended ones are deleted
    # with it, as in Determined); archived ones take no experiments.
    held = cluster.det("project", "delete", "parity-ws", "parity-proj", "--yes", check=False)
    assert held.returncode == 1 and "must end (kill it) before its project is deleted" in \
        held.stderr, held.stderr
    cluster.det("experiment", "move", str(exp_id), "Uncategorized", "Uncategorized")
    out = cluster.det("project", "archive", "parity-ws", "parity-proj").stdout
    assert "Successfully archived project parity-proj." in out, out
    refused = cluster.det("experiment", "move", str(exp_id), "parity-ws", "parity-proj",
                          check=False)
    assert refused.returncode == 1 and "archived" in refused.stderr, refused.stderr
    cluster.det("project", "unarchive", "parity-ws", "parity-proj")
    out = cluster.det("project", "edit", "parity-ws", "parity-proj", "--new_name",
                      "parity-proj2").stdout
    assert "parity-proj2" in out, out

    # --project_id at creation.
    exp2 = int(re.search(r"Created experiment (\d+)", cluster.det(
        "experiment", "create", str(cfg), "--paused", "--project_id",
        str(project["id"])).stdout)[1])
    assert cluster.experiment(exp2)["projectId"] == project["id"]
    cluster.det("experiment", "move", str(exp2), "Uncategorized", "Uncategorized")

    out = cluster.det("workspace", "edit", "parity-ws", "--name", "parity-ws2").stdout
    assert "parity-ws2" in out, out
    assert "Successfully archived workspace parity-ws2." in cluster.det(
        "workspace", "archive", "parity-ws2").stdout
    cluster.det("workspace", "unarchive", "parity-ws2")
    out = cluster.det("project", "delete", "parity-ws2", "parity-proj2", "--yes").stdout
    assert "Successfully deleted project parity-proj2." in out, out
    out = cluster.det("workspace", "delete", "parity-ws2", "--yes").stdout
    assert "Successfully deleted workspace parity-ws2." in out, out
    gone = cluster.det("workspace", "describe", "parity-ws2", check=False)
    assert gone.returncode == 1 and "not found" in gone.stderr, gone.stderr
    # The built-in ones stay: they belong to admin (as in Determined), so another user is
    # refused by the permission rules and an admin by their immutability.
    refused = cluster.det("workspace", "archive", "Uncategorized", check=False)
    assert refused.returncode == 1 and "may not change workspace" in refused.stderr, refused.stderr
    # Admin from a token cache of its own, so that the shared cluster's det stays `determined`.
    saved = cluster.env
    try:
        cluster.env = dict(saved, XDG_CONFIG_HOME=str(tmp_path / "admin-config"))
        immutable = cluster.det("-u", "admin", "workspace", "archive", "Uncategorized",
                                check=False)
    finally:
        cluster.env = saved
    assert immutable.returncode == 1 and "immutable" in immutable.stderr, immutable.stderr
    for e in (exp_id, exp2):
        cluster.det("experiment", "kill", str(e))


def test_experiment_and_trial_log_arguments(cluster, tmp_path):
    train = ("import logging, sys, determined as det\n"
             "print('out-line'); print('err-line', file=sys.stderr)\n"
             "with det.core.init() as ctx:\n"
             "    for op in ctx.searcher.operations():\n"
             "        ctx.train.report_validation_metrics(steps_completed=op.length,"
             " metrics={'loss': 0.5})\n"
             "        op.report_completed(0.5)\n")
    cfg = _write(tmp_path / "logs.yaml", {
        "name": "logs", "entrypoint": ["python3", "-c", train], "max_restarts": 0,
        "searcher": {"name": "single", "metric": "loss", "max_length": 1}})
    exp_id = int(re.search(r"Created experiment (\d+)",
                           cluster.det("experiment", "create", str(cfg)).stdout)[1])
    waited = cluster.det("experiment", "wait", str(exp_id), "--polling-interval", "0.5")
    assert waited.returncode == 0
    (trial,) = cluster.trials(exp_id)
    tid = str(trial["id"])

    out = cluster.det("trial", "logs", tid, "--stdtype", "stderr").stdout
    assert "err-line" in out and "out-line" not in out, out
    out = cluster.det("experiment", "logs", str(exp_id), "--stdtype", "stdout").stdout
    assert "out-line" in out and "err-line" not in out, out
    out = cluster.det("trial", "logs", tid, "--rank-id", "0", "--level", "INFO", "--json",
                      "--tail", "2").stdout
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    assert len(lines) <= 2 and all("message" in x or "log" in x for x in lines), out
    none = cluster.det("trial", "logs", tid, "--timestamp-before", "2000-01-01T00:00:00Z").stdout
    assert "out-line" not in none and "err-line" not in none, none
    bad = cluster.det("trial", "logs", tid, "--timestamp-after", "yesterday", check=False)
    assert bad.returncode == 1 and "timestampAfter" in bad.stderr, bad.stderr

    described = cluster.det("trial", "describe", tid, "--metrics-summary").stdout
    assert '"avg"' in described or '"loss"' in described, described
    jobs = yaml.safe_load(cluster.det("job", "list", "--yaml").stdout)
    assert isinstance(jobs["jobs"], list), jobs

    cfg_out = yaml.safe_load(cluster.det("experiment", "config", str(exp_id)).stdout)
    assert cfg_out["searcher"]["metric"] == "loss", cfg_out
    cluster.det("experiment", "download-model-def", str(exp_id), "--output-dir", str(tmp_path))
    assert (tmp_path / f"experiment_{exp_id}_model_def.tgz").stat().st_size > 0

    outdir = tmp_path / "describe"
    outdir.mkdir()
    cluster.det("experiment", "describe", str(exp_id), "--outdir", str(outdir))
    experiments_csv = (outdir / "experiments.csv").read_text()
    assert experiments_csv.startswith("Experiment ID,") and f"\n{exp_id}," in experiments_csv
    assert tid in (outdir / "trials.csv").read_text()
    assert (outdir / "workloads.csv").exists()

    history = cluster.request("GET", f"/api/v1/experiments/{exp_id}/validation-history")
    assert [h["trialId"] for h in history["validationHistory"]] == [trial["id"]], history
    assert history["validationHistory"][0]["searcherMetric"] == 0.5

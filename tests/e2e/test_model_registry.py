"""The model registry end to end: `det model ...`, the REST shapes of /api/v1/models, the rules
that protect registered checkpoints, and the Python functions of
determined.common.experimental.model."""

import json
import pathlib
import urllib.parse

import pytest

from cluster import wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"

MODEL_KEYS = {"id", "name", "description", "notes", "metadata", "labels", "creationTime",
              "lastUpdatedTime", "numVersions", "username", "userId", "workspaceId", "archived"}
VERSION_KEYS = {"id", "model", "checkpoint", "version", "creationTime", "lastUpdatedTime", "name",
                "comment", "notes", "metadata", "labels", "username", "userId"}


@pytest.fixture(scope="module")
def trained(cluster):
    """A completed experiment keeping all 10 of its checkpoints: (experiment id, {step: uuid})."""
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--config",
                            "checkpoint_storage.save_trial_latest=10")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    ckpts = cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
    uuids = {c["metadata"]["steps_completed"]: c["uuid"] for c in ckpts}
    assert len(uuids) == 10
    return exp_id, uuids


def error_of(cluster, method, path, body=None):
    status, answer = cluster.request_status(
        method, path, body, headers={"Authorization": f"Bearer {cluster.token()}",
                                     "Content-Type": "application/json"})
    return status, answer.get("error", {}).get("error", "")


def test_cli_create_register_list_describe_delete(cluster, trained):
    _, uuids = trained
    out = cluster.det("model", "create", "cli-model", "--description", "digits").stdout
    lines = out.splitlines()
    assert lines[0].split("|")[0].strip() == "ID"
    assert [c.strip() for c in lines[0].split("|")] == [
        "ID", "Name", "Description", "Workspace ID", "Creation Time", "Last Updated Time",
        "Metadata"]
    assert "cli-model" in lines[2] and "digits" in lines[2] and "+00:00" in lines[2]

    dup = cluster.det("model", "create", "cli-model", check=False)
    assert dup.returncode != 0 and "taken" in dup.stderr

    out = cluster.det("model", "register-version", "cli-model", uuids[10]).stdout
    assert "Version #" in out and uuids[10] in out
    row = next(line for line in out.splitlines() if uuids[10] in line)
    cells = [c.strip() for c in row.split("|")]
    assert cells[0] == "1" and cells[2] == "10", row  # version 1, batch 10
    out = cluster.det("model", "register-version", "cli-model", uuids[9], "--json").stdout
    assert json.loads(out)["modelVersion"]["version"] == 2

    listing = cluster.det("model", "list").stdout
    assert "cli-model" in listing
    assert "cli-model" in cluster.det("model").stdout  # list is the default subcommand
    listed = json.loads(cluster.det("model", "list", "--json", "--sort-by", "name").stdout)
    assert any(m["name"] == "cli-model" and m["archived"] is False for m in listed)

    out = cluster.det("model", "describe", "cli-model").stdout
    assert uuids[9] in out and uuids[10] not in out  # the newest version only
    out = cluster.det("model", "describe", "cli-model", "--version", "1").stdout
    assert uuids[10] in out
    described = json.loads(cluster.det("model", "describe", "cli-model", "--json").stdout)
    assert described["name"] == "cli-model" and described["description"] == "digits"

    out = cluster.det("model", "list-versions", "cli-model").stdout
    assert out.index(uuids[9]) < out.index(uuids[10])  # newest first
    versions = json.loads(cluster.det("model", "list-versions", "cli-model", "--json").stdout)
    assert [v["version"] for v in versions["modelVersions"]] == [1, 2]

    cluster.det("model", "move", "cli-model", "-w", "Uncategorized")
    bad = cluster.det("model", "move", "cli-model", "-w", "nowhere", check=False)
    assert bad.returncode != 0 and "nowhere" in bad.stderr

    # A registered checkpoint cannot be deleted, nor the experiment holding it.
    refused = cluster.det("checkpoint", "delete", uuids[10], "--yes", check=False)
    assert refused.returncode != 0 and "model registry" in refused.stderr
    cluster.det("model", "delete", "cli-model")
    missing = cluster.det("model", "describe", "cli-model", check=False)
    assert missing.returncode != 0 and "not found" in missing.stderr


def test_rest_shapes_and_rules(cluster, trained):
    exp_id, uuids = trained
    created = cluster.request("POST", "/api/v1/models", {
        "name": "rest model", "description": "Image Classifier", "metadata": {"a": 1},
        "labels": ["vision", "vision", "small"], "workspaceId": 1})["model"]
    assert set(created) == MODEL_KEYS
    assert created["labels"] == ["vision", "small"] and created["numVersions"] == 0
    assert created["username"] == "determined" and created["workspaceId"] == 1
    name = urllib.parse.quote("rest model")
    by_id = cluster.request("GET", f"/api/v1/models/{created['id']}")["model"]
    assert by_id["name"] == "rest model"

    for bad in ("", "a/b", "123", "a  b"):
        status, msg = error_of(cluster, "POST", "/api/v1/models", {"name": bad})
        assert status == 400 and "name" in msg, (bad, msg)

    v = cluster.request("POST", f"/api/v1/models/{name}/versions",
                        {"checkpointUuid": uuids[3], "name": "three", "labels": ["x"]})
    version = v["modelVersion"]
    assert set(version) == VERSION_KEYS
    assert version["version"] == 1 and version["name"] == "three"
    assert version["checkpoint"]["uuid"] == uuids[3]
    assert version["checkpoint"]["state"] == "STATE_COMPLETED"
    assert version["checkpoint"]["training"]["experimentId"] == exp_id
    assert version["model"]["numVersions"] == 1

    status, msg = error_of(cluster, "POST", f"/api/v1/models/{name}/versions",
                           {"checkpointUuid": "no-such-checkpoint"})
    assert status == 404 and "no-such-checkpoint" in msg

    patched = cluster.request("PATCH", f"/api/v1/models/{name}/versions/1",
                              {"comment": "c", "metadata": {"k": "v"}})["modelVersion"]
    assert patched["comment"] == "c" and patched["metadata"] == {"k": "v"}
    assert patched["name"] == "three"

    page = cluster.request("GET", f"/api/v1/models/{name}/versions?orderBy=ORDER_BY_DESC")
    assert set(page) == {"model", "modelVersions", "pagination"}
    assert page["pagination"]["total"] == 1

    listing = cluster.request("GET", "/api/v1/models?name=REST&labels=vision&archived=false"
                                     "&sortBy=SORT_BY_NUM_VERSIONS&orderBy=ORDER_BY_DESC")
    assert [m["name"] for m in listing["models"]] == ["rest model"]
    assert listing["pagination"]["total"] == 1
    assert cluster.request("GET", "/api/v1/models?description=classif&workspaceIds=2")[
        "models"] == []
    status, msg = error_of(cluster, "GET", "/api/v1/models?sortBy=SORT_BY_COLOR")
    assert status == 400 and "sortBy" in msg
    labels = cluster.request("GET", "/api/v1/model/labels")["labels"]
    assert "vision" in labels and "small" in labels

    # Deleting the registered checkpoint, patching it, or deleting its experiment is refused.
    status, msg = error_of(cluster, "DELETE", "/api/v1/checkpoints",
                           {"checkpointUuids": [uuids[3]]})
    assert status == 400 and uuids[3] in msg and "rest model" in msg
    status, msg = error_of(cluster, "DELETE", f"/api/v1/experiments/{exp_id}")
    assert status == 400 and "model version" in msg
    assert cluster.experiment(exp_id)["state"] == "STATE_COMPLETED"

    # Archived: no changes, no new versions; unarchive restores both.
    cluster.request("POST", f"/api/v1/models/{name}/archive")
    status, _ = error_of(cluster, "PATCH", f"/api/v1/models/{name}", {"description": "x"})
    assert status == 400
    status, _ = error_of(cluster, "POST", f"/api/v1/models/{name}/versions",
                         {"checkpointUuid": uuids[4]})
    assert status == 400
    cluster.request("POST", f"/api/v1/models/{name}/unarchive")
    renamed = cluster.request("PATCH", f"/api/v1/models/{name}", {"name": "rest-renamed"})
    assert renamed["model"]["name"] == "rest-renamed"

    # Once its version is gone, the checkpoint may be deleted again.
    cluster.request("DELETE", "/api/v1/models/rest-renamed/versions/1")
    cluster.request("DELETE", "/api/v1/models/rest-renamed")
    status, _ = error_of(cluster, "GET", "/api/v1/models/rest-renamed")
    assert status == 404
    cluster.request("DELETE", "/api/v1/checkpoints", {"checkpointUuids": [uuids[3]]})


def test_gc_keeps_registered_checkpoints(cluster):
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--config",
                            "checkpoint_storage.save_trial_latest=10")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    ckpts = cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
    uuids = {c["metadata"]["steps_completed"]: c["uuid"] for c in ckpts}
    cluster.request("POST", "/api/v1/models", {"name": "gc-model"})
    cluster.request("POST", "/api/v1/models/gc-model/versions", {"checkpointUuid": uuids[2]})
    # Tighten the policy: only the latest checkpoint would be kept, but for the registered one.
    cluster.request("PATCH", f"/api/v1/experiments/{exp_id}", {"checkpointStorage": {
        "saveExperimentBest": 0, "saveTrialBest": 0, "saveTrialLatest": 1}})

    def collected():
        got = cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
        kept = {c["metadata"]["steps_completed"] for c in got if c["state"] == "STATE_COMPLETED"}
        return kept if len(kept) == 2 else None

    assert wait_for(collected, 90, "checkpoint GC") == {2, 10}
    assert (cluster.data_dir / "checkpoints" / uuids[2]).exists()


def test_python_model_functions(cluster, trained):
    _, uuids = trained
    from determined.common import api
    from determined.common.experimental import model as m

    session = api.Session(cluster.url, user_token=cluster.token(), retry_seconds=5)
    created = m.create_model(session, "py-model", description="d", metadata={"a": 1},
                             labels=["l1"])
    assert isinstance(created, m.Model) and created.model_id and created.labels == ["l1"]
    assert created.creation_time.tzinfo is not None

    got = m.get_model(session, "py-model")
    assert got.model_id == created.model_id
    assert m.get_model(session, created.model_id).name == "py-model"

    assert got.get_version() is None
    v1 = got.register_version(uuids[5])
    v2 = got.register_version(uuids[6])
    assert (v1.model_version, v2.model_version) == (1, 2)
    assert v1.checkpoint_uuid == uuids[5] and got.num_versions == 2
    assert got.get_version().model_version == 2
    assert got.get_version(1).checkpoint_uuid == uuids[5]
    assert [v.model_version for v in got.list_versions()] == [2, 1]
    assert [v.model_version for v in got.list_versions(m.OrderBy.ASC)] == [1, 2]

    v1.set_name("five")
    v1.set_notes("notes")
    v1.add_metadata({"x": 1, "y": 2})
    v1.remove_metadata(["y"])
    again = got.get_version(1)
    assert (again.name, again.notes, again.metadata) == ("five", "notes", {"x": 1})

    got.add_metadata({"b": 2})
    got.remove_metadata(["a"])
    got.add_label("l2")
    got.remove_label("l1")
    got.set_description("new description")
    got.reload()
    assert got.metadata == {"b": 2} and got.labels == ["l2"]
    assert got.description == "new description"

    got.archive()
    with pytest.raises(api.errors.APIException):
        got.register_version(uuids[7])
    got.unarchive()
    got.set_name("py-model-2")
    assert m.get_model(session, "py-model-2").model_id == created.model_id

    names = [x.name for x in m.get_models(session, sort_by=m.ModelSortBy.NAME,
                                          order_by=m.OrderBy.DESC)]
    assert names == sorted(names, reverse=True) and "py-model-2" in names
    assert [x.name for x in m.get_models(session, name="PY-MODEL")] == ["py-model-2"]
    assert m.get_models(session, workspace_names=["nowhere"]) == []
    assert "l2" in m.get_model_labels(session)

    v2.delete()
    assert [v.model_version for v in got.list_versions()] == [1]
    # The client SDK delegates to these functions; its Checkpoint wraps the version's checkpoint.
    from determined.experimental import client

    d = client.Determined._from_session(session)
    assert d.get_model("py-model-2").model_id == created.model_id
    assert "py-model-2" in [x.name for x in d.list_models()]
    version = d.get_model(created.model_id).get_version(1)
    assert version.checkpoint.uuid == uuids[5]
    assert version.checkpoint.training.trial_id > 0
    got.delete()
    with pytest.raises(api.errors.NotFoundException):
        m.get_model(session, "py-model-2")

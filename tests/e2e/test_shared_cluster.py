"""Issue #32, "a cluster strangers can share": a user cannot make the master read or delete
files outside checkpoint storage, and nobody sees the cluster's storage keys or the master's
environment variables in an experiment's config."""
import json
import uuid

from cluster import Cluster

CONFIG = ("name: shared-{name}\nentrypoint: python3 train.py\n"
          "searcher: {{name: single, metric: x, max_length: {{batches: 1}}}}\n")


def new_user(cluster, admin_token=None):
    """A fresh non-admin user; returns its auth header."""
    admin = admin_token or cluster.request(
        "POST", "/api/v1/auth/login", {"username": "admin", "password": ""}, auth=False)["token"]
    name = f"bob-{uuid.uuid4().hex[:8]}"
    code, body = cluster.request_status(
        "POST", "/api/v1/users", {"user": {"username": name, "active": True},
                                  "password": "Pass-word1"},
        headers={"Authorization": f"Bearer {admin}"})
    assert code == 200, body
    token = cluster.request("POST", "/api/v1/auth/login",
                            {"username": name, "password": "Pass-word1"}, auth=False)["token"]
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def test_storage_outside_the_allowed_roots_is_refused(cluster):
    bob = new_user(cluster)
    allowed = str(cluster.data_dir / "checkpoints")
    for storage in ({"type": "shared_fs", "host_path": "/"},
                    {"type": "shared_fs", "host_path": str(cluster.data_dir)},
                    {"type": "directory", "container_path": "/root/.ssh"}):
        cfg = CONFIG.format(name="out") + "checkpoint_storage: " + json.dumps(storage) + "\n"
        for body in ({"config": cfg, "activate": False}, {"config": cfg, "unmanaged": True}):
            code, answer = cluster.request_status("POST", "/api/v1/experiments", body,
                                                  headers=bob)
            text = json.dumps(answer)
            assert code == 400, (storage, answer)
            assert "checkpoint_storage." in text and allowed in text, text
            assert "checkpoint_storage_allowed_roots" in text, text


def test_paths_as_checkpoint_uuids_are_refused_and_nothing_is_deleted(cluster):
    bob = new_user(cluster)
    db = cluster.data_dir / "determined.db"
    assert db.exists()
    for path in ("/checkpoints/..%2F..%2Fdata%2Fdetermined.db", "/api/v1/checkpoints/..%2F..",
                 "/api/v1/checkpoints/not-a-uuid"):
        code, answer = cluster.request_status("GET", path, headers=bob)
        assert code in (400, 404), (path, code, answer)
    for uuids in (["../.."], [""], ["/"], [str(cluster.data_dir)]):
        code, answer = cluster.request_status("DELETE", "/api/v1/checkpoints",
                                              {"checkpointUuids": uuids}, headers=bob)
        assert code == 400, (uuids, answer)
    assert db.exists() and (cluster.data_dir / "checkpoints").is_dir()


def test_the_clusters_storage_keys_and_environment_are_not_shown(tmp_path):
    master_yaml = tmp_path / "master.yaml"
    master_yaml.write_text(
        "checkpoint_storage:\n  type: s3\n  bucket: ckpts\n  access_key: AKIA-SHARED\n"
        "  secret_key: shared-secret-key\n  endpoint_url: http://127.0.0.1:9\n"
        "task_container_defaults:\n  environment_variables: [CLUSTER_API_KEY=shared-api-key]\n")
    c = Cluster(agents=1, slots=1)
    try:
        c.det("deploy", "local", "cluster-up", "--master-port", str(c.port), "--agents", "1",
              "--slots-per-agent", "1", "--data-dir", str(c.data_dir), "--master-config-path",
              str(master_yaml), timeout=120)
        admin = c.request("POST", "/api/v1/auth/login", {"username": "admin", "password": ""},
                          auth=False)["token"]
        headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json"}
        code, created = c.request_status(
            "POST", "/api/v1/experiments",
            {"config": CONFIG.format(name="keys") +
             "environment: {environment_variables: [MINE=visible]}\n", "activate": False},
            headers=headers)
        assert code == 200, created
        exp_id = created["experiment"]["id"]
        bob = new_user(c, admin)
        for path in (f"/api/v1/experiments/{exp_id}", "/api/v1/experiments"):
            code, answer = c.request_status("GET", path, headers=bob)
            text = json.dumps(answer)
            assert code == 200, answer
            for secret in ("AKIA-SHARED", "shared-secret-key", "shared-api-key"):
                assert secret not in text, (path, secret)
            assert "CLUSTER_API_KEY=********" in text and "MINE=visible" in text, text
        assert "shared-secret-key" not in json.dumps(created)
    finally:
        c.cleanup()

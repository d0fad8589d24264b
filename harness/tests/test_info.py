import determined as det
from determined._info import canonicalize_master_url


def test_off_cluster_is_none():
    assert det.get_cluster_info() is None


def test_cluster_info_from_env(on_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("DET_LATEST_CHECKPOINT", "ckpt-uuid")
    monkeypatch.setenv("DET_STEPS_COMPLETED", "50")
    monkeypatch.setenv("DET_SLOT_IDS", "[0,1]")
    info = det.get_cluster_info()
    assert isinstance(info, det.ClusterInfo)
    assert info.master_url == on_cluster.url
    assert info.cluster_id == "cluster-1"
    assert info.agent_id == "agent-1"
    assert info.slot_ids == [0, 1]
    assert info.task_id == "1.abc"
    assert info.allocation_id == "1.abc.1"
    assert info.session_token == on_cluster.token
    assert info.task_type == "TRIAL"
    assert info.latest_checkpoint == "ckpt-uuid"
    assert info.container_addrs == ["127.0.0.1"]
    assert info.container_rank == 0
    assert info.user_data == {"url": "x"}
    t = info.trial
    assert isinstance(t, det.TrialInfo)
    assert (t.trial_id, t.experiment_id, t.trial_seed) == (7, 1, 42)
    assert t.hparams == {"lr": 0.1}
    assert t._config["searcher"]["metric"] == "validation_loss"
    assert t.config is t._config
    assert t._steps_completed == t.steps_completed == 50
    assert t._trial_run_id == t.trial_run_id == 1
    assert t.debug is False
    assert t.inter_node_network_interface is None


def test_non_trial_task_has_no_trial(on_cluster, monkeypatch):
    monkeypatch.setenv("DET_TASK_TYPE", "COMMAND")
    monkeypatch.setenv("DET_LATEST_CHECKPOINT", "x")
    info = det.get_cluster_info()
    assert info.trial is None
    assert info.latest_checkpoint is None
    assert info.user_data == {}


def test_master_from_host_and_port(on_cluster, monkeypatch):
    monkeypatch.delenv("DET_MASTER")
    monkeypatch.setenv("DET_MASTER_HOST", "10.0.0.5")
    monkeypatch.setenv("DET_MASTER_PORT", "9090")
    assert det.get_cluster_info().master_url == "http://10.0.0.5:9090"


def test_canonicalize():
    assert canonicalize_master_url("localhost") == "http://localhost:8080"
    assert canonicalize_master_url("https://m.example") == "https://m.example:443"
    assert canonicalize_master_url("http://1.2.3.4:81/") == "http://1.2.3.4:81"


def test_invalid_hp_is_exception():
    assert issubclass(det.InvalidHP, Exception)
    assert str(det.InvalidHP("bad lr")) == "bad lr"


def test_bad_json_env_is_clear(on_cluster, monkeypatch):
    monkeypatch.setenv("DET_HPARAMS", "{not json")
    try:
        det.get_cluster_info()
    except ValueError as e:
        assert "DET_HPARAMS" in str(e)
    else:
        raise AssertionError("expected ValueError")

"""determined.pytorch on one CPU process: closed-form OneVar, restore, seeds, LR modes,
callbacks, gradient aggregation, clipping, reducers, test mode, on-cluster behaviour."""

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from determined import pytorch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "fixtures"))
import onevar  # noqa: E402

HARNESS = os.path.dirname(HERE)


class Recorder(onevar.Counter):
    def __init__(self):
        super().__init__()
        self.train = []
        self.val = []

    def on_training_workload_end(self, avg_metrics, batch_metrics):
        super().on_training_workload_end(avg_metrics, batch_metrics)
        self.train.extend(batch_metrics)

    def on_validation_end(self, metrics):
        super().on_validation_end(metrics)
        self.val.append(metrics)


def run(tmp_path, hparams=None, seed=17, fit=None, exp_extra=None, trial_cls=onevar.OneVarTrial):
    hp = {"global_batch_size": 4, "lr": 0.01}
    hp.update(hparams or {})
    conf = {"checkpoint_storage": str(tmp_path / "ckpts"), "reproducibility": {"experiment_seed": seed}}
    conf.update(exp_extra or {})
    with pytorch.init(hparams=hp, exp_conf=conf) as ctx:
        trial = trial_cls(ctx)
        rec = Recorder()
        trial.counter = rec
        kwargs = {"max_length": pytorch.Batch(8), "reporting_period": pytorch.Batch(1)}
        kwargs.update(fit or {})
        pytorch.Trainer(trial, ctx).fit(**kwargs)
        return trial, rec


def ckpt_dirs(tmp_path):
    base = tmp_path / "ckpts"
    return sorted((p for p in base.iterdir() if (p / "state_dict.pth").exists()), key=lambda p: p.stat().st_mtime)


def test_onevar_closed_form(tmp_path):
    trial, rec = run(tmp_path, fit={"max_length": pytorch.Batch(12)})
    xs = onevar.OneVarDataset(16).xs
    per_batch = [xs[i * 4 % 16:(i * 4) % 16 + 4] for i in range(12)]
    expected = onevar.expected_onevar(12, per_batch, 0.01)
    assert len(rec.train) == 12
    prev = float("inf")
    for got, (loss, w) in zip(rec.train, expected):
        assert got["loss"] == pytest.approx(loss, rel=1e-5)
        assert got["w_after"] == pytest.approx(w, rel=1e-5)
        assert got["loss"] <= prev
        prev = got["loss"]


def test_restore_equals_uninterrupted(tmp_path):
    hp = {"shuffle": True, "lr_mode": "STEP_EVERY_BATCH", "lr_freq": 3}
    fit = {"max_length": pytorch.Batch(10), "validation_period": pytorch.Batch(5), "checkpoint_policy": "all"}
    _, full = run(tmp_path / "a", hp, fit=fit)
    # Interrupted: 5 batches (validate + checkpoint), then resume from that checkpoint to 10.
    _, first = run(tmp_path / "b", hp, fit=dict(fit, max_length=pytorch.Batch(5)))
    (ck,) = ckpt_dirs(tmp_path / "b")
    assert json.loads((ck / "metadata.json").read_text())["steps_completed"] == 5
    assert (ck / "load_data.json").exists() and (ck / "trial_state.pkl").exists()
    _, second = run(tmp_path / "b", hp, fit=dict(fit, latest_checkpoint=ck.name))
    assert second.counts["on_checkpoint_load_start"] == 1
    assert first.train + second.train == full.train  # bit for bit
    assert first.val + second.val == full.val  # includes python/numpy/torch random draws
    assert len(full.val) == 2


def test_restore_invalid_checkpoint(tmp_path):
    run(tmp_path, fit={"max_length": pytorch.Batch(2)})
    (ck,) = ckpt_dirs(tmp_path)

    class Bigger(onevar.OneVarTrial):
        def __init__(self, context):
            super().__init__(context)
            context.models[0] = torch.nn.Linear(2, 1, bias=False)

    with pytest.raises(RuntimeError):
        run(tmp_path, trial_cls=Bigger, fit={"latest_checkpoint": ck.name, "max_length": pytorch.Batch(4)})


def test_same_seed_same_metrics_different_seed_differs(tmp_path):
    hp = {"shuffle": True}
    _, a = run(tmp_path / "a", hp, seed=17, fit={"validation_period": pytorch.Batch(4)})
    _, b = run(tmp_path / "b", hp, seed=17, fit={"validation_period": pytorch.Batch(4)})
    _, c = run(tmp_path / "c", hp, seed=18, fit={"validation_period": pytorch.Batch(4)})
    assert a.train == b.train and a.val == b.val
    assert [m["x0"] for m in a.train] != [m["x0"] for m in c.train]


@pytest.mark.parametrize("mode,freq,expected", [
    ("STEP_EVERY_BATCH", 1, [0.01 * 0.5 ** i for i in range(8)]),
    ("STEP_EVERY_BATCH", 3, [0.01 * 0.5 ** (i // 3) for i in range(8)]),
    ("STEP_EVERY_EPOCH", 1, [0.01 * 0.5 ** (i // 4) for i in range(8)]),
    ("STEP_EVERY_OPTIMIZER_STEP", 2, [0.01 * 0.5 ** ((i + 1) // 2) for i in range(8)]),  # read after the step
    ("MANUAL_STEP", 1, [0.01 * 0.5 ** ((i + 1) // 2) for i in range(8)]),
])
def test_lr_step_modes(tmp_path, mode, freq, expected):
    _, rec = run(tmp_path, {"lr_mode": mode, "lr_freq": freq})
    assert [m["lr"] for m in rec.train] == pytest.approx(expected)


def test_lr_every_optimizer_step_with_aggregation(tmp_path):
    _, rec = run(tmp_path, {"lr_mode": "STEP_EVERY_OPTIMIZER_STEP"},
                 exp_extra={"optimizations": {"aggregation_frequency": 2}})
    assert [m["lr"] for m in rec.train] == pytest.approx([0.01 * 0.5 ** ((i + 1) // 2) for i in range(8)])


def test_gradient_aggregation(tmp_path):
    _, rec = run(tmp_path, exp_extra={"optimizations": {"aggregation_frequency": 2}})
    xs = onevar.OneVarDataset(16).xs
    per_batch = [xs[(i * 4) % 16:(i * 4) % 16 + 4] for i in range(8)]
    # Two batches of 4 averaged == one batch of 8 records.
    merged = [per_batch[i] + per_batch[i + 1] for i in range(0, 8, 2)]
    expected = onevar.expected_onevar(4, merged, 0.01)
    ws = [m["w_after"] for m in rec.train]
    for k, (_, w) in enumerate(expected):
        assert ws[2 * k + 1] == pytest.approx(w, rel=1e-5)
        assert ws[2 * k] == pytest.approx(expected[k - 1][1] if k else 0.0, abs=1e-7)  # no step yet


@pytest.mark.parametrize("clip", ["norm", "value"])
def test_clip_grads_changes_loss(tmp_path, clip):
    _, plain = run(tmp_path / "a", fit={"max_length": pytorch.Batch(12)})
    _, clipped = run(tmp_path / "b", {"clip": clip}, fit={"max_length": pytorch.Batch(12)})
    assert plain.train[0]["loss"] == clipped.train[0]["loss"]
    for a, b in zip(plain.train[9:], clipped.train[9:]):
        assert a["loss"] != b["loss"]
    assert abs(clipped.train[-1]["w_after"]) < 12 * 0.01 * 1e-4 * 1.01


def test_callback_counts_and_order(tmp_path):
    # 2 epochs of 4 batches, no periods: 1 validation and 1 checkpoint at the end.
    _, rec = run(tmp_path, fit={"max_length": pytorch.Epoch(2), "reporting_period": pytorch.Batch(100)})
    c = rec.counts
    assert c["on_trial_startup"] == 1 and c["on_training_start"] == 1 and c["on_trial_shutdown"] == 1
    assert c["on_training_epoch_start"] == 2 and c["on_training_epoch_end"] == 2
    assert c["on_validation_start"] == c["on_validation_end"] == 1
    assert c["on_checkpoint_write_end"] == c["on_checkpoint_upload_end"] == 1
    assert c["on_training_workload_end"] == 1
    o = rec.order
    assert o[:3] == ["on_trial_startup", "on_training_start", "on_training_epoch_start"]
    assert o[-1] == "on_trial_shutdown"
    assert o.index("on_validation_start") < o.index("on_validation_epoch_start") < o.index(
        "on_validation_epoch_end") < o.index("on_validation_end") < o.index("on_checkpoint_save_start") < o.index(
        "on_checkpoint_write_end") < o.index("on_checkpoint_upload_end")


@pytest.mark.parametrize("val,ckpt,n_val,n_ckpt", [(4, None, 2, 1), (None, 4, 1, 2), (3, 3, 3, 3)])
def test_trainer_periods(tmp_path, val, ckpt, n_val, n_ckpt):
    fit = {"max_length": pytorch.Batch(8), "checkpoint_policy": "none"}
    if val:
        fit["validation_period"] = pytorch.Batch(val)
    if ckpt:
        fit["checkpoint_period"] = pytorch.Batch(ckpt)
    _, rec = run(tmp_path, fit=fit)
    assert rec.counts["on_validation_end"] == n_val
    assert rec.counts["on_checkpoint_upload_end"] == n_ckpt
    assert len(ckpt_dirs(tmp_path)) == n_ckpt


def test_restore_at_max_length_trains_nothing(tmp_path):
    run(tmp_path, fit={"max_length": pytorch.Batch(4)})
    (ck,) = ckpt_dirs(tmp_path)
    _, rec = run(tmp_path, fit={"max_length": pytorch.Batch(4), "latest_checkpoint": ck.name})
    assert rec.train == [] and rec.counts.get("on_validation_end", 0) == 0
    assert len(ckpt_dirs(tmp_path)) == 1


def test_stop_requested(tmp_path):
    _, rec = run(tmp_path, {"stop_at": 2})
    assert len(rec.train) == 3
    assert json.loads((ckpt_dirs(tmp_path)[-1] / "metadata.json").read_text())["steps_completed"] == 3


def test_custom_reducers(tmp_path):
    _, rec = run(tmp_path, {"custom_reducer": True}, fit={"reporting_period": pytorch.Batch(4)})
    assert [m for m in rec.train] and rec.counts["on_training_workload_end"] == 2

    class Bad(onevar.OneVarTrial):
        def __init__(self, context):
            super().__init__(context)
            context.wrap_reducer(lambda vals: 1.0)  # unnamed must return a dict

    with pytest.raises(AssertionError, match="dict"):
        run(tmp_path / "bad", trial_cls=Bad)


def test_custom_reducer_values(tmp_path):
    seen = {}

    class T(onevar.OneVarTrial):
        def __init__(self, context):
            super().__init__(context)
            self.r = context.wrap_reducer(lambda vals: sum(vals), name="bsum", for_validation=False)

        def train_batch(self, batch, epoch_idx, batch_idx):
            self.r.update(len(batch[0]) * batch_idx)
            return super().train_batch(batch, epoch_idx, batch_idx)

    class Rec(Recorder):
        def on_training_workload_end(self, avg_metrics, batch_metrics):
            seen.setdefault("bsum", []).append(avg_metrics["bsum"])

    with pytorch.init(hparams={"global_batch_size": 4}, exp_conf={"checkpoint_storage": str(tmp_path)}) as ctx:
        t = T(ctx)
        t.counter = Rec()
        pytorch.Trainer(t, ctx).fit(max_length=pytorch.Batch(8), reporting_period=pytorch.Batch(4))
    assert seen["bsum"] == [4 * (0 + 1 + 2 + 3), 4 * (4 + 5 + 6 + 7)]


def test_plain_torch_dataloader_rejected(tmp_path):
    class Plain(onevar.OneVarTrial):
        def build_training_data_loader(self):
            return torch.utils.data.DataLoader(onevar.OneVarDataset(8), batch_size=4)

    with pytest.raises(RuntimeError, match="determined.pytorch.DataLoader"):
        run(tmp_path, trial_cls=Plain)

    class PlainOk(Plain):
        def __init__(self, context):
            super().__init__(context)
            context.experimental.disable_dataset_reproducibility_checks()

    _, rec = run(tmp_path / "ok", trial_cls=PlainOk)
    assert len(rec.train) == 8


def test_apex_error_names_package(tmp_path):
    with pytorch.init(hparams={"global_batch_size": 4}, exp_conf={"checkpoint_storage": str(tmp_path)}) as ctx:
        t = onevar.OneVarTrial(ctx)
        with pytest.raises(RuntimeError, match="apex"):
            ctx.configure_apex_amp(t.model, t.opt)
        assert ctx.get_hparam("global_batch_size") == 4 and ctx.get_per_slot_batch_size() == 4
        with pytest.raises(ValueError):
            ctx.get_hparam("nope")


def test_load_trial_from_checkpoint_path(tmp_path):
    trial, _ = run(tmp_path, fit={"max_length": pytorch.Batch(4)})
    (ck,) = ckpt_dirs(tmp_path)
    loaded = pytorch.load_trial_from_checkpoint_path(str(ck))
    assert type(loaded).__name__ == "OneVarTrial"
    assert loaded.model.weight.item() == trial.model.weight.item() != 0.0
    assert (ck / "code" / "onevar.py").exists()


def test_max_length_required_off_cluster(tmp_path):
    with pytest.raises(ValueError, match="max_length"):
        run(tmp_path, fit={"max_length": None})


def _harness_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DET_")}
    env["PYTHONPATH"] = HARNESS
    env.update(extra)
    return env


def test_local_test_mode_command(tmp_path):
    (tmp_path / "const.yaml").write_text(
        "entrypoint: python3 -m determined.launch.torch_distributed -- --trial onevar:OneVarTrial\n"
        "hyperparameters:\n  global_batch_size: 4\n  lr:\n    type: double\n    minval: 0.01\n    maxval: 0.1\n"
        "searcher:\n  name: single\n  metric: val_loss\n  max_length:\n    batches: 100\n")
    p = subprocess.run(
        [sys.executable, "-m", "determined.exec.harness", "--test-mode", "--config", str(tmp_path / "const.yaml")],
        cwd=os.path.join(HERE, "fixtures"), env=_harness_env(), capture_output=True, text=True, timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Model definition test succeeded" in p.stdout
    assert "Checkpoint round trip succeeded" in p.stdout
    assert p.stdout.count("[training] steps_completed=1:") == 1
    assert "[validation] steps_completed=1:" in p.stdout


def _cluster_run(master, tmp_path, hparams, extra_conf=None, **env_extra):
    conf = {"searcher": {"name": "single", "metric": "val_loss", "max_length": {"batches": 8}},
            "checkpoint_storage": {"type": "shared_fs", "host_path": str(tmp_path), "storage_path": "ckpts"},
            "hyperparameters": hparams, "scheduling_unit": 2}
    conf.update(extra_conf or {})
    env = _harness_env(**master.env(tmp_path, DET_HPARAMS=json.dumps(hparams),
                                    DET_EXPERIMENT_CONFIG=json.dumps(conf), **env_extra))
    return subprocess.Popen([sys.executable, "-m", "determined.exec.harness", "onevar:OneVarTrial"],
                            cwd=os.path.join(HERE, "fixtures"), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_on_cluster_searcher_ops_progress_and_metric(master, tmp_path):
    master.ops = [4, 8]
    p = _cluster_run(master, tmp_path, {"global_batch_size": 4, "lr": 0.01})
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    assert [c["op"]["length"] for c in master.completed_ops] == [4, 8]
    vals = [b["metrics"] for b in master.metrics if b["group"] == "validation"]
    assert [v["stepsCompleted"] for v in vals] == [4, 8]
    assert master.completed_ops[1]["searcherMetric"] == vals[1]["metrics"]["avgMetrics"]["val_loss"]
    train = [b["metrics"]["stepsCompleted"] for b in master.metrics if b["group"] == "training"]
    assert train == [2, 4, 6, 8]  # scheduling_unit 2
    assert master.progress == pytest.approx([0.5, 1.0, 0.75, 1.0])  # relative to each op's length
    assert any(c["metadata"]["steps_completed"] == 8 for c in master.checkpoints.values())


def test_on_cluster_preempt_then_resume_matches(master, tmp_path):
    hp = {"global_batch_size": 4, "lr": 0.01, "shuffle": True}
    master.ops = [8]
    master.set_preempt()
    p = _cluster_run(master, tmp_path, hp)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    assert master.acks == 1 and master.completed_ops == []
    (ck,) = master.checkpoints.values()
    steps = ck["metadata"]["steps_completed"]
    assert 1 <= steps < 8
    master.preempt = False
    master.run_id = 2
    p = _cluster_run(master, tmp_path, hp, DET_LATEST_CHECKPOINT=ck["uuid"], DET_STEPS_COMPLETED=str(steps),
                     DET_TRIAL_RUN_ID="2")
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    assert [c["op"]["length"] for c in master.completed_ops] == [8]
    batch = [m for b in master.metrics if b["group"] == "training" for m in b["metrics"]["metrics"]["batchMetrics"]]
    _, ref = run(tmp_path / "ref", hp, seed=42)
    assert batch == ref.train

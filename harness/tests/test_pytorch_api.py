"""determined.pytorch's public names (Determined 0.38's, listed here) and the behaviour of the
helpers that user code calls directly: to_device, data_length, adapt_batch_sampler, samplers,
context helpers, CheckpointLoadContext, Trainer.fit(profiling_enabled=...)."""

import collections
import copy
import logging
import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from determined import pytorch  # noqa: E402
from determined.pytorch import samplers  # noqa: E402

# Determined 0.38's public names of determined.pytorch and the public members user code reaches
# through them (classes: methods and attributes; modules: classes).
PUBLIC_API = {
    "Batch": ["should_stop"],
    "CheckpointLoadContext": [],  # a PyTorchTrialContext: same members
    "DataLoader": ["get_data_loader", "__iter__", "__len__"],
    "Epoch": ["should_stop"],
    "LRScheduler": ["StepMode", "get_last_lr", "load_state_dict", "state_dict", "step"],
    "MetricReducer": ["cross_slot_reduce", "per_slot_reduce", "reset"],
    "PyTorchCallback": [
        "load_state_dict", "on_checkpoint_end", "on_checkpoint_load_start", "on_checkpoint_save_start",
        "on_checkpoint_upload_end", "on_checkpoint_write_end", "on_training_epoch_end",
        "on_training_epoch_start", "on_training_start", "on_training_workload_end", "on_trial_shutdown",
        "on_trial_startup", "on_validation_end", "on_validation_epoch_end", "on_validation_epoch_start",
        "on_validation_start", "state_dict",
    ],
    "PyTorchExperimentalContext": ["disable_auto_to_device", "disable_dataset_reproducibility_checks", "use_amp"],
    "PyTorchTrial": [
        "build_callbacks", "build_training_data_loader", "build_validation_data_loader", "evaluate_batch",
        "evaluate_full_dataset", "evaluation_reducer", "get_batch_length", "train_batch", "trial_context_class",
    ],
    "PyTorchTrialContext": [
        "autocast_forward_pass", "backward", "configure_apex_amp", "current_train_batch", "current_train_epoch",
        "get_data_config", "get_enable_tensorboard_logging", "get_experiment_config", "get_experiment_id",
        "get_global_batch_size", "get_hparam", "get_hparams", "get_initial_batch", "get_per_slot_batch_size",
        "get_stop_requested", "get_tensorboard_path", "get_tensorboard_writer", "get_trial_id", "get_trial_seed",
        "is_epoch_end", "is_epoch_start", "reduce_metrics", "reset_reducers", "run_cross_slot_reduction",
        "set_enable_tensorboard_logging", "set_profiler", "set_stop_requested", "step_optimizer", "to_device",
        "wrap_lr_scheduler", "wrap_model", "wrap_optimizer", "wrap_reducer", "wrap_scaler",
    ],
    "Reducer": ["AVG", "MAX", "MIN", "SUM"],
    "TorchData": [],
    "TrainUnit": ["should_stop"],
    "Trainer": ["configure_profiler", "fit"],
    "adapt_batch_sampler": [],
    "data_length": [],
    "init": [],
    "load_trial_from_checkpoint_path": [],
    "samplers": [
        "DistributedBatchSampler", "DistributedSampler", "RepeatBatchSampler", "RepeatSampler",
        "ReproducibleShuffleBatchSampler", "ReproducibleShuffleSampler", "SkipBatchSampler", "SkipSampler",
    ],
    "to_device": [],
}


def test_public_names_of_determined_0_38_exist():
    missing = [name for name in PUBLIC_API if not hasattr(pytorch, name)]
    assert missing == [], f"determined.pytorch lacks {missing}"
    missing_members = [f"{name}.{m}" for name, members in PUBLIC_API.items() for m in members
                       if not hasattr(getattr(pytorch, name), m)]
    assert missing_members == [], f"determined.pytorch lacks {missing_members}"
    assert issubclass(pytorch.CheckpointLoadContext, pytorch.PyTorchTrialContext)


def test_fit_and_context_keyword_arguments_of_0_38():
    import inspect

    fit = inspect.signature(pytorch.Trainer.fit).parameters
    for kw in ("checkpoint_period", "validation_period", "max_length", "reporting_period", "checkpoint_policy",
               "latest_checkpoint", "step_zero_validation", "test_mode", "profiling_enabled"):
        assert kw in fit, kw
    init = inspect.signature(pytorch.init).parameters
    for kw in ("hparams", "exp_conf", "distributed", "aggregation_frequency", "enable_tensorboard_logging"):
        assert kw in init, kw
    load = inspect.signature(pytorch.load_trial_from_checkpoint_path).parameters
    assert list(load)[:4] == ["path", "trial_class", "trial_kwargs", "torch_load_kwargs"]


# -- to_device / data_length ---------------------------------------------------------------
Pair = collections.namedtuple("Pair", ["x", "y"])


class Movable:
    def __init__(self):
        self.moved_to = None

    def to(self, device):
        self.moved_to = device
        return self


def test_to_device_converts_containers_and_arrays(caplog):
    t = torch.ones(2)
    out = pytorch.to_device({"a": [t, (np.arange(3), "s")], "p": Pair(t, np.zeros(2, dtype=np.float32))}, "cpu")
    assert isinstance(out["a"], list) and isinstance(out["a"][1], tuple)
    assert torch.equal(out["a"][1][0], torch.arange(3)) and out["a"][1][1] == "s"
    assert type(out["p"]) is Pair and isinstance(out["p"].y, torch.Tensor)
    strings = np.array(["a", "b"])
    assert pytorch.to_device(strings, "cpu") is strings  # not a numeric array: left alone
    m = Movable()
    assert pytorch.to_device(m, "cpu") is m and m.moved_to == "cpu"

    class Odd:
        pass

    warned = set()
    with caplog.at_level(logging.WARNING, logger="determined.pytorch"):
        pytorch.to_device([Odd(), Odd()], "cpu", warned)
        pytorch.to_device(Odd(), "cpu", warned)
    assert sum("Odd" in r.getMessage() for r in caplog.records) == 1  # one warning per type
    assert warned == {Odd}


def test_data_length():
    assert pytorch.data_length(torch.zeros(5, 3)) == 5
    assert pytorch.data_length(np.zeros(4)) == 4
    assert pytorch.data_length({"x": torch.zeros(3), "y": torch.zeros(3)}) == 3
    assert pytorch.data_length([torch.zeros(2), torch.zeros(2)]) == 2
    assert pytorch.data_length((torch.zeros(7),)) == 7
    with pytest.raises(ValueError, match="empty dict"):
        pytorch.data_length({})
    with pytest.raises(TypeError, match="str"):
        pytorch.data_length("abc")


# -- samplers ------------------------------------------------------------------------------
def batch_sampler(n=10, bs=3):
    return torch.utils.data.BatchSampler(range(n), batch_size=bs, drop_last=False)


def test_adapt_batch_sampler_repeats_then_shards_then_skips():
    # Batches: b0=[0,1,2] b1=[3,4,5] b2=[6,7,8] b3=[9], repeated; rank 1 of 2 gets b1, b3, b5=b1...
    s = pytorch.adapt_batch_sampler(batch_sampler(), repeat=True, skip=1, num_replicas=2, rank=1)
    it = iter(s)
    assert [next(it) for _ in range(4)] == [[9], [3, 4, 5], [9], [3, 4, 5]]
    assert len(s) == 2
    plain = batch_sampler()
    assert pytorch.adapt_batch_sampler(plain) is plain


def test_samplers_of_0_38():
    assert list(samplers.SkipSampler(range(5), 2)) == [2, 3, 4]
    assert len(samplers.SkipSampler(range(5), 2)) == 5  # the length does not shrink on resume
    assert len(samplers.SkipBatchSampler(batch_sampler(), 1)) == 4
    assert list(samplers.SkipSampler(range(2), 5)) == []
    it = iter(samplers.RepeatSampler(range(3)))
    assert [next(it) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert list(samplers.RepeatSampler([])) == []
    shuffled = samplers.ReproducibleShuffleBatchSampler(batch_sampler(), 3)
    first, second = list(shuffled), list(shuffled)
    assert sorted(first) == sorted(second) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    again = samplers.ReproducibleShuffleBatchSampler(batch_sampler(), 3)
    assert list(again) == first and list(again) == second  # pass k depends only on (seed, k)
    assert list(samplers.ReproducibleShuffleSampler(["a", "b", "c"], 1)) != [] and len(shuffled) == 4
    assert list(samplers.DistributedBatchSampler(batch_sampler(), 3, 2)) == [[6, 7, 8]]
    with pytest.raises(ValueError, match="rank"):
        samplers.DistributedBatchSampler(batch_sampler(), 2, 2)
    with pytest.raises(ValueError, match="num_workers"):
        samplers.DistributedSampler(range(3), 0, 0)


def test_dataloader_iterates_like_torch():
    dl = pytorch.DataLoader(torch.utils.data.TensorDataset(torch.arange(7)), batch_size=3)
    assert [b[0].tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(dl) == 3


# -- a small trial ---------------------------------------------------------------------------
def digits_like(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.utils.data.TensorDataset(torch.randn(n, 8, generator=g), torch.randint(0, 3, (n,), generator=g))


def make_model():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5), torch.nn.ReLU(), torch.nn.Linear(8, 3))


class EvalOnEpochStart(pytorch.PyTorchCallback):
    def __init__(self, model):
        self.model = model

    def on_training_epoch_start(self, epoch_idx):
        self.model.eval()


class SmallTrial(pytorch.PyTorchTrial):
    def __init__(self, context, with_callback=False):
        self.context = context
        self.model = context.wrap_model(make_model())
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), lr=0.1))
        self.with_callback = with_callback
        self.seen = []  # (batch_idx, epoch, initial batch, model.training, profiler on)

    def build_training_data_loader(self):
        return pytorch.DataLoader(digits_like(), batch_size=8)

    def build_validation_data_loader(self):
        return pytorch.DataLoader(digits_like(16, seed=1), batch_size=8)

    def build_callbacks(self):
        return {"eval": EvalOnEpochStart(self.model)} if self.with_callback else {}

    def train_batch(self, batch, epoch_idx, batch_idx):
        profiler = self.context._core.profiler
        self.seen.append((batch_idx, self.context.current_train_epoch(), self.context.get_initial_batch(),
                          self.model.training, profiler.is_on))
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch, batch_idx):
        x, y = batch
        return {"validation_loss": torch.nn.functional.cross_entropy(self.model(x), y)}


class LossRecorder(pytorch.PyTorchCallback):
    def __init__(self):
        self.losses = []

    def on_training_workload_end(self, avg_metrics, batch_metrics):
        self.losses.extend(m["loss"] for m in batch_metrics)


def fit(tmp_path, batches, trial_kwargs=None, **fit_kwargs):
    conf = {"checkpoint_storage": str(tmp_path), "reproducibility": {"experiment_seed": 5}}
    with pytorch.init(hparams={"global_batch_size": 8}, exp_conf=conf) as ctx:
        trial = SmallTrial(ctx, **(trial_kwargs or {}))
        rec = LossRecorder()
        base = trial.build_callbacks

        trial.build_callbacks = lambda: dict(base(), rec=rec)
        pytorch.Trainer(trial, ctx).fit(max_length=pytorch.Batch(batches), **fit_kwargs)
        return trial, rec, ctx


def test_training_losses_equal_a_plain_loop(tmp_path):
    """The Trainer reports exactly the losses the same plain PyTorch loop computes."""
    _, rec, _ = fit(tmp_path, 20, reporting_period=pytorch.Batch(7), validation_period=pytorch.Batch(8))
    # make_model() seeds torch, and dropout then draws from that stream on both sides: the
    # loader gets its own generator so that it draws nothing from it (as the Trainer's does).
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.utils.data.DataLoader(digits_like(), batch_size=8, generator=torch.Generator())
    model.train()
    expected = []
    while len(expected) < 20:
        for x, y in data:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            expected.append(loss.item())
            if len(expected) == 20:
                break
    assert len(rec.losses) == 20
    assert rec.losses == expected


def test_train_mode_restored_after_callbacks_and_validation(tmp_path):
    trial, _, _ = fit(tmp_path, 20, trial_kwargs={"with_callback": True}, validation_period=pytorch.Batch(5))
    assert [s[0] for s in trial.seen] == list(range(20))
    assert all(training for (_, _, _, training, _) in trial.seen)  # the callback's eval() undone
    assert [s[1] for s in trial.seen] == [i // 8 for i in range(20)]  # current_train_epoch()
    assert {s[2] for s in trial.seen} == {0}  # get_initial_batch() on a fresh start


def test_profiling_enabled_turns_the_core_profiler_on_during_fit(tmp_path):
    trial, _, ctx = fit(tmp_path / "on", 3, profiling_enabled=True)
    assert [s[4] for s in trial.seen] == [True] * 3
    assert not ctx._core.profiler.is_on
    trial, _, _ = fit(tmp_path / "off", 3)
    assert [s[4] for s in trial.seen] == [False] * 3


def test_initial_batch_and_epoch_after_resume(tmp_path):
    fit(tmp_path, 10)
    ckpts = [p for p in tmp_path.iterdir() if (p / "state_dict.pth").exists()]
    assert len(ckpts) == 1
    conf = {"checkpoint_storage": str(tmp_path), "reproducibility": {"experiment_seed": 5}}
    with pytorch.init(hparams={"global_batch_size": 8}, exp_conf=conf) as ctx:
        trial = SmallTrial(ctx)
        pytorch.Trainer(trial, ctx).fit(max_length=pytorch.Batch(12), latest_checkpoint=ckpts[0].name)
    assert [(s[0], s[1]) for s in trial.seen] == [(10, 1), (11, 1)]


def test_tensorboard_logging_flag(tmp_path):
    with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": str(tmp_path)},
                      enable_tensorboard_logging=False) as ctx:
        assert ctx.get_enable_tensorboard_logging() is False
        ctx.set_enable_tensorboard_logging(True)
        assert ctx.get_enable_tensorboard_logging() is True
        with pytest.raises(AssertionError, match="bool"):
            ctx.set_enable_tensorboard_logging("yes")


def test_autocast_forward_pass_on_cpu_keeps_module_and_outputs(tmp_path):
    with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": str(tmp_path)}) as ctx:
        model = torch.nn.Linear(4, 2)
        x = torch.randn(3, 4)
        before = model(x)
        wrapped = ctx.autocast_forward_pass(model)
        assert wrapped is model and isinstance(wrapped, torch.nn.Linear)
        out = wrapped(x)
        assert out.dtype == torch.float32 and torch.equal(out, before)
        clone = copy.deepcopy(wrapped)
        with torch.no_grad():
            clone.weight.zero_()
            clone.bias.zero_()
        assert torch.equal(clone(x), torch.zeros(3, 2))  # the copy runs its own weights
        with pytest.raises(TypeError, match="Module"):
            ctx.autocast_forward_pass(lambda t: t)


def test_reducer_helpers_on_the_context(tmp_path):
    with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": str(tmp_path)}) as ctx:
        total = ctx.wrap_reducer(sum, name="total", for_validation=False)
        extremes = ctx.wrap_reducer(lambda vs: {"lo": min(vs), "hi": max(vs)}, for_training=False)
        for v in (3, 1, 4):
            total.update(v)
            extremes.update(v)
        assert ctx.reduce_metrics(for_training=True) == {"total": 8}
        assert ctx.reduce_metrics(for_training=False) == {"lo": 1, "hi": 4}
        wrapped = list(ctx._reducers)
        # Two slots' per-slot values, in the order of the reducers.
        assert ctx.run_cross_slot_reduction(wrapped, [[[1, 2], [5]], [[3], [0, 9]]]) == {"total": 6, "lo": 0, "hi": 9}
        ctx.reset_reducers()
        assert ctx.reduce_metrics(for_training=True) == {"total": 0}


def test_checkpoint_load_context_and_load_kwargs(tmp_path):
    fit(tmp_path, 4)
    (ckpt,) = [p for p in tmp_path.iterdir() if (p / "state_dict.pth").exists()]
    ctx = pytorch.CheckpointLoadContext(hparams={"global_batch_size": 8})
    assert ctx.get_hparam("global_batch_size") == 8 and ctx.get_trial_id() == 0
    trial = SmallTrial(ctx)  # a trial built by hand, with any extra constructor arguments
    assert isinstance(trial.model, torch.nn.Module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = pytorch.load_trial_from_checkpoint_path(str(ckpt), trial_class=SmallTrial, map_location="cpu")
    assert any(issubclass(w.category, FutureWarning) for w in caught)
    state = torch.load(str(ckpt / "state_dict.pth"))
    for k, v in loaded.model.state_dict().items():
        assert torch.equal(v, state["models_state_dict"][0][k])
    with pytest.raises(ValueError, match="not both"):
        pytorch.load_trial_from_checkpoint_path(str(ckpt), trial_class=SmallTrial,
                                                torch_load_kwargs={"map_location": "cpu"}, map_location="cpu")
    assert os.path.isdir(str(ckpt))


def test_context_to_device_on_cpu(tmp_path):
    with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": str(tmp_path)}) as ctx:
        x, y = torch.ones(2), torch.zeros(2)
        out = ctx.to_device((x, y))
        assert out[0] is x and out[1] is y  # already on the device: nothing copied
        mixed = ctx.to_device([x, np.arange(3)])
        assert mixed[0] is x and torch.equal(mixed[1], torch.arange(3))  # arrays still converted
        assert ctx.to_device({"x": np.ones(1)})["x"].dtype == torch.float64

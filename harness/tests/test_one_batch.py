"""determined.experimental.test_one_batch: a PyTorchTrial trained for one batch in-process."""

import pytest

torch = pytest.importorskip("torch")

from determined import experimental, pytorch  # noqa: E402


class OneBatchTrial(pytorch.PyTorchTrial):
    batches = []
    hparams = []

    def __init__(self, context):
        self.context = context
        OneBatchTrial.hparams.append(context.get_hparams())
        self.model = context.wrap_model(torch.nn.Linear(4, 2))
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), lr=0.1))

    def _data(self):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(32, 4, generator=g)
        y = torch.randint(0, 2, (32,), generator=g)
        return list(zip(x, y))

    def build_training_data_loader(self):
        return pytorch.DataLoader(self._data(), batch_size=4)

    def build_validation_data_loader(self):
        return pytorch.DataLoader(self._data(), batch_size=4)

    def train_batch(self, batch, epoch_idx, batch_idx):
        OneBatchTrial.batches.append(batch_idx)
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch, batch_idx):
        x, y = batch
        return {"val_loss": torch.nn.functional.cross_entropy(self.model(x), y)}


def test_runs_one_batch_with_representative_hparams(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    OneBatchTrial.batches.clear()
    OneBatchTrial.hparams.clear()
    config = {
        "hyperparameters": {
            "lr": {"type": "double", "minval": 0.01, "maxval": 0.1},
            "width": {"type": "const", "val": 8},
            "act": {"type": "categorical", "vals": ["relu", "tanh"]},
            "plain": 3,
        },
        "checkpoint_storage": {"type": "shared_fs", "host_path": str(tmp_path)},
    }
    experimental.test_one_batch(OneBatchTrial, config)
    assert OneBatchTrial.batches == [0]
    assert OneBatchTrial.hparams == [{"lr": 0.01, "width": 8, "act": "relu", "plain": 3}]


def test_refuses_a_class_that_is_not_a_pytorch_trial():
    class NotATrial:
        pass

    with pytest.raises(TypeError, match="PyTorchTrial"):
        experimental.test_one_batch(NotATrial)

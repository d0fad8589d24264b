"""A PyTorchTrial on scikit-learn's bundled digits data set (8x8 images, 10 classes)."""

import numpy as np
import torch
from sklearn.datasets import load_digits

from determined import pytorch


def _split():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    rng = np.random.RandomState(0)
    idx = rng.permutation(len(x))
    cut = int(0.8 * len(x))
    tr, va = idx[:cut], idx[cut:]
    return (x[tr], y[tr]), (x[va], y[va])


class DigitsTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        torch.set_num_threads(1)
        hidden = int(context.get_hparam("hidden_size"))
        self.model = context.wrap_model(torch.nn.Sequential(
            torch.nn.Linear(64, hidden), torch.nn.ReLU(), torch.nn.Dropout(float(context.get_hparam("dropout"))),
            torch.nn.Linear(hidden, 10),
        ))
        self.opt = context.wrap_optimizer(torch.optim.SGD(
            self.model.parameters(), lr=float(context.get_hparam("lr")), momentum=0.9))
        self.lrs = context.wrap_lr_scheduler(
            torch.optim.lr_scheduler.StepLR(self.opt, step_size=1, gamma=0.9),
            step_mode=pytorch.LRScheduler.StepMode.STEP_EVERY_EPOCH,
        )
        (self.xtr, self.ytr), (self.xva, self.yva) = _split()

    def _ds(self, x, y):
        return torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(self._ds(self.xtr, self.ytr), batch_size=self.context.get_per_slot_batch_size(),
                                  shuffle=True)

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(self._ds(self.xva, self.yva), batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch, epoch_idx: int, batch_idx: int):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss, "lr": self.lrs.get_last_lr()[0]}

    def evaluate_batch(self, batch, batch_idx: int):
        x, y = batch
        out = self.model(x)
        return {
            "validation_loss": torch.nn.functional.cross_entropy(out, y),
            "accuracy": (out.argmax(1) == y).float().mean(),
        }

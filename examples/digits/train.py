"""Classify scikit-learn's bundled 8x8 digits with a small MLP, using the Core API.

On a cluster: ``det experiment create const.yaml .`` (or random.yaml for a search).
Off-cluster:  ``PYTHONPATH=../../harness /usr/bin/python3 train.py`` (trains one searcher op
of length 1; pass ``--batches N`` to train longer).

Follows the searcher's operations (op.length counts batches), reports training metrics every
``report_every`` batches and validation metrics at the end of each op, checkpoints model +
optimizer + batches trained, resumes from ``det.get_cluster_info().latest_checkpoint`` and
exits cleanly (after checkpointing) when the master asks it to stop.
"""

import argparse
import logging
import os
import sys

try:
    import torch
except ImportError:  # the first python3 on PATH may lack torch; Debian's has it
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

import determined as det
from determined import core

DEFAULT_HPARAMS = {
    "lr": 0.05,
    "hidden_size": 64,
    "dropout": 0.1,
    "batch_size": 32,
    "report_every": 25,
}


class MLP(nn.Module):
    def __init__(self, hidden_size: int, dropout: float) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(64, hidden_size),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_size, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def load_data(seed: int = 0):
    x, y = load_digits(return_X_y=True)
    x = torch.tensor(x / 16.0, dtype=torch.float32)
    y = torch.tensor(y, dtype=torch.long)
    perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    x, y = x[perm], y[perm]
    n_val = 360
    return (x[n_val:], y[n_val:]), (x[:n_val], y[:n_val])


class Batches:
    """An endless, resumable stream of shuffled batches: batch i depends only on (seed, i)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, batch_size: int, seed: int) -> None:
        self.x, self.y, self.batch_size, self.seed = x, y, batch_size, seed
        self.per_epoch = max(1, len(x) // batch_size)

    def get(self, i: int):
        epoch, j = divmod(i, self.per_epoch)
        perm = torch.randperm(len(self.x), generator=torch.Generator().manual_seed(self.seed * 100003 + epoch))
        idx = perm[j * self.batch_size : (j + 1) * self.batch_size]
        return self.x[idx], self.y[idx]


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, y).item()
        acc = (logits.argmax(dim=1) == y).float().mean().item()
    model.train()
    return {"validation_loss": loss, "accuracy": acc}


def save(core_context: core.Context, model, optimizer, batches_trained: int, trial_id) -> str:
    metadata = {"steps_completed": batches_trained}
    with core_context.checkpoint.store_path(metadata) as (path, storage_id):
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "batches_trained": batches_trained,
                "trial_id": trial_id,
            },
            path / "state.pt",
        )
    return storage_id


def load(core_context: core.Context, storage_id: str, model, optimizer, trial_id, lr: float) -> int:
    """Restores a checkpoint; returns the batches already trained by this trial.

    A checkpoint of another trial (a PBT parent, or searcher.source_trial_id) is a warm start:
    its weights are used, but this trial keeps its own learning rate and counts from zero."""
    with core_context.checkpoint.restore_path(storage_id) as path:
        state = torch.load(path / "state.pt")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if state.get("trial_id") != trial_id:
        for group in optimizer.param_groups:
            group["lr"] = lr
        return 0
    return int(state["batches_trained"])


def main(core_context: core.Context, hparams: dict, latest_checkpoint, trial_id, seed: int) -> int:
    torch.manual_seed(seed)
    (train_x, train_y), (val_x, val_y) = load_data()
    batches = Batches(train_x, train_y, int(hparams["batch_size"]), seed)
    model = MLP(int(hparams["hidden_size"]), float(hparams["dropout"]))
    optimizer = torch.optim.SGD(model.parameters(), lr=float(hparams["lr"]), momentum=0.9)
    report_every = max(1, int(hparams["report_every"]))

    batches_trained = 0
    if latest_checkpoint is not None:
        batches_trained = load(core_context, latest_checkpoint, model, optimizer, trial_id,
                               float(hparams["lr"]))
        logging.info("resumed from checkpoint %s at batch %d", latest_checkpoint, batches_trained)
    last_checkpoint_at = batches_trained

    for op in core_context.searcher.operations():
        losses = []
        while batches_trained < op.length:
            x, y = batches.get(batches_trained)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            batches_trained += 1

            if batches_trained % report_every == 0:
                core_context.train.report_training_metrics(
                    steps_completed=batches_trained, metrics={"loss": sum(losses) / len(losses)}
                )
                losses = []
                op.report_progress(batches_trained)
                if core_context.preempt.should_preempt():
                    if batches_trained != last_checkpoint_at:
                        save(core_context, model, optimizer, batches_trained, trial_id)
                    logging.info("stopping at batch %d as the master asked; will resume later", batches_trained)
                    return 0

        metrics = evaluate(model, val_x, val_y)
        core_context.train.report_validation_metrics(steps_completed=batches_trained, metrics=metrics)
        if batches_trained != last_checkpoint_at:
            save(core_context, model, optimizer, batches_trained, trial_id)
            last_checkpoint_at = batches_trained
        logging.info("batch %d: %s", batches_trained, metrics)
        op.report_completed(metrics["validation_loss"])
        if core_context.preempt.should_preempt():
            return 0
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s")
    torch.set_num_threads(1)
    info = det.get_cluster_info()
    hparams = dict(DEFAULT_HPARAMS)
    if info is not None and info.trial is not None:
        hparams.update(info.trial.hparams)
        latest, trial_id, seed = info.latest_checkpoint, info.trial.trial_id, info.trial.trial_seed
        with core.init() as core_context:
            sys.exit(main(core_context, hparams, latest, trial_id, seed % (2**31)))
    else:
        parser = argparse.ArgumentParser(description=__doc__)
        parser.add_argument("--batches", type=int, default=200)
        args = parser.parse_args()
        with core.init() as core_context:
            core_context.searcher = core.DummySearcherContext(core_context.distributed, length=args.batches)
            sys.exit(main(core_context, hparams, None, None, 0))

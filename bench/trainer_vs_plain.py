"""Trainer overhead: determined.pytorch's Trainer against the same plain PyTorch loop.

Setup (where per-batch overhead dominates): a 64-64-10 MLP on sklearn's digits data (1500
training images, the other 297 for validation), batch size 32, SGD, CPU,
torch.set_num_threads(1). Both sides train BENCH_BATCHES batches, read every loss as a Python
float (the Trainer reports each batch's loss), then run one validation pass over the held-out
images and save one checkpoint (the Trainer's defaults do both at the end of fit()), so both
sides do the same work. The Trainer runs off-cluster through pytorch.init() with its default
reporting period.

Two measurements, each BENCH_REPEATS times in one process, reporting medians (Trainer / plain;
1.0 means no overhead):

- alternating: a whole plain run, then a whole Trainer run, and so on; prints each side's
  batches/s and the per-repeat ratios (wall clock), plus the ratio from CPU time.
- lockstep: the plain loop advances by one batch inside each of the Trainer's batches (its time
  is measured and taken out of the Trainer's), so both sides see the same machine load at every
  moment (on a machine busy with other work whole runs differ by tens of percent). The time
  between the plain steps counts as the Trainer's, so this ratio leans slightly against the
  Trainer (about 1-2% on a loaded 2-core machine, measured by running the plain loop against
  itself this way).
"""

import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from typing import Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

from determined import pytorch  # noqa: E402

torch.set_num_threads(1)
BATCHES = int(os.environ.get("BENCH_BATCHES", "1000"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "11"))
BATCH_SIZE = 32
TRAIN_RECORDS = 1500


def _digits():
    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    return x, y


X, Y = _digits()


def train_data():
    return torch.utils.data.TensorDataset(X[:TRAIN_RECORDS], Y[:TRAIN_RECORDS])


def val_data():
    return torch.utils.data.TensorDataset(X[TRAIN_RECORDS:], Y[TRAIN_RECORDS:])


def model():
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))


def plain() -> Tuple[float, float]:
    torch.manual_seed(0)
    m = model()
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    dl = torch.utils.data.DataLoader(train_data(), batch_size=BATCH_SIZE, shuffle=True)
    val = torch.utils.data.DataLoader(val_data(), batch_size=BATCH_SIZE)
    losses = []
    done = 0
    with tempfile.TemporaryDirectory() as d:
        t0, c0 = time.perf_counter(), time.process_time()
        m.train()
        while done < BATCHES:
            for x, y in dl:
                loss = torch.nn.functional.cross_entropy(m(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
                done += 1
                if done == BATCHES:
                    break
        m.eval()
        with torch.no_grad():
            val_losses = [torch.nn.functional.cross_entropy(m(x), y).item() for x, y in val]
        _ = sum(val_losses) / len(val_losses)
        m.train()
        torch.save({"model": m.state_dict(), "optimizer": opt.state_dict()}, os.path.join(d, "ckpt.pth"))
        return BATCHES / (time.perf_counter() - t0), BATCHES / (time.process_time() - c0)


class Trial(pytorch.PyTorchTrial):
    def __init__(self, context):
        self.context = context
        self.m = context.wrap_model(model())
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.m.parameters(), lr=0.05))

    def build_training_data_loader(self):
        return pytorch.DataLoader(train_data(), batch_size=BATCH_SIZE, shuffle=True)

    def build_validation_data_loader(self):
        return pytorch.DataLoader(val_data(), batch_size=BATCH_SIZE)

    def train_batch(self, batch, epoch_idx, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.m(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch, batch_idx):
        x, y = batch
        return {"validation_loss": torch.nn.functional.cross_entropy(self.m(x), y)}


def trainer() -> Tuple[float, float]:
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": d}) as ctx:
            t = Trial(ctx)
            tr = pytorch.Trainer(t, ctx)
            with contextlib.redirect_stdout(io.StringIO()):
                t0, c0 = time.perf_counter(), time.process_time()
                tr.fit(max_length=pytorch.Batch(BATCHES))
                return BATCHES / (time.perf_counter() - t0), BATCHES / (time.process_time() - c0)


class PlainStepper:
    """The plain loop, one batch per step() call, timing itself. Only the wall clock: reading
    the CPU clock is a system call of a few microseconds, which would leak into the other
    side's time at every batch."""

    def __init__(self) -> None:
        torch.manual_seed(0)
        self.m = model()
        self.opt = torch.optim.SGD(self.m.parameters(), lr=0.05)
        self.dl = torch.utils.data.DataLoader(train_data(), batch_size=BATCH_SIZE, shuffle=True)
        self.it = iter(self.dl)
        self.losses = []
        self.steps_wall = 0.0  # spent in step()
        self.wall = 0.0  # steps plus finish()

    def step(self) -> None:
        t0 = time.perf_counter()
        batch = next(self.it, None)
        if batch is None:
            self.it = iter(self.dl)
            batch = next(self.it)
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.m(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.losses.append(loss.item())
        # Free this batch's tensors inside the timed region (on return they would be freed on
        # the Trainer's time).
        del batch, x, y, loss
        self.steps_wall += time.perf_counter() - t0

    def finish(self, d: str) -> None:
        """The end of the plain run: one validation pass and one checkpoint."""
        t0 = time.perf_counter()
        self.m.eval()
        val = torch.utils.data.DataLoader(val_data(), batch_size=BATCH_SIZE)
        with torch.no_grad():
            val_losses = [torch.nn.functional.cross_entropy(self.m(x), y).item() for x, y in val]
        _ = sum(val_losses) / len(val_losses)
        self.m.train()
        torch.save({"model": self.m.state_dict(), "optimizer": self.opt.state_dict()}, os.path.join(d, "ckpt.pth"))
        self.wall = self.steps_wall + time.perf_counter() - t0


class LockstepTrial(Trial):
    def __init__(self, context, plain_side: PlainStepper):
        super().__init__(context)
        self.plain_side = plain_side

    def train_batch(self, batch, epoch_idx, batch_idx):
        out = super().train_batch(batch, epoch_idx, batch_idx)
        self.plain_side.step()
        return out


def lockstep() -> Tuple[float, float]:
    """Plain and Trainer batches/s."""
    plain_side = PlainStepper()
    with tempfile.TemporaryDirectory() as d:
        with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": d}) as ctx:
            tr = pytorch.Trainer(LockstepTrial(ctx, plain_side), ctx)
            with contextlib.redirect_stdout(io.StringIO()):
                t0 = time.perf_counter()
                tr.fit(max_length=pytorch.Batch(BATCHES))
                wall = time.perf_counter() - t0
        plain_side.finish(d)
    # fit() contained the plain steps: take them out of the Trainer's time.
    return BATCHES / plain_side.wall, BATCHES / (wall - plain_side.steps_wall)


def main() -> None:
    plain()  # warm up both paths (first-call costs of torch and the imports)
    trainer()
    bases, ours, ratios, cpu_ratios = [], [], [], []
    for _ in range(REPEATS):
        b, b_cpu = plain()
        o, o_cpu = trainer()
        bases.append(b)
        ours.append(o)
        ratios.append(o / b)
        cpu_ratios.append(o_cpu / b_cpu)
    med = statistics.median
    print(
        f"trainer_vs_plain (alternating runs): digits 64-64-10 MLP, batch {BATCH_SIZE}, {BATCHES} batches, "
        f"median of {REPEATS}: plain loop {med(bases):.0f} batches/s, "
        f"pytorch.Trainer {med(ours):.0f} batches/s, ratio {med(ratios):.3f} "
        f"(per repeat: {' '.join(f'{r:.3f}' for r in ratios)}); ratio by CPU time {med(cpu_ratios):.3f}"
    )
    runs = [lockstep() for _ in range(REPEATS)]
    ratios = [o / b for b, o in runs]
    print(
        f"trainer_vs_plain (lockstep): median of {REPEATS}: plain loop {med(r[0] for r in runs):.0f} batches/s, "
        f"pytorch.Trainer {med(r[1] for r in runs):.0f} batches/s, ratio {med(ratios):.3f} "
        f"(per repeat: {' '.join(f'{r:.3f}' for r in ratios)})"
    )

if __name__ == "__main__":
    main()

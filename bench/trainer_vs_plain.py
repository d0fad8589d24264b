"""The same small model trained by a plain PyTorch loop and by determined.pytorch's Trainer
(off-cluster via pytorch.init(), default reporting/checkpoint periods); prints both
throughputs in batches/s and their ratio (Trainer / plain; 1.0 means no overhead)."""

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import torch  # noqa: E402

from determined import pytorch  # noqa: E402

torch.set_num_threads(1)
BATCHES = int(os.environ.get("BENCH_BATCHES", "3000"))
BATCH_SIZE = 32
N = 2048


def data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, 32, generator=g)
    y = (x.sum(1) > 0).long()
    return torch.utils.data.TensorDataset(x, y)


def model():
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))


def plain() -> float:
    torch.manual_seed(0)
    m = model()
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    dl = torch.utils.data.DataLoader(data(), batch_size=BATCH_SIZE, shuffle=True)
    done = 0
    t0 = time.perf_counter()
    while done < BATCHES:
        for x, y in dl:
            loss = torch.nn.functional.cross_entropy(m(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            _ = loss.item()
            done += 1
            if done == BATCHES:
                break
    return BATCHES / (time.perf_counter() - t0)


class Trial(pytorch.PyTorchTrial):
    def __init__(self, context):
        self.context = context
        self.m = context.wrap_model(model())
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.m.parameters(), lr=0.05))

    def build_training_data_loader(self):
        return pytorch.DataLoader(data(), batch_size=BATCH_SIZE, shuffle=True)

    def build_validation_data_loader(self):
        return pytorch.DataLoader(torch.utils.data.Subset(data(), range(64)), batch_size=BATCH_SIZE)

    def train_batch(self, batch, epoch_idx, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.m(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch, batch_idx):
        x, y = batch
        return {"validation_loss": torch.nn.functional.cross_entropy(self.m(x), y)}


def trainer() -> float:
    import contextlib
    import io

    with tempfile.TemporaryDirectory() as d:
        with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": d}) as ctx:
            t = Trial(ctx)
            tr = pytorch.Trainer(t, ctx)
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                tr.fit(max_length=pytorch.Batch(BATCHES))
            return BATCHES / (time.perf_counter() - t0)


def main() -> None:
    base = plain()
    ours = trainer()
    print(f"trainer_vs_plain: plain loop {base:.0f} batches/s, pytorch.Trainer {ours:.0f} batches/s "
          f"(includes final validation+checkpoint), ratio {ours / base:.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Detached mode: report a training script that runs anywhere (a laptop, a Slurm job, a
notebook) to the master as an unmanaged experiment, then resume it where it stopped.

    DET_MASTER=http://127.0.0.1:8080 python3 train.py     # detached: an unmanaged experiment
    det experiment create experiment.yaml .                # the same script, run by the cluster

Run it twice: the external ids name the same experiment and trial, so the second run starts
from the first one's latest checkpoint. Detached, `det experiment list`, `det trial logs` and
`det checkpoint download` see it like any experiment; on the cluster the config below is ignored
and experiment.yaml applies.
"""

import random

from determined.experimental import core_v2

STEPS = 100


def main() -> None:
    core_v2.init(
        config=core_v2.Config(
            name="detached-example",
            hparams={"lr": 0.01},
            # Where checkpoints go (default: ~/.local/share/determined/checkpoints).
            checkpoint_storage="/tmp/determined-detached-checkpoints",
            external_experiment_id="detached-example",
            external_trial_id="detached-example",
        ),
    )
    start = 0
    if core_v2.info.latest_checkpoint is not None:
        with core_v2.checkpoint.restore_path(core_v2.info.latest_checkpoint) as path:
            start = int((path / "step").read_text()) + 1
        print(f"resuming at step {start}")
    print("web UI:", core_v2.url_reverse_webui_exp_view())

    loss = 1.0
    for step in range(start, start + STEPS):
        loss *= 0.97 + 0.02 * random.random()
        core_v2.train.report_training_metrics(steps_completed=step, metrics={"loss": loss})
        if (step + 1) % 20 == 0:
            core_v2.train.report_validation_metrics(steps_completed=step, metrics={"loss": loss})
            core_v2.train.report_progress((step + 1 - start) / STEPS)
            with core_v2.checkpoint.store_path({"steps_completed": step}) as (path, storage_id):
                (path / "step").write_text(str(step))

    core_v2.close()


if __name__ == "__main__":
    main()

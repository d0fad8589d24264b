"""``python -m determined.exec.harness module:Class``: run a legacy Trial class.

The class is loaded from the working directory (the unpacked context directory). PyTorchTrial
classes run through ``determined.pytorch``'s Trainer; anything else exits non-zero.
"""

import argparse
import importlib
import logging
import os
import sys
from typing import Any, List, Optional

import determined as det

logger = logging.getLogger("determined.exec.harness")

EXIT_USAGE = 2
EXIT_FAILURE = 1


def load_trial_class(entrypoint: str) -> Any:
    if ":" not in entrypoint:
        raise ValueError(f"entrypoint {entrypoint!r} is not of the form module:Class")
    module_name, class_name = entrypoint.split(":", 1)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    module = importlib.import_module(module_name)
    try:
        return getattr(module, class_name)
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no attribute {class_name!r}") from None


def _run_pytorch_trial(pytorch: Any, trial_class: Any, info: Optional[det.ClusterInfo]) -> None:
    # determined.pytorch may provide its own runner for legacy trials; prefer it.
    runner = getattr(pytorch, "_run_pytorch_trial", None)
    if callable(runner):
        runner(trial_class, info)
        return
    hparams = info.trial.hparams if info and info.trial else None
    exp_conf = info.trial._config if info and info.trial else None
    with pytorch.init(hparams=hparams, exp_conf=exp_conf) as train_context:
        trial = trial_class(train_context)
        trainer = pytorch.Trainer(trial, train_context)
        trainer.fit()


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m determined.exec.harness", description="Run a legacy Trial class."
    )
    parser.add_argument("entrypoint", help="module:Class, relative to the working directory")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: [%(name)s] %(message)s")

    try:
        trial_class = load_trial_class(args.entrypoint)
    except (ImportError, ValueError) as e:
        print(f"ERROR: cannot load trial class {args.entrypoint!r}: {e}", file=sys.stderr)
        return EXIT_FAILURE

    try:
        from determined import pytorch  # type: ignore[attr-defined]
    except ImportError as e:
        print(
            f"ERROR: {args.entrypoint} is a legacy Trial class; running legacy Trial classes needs "
            f"determined.pytorch (PyTorchTrial), which is not available here ({e}). Use a Core API "
            "script as the entrypoint instead, e.g. 'python3 train.py'.",
            file=sys.stderr,
        )
        return EXIT_FAILURE

    pytorch_trial = getattr(pytorch, "PyTorchTrial", None)
    if not (isinstance(trial_class, type) and pytorch_trial is not None and issubclass(trial_class, pytorch_trial)):
        print(
            f"ERROR: {args.entrypoint} is not a determined.pytorch.PyTorchTrial subclass; only "
            "PyTorchTrial legacy Trial classes are supported.",
            file=sys.stderr,
        )
        return EXIT_FAILURE

    _run_pytorch_trial(pytorch, trial_class, det.get_cluster_info())
    return 0


if __name__ == "__main__":
    sys.exit(main())

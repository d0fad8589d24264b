"""``python -m determined.exec.harness module:Class``: run a legacy Trial class.

The class is loaded from the working directory (the unpacked context directory). PyTorchTrial
classes run through ``determined.pytorch``'s Trainer; anything else exits non-zero.
"""

import argparse
import importlib
import logging
import os
import sys
import re
from typing import Any, Dict, List, Optional

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


def _run_pytorch_trial(
    pytorch: Any, trial_class: Any, info: Optional[det.ClusterInfo], test_mode: bool = False,
    exp_conf: Optional[Dict[str, Any]] = None,
) -> None:
    # determined.pytorch may provide its own runner for legacy trials; prefer it.
    runner = getattr(pytorch, "_run_pytorch_trial", None)
    if callable(runner):
        if test_mode or exp_conf is not None:
            hparams = pytorch._trainer._hparam_defaults((exp_conf or {}).get("hyperparameters") or {})
            runner(trial_class, info, test_mode=test_mode, exp_conf=exp_conf, hparams=hparams)
        else:
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
    parser.add_argument("entrypoint", nargs="?", help="module:Class, relative to the working directory "
                        "(default: the trial class named by the config's entrypoint)")
    parser.add_argument("--test-mode", action="store_true",
                        help="train and validate one batch and round-trip a checkpoint, without a master")
    parser.add_argument("--config", help="experiment config (YAML/JSON) for local runs: hyperparameters, "
                        "optimizations, data, checkpoint_storage")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: [%(name)s] %(message)s")

    exp_conf: Optional[Dict[str, Any]] = None
    if args.config:
        try:
            exp_conf = _load_config(args.config)
        except (OSError, ValueError) as e:
            print(f"ERROR: cannot read config {args.config!r}: {e}", file=sys.stderr)
            return EXIT_USAGE
    if not args.entrypoint:
        args.entrypoint = _trial_from_entrypoint((exp_conf or {}).get("entrypoint"))
        if not args.entrypoint:
            print("ERROR: no module:Class given and the config's entrypoint names no trial class",
                  file=sys.stderr)
            return EXIT_USAGE
    if args.test_mode:
        print("Note: running a test of the model definition: training and validating one batch, "
              "then saving and restoring a checkpoint.", flush=True)

    try:
        trial_class = load_trial_class(args.entrypoint)
    except (ImportError, ValueError) as e:
        print(f"ERROR: cannot load trial class {args.entrypoint!r}: {e}", file=sys.stderr)
        return EXIT_FAILURE

    try:
        pytorch = importlib.import_module("determined.pytorch")
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

    if args.test_mode or exp_conf is not None:
        _run_pytorch_trial(pytorch, trial_class, None if args.test_mode else det.get_cluster_info(),
                           test_mode=args.test_mode, exp_conf=exp_conf)
    else:
        _run_pytorch_trial(pytorch, trial_class, det.get_cluster_info())
    if args.test_mode:
        print("Model definition test succeeded! Congratulations, your model definition has passed "
              "all tests.", flush=True)
    return 0


_TRIAL_RE = re.compile(r"^[a-zA-Z0-9_.]+:[a-zA-Z0-9_]+$")


def _trial_from_entrypoint(entrypoint: Any) -> Optional[str]:
    """``model_def:Trial`` or ``python3 -m determined.launch.X ... --trial model_def:Trial``."""
    if isinstance(entrypoint, list):
        parts = [str(p) for p in entrypoint]
    elif isinstance(entrypoint, str):
        parts = entrypoint.split()
    else:
        return None
    if len(parts) == 1 and _TRIAL_RE.match(parts[0]):
        return parts[0]
    if "--trial" in parts:
        i = parts.index("--trial")
        if i + 1 < len(parts) and _TRIAL_RE.match(parts[i + 1]):
            return parts[i + 1]
    return None


def _load_config(path: str) -> Dict[str, Any]:
    with open(path) as f:
        text = f.read()
    try:
        import yaml  # Debian's python3-yaml

        conf = yaml.safe_load(text)
    except ImportError:
        import json

        conf = json.loads(text)
    if not isinstance(conf, dict):
        raise ValueError("the config is not a mapping")
    return conf


if __name__ == "__main__":
    sys.exit(main())

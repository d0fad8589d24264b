"""load_trial_from_checkpoint_path: rebuild a PyTorchTrial from a checkpoint directory."""

import importlib
import json
import pathlib
import sys
import warnings
from typing import Any, Dict, Optional, Type

import torch

from determined import core
from determined.pytorch._trainer import LOAD_DATA_FILE, STATE_FILE, _load_state
from determined.pytorch._trial import PyTorchTrial
from determined.pytorch._trial_context import PyTorchTrialContext


class CheckpointLoadContext(PyTorchTrialContext):
    """A PyTorchTrialContext for building a trial outside training (for instance to load a
    checkpoint into it): nothing is reported to a master and no checkpoint is stored. Use it
    when the trial's constructor takes arguments beyond the context::

        context = pytorch.CheckpointLoadContext(hparams=...)
        trial = MyTrial(context, extra_arg)
    """

    def __init__(self, hparams: Optional[Dict] = None, exp_conf: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(
            core._context._dummy_init(distributed=None, checkpoint_storage=None,
                                      preempt_mode=core.PreemptMode.WorkersAskChief),
            trial_seed=0,
            hparams=hparams,
            slots_per_trial=1,
            num_gpus=1 if torch.cuda.is_available() else 0,
            exp_conf=exp_conf,
            aggregation_frequency=1,
            steps_completed=0,
            managed_training=False,
            debug_enabled=False,
        )


def _import_trial(spec: str, code_dir: pathlib.Path) -> Type[PyTorchTrial]:
    module_name, _, class_name = spec.partition(":")
    if code_dir.is_dir() and str(code_dir) not in sys.path:
        sys.path.insert(0, str(code_dir))
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in class_name.split("."):
        obj = getattr(obj, part)
    return obj


def load_trial_from_checkpoint_path(
    path: str,
    trial_class: Optional[Type[PyTorchTrial]] = None,
    trial_kwargs: Optional[Dict[str, Any]] = None,
    torch_load_kwargs: Optional[Dict[str, Any]] = None,
    **kwargs: Any,
) -> PyTorchTrial:
    """Load a checkpoint written by a PyTorchTrial; returns the restored trial instance."""
    ckpt = pathlib.Path(path)
    if kwargs:
        if torch_load_kwargs:
            raise ValueError("load_trial_from_checkpoint_path(): pass torch.load arguments either as "
                             "torch_load_kwargs or as **kwargs (deprecated), not both")
        warnings.warn("passing torch.load arguments as **kwargs to load_trial_from_checkpoint_path() is "
                      "deprecated; pass torch_load_kwargs={...} instead", FutureWarning, stacklevel=2)
    load_kwargs = dict(kwargs)
    load_kwargs.update(torch_load_kwargs or {})
    load_kwargs.setdefault("map_location", "cpu")
    load_data: Dict[str, Any] = {}
    if (ckpt / LOAD_DATA_FILE).exists():
        load_data = json.loads((ckpt / LOAD_DATA_FILE).read_text())
    if trial_class is None:
        spec = load_data.get("trial_cls_spec")
        if not spec:
            entry = (load_data.get("experiment_config") or {}).get("entrypoint")
            if isinstance(entry, str) and ":" in entry:
                spec = entry.split()[-1]
        if not spec:
            raise ValueError(f"{ckpt} does not say which trial class wrote it; pass trial_class=")
        trial_class = _import_trial(spec, ckpt / "code")
    core_context = core._context._dummy_init(
        distributed=None, checkpoint_storage=str(ckpt.parent), preempt_mode=core.PreemptMode.WorkersAskChief
    )
    context = PyTorchTrialContext(
        core_context,
        trial_seed=load_data.get("trial_seed", 0),
        hparams=load_data.get("hparams") or {},
        slots_per_trial=1,
        num_gpus=0,
        exp_conf=load_data.get("experiment_config") or {},
        aggregation_frequency=1,
        steps_completed=0,
        managed_training=False,
        debug_enabled=False,
    )
    trial = trial_class(context, **(trial_kwargs or {}))
    state = torch.load(str(ckpt / STATE_FILE), **load_kwargs)
    _load_state(context, state, strict=True)
    return trial

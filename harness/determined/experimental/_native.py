"""test_one_batch: train a trial class for one batch in this process, to check it before
submitting it to a cluster."""

import logging
from typing import Any, Dict, Optional, Type

from determined._trial_context import _representative_hparam

logger = logging.getLogger("determined")


def test_one_batch(trial_class: Type[Any], config: Optional[Dict[str, Any]] = None) -> Any:
    """Builds ``trial_class`` off-cluster and runs the ``Trainer`` for one batch in test mode
    (one training batch, one validation pass, no checkpoint kept), as Determined's
    ``test_one_batch`` does for ``PyTorchTrial`` classes.

    ``config`` is an experiment config (or None); its hyperparameters take their const value,
    minval or first category, and ``scheduling_unit`` is set to 1. Only ``PyTorchTrial``
    subclasses are supported: the other legacy trial classes (TensorFlow / Keras) are not part
    of this package, and passing one raises ``TypeError``.
    """
    config = {**(config or {}), "scheduling_unit": 1}
    logger.info("Running a minimal test experiment locally")
    try:
        from determined import pytorch
    except ImportError:  # torch is not installed
        pytorch = None  # type: ignore
    if pytorch is None or not (isinstance(trial_class, type) and
                               issubclass(trial_class, pytorch.PyTorchTrial)):
        raise TypeError(
            f"test_one_batch supports determined.pytorch.PyTorchTrial subclasses; got "
            f"{trial_class!r} (TensorFlow and Keras trials are not supported here)")
    hparams = _representative_hparam(config.get("hyperparameters") or {})
    with pytorch.init(hparams=hparams, exp_conf=config,
                      enable_tensorboard_logging=False) as context:
        trial = trial_class(context)
        trainer = pytorch.Trainer(trial, context)
        trainer.fit(max_length=pytorch.Batch(1), test_mode=True)
    logger.info("The test experiment passed.")
    logger.info("Note: to submit an experiment to the cluster, change local parameter to False")

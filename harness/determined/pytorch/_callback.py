"""PyTorchCallback: hooks run by the Trainer at fixed points of training."""

from typing import Any, Dict, List, Optional


class PyTorchCallback:
    """Base class of callbacks for PyTorchTrial. Every hook does nothing by default.

    Order: on_trial_startup, on_checkpoint_load_start (when restoring), on_training_start,
    then per epoch on_training_epoch_start / on_training_epoch_end, after each reporting period
    on_training_workload_end, around validations on_validation_start, on_validation_epoch_start,
    on_validation_epoch_end, on_validation_end, around checkpoints on_checkpoint_save_start,
    on_checkpoint_write_end (chief), on_checkpoint_end (chief, deprecated),
    on_checkpoint_upload_end, and finally on_trial_shutdown.
    """

    def on_trial_startup(self, first_batch_idx: int, checkpoint_uuid: Optional[str]) -> None:
        pass

    def on_trial_shutdown(self) -> None:
        pass

    def on_training_start(self) -> None:
        pass

    def on_training_epoch_start(self, epoch_idx: int) -> None:
        pass

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        pass

    def on_training_workload_end(self, avg_metrics: Dict[str, Any], batch_metrics: Dict[str, Any]) -> None:
        pass

    def on_validation_start(self) -> None:
        pass

    def on_validation_epoch_start(self) -> None:
        pass

    def on_validation_epoch_end(self, outputs: List[Any]) -> None:
        pass

    def on_validation_end(self, metrics: Dict[str, Any]) -> None:
        pass

    def on_checkpoint_load_start(self, checkpoint: Dict[str, Any]) -> None:
        pass

    def on_checkpoint_save_start(self, checkpoint: Dict[str, Any]) -> None:
        pass

    def on_checkpoint_write_end(self, checkpoint_dir: str) -> None:
        pass

    def on_checkpoint_end(self, checkpoint_dir: str) -> None:
        pass

    def on_checkpoint_upload_end(self, uuid: str) -> None:
        pass

    def state_dict(self) -> Dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        pass

"""ExperimentalCoreContext (``core_context.experimental``): linking a task to the
checkpoint or model version it uses, so metrics it reports show up under that checkpoint."""

import logging
from typing import Any, Dict

from determined.common import api

logger = logging.getLogger("determined.core")

# Determined's TrialSourceInfoType for a task that runs inference on a checkpoint.
_INFERENCE = "TRIAL_SOURCE_INFO_TYPE_INFERENCE"


class ExperimentalCoreContext:
    def __init__(self, session: api.Session, trial_id: int) -> None:
        self._session = session
        self._trial_id = trial_id

    def _report_source(self, source: Dict[str, Any]) -> None:
        source.update({"trialId": self._trial_id, "trialSourceInfoType": _INFERENCE})
        self._session.post("/api/v1/trial-source-info", json_body={"trialSourceInfo": source})

    def report_task_using_checkpoint(self, checkpoint: Any) -> None:
        """Associate the checkpoint (anything with a ``uuid``) with this task."""
        self._report_source({"checkpointUuid": checkpoint.uuid})

    def report_task_using_model_version(self, model_version: Any) -> None:
        """Associate a model version (with ``checkpoint``, ``model_id``, ``model_version``)
        with this task."""
        if model_version.checkpoint is None:
            raise ValueError("the model version has no checkpoint to associate with this task")
        self._report_source(
            {
                "checkpointUuid": model_version.checkpoint.uuid,
                "modelId": model_version.model_id,
                "modelVersion": model_version.model_version,
            }
        )


class DummyExperimentalCoreContext(ExperimentalCoreContext):
    """Off-cluster (or without a trial): nothing to associate with; calls are logged."""

    def __init__(self) -> None:
        pass

    def report_task_using_checkpoint(self, checkpoint: Any) -> None:
        logger.info("report_task_using_checkpoint(%s): no master to report to", getattr(checkpoint, "uuid", checkpoint))

    def report_task_using_model_version(self, model_version: Any) -> None:
        logger.info("report_task_using_model_version(): no master to report to")

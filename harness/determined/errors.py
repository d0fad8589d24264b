"""User-facing exceptions of the ``determined`` package (names as in Determined's
``determined.errors``)."""

from typing import Any, Dict, Type


class InvalidHP(Exception):
    """Raise from training code to tell the searcher the hyperparameters are invalid.

    Inside ``with core.init() as core_context:`` it is reported to the master as an early
    exit (``EXITED_REASON_INVALID_HP``) and the process exits with status 0.
    """

    def __init__(self, msg: str = "...") -> None:
        super().__init__(msg)


class EnterpriseOnlyError(Exception):
    """A feature Determined ships only in its Enterprise Edition."""


class InternalException(Exception):
    """An error in the platform itself rather than in user code or configuration."""

    def __init__(self, message: str) -> None:
        super().__init__(f"internal error: {message}")


class InvalidExperimentException(BaseException):
    """The experiment (its config or code) cannot run.

    A BaseException, as in Determined, so that user code's ``except Exception`` does not
    swallow it.
    """


class InvalidDataTypeException(InvalidExperimentException):
    """A value of the wrong type was given (e.g. a data loader of the wrong class)."""

    def __init__(self, typ: Type, message: str) -> None:
        super().__init__(f"invalid data type {typ}: {message}")


class InvalidConfigurationException(InvalidExperimentException):
    """The experiment config is not valid."""

    def __init__(self, config: Dict[str, Any], message: str) -> None:
        super().__init__(f"invalid experiment configuration: {message}")
        self.config = config


class InvalidModelException(InvalidExperimentException):
    """The model definition is not valid."""


class InvalidCheckpointException(Exception):
    """A checkpoint directory does not hold a loadable checkpoint."""

    def __init__(self, message: str = "the checkpoint directory is not a valid checkpoint") -> None:
        super().__init__(message)


class StopLoadingImplementation(Exception):
    """Raised while loading a trial class from a checkpoint to stop running user code early."""


class WorkerError(Exception):
    """A worker process of a distributed trial failed."""


class WorkerFinishedGracefully(Exception):
    """A worker process exited cleanly while its peers were still expected to run."""


class SkipWorkloadException(Exception):
    """A workload was skipped (for example a validation without data)."""


class CheckpointNotFound(Exception):
    """No checkpoint matches the request."""


class CheckpointStateException(Exception):
    """The checkpoint is in a state that does not allow the operation (e.g. deleted)."""


class NoDirectStorageAccess(Exception):
    """The checkpoint storage cannot be read directly from here."""


class ProxiedDownloadFailed(Exception):
    """Downloading a checkpoint through the master failed."""


class MultipleDownloadsFailed(Exception):
    """Every way of downloading a checkpoint failed."""

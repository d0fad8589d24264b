"""User-facing exceptions of the ``determined`` package."""


class InvalidHP(Exception):
    """Raise from training code to tell the searcher the hyperparameters are invalid.

    Inside ``with core.init() as core_context:`` it is reported to the master as an early
    exit (``EXITED_REASON_INVALID_HP``) and the process exits with status 0.
    """

    def __init__(self, msg: str = "") -> None:
        super().__init__(msg)

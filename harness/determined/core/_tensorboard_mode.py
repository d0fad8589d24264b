import enum


class TensorboardMode(enum.Enum):
    """How TensorBoard artifacts are handled (AUTO: written/uploaded by the chief; MANUAL: by you)."""

    AUTO = "AUTO"
    MANUAL = "MANUAL"

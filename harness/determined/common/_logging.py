"""set_logger: configure the root logger the way Determined's tools do."""

import logging
import sys


def set_logger(debug_enabled: bool) -> None:
    """Send every record to stdout in ``det.LOG_FORMAT``, at DEBUG or INFO level."""
    import determined  # late: determined imports this package

    level = logging.DEBUG if debug_enabled else logging.INFO
    root = logging.getLogger()
    root.setLevel(level)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stdout)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(determined.LOG_FORMAT))
    root.addHandler(handler)

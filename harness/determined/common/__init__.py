"""Pieces shared by the harness, the core API and tools: HTTP session, storage, helpers."""

from determined.common import util
from determined.common import api, check, constants, storage
from determined.common._logging import set_logger

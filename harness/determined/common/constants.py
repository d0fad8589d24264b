"""Constants user code and tools share with the master (names as in Determined's
``determined.common.constants``)."""

# Largest HTTP request the master accepts, and the context directory size that fits in it
# once base64-encoded (api/README.md: 95 MiB of decoded content).
MAX_HTTP_REQUEST_SIZE = 128 * 1024 * 1024
MAX_CONTEXT_SIZE = 99614720

# Largest metrics payload of one report.
MAX_METRICS_SIZE = 100 * (1 << 20)

DEFAULT_DETERMINED_USER = "determined"
DEFAULT_DETERMINED_PASSWORD = ""
DEFAULT_CHECKPOINT_PATH = "checkpoints"
SHARED_FS_CONTAINER_PATH = "/determined_shared_fs"

# Paths left out of an uploaded context directory unless a .detignore says otherwise.
DEFAULT_DETIGNORE = [
    "__pycache__/",
    "*.py[co]",
    "*$py.class",
    ".git/",
    ".vscode/",
    ".idea/",
    ".mypy_cache/",
    "/shared_fs",
]

"""Importing a backend's client library, with an error that names the package to install."""

import importlib
from types import ModuleType


class MissingStorageDependency(ImportError):
    """A checkpoint storage backend's client library is not installed."""


def require(module: str, package: str, storage_type: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingStorageDependency(
            f"checkpoint storage type {storage_type!r} needs the Python package {package!r} "
            f"(import {module} failed: {e}); install it (Debian: python3-{package}, "
            f"or pip install {package})"
        ) from e

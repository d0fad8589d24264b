"""Helpers of the ``determined`` package that user code reaches as ``det.util`` (names as in
Determined's ``determined.util``). Standard library only: numpy and torch values are
recognised by duck typing (``.item()``, ``.ndim``, ``.dtype``)."""

import copy
import errno
import inspect
import json
import logging
import math
import numbers
import os
import shutil
import stat
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

from determined import errors
from determined.common.api import json_compatible

logger = logging.getLogger("determined.util")

_MASK = "********"


def merge_dicts(base_dict: Dict[Any, Any], source_dict: Dict[Any, Any]) -> Dict[Any, Any]:
    """Return a new dict: ``base_dict`` with ``source_dict`` merged in, nested dicts merged
    key by key, other values replaced. Neither input is changed."""
    merged = copy.deepcopy(base_dict)
    for key, value in source_dict.items():
        if key in base_dict and isinstance(value, dict) and isinstance(base_dict[key], dict):
            merged[key] = merge_dicts(base_dict[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def json_encode(obj: Any, indent: Optional[str] = None, sort_keys: bool = False) -> str:
    """``json.dumps`` that also takes numpy/torch scalars, tuples, bytes (as UTF-8) and
    non-finite floats (as "NaN", "Infinity", "-Infinity")."""

    def decode_bytes(o: Any) -> Any:
        if isinstance(o, bytes):
            return o.decode("utf8")
        if isinstance(o, dict):
            return {k: decode_bytes(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [decode_bytes(v) for v in o]
        return o

    return json.dumps(
        json_compatible(decode_bytes(obj)), indent=indent, sort_keys=sort_keys, allow_nan=False
    )


def is_overridden(full_method: Any, parent_class: Any) -> bool:
    """True when ``full_method`` (a bound or unbound method) is defined by a class other than
    ``parent_class``; a non-callable (a user variable shadowing the name) counts as not."""
    if not callable(full_method):
        return False
    return bool(full_method.__qualname__.partition(".")[0] != parent_class.__name__)


def has_param(fn: Callable[..., Any], name: str, pos: Optional[int] = None) -> bool:
    """True when ``fn`` has a parameter ``name``, or (given ``pos``) at least ``pos + 1``
    positional parameters."""
    args = inspect.getfullargspec(fn).args
    if name in args:
        return True
    return pos is not None and pos < len(args)


def get_member_func(obj: Any, func_name: str) -> Any:
    """``obj.func_name`` when it is callable, else None."""
    member = getattr(obj, func_name, None)
    return member if callable(member) else None


def filter_duplicates(
    in_list: List[Any], sorter: Callable[[List[Any]], List[Any]] = sorted
) -> Set[Any]:
    """The items that occur more than once in ``in_list``."""
    seen: List[Any] = []
    dups = set()
    previous: Any = object()
    for item in sorter(in_list):
        if seen and item == previous:
            dups.add(item)
        seen.append(item)
        previous = item
    return dups


def humanize_float(n: float) -> float:
    """Round to four significant digits, never rounding the integer part."""
    if n == 0 or not math.isfinite(n):
        return n
    digits = int(math.ceil(math.log10(abs(n))))
    return round(n, max(digits, 4) - digits)


def is_numerical_scalar(n: Any) -> bool:
    """True for Python/numpy numbers and 0-dimensional numeric arrays (not for bools' arrays
    of other shapes)."""
    if isinstance(n, numbers.Number):
        return True
    if getattr(n, "ndim", None) == 0:
        kind = getattr(getattr(n, "dtype", None), "kind", None)
        return kind in ("b", "i", "u", "f", "c")
    return False


def calculate_batch_sizes(
    hparams: Dict[str, Any], slots_per_trial: int, trialname: str
) -> Tuple[int, int]:
    """Split the ``global_batch_size`` hyperparameter over the slots: return
    (per-slot batch size, effective global batch size)."""
    slots_per_trial = max(slots_per_trial, 1)
    if "global_batch_size" not in hparams:
        raise errors.InvalidExperimentException(
            "the hyperparameter global_batch_size (an integer) is required for "
            f"{trialname}-based training"
        )
    global_batch_size = hparams["global_batch_size"]
    if isinstance(global_batch_size, bool) or not isinstance(global_batch_size, int):
        raise errors.InvalidExperimentException(
            "the hyperparameter global_batch_size must be an integer, not "
            f"{type(global_batch_size).__name__} ({global_batch_size!r})"
        )
    if global_batch_size < slots_per_trial:
        raise errors.InvalidExperimentException(
            f"the hyperparameter global_batch_size ({global_batch_size}) must be at least "
            f"slots_per_trial ({slots_per_trial})"
        )
    per_slot = global_batch_size // slots_per_trial
    effective = per_slot * slots_per_trial
    if effective != global_batch_size:
        logger.warning(
            "global_batch_size changed from %d to %d to divide equally across %d slots",
            global_batch_size,
            effective,
            slots_per_trial,
        )
    return per_slot, effective


def rmtree_nfs_safe(
    path: Union[str, os.PathLike],
    ignore_errors: bool = False,
    onerror: Optional[Callable[[Any, Any, Any], Any]] = None,
) -> None:
    """``shutil.rmtree`` retried a few times on ENOTEMPTY, which NFS reports spuriously."""
    attempts = 5
    for attempt in range(1, attempts + 1):
        try:
            shutil.rmtree(path, ignore_errors=ignore_errors, onerror=onerror)
            return
        except OSError as e:
            if e.errno != errno.ENOTEMPTY or attempt == attempts:
                raise
            logger.debug("rmtree(%s) failed (%s); retrying", path, e)
            time.sleep(2**attempt / 100)


def force_create_symlink(src: str, dst: str) -> None:
    """Make ``dst`` a symlink to the directory ``src`` (created if missing), replacing
    whatever ``dst`` was."""
    os.makedirs(src, exist_ok=True)
    try:
        os.symlink(src, dst, target_is_directory=True)
        return
    except FileExistsError:
        pass
    try:
        if os.path.islink(dst) or os.path.isfile(dst):
            os.unlink(dst)
        else:
            rmtree_nfs_safe(dst)
        try:
            os.symlink(src, dst, target_is_directory=True)
            os.chmod(dst, os.stat(dst).st_mode | stat.S_IWOTH)
        except FileExistsError:  # another worker won the race
            pass
    except PermissionError as err:
        logger.warning("%s trying to remove %s", err, dst)


def validate_batch_metrics(batch_metrics: List[Dict[str, Any]]) -> None:
    """Every batch must report the same metric names."""
    if not batch_metrics:
        return
    expected = set(batch_metrics[0].keys())
    for idx, metrics in enumerate(batch_metrics):
        if set(metrics.keys()) != expected:
            raise ValueError(
                f"inconsistent training metrics at batch index {idx}: "
                f"{sorted(metrics.keys())} != {sorted(expected)}"
            )


def _mean(values: List[Any]) -> Optional[float]:
    present = [v for v in values if v is not None]
    try:
        scalars = [float(json_compatible(v)) for v in present]
    except (TypeError, ValueError):
        return None  # non-scalars cannot be averaged; the name is kept with None
    if not scalars:
        return None
    return sum(scalars) / len(scalars)


def make_metrics(num_inputs: Optional[int], batch_metrics: List[Dict[str, Any]]) -> Dict[str, Any]:
    """``{"batch_metrics", "avg_metrics"[, "num_inputs"]}``: the per-batch metrics and their
    means (None for a metric whose values are not numbers)."""
    validate_batch_metrics(batch_metrics)
    names: List[str] = []
    for metrics in batch_metrics:
        names.extend(k for k in metrics if k not in names)
    avg = {name: _mean([m.get(name) for m in batch_metrics]) for name in names}
    out: Dict[str, Any] = {"batch_metrics": batch_metrics, "avg_metrics": avg}
    if num_inputs is not None:
        out["num_inputs"] = num_inputs
    return out


def mask_checkpoint_storage(d: Dict) -> Dict:
    """A copy of a checkpoint_storage config with its access and secret keys masked."""
    masked = copy.deepcopy(d)
    for key in ("access_key", "secret_key"):
        if key in masked:
            masked[key] = _MASK
    return masked


def mask_config_dict(d: Dict) -> Dict:
    """A copy of an experiment config with storage keys, the registry password and data
    secrets masked."""
    masked = copy.deepcopy(d)
    storage_config = masked.get("checkpoint_storage")
    if isinstance(storage_config, dict):
        masked["checkpoint_storage"] = mask_checkpoint_storage(storage_config)
    registry = (masked.get("environment") or {}).get("registry_auth")
    if isinstance(registry, dict) and registry.get("password") is not None:
        registry["password"] = _MASK
    secrets = (masked.get("data") or {}).get("secrets") if isinstance(masked.get("data"), dict) else None
    if isinstance(secrets, dict):
        for key in secrets:
            secrets[key] = _MASK
    return masked

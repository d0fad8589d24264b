"""core_v2.init / close and the configs of a detached run."""

import atexit
import dataclasses
import json
import uuid
import warnings
from typing import Any, Dict, List, Optional, Union, cast

import determined as det
from determined import core
from determined.common import storage
from determined.experimental import core_v2
from determined.experimental.core_v2 import _client as client_mod
from determined.experimental.core_v2._core_context_v2 import _make_v2_context, default_checkpoint_storage
from determined.experimental.core_v2._unmanaged import (
    _get_or_create_experiment_and_trial,
    _url_reverse_webui_exp_view,
)

_context: Optional[core.Context] = None
_client: Optional[client_mod._Client] = None
_atexit_registered = False


@dataclasses.dataclass
class Config:
    """The experiment a detached (unmanaged) run reports to. Ignored inside a managed trial,
    whose experiment config says all of it.

    ``external_experiment_id`` names the experiment across runs (a re-run, or several trials of
    one search, find the same experiment); ``external_trial_id`` (which needs the former) names
    the trial, so that a re-run resumes it from its latest checkpoint
    (``core_v2.info.latest_checkpoint``).
    """

    name: Optional[str] = None
    hparams: Optional[Dict[str, Any]] = None
    data: Optional[Dict] = None
    description: Optional[str] = None
    labels: Optional[List[str]] = None
    workspace: Optional[str] = None
    project: Optional[str] = None
    # A shortcut string (a path, s3://bucket/prefix, gs://...) or a checkpoint_storage dict.
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None
    # Default: {"name": "single", "metric": "unmanaged"}.
    searcher: Optional[Dict[str, Any]] = None
    external_experiment_id: Optional[str] = None
    external_trial_id: Optional[str] = None


@dataclasses.dataclass
class DefaultConfig(Config):
    """DEPRECATED: use ``Config``."""

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn(
            "'DefaultConfig' class have been deprecated and will be removed in a "
            "future version. Please use `Config` class instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(**kwargs)


@dataclasses.dataclass
class UnmanagedConfig(Config):
    """DEPRECATED: use ``Config``."""

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn(
            "'UnmanagedConfig' class have been deprecated and will be removed in a "
            "future version. Please use `Config` class instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(**kwargs)


def _set_globals() -> None:
    assert _context is not None
    core_v2.train = _context.train
    core_v2.checkpoint = _context.checkpoint
    core_v2.distributed = _context.distributed
    core_v2.preempt = _context.preempt
    core_v2.searcher = _context.searcher
    core_v2.info = _context.info


def _clear_globals() -> None:
    core_v2.train = None
    core_v2.checkpoint = None
    core_v2.distributed = None
    core_v2.preempt = None
    core_v2.searcher = None
    core_v2.info = None


def _is_managed_trial() -> bool:
    info = det.get_cluster_info()
    return info is not None and info.task_type == "TRIAL"


def _experiment_config(config: Config, checkpoint_storage: Union[str, Dict[str, Any]]) -> Dict[str, Any]:
    storage_config = (
        storage.config_from_string(checkpoint_storage) if isinstance(checkpoint_storage, str) else checkpoint_storage
    )
    return {
        "name": config.name or f"unmanaged-{uuid.uuid4().hex[:8]}",
        "data": config.data,
        "description": config.description,
        "labels": config.labels,
        "searcher": config.searcher or {"name": "single", "metric": "unmanaged"},
        "workspace": config.workspace,
        "project": config.project,
        "checkpoint_storage": storage_config,
    }


def _init_context(
    client: Optional[client_mod._Client],
    config: Config,
    distributed: Optional[core.DistributedContext] = None,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
    preempt_mode: core.PreemptMode = core.PreemptMode.WorkersAskChief,
    tensorboard_mode: core.TensorboardMode = core.TensorboardMode.AUTO,
) -> core.Context:
    if _is_managed_trial():
        return _make_v2_context(
            distributed=distributed,
            checkpoint_storage=checkpoint_storage,
            preempt_mode=preempt_mode,
            tensorboard_mode=tensorboard_mode,
        )
    assert client is not None
    checkpoint_storage = checkpoint_storage or config.checkpoint_storage or default_checkpoint_storage()
    exp_config = _experiment_config(config, checkpoint_storage)
    # JSON is YAML: the master reads it as the experiment's config text.
    unmanaged_info = _get_or_create_experiment_and_trial(
        client,
        config_text=json.dumps(exp_config, indent=2),
        experiment_id=config.external_experiment_id,
        trial_id=config.external_trial_id,
        hparams=config.hparams,
        distributed=distributed,
    )
    return _make_v2_context(
        distributed=distributed,
        checkpoint_storage=exp_config["checkpoint_storage"],
        preempt_mode=preempt_mode,
        tensorboard_mode=tensorboard_mode,
        unmanaged_info=unmanaged_info,
        client=client,
    )


def _client_for(client: Any) -> Optional[client_mod._Client]:
    if _is_managed_trial():
        return None  # the trial's own allocation token is used
    return client_mod.from_client(client) if client is not None else client_mod.make_client()


def init_context(
    *,
    config: Optional[Config] = None,
    defaults: Optional[DefaultConfig] = None,
    unmanaged: Optional[UnmanagedConfig] = None,
    client: Any = None,
    distributed: Optional[core.DistributedContext] = None,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
    preempt_mode: core.PreemptMode = core.PreemptMode.WorkersAskChief,
    tensorboard_mode: core.TensorboardMode = core.TensorboardMode.AUTO,
) -> core.Context:
    """Core V2 in the context-manager style: ``with core_v2.init_context(config=...) as ctx:``."""
    merged = _merge_config(config, defaults, unmanaged)
    return _init_context(
        client=_client_for(client),
        config=merged,
        distributed=distributed,
        checkpoint_storage=checkpoint_storage,
        preempt_mode=preempt_mode,
        tensorboard_mode=tensorboard_mode,
    )


def init(
    *,
    config: Optional[Config] = None,
    defaults: Optional[DefaultConfig] = None,
    unmanaged: Optional[UnmanagedConfig] = None,
    client: Any = None,
    distributed: Optional[core.DistributedContext] = None,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
    preempt_mode: core.PreemptMode = core.PreemptMode.WorkersAskChief,
    tensorboard_mode: core.TensorboardMode = core.TensorboardMode.AUTO,
) -> None:
    """Core V2 in the singleton style: sets ``core_v2.train``, ``.checkpoint``, ... .

    ``close()`` runs at exit when the script does not call it.
    """
    global _context, _client, _atexit_registered

    if _context is not None:
        _context.close()
        _context = None

    merged = _merge_config(config, defaults, unmanaged)
    _client = _client_for(client)
    _context = _init_context(
        client=_client,
        config=merged,
        distributed=distributed,
        checkpoint_storage=checkpoint_storage,
        preempt_mode=preempt_mode,
        tensorboard_mode=tensorboard_mode,
    )
    _context.start()
    _set_globals()

    if not _atexit_registered:
        atexit.register(close)
        _atexit_registered = True


def close() -> None:
    """Flushes the reports and, in detached mode, marks the trial COMPLETED (ERROR when the
    script is ending with an exception)."""
    global _context
    context, _context = _context, None
    _clear_globals()
    if context is not None:
        context.close()


def url_reverse_webui_exp_view() -> str:
    """The web UI address of the current experiment."""
    assert core_v2.info is not None and core_v2.info._trial_info is not None, "call core_v2.init() first"
    exp_id = core_v2.info._trial_info.experiment_id
    if _client is not None:
        return _url_reverse_webui_exp_view(_client, exp_id)
    return f"{core_v2.info.master_url}/det/experiments/{exp_id}"


def _merge_config(
    config: Optional[Config],
    defaults: Optional[DefaultConfig],
    unmanaged: Optional[UnmanagedConfig],
) -> Config:
    if defaults is not None or unmanaged is not None:
        _show_deprecated_msg()
    if config is not None:
        return config
    if defaults is None and det.get_cluster_info() is None:
        raise ValueError("either specify `defaults` or `config`, or run as a managed determined experiment")
    if unmanaged is not None and defaults is not None:
        defaults.project = defaults.project or unmanaged.project
        defaults.workspace = defaults.workspace or unmanaged.workspace
        defaults.external_experiment_id = defaults.external_experiment_id or unmanaged.external_experiment_id
        defaults.external_trial_id = defaults.external_trial_id or unmanaged.external_trial_id
    return cast(Config, defaults if defaults is not None else Config())


def _show_deprecated_msg() -> None:
    warnings.warn(
        "'defaults' and 'unmanaged' parameters have been deprecated and will be removed in a "
        "future version. Please use `config` instead.",
        FutureWarning,
        stacklevel=3,
    )
    if det.get_cluster_info() is not None:
        warnings.warn(
            "Running experiment in managed mode ignores all config passed through `config`, "
            "`defaults` and `unmanaged`",
            FutureWarning,
            stacklevel=3,
        )

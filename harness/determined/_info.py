"""ClusterInfo and TrialInfo, built from the ``DET_*`` environment the agent provides.

Determined writes these into ``/run/determined/info/*.json`` first; our agent runs trials as
plain processes, so we read the environment directly (see api/agent-protocol.md).
"""

import json
import os
import urllib.parse
from typing import Any, Dict, List, Mapping, Optional

_REQUIRED = ("DET_TASK_ID", "DET_ALLOCATION_ID", "DET_SESSION_TOKEN")


def canonicalize_master_url(url: str) -> str:
    """Give a master address an explicit scheme and port: ``host`` -> ``http://host:8080``."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    parsed = urllib.parse.urlparse(url)
    port = parsed.port
    if port is None:
        port = 443 if parsed.scheme == "https" else 8080
    host = parsed.hostname or "127.0.0.1"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{parsed.scheme}://{host}:{port}{parsed.path}"


def _json_env(env: Mapping[str, str], key: str, default: Any) -> Any:
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    try:
        return json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"environment variable {key} is not valid JSON: {e}") from None


def _int_env(env: Mapping[str, str], key: str, default: int) -> int:
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {key} is not an integer: {raw!r}") from None


def _slot_ids(raw: Optional[str]) -> List[int]:
    if not raw:
        return []
    raw = raw.strip()
    try:
        val = json.loads(raw)
        if isinstance(val, list):
            return [int(x) for x in val]
        return [int(val)]
    except (json.JSONDecodeError, ValueError, TypeError):
        return [int(x) for x in raw.strip("[]").split(",") if x.strip()]


class TrialInfo:
    """Information about the trial a training process belongs to."""

    def __init__(
        self,
        trial_id: int,
        experiment_id: int,
        trial_seed: int,
        hparams: Dict[str, Any],
        config: Dict[str, Any],
        steps_completed: int,
        trial_run_id: int,
        debug: bool,
        inter_node_network_interface: Optional[str],
    ) -> None:
        #: The Trial ID for the current task.
        self.trial_id = trial_id
        #: The Experiment ID for the current task.
        self.experiment_id = experiment_id
        #: The random seed for the current Trial.
        self.trial_seed = trial_seed
        #: The hyperparameter values selected for the current Trial.
        self.hparams = hparams
        self._config = config
        self._steps_completed = steps_completed
        self._trial_run_id = trial_run_id
        self._debug = debug
        self._inter_node_network_interface = inter_node_network_interface

    # Public spellings of the private attributes (the seed's constructor names).
    @property
    def config(self) -> Dict[str, Any]:
        return self._config

    @property
    def steps_completed(self) -> int:
        return self._steps_completed

    @property
    def trial_run_id(self) -> int:
        return self._trial_run_id

    @property
    def debug(self) -> bool:
        return self._debug

    @property
    def inter_node_network_interface(self) -> Optional[str]:
        return self._inter_node_network_interface

    @classmethod
    def _from_env(cls, env: Mapping[str, str]) -> "TrialInfo":
        config = _json_env(env, "DET_EXPERIMENT_CONFIG", {}) or {}
        return cls(
            trial_id=_int_env(env, "DET_TRIAL_ID", 0),
            experiment_id=_int_env(env, "DET_EXPERIMENT_ID", 0),
            trial_seed=_int_env(env, "DET_TRIAL_SEED", 0),
            hparams=_json_env(env, "DET_HPARAMS", {}) or {},
            config=config,
            steps_completed=_int_env(env, "DET_STEPS_COMPLETED", 0),
            trial_run_id=_int_env(env, "DET_TRIAL_RUN_ID", 0),
            debug=bool(config.get("debug", False)),
            inter_node_network_interface=env.get("DET_INTER_NODE_NETWORK_INTERFACE") or None,
        )

    def __repr__(self) -> str:
        return (
            f"TrialInfo(trial_id={self.trial_id}, experiment_id={self.experiment_id}, "
            f"trial_seed={self.trial_seed}, hparams={self.hparams!r}, "
            f"steps_completed={self._steps_completed}, trial_run_id={self._trial_run_id})"
        )


class RendezvousInfo:
    """Addresses and ranks of the containers (here: agent processes) of one allocation."""

    def __init__(self, container_addrs: List[str], container_rank: int, container_slot_counts: List[int]):
        self.container_addrs = container_addrs
        self.container_rank = container_rank
        self.container_slot_counts = container_slot_counts


def _rendezvous_from_env(env: Mapping[str, str]) -> Optional[RendezvousInfo]:
    """The allocation's nodes as the master placed them (DET_CONTAINER_ADDRS, _RANK, _SLOT_COUNTS)."""
    addrs = _json_env(env, "DET_CONTAINER_ADDRS", None)
    if not isinstance(addrs, list) or not addrs:
        return None
    counts = _json_env(env, "DET_CONTAINER_SLOT_COUNTS", None)
    if not isinstance(counts, list) or len(counts) != len(addrs):
        counts = [len(_slot_ids(env.get("DET_SLOT_IDS")))] * len(addrs)
    return RendezvousInfo(
        container_addrs=[str(a) for a in addrs],
        container_rank=int(env.get("DET_CONTAINER_RANK") or 0),
        container_slot_counts=[int(c) for c in counts],
    )


class ResourcesInfo:
    """The resources assigned to this process: ``gpu_uuids`` (empty on CPU slots)."""

    def __init__(self, gpu_uuids: List[str]) -> None:
        self._gpu_uuids = list(gpu_uuids)

    @property
    def gpu_uuids(self) -> List[str]:
        return list(self._gpu_uuids)

    def __repr__(self) -> str:
        return f"ResourcesInfo(gpu_uuids={self._gpu_uuids!r})"


class ClusterInfo:
    """Information about the task and the cluster it runs on.

    Use :func:`determined.get_cluster_info` to get one; it returns None off-cluster.
    """

    def __init__(
        self,
        master_url: str,
        cluster_id: str,
        agent_id: str,
        slot_ids: List[int],
        task_id: str,
        allocation_id: str,
        session_token: str,
        task_type: str,
        master_cert_name: Optional[str] = None,
        master_cert_file: Optional[str] = None,
        latest_checkpoint: Optional[str] = None,
        trial_info: Optional[TrialInfo] = None,
        rendezvous_info: Optional[RendezvousInfo] = None,
        resources_info: Optional[ResourcesInfo] = None,
        *,
        gpu_uuids: Optional[List[str]] = None,
        user: Optional[str] = None,
        user_token: Optional[str] = None,
        resources_id: Optional[str] = None,
    ) -> None:
        self.master_url = master_url
        self.cluster_id = cluster_id
        self.agent_id = agent_id
        self.slot_ids = slot_ids
        self.task_id = task_id
        self.allocation_id = allocation_id
        self.session_token = session_token
        self.task_type = task_type
        self.master_cert_name = master_cert_name
        self.master_cert_file = master_cert_file
        self._latest_checkpoint = latest_checkpoint
        self._trial_info = trial_info
        self._rendezvous_info = rendezvous_info or RendezvousInfo(
            container_addrs=["127.0.0.1"],
            container_rank=0,
            container_slot_counts=[len(slot_ids)],
        )
        if resources_info is None:
            resources_info = ResourcesInfo(gpu_uuids or [])
        self._resources_info = resources_info
        self.user = user
        self.user_token = user_token
        self.resources_id = resources_id

    @property
    def latest_checkpoint(self) -> Optional[str]:
        """The checkpoint (storage id) the trial should resume from, or None."""
        if self.task_type != "TRIAL":
            return None
        return self._latest_checkpoint

    @property
    def trial(self) -> Optional[TrialInfo]:
        """The TrialInfo of a trial task; None for other task types."""
        if self.task_type != "TRIAL":
            return None
        return self._trial_info

    @property
    def user_data(self) -> Dict[str, Any]:
        """The ``data`` field of the experiment config ({} if absent)."""
        if self._trial_info is None:
            return {}
        return self._trial_info._config.get("data") or {}

    @property
    def gpu_uuids(self) -> List[str]:
        """UUIDs of the GPUs assigned to this task (empty on CPU slots)."""
        return self._resources_info.gpu_uuids

    @property
    def container_addrs(self) -> List[str]:
        return list(self._rendezvous_info.container_addrs)

    @property
    def container_rank(self) -> int:
        return self._rendezvous_info.container_rank

    @property
    def container_slot_counts(self) -> List[int]:
        return list(self._rendezvous_info.container_slot_counts)

    @classmethod
    def _from_env(cls, env: Mapping[str, str]) -> Optional["ClusterInfo"]:
        if not all(env.get(k) for k in _REQUIRED):
            return None
        master = env.get("DET_MASTER")
        if not master:
            host = env.get("DET_MASTER_HOST") or env.get("DET_MASTER_ADDR")
            if not host:
                return None
            port = env.get("DET_MASTER_PORT") or "8080"
            scheme = "https" if env.get("DET_USE_TLS", "").lower() == "true" else "http"
            master = f"{scheme}://{host}:{port}"
        task_type = env.get("DET_TASK_TYPE") or "TRIAL"
        trial_info = TrialInfo._from_env(env) if task_type == "TRIAL" else None
        return cls(
            master_url=canonicalize_master_url(master),
            cluster_id=env.get("DET_CLUSTER_ID", ""),
            agent_id=env.get("DET_AGENT_ID", ""),
            slot_ids=_slot_ids(env.get("DET_SLOT_IDS")),
            task_id=env["DET_TASK_ID"],
            allocation_id=env["DET_ALLOCATION_ID"],
            session_token=env["DET_SESSION_TOKEN"],
            task_type=task_type,
            master_cert_name=env.get("DET_MASTER_CERT_NAME") or None,
            master_cert_file=env.get("DET_MASTER_CERT_FILE") or None,
            latest_checkpoint=env.get("DET_LATEST_CHECKPOINT") or None,
            trial_info=trial_info,
            gpu_uuids=_json_env(env, "DET_GPU_UUIDS", []) or [],
            user=env.get("DET_USER") or None,
            user_token=env.get("DET_USER_TOKEN") or None,
            resources_id=env.get("DET_RESOURCES_ID") or None,
            rendezvous_info=_rendezvous_from_env(env),
        )

    def __repr__(self) -> str:
        return (
            f"ClusterInfo(master_url={self.master_url!r}, task_id={self.task_id!r}, "
            f"allocation_id={self.allocation_id!r}, task_type={self.task_type!r}, "
            f"trial={self.trial!r})"
        )


_cache: Dict[tuple, Optional[ClusterInfo]] = {}


def get_cluster_info() -> Optional[ClusterInfo]:
    """Return the ClusterInfo of the running task, or None when not running on a cluster.

    Built from the ``DET_*`` environment variables; parsed once per distinct environment.
    """
    key = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("DET_")))
    if key not in _cache:
        _cache.clear()
        _cache[key] = ClusterInfo._from_env(os.environ)
    return _cache[key]

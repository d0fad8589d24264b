"""The REST calls that create and start an unmanaged experiment and trial.

As Determined: POST /api/v1/experiments with ``unmanaged: true`` (or PUT
/api/v1/experiments/by-external-id/{id} to find the same experiment again), POST /api/v1/trials
(or PUT /api/v1/trials with an external trial id), POST /api/v1/trials/{id}/start. With a
DistributedContext of several workers, the chief makes each call and broadcasts the answer.
"""

import json
import logging
import urllib.parse
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar, Union

import determined as det
from determined import core
from determined.experimental.core_v2._client import _Client

logger = logging.getLogger("determined.core")

T = TypeVar("T")


def _run_on_rank_0_and_broadcast(fn: Callable[[], T], distributed: Optional[core.DistributedContext]) -> T:
    if distributed is None or distributed.size == 1:
        return fn()
    result = fn() if distributed.rank == 0 else None
    return distributed.broadcast(result)  # type: ignore[no-any-return]


def _experiment_body(config_text: str) -> Dict[str, Any]:
    return {"config": config_text, "unmanaged": True, "activate": False}


def _create_unmanaged_experiment(client: _Client, config_text: str) -> int:
    resp = client._session.post("/api/v1/experiments", json_body=_experiment_body(config_text))
    return int(resp["experiment"]["id"])


def _put_unmanaged_experiment(client: _Client, config_text: str, external_experiment_id: str) -> int:
    path = "/api/v1/experiments/by-external-id/" + urllib.parse.quote(external_experiment_id, safe="")
    resp = client._session.put(path, json_body=_experiment_body(config_text))
    return int(resp["experiment"]["id"])


def _trial_body(exp_id: int, hparams: Optional[dict]) -> Dict[str, Any]:
    return {"experimentId": exp_id, "hparams": hparams or {}, "unmanaged": True}


def _create_unmanaged_trial(client: _Client, exp_id: int, hparams: Optional[dict]) -> Tuple[int, str]:
    resp = client._session.post("/api/v1/trials", json_body=_trial_body(exp_id, hparams))
    return int(resp["trial"]["id"]), str(resp["trial"]["taskId"])


def _put_unmanaged_trial(
    client: _Client, exp_id: int, external_trial_id: str, hparams: Optional[dict]
) -> Tuple[int, str]:
    body = {"createTrialRequest": _trial_body(exp_id, hparams), "externalTrialId": external_trial_id}
    resp = client._session.put("/api/v1/trials", json_body=body)
    return int(resp["trial"]["id"]), str(resp["trial"]["taskId"])


def _start_trial(client: _Client, trial_id: int, resume: bool) -> Dict[str, Any]:
    resp = client._session.post(
        f"/api/v1/trials/{trial_id}/start", json_body={"trialId": trial_id, "resume": resume}
    )
    return dict(resp or {})


def _get_cluster_id(client: _Client) -> str:
    return str((client._session.get("/api/v1/master") or {}).get("clusterId", ""))


def _url_reverse_webui_exp_view(client: _Client, exp_id: int) -> str:
    return f"{client._master}/det/experiments/{exp_id}"


def _build_unmanaged_trial_cluster_info(
    client: _Client,
    exp_id: int,
    trial_id: int,
    task_id: str,
    config: Dict[str, Any],
    hparams: Optional[dict] = None,
    resume: bool = True,
    distributed: Optional[core.DistributedContext] = None,
) -> det.ClusterInfo:
    cluster_id = _run_on_rank_0_and_broadcast(lambda: _get_cluster_id(client), distributed)
    started = _run_on_rank_0_and_broadcast(lambda: _start_trial(client, trial_id, resume), distributed)
    return det.ClusterInfo(
        master_url=client._master,
        cluster_id=cluster_id,
        agent_id="unmanaged",
        slot_ids=[],
        task_id=task_id,
        allocation_id=task_id,
        session_token=client._token,
        task_type="TRIAL",
        trial_info=det.TrialInfo(
            trial_id=trial_id,
            experiment_id=exp_id,
            trial_seed=0,
            hparams=hparams or {},
            config=config,
            steps_completed=int(started.get("stepsCompleted") or 0),
            trial_run_id=int(started["trialRunId"]),
            debug=False,
            inter_node_network_interface=None,
        ),
        latest_checkpoint=started.get("latestCheckpoint") or None,
        rendezvous_info=det.RendezvousInfo(["127.0.0.1"], 0, [0]),
    )


def _get_or_create_experiment_and_trial(
    client: _Client,
    config_text: str,
    experiment_id: Optional[Union[str, int]] = None,
    trial_id: Optional[Union[str, int]] = None,
    hparams: Optional[dict] = None,
    distributed: Optional[core.DistributedContext] = None,
) -> det.ClusterInfo:
    """Creates (or, by external ids, finds again) the experiment and trial and starts a run.

    As in Determined: no ids creates both; an external experiment id (a string) finds or
    creates that experiment and adds a trial, or finds or creates the trial too when an
    external trial id is given. Integer ids, and a trial id without an experiment id, are not
    supported. ``config_text`` is the experiment config as JSON (which is YAML too).
    """
    config = json.loads(config_text)
    if isinstance(experiment_id, int) or isinstance(trial_id, int):
        raise NotImplementedError("external experiment and trial ids must be strings")
    if experiment_id is None and trial_id is not None:
        raise NotImplementedError("external_trial_id needs an external_experiment_id as well")
    if experiment_id is not None and not isinstance(experiment_id, str):
        raise ValueError(f"experiment_id is neither int nor string: {type(experiment_id)}")
    if trial_id is not None and not isinstance(trial_id, str):
        raise ValueError(f"trial_id is neither int nor string: {type(trial_id)}")

    def create() -> Tuple[int, int, str]:
        if experiment_id is None:
            exp_id = _create_unmanaged_experiment(client, config_text)
        else:
            exp_id = _put_unmanaged_experiment(client, config_text, experiment_id)
        if trial_id is None:
            tid, task_id = _create_unmanaged_trial(client, exp_id, hparams)
        else:
            tid, task_id = _put_unmanaged_trial(client, exp_id, trial_id, hparams)
        return exp_id, tid, task_id

    exp_id, tid, task_id = _run_on_rank_0_and_broadcast(create, distributed)
    return _build_unmanaged_trial_cluster_info(
        client, exp_id, tid, task_id, config, hparams, distributed=distributed
    )

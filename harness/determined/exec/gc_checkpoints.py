"""The checkpoint GC task: delete checkpoint files, idempotently, with retries.

    python -m determined.exec.gc_checkpoints --storage-config JSON --delete UUID[,UUID...] \\
        [--globs GLOB[,GLOB...]] [--experiment-id N] [--delete-tensorboards CLUSTER_ID]
        [--attempts 5] [--dry-run]

``--storage-config`` is the experiment's ``checkpoint_storage`` as JSON (or a path to a JSON
file, or a shortcut string such as ``s3://bucket/prefix``). Without ``--globs`` every file of
each checkpoint is deleted (``**/*``); ``--globs ''`` deletes nothing. Deleting what is
already gone is fine, so the task can simply be run again after a failure.

It prints one JSON object on stdout:
``{"checkpoints": [{"uuid", "state", "resources", "deleted", "error"}]}`` where ``resources``
is what really remains in storage (relative path -> size; directories end with '/') after
the delete was verified, ``state`` is ``DELETED`` (nothing remains), ``PARTIALLY_DELETED``
(files were removed, some remain), ``UNCHANGED`` or ``FAILED``. With ``DET_MASTER`` set it
also PATCHes ``/api/v1/checkpoints`` with the remaining resources of every uuid that did
not fail (an empty map means DELETED). With ``--delete-tensorboards`` the experiment's
TensorBoard files (``<cluster id>/tensorboard/experiment/<id>/``) go too, reported as
``"tensorboards": {"storageId", "path", "error"}``. Exit status 0 when everything succeeded.
"""

import argparse
import json
import logging
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from determined.common import storage
from determined.common.storage import globs as _globs

logger = logging.getLogger("determined.exec.gc_checkpoints")


def parse_list(raw: Optional[str]) -> List[str]:
    if raw is None:
        return []
    return [x.strip() for x in raw.replace("\n", ",").split(",") if x.strip()]


def delete_with_retries(
    manager: storage.StorageManager,
    storage_id: str,
    globs: Sequence[str],
    *,
    attempts: int = 5,
    backoff: float = 0.5,
    max_backoff: float = 8.0,
    sleep: Callable[[float], None] = time.sleep,
) -> storage.Resources:
    """Delete and verify; retry with exponential backoff. Returns what remains."""
    last: Optional[BaseException] = None
    for attempt in range(max(1, attempts)):
        try:
            remaining = manager.delete(storage_id, globs)
            leftover = sorted(_globs.expand_matches(remaining, globs))
            if not leftover:
                return remaining
            last = RuntimeError(
                f"{len(leftover)} matching file(s) still present after delete: {leftover[:5]}"
            )
        except Exception as e:
            last = e
        if attempt + 1 < attempts:
            delay = min(backoff * (2 ** attempt), max_backoff)
            logger.warning(
                "deleting checkpoint %s (attempt %d/%d) failed: %s; retrying in %.1fs",
                storage_id, attempt + 1, attempts, last, delay,
            )
            sleep(delay)
    assert last is not None
    raise last


def gc_checkpoints(
    storage_config: Any,
    storage_ids: Sequence[str],
    globs: Sequence[str] = storage.ALL_FILES,
    *,
    attempts: int = 5,
    backoff: float = 0.5,
    dry_run: bool = False,
    manager: Optional[storage.StorageManager] = None,
    sleep: Callable[[float], None] = time.sleep,
) -> List[Dict[str, Any]]:
    """Delete ``globs`` of every checkpoint; one result dict per storage id (see module doc)."""
    manager = manager or storage.build(storage_config)
    results: List[Dict[str, Any]] = []
    for sid in storage_ids:
        entry: Dict[str, Any] = {"uuid": sid}
        try:
            before = manager.list_files(sid)
            if dry_run:
                doomed = sorted(_globs.expand_matches(before, globs))
                remaining = {k: v for k, v in before.items() if k not in doomed}
            else:
                remaining = delete_with_retries(
                    manager, sid, globs, attempts=attempts, backoff=backoff, sleep=sleep
                )
            deleted = sorted(set(before) - set(remaining))
            if not remaining:
                state = "DELETED"
            elif deleted:
                state = "PARTIALLY_DELETED"
            else:
                state = "UNCHANGED"
            entry.update(state=state, resources=remaining, deleted=deleted, error=None)
        except Exception as e:
            logger.error("could not delete checkpoint %s: %s", sid, e)
            try:
                left: Optional[storage.Resources] = manager.list_files(sid)
            except Exception:
                left = None
            entry.update(state="FAILED", resources=left, deleted=[], error=f"{type(e).__name__}: {e}")
        results.append(entry)
    return results


def delete_tensorboards(
    config: Dict[str, Any],
    cluster_id: str,
    experiment_id: int,
    *,
    attempts: int = 5,
    backoff: float = 0.5,
    dry_run: bool = False,
) -> Dict[str, Any]:
    """Delete an experiment's TensorBoard files: <cluster id>/tensorboard/experiment/<id>/ in
    checkpoint storage (where trials upload them)."""
    pattern = f"tensorboard/experiment/{int(experiment_id)}"
    entry: Dict[str, Any] = {"storageId": cluster_id, "path": pattern, "error": None}
    try:
        manager = storage.build(config)
        if dry_run:
            found = _globs.expand_matches(manager.list_files(cluster_id), [pattern])
            entry["deleted"] = sorted(found)
            return entry
        delete_with_retries(manager, cluster_id, [pattern], attempts=attempts, backoff=backoff)
    except Exception as e:
        logger.error("could not delete the TensorBoard files of experiment %s: %s", experiment_id, e)
        entry["error"] = f"{type(e).__name__}: {e}"
    return entry


def report_to_master(results: Sequence[Dict[str, Any]]) -> None:
    """PATCH the remaining resources of every checkpoint that did not fail."""
    from determined.common import api

    master = os.environ["DET_MASTER"]
    session = api.Session(master, allocation_token=os.environ.get("DET_SESSION_TOKEN"))
    body = [
        {"uuid": r["uuid"], "resources": {"resources": {k: str(v) for k, v in r["resources"].items()}}}
        for r in results
        if r["error"] is None
    ]
    if body:
        session.patch("/api/v1/checkpoints", json_body={"checkpoints": body})


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="determined.exec.gc_checkpoints", description=__doc__.split("\n")[0])
    parser.add_argument("--storage-config", required=True, help="checkpoint_storage as JSON, a JSON file, or a shortcut")
    parser.add_argument("--delete", required=True, help="comma-separated checkpoint uuids")
    parser.add_argument("--globs", default=None, help="comma-separated globs (default: all files)")
    parser.add_argument("--experiment-id", type=int, default=None)
    parser.add_argument("--attempts", type=int, default=5)
    parser.add_argument("--backoff", type=float, default=0.5)
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--no-report", action="store_true", help="do not PATCH the master")
    parser.add_argument("--delete-tensorboards", metavar="CLUSTER_ID", default=None,
                        help="also delete the experiment's TensorBoard files (needs --experiment-id)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")

    globs = list(storage.ALL_FILES) if args.globs is None else parse_list(args.globs)
    uuids = parse_list(args.delete)
    config = storage.config_from_arg(args.storage_config)
    results = gc_checkpoints(config, uuids, globs, attempts=args.attempts, backoff=args.backoff, dry_run=args.dry_run)
    tensorboards = None
    if args.delete_tensorboards:
        if args.experiment_id is None:
            parser.error("--delete-tensorboards needs --experiment-id")
        tensorboards = delete_tensorboards(config, args.delete_tensorboards, args.experiment_id,
                                           attempts=args.attempts, backoff=args.backoff, dry_run=args.dry_run)
    print(json.dumps({"experimentId": args.experiment_id, "checkpoints": results, "tensorboards": tensorboards},
                     sort_keys=True), flush=True)
    rc = 0 if all(r["error"] is None for r in results) else 1
    if tensorboards is not None and tensorboards["error"] is not None:
        rc = 1
    if os.environ.get("DET_MASTER") and not args.no_report and not args.dry_run:
        try:
            report_to_master(results)
        except Exception as e:
            logger.error("deleted the files but could not tell the master: %s", e)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())

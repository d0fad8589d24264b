"""Merging the files that several workers contribute to one sharded checkpoint."""

from typing import Dict, List, Sequence

from determined.common.storage.base import Resources, with_parent_dirs


class ShardConflictError(RuntimeError):
    """Two workers tried to write the same path of a sharded checkpoint."""


def merge_resources(per_rank: Sequence[Resources]) -> Resources:
    """The union of every rank's resources; a file offered by more than one rank (or a file
    on one rank that is a directory on another) is a conflict and raises ShardConflictError."""
    owners: Dict[str, List[int]] = {}
    dirs: Dict[str, List[int]] = {}
    for rank, res in enumerate(per_rank):
        for path in res or {}:
            (dirs if path.endswith("/") else owners).setdefault(path, []).append(rank)
    conflicts = {p: r for p, r in owners.items() if len(r) > 1}
    for path, ranks in owners.items():
        if path + "/" in dirs:
            conflicts[path] = sorted(set(ranks + dirs[path + "/"]))
    if conflicts:
        shown = ", ".join(
            f"{p!r} (ranks {', '.join(map(str, r))})" for p, r in sorted(conflicts.items())[:5]
        )
        more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
        raise ShardConflictError(
            f"sharded checkpoint conflict: {len(conflicts)} path(s) offered by more than one "
            f"worker: {shown}{more}; use a selector so each file is uploaded by one worker"
        )
    merged: Resources = {}
    for res in per_rank:
        merged.update(res or {})
    return with_parent_dirs(merged)

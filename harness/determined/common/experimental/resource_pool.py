"""Resource pools in the client SDK."""

import urllib.parse
from typing import Any, Dict, List, Optional

from determined.common import api
from determined.common.experimental import _util


class ResourcePool:
    """A resource pool of the cluster, and the workspaces bound to it."""

    def __init__(self, session: api.Session, name: str = "") -> None:
        self.name = name
        self._session = session

    @classmethod
    def _from_json(cls, rp: Dict[str, Any], session: api.Session) -> "ResourcePool":
        return cls(session, name=rp.get("name", ""))

    def __repr__(self) -> str:
        return f"ResourcePool(name={self.name})"

    def _path(self) -> str:
        return f"/api/v1/resource-pools/{urllib.parse.quote(self.name, safe='')}/workspace-bindings"

    def add_bindings(self, workspace_names: List[str]) -> None:
        self._session.post(self._path(), json_body={"resourcePoolName": self.name,
                                                    "workspaceNames": workspace_names})

    def remove_bindings(self, workspace_names: List[str]) -> None:
        self._session.delete(self._path(), json_body={"resourcePoolName": self.name,
                                                      "workspaceNames": workspace_names})

    def replace_bindings(self, workspace_names: List[str]) -> None:
        self._session.put(self._path(), json_body={"resourcePoolName": self.name,
                                                   "workspaceNames": workspace_names})

    def list_workspaces(self) -> List[Optional[str]]:
        from determined.common.experimental import workspace

        pages = _util.read_all(self._session, self._path(), "workspaceIds")
        return [workspace.Workspace(self._session, workspace_id=int(w)).name for w in pages]

"""Workspaces in the client SDK."""

from typing import Any, Dict, List, Optional

from determined.common import api
from determined.common.api import errors
from determined.common.experimental import _util, project, resource_pool


class Workspace:
    """A workspace, made from its id or its name (exactly one)."""

    def __init__(self, session: api.Session, workspace_id: Optional[int] = None,
                 workspace_name: Optional[str] = None) -> None:
        if (workspace_id is None) == (workspace_name is None):
            raise ValueError("Workspace must be constructed with either a name or id (not both).")
        self._session = session
        self.name = workspace_name
        if workspace_id is None:
            found = _by_name(session, workspace_name or "")
            self.id = int(found["id"])
        else:
            self.id = workspace_id
            try:  # the name is a convenience; a workspace made from an id needs none
                self.name = session.get(f"/api/v1/workspaces/{workspace_id}")["workspace"].get(
                    "name")
            except errors.APIException:
                self.name = None

    @classmethod
    def _from_json(cls, w: Dict[str, Any], session: api.Session) -> "Workspace":
        ws = cls.__new__(cls)
        ws._session = session
        ws._hydrate(w)
        return ws

    def _hydrate(self, w: Dict[str, Any]) -> None:
        self.id = int(w["id"])
        self.name = w.get("name")

    def reload(self) -> None:
        self._hydrate(self._session.get(f"/api/v1/workspaces/{self.id}")["workspace"])

    def __repr__(self) -> str:
        return f"Workspace(id={self.id}, name={self.name})"

    def list_pools(self) -> List[resource_pool.ResourcePool]:
        names = _util.read_all(self._session,
                               f"/api/v1/workspaces/{self.id}/available-resource-pools",
                               "resourcePools")
        return [resource_pool.ResourcePool(self._session, name=n) for n in names]

    def create_project(self, name: str, description: Optional[str] = None) -> project.Project:
        resp = self._session.post(f"/api/v1/workspaces/{self.id}/projects", json_body={
            "name": name, "workspaceId": self.id, "description": description})
        return project.Project._from_json(resp["project"], self._session)

    def delete_project(self, name: str) -> None:
        self._session.delete(f"/api/v1/projects/{self.get_project(name).id}")

    def get_project(self, project_name: str) -> project.Project:
        for p in self._projects(name=project_name):
            if p.get("name") == project_name:
                return project.Project._from_json(p, self._session)
        raise errors.NotFoundException("GET", f"/api/v1/workspaces/{self.id}/projects", 404,
                                       f"Project '{project_name}' not found in this workspace.")

    def list_projects(self) -> List[project.Project]:
        return [project.Project._from_json(p, self._session) for p in self._projects()]

    def _projects(self, name: Optional[str] = None) -> List[Dict[str, Any]]:
        return _util.read_all(self._session, f"/api/v1/workspaces/{self.id}/projects",
                              "projects", {"name": name})


def _by_name(session: api.Session, name: str) -> Dict[str, Any]:
    found = [w for w in _util.read_all(session, "/api/v1/workspaces", "workspaces",
                                       {"name": name}) if w.get("name") == name]
    if not found:
        raise errors.NotFoundException("GET", "/api/v1/workspaces", 404,
                                       f"Workspace {name} not found.")
    return found[0]

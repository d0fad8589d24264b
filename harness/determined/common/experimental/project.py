"""Projects in the client SDK."""

from typing import Any, Dict, List, Optional

from determined.common import api
from determined.common.experimental import _util


class Project:
    """A project of a workspace. Attributes as of the last :meth:`reload`."""

    def __init__(self, session: api.Session, project_id: int) -> None:
        self._session = session
        self.id = project_id
        self.archived: Optional[bool] = None
        self.description: Optional[str] = None
        self.n_active_experiments: Optional[int] = None
        self.n_experiments: Optional[int] = None
        self.name: Optional[str] = None
        self.notes: Optional[List[Dict[str, str]]] = None
        self.workspace_id: Optional[int] = None
        self.username: Optional[str] = None
        self.key: Optional[str] = None

    @classmethod
    def _from_json(cls, p: Dict[str, Any], session: api.Session) -> "Project":
        project = cls(session, project_id=int(p["id"]))
        project._hydrate(p)
        return project

    def _hydrate(self, p: Dict[str, Any]) -> None:
        self.archived = p.get("archived")
        self.description = p.get("description")
        self.n_active_experiments = p.get("numActiveExperiments")
        self.n_experiments = p.get("numExperiments")
        self.name = p.get("name")
        self.notes = list(p.get("notes") or [])
        self.workspace_id = p.get("workspaceId")
        self.username = p.get("username")
        self.key = p.get("key")

    def reload(self) -> None:
        self._hydrate(self._session.get(f"/api/v1/projects/{self.id}")["project"])

    def __repr__(self) -> str:
        return f"Project(id={self.id}, name={self.name})"

    def list_experiments(self) -> List[Any]:
        from determined.common.experimental import experiment

        found = _util.read_all(self._session, f"/api/v1/projects/{self.id}/experiments",
                               "experiments")
        return [experiment.Experiment._from_json(e, self._session) for e in found]

    def _patch(self, **fields: Any) -> Dict[str, Any]:
        resp = self._session.patch(f"/api/v1/projects/{self.id}", json_body=fields)
        return (resp or {}).get("project") or {}

    def set_description(self, description: str) -> None:
        self.description = self._patch(description=description).get("description", description)

    def set_key(self, key: str) -> None:
        self.key = self._patch(key=key).get("key", key)

    def set_name(self, name: str) -> None:
        self.name = self._patch(name=name).get("name", name)

    def archive(self) -> None:
        self._session.post(f"/api/v1/projects/{self.id}/archive")
        self.archived = True

    def unarchive(self) -> None:
        self._session.post(f"/api/v1/projects/{self.id}/unarchive")
        self.archived = False

    def _put_notes(self, notes: List[Dict[str, str]]) -> None:
        resp = self._session.put(f"/api/v1/projects/{self.id}/notes",
                                 json_body={"notes": notes, "projectId": self.id})
        self.notes = list((resp or {}).get("notes") or notes)

    def add_note(self, name: str, contents: str) -> None:
        notes = list(self._session.get(f"/api/v1/projects/{self.id}")["project"].get("notes")
                     or [])
        self._put_notes(notes + [{"name": name, "contents": contents}])

    def remove_note(self, name: str) -> None:
        notes = list(self._session.get(f"/api/v1/projects/{self.id}")["project"].get("notes")
                     or [])
        matching = [i for i, n in enumerate(notes) if n.get("name") == name]
        if not matching:
            raise ValueError(f"No note with name '{name}' found to remove.")
        if len(matching) > 1:
            raise ValueError(f"Multiple notes with name '{name}' found. Use the web UI to "
                             "perform this action.")
        notes.pop(matching[0])
        self._put_notes(notes)

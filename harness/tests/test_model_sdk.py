"""determined.common.experimental.model against a recording fake session: the requests it sends
and how it reads the answers (the e2e test runs it against a real master)."""

import urllib.parse
from typing import Any, Dict, List, Optional, Tuple

from determined.common.experimental import model as m

MODEL = {"id": 4, "name": "my model", "description": "", "metadata": {"a": 1}, "labels": ["x"],
         "creationTime": "2026-11-23T22:14:05.5Z", "lastUpdatedTime": "2026-11-23T22:14:06Z",
         "numVersions": 1, "username": "determined", "userId": 2, "workspaceId": 1,
         "archived": False, "notes": ""}
VERSION = {"id": 9, "version": 1, "model": MODEL, "checkpoint": {"uuid": "u1", "state": "STATE_COMPLETED"},
           "creationTime": "2026-11-23T22:14:07Z", "lastUpdatedTime": "2026-11-23T22:14:07Z",
           "name": "", "comment": "", "notes": "", "metadata": {}, "labels": []}


class FakeSession:
    def __init__(self, answers: Dict[Tuple[str, str], Any]) -> None:
        self.answers = answers
        self.calls: List[Tuple[str, str, Optional[Any]]] = []

    def _do(self, method: str, path: str, json_body: Any = None) -> Any:
        self.calls.append((method, path, json_body))
        base = path.split("?")[0]
        return self.answers.get((method, base), {})

    def get(self, path: str, **kw: Any) -> Any:
        return self._do("GET", path, kw.get("json_body"))

    def post(self, path: str, **kw: Any) -> Any:
        return self._do("POST", path, kw.get("json_body"))

    def patch(self, path: str, **kw: Any) -> Any:
        return self._do("PATCH", path, kw.get("json_body"))

    def delete(self, path: str, **kw: Any) -> Any:
        return self._do("DELETE", path, kw.get("json_body"))


def test_create_get_and_list_send_determined_requests() -> None:
    s = FakeSession({("POST", "/api/v1/models"): {"model": MODEL},
                     ("GET", "/api/v1/models/my%20model"): {"model": MODEL},
                     ("GET", "/api/v1/models"): {"models": [MODEL],
                                                 "pagination": {"endIndex": 1, "total": 1}}})
    created = m.create_model(s, "my model", metadata={"a": 1}, labels=["x"],
                             workspace_name="Uncategorized")
    assert s.calls[0] == ("POST", "/api/v1/models", {
        "name": "my model", "description": "", "metadata": {"a": 1}, "labels": ["x"],
        "workspaceName": "Uncategorized"})
    assert created.model_id == 4 and created.creation_time.microsecond == 0
    assert m.get_model(s, "my model").num_versions == 1

    models = m.get_models(s, sort_by=m.ModelSortBy.CREATION_TIME, order_by=m.OrderBy.DESC,
                          workspace_ids=[1, 2], name="my")
    assert [x.name for x in models] == ["my model"]
    query = urllib.parse.parse_qs(s.calls[-1][1].split("?", 1)[1])
    assert query["sortBy"] == ["SORT_BY_CREATION_TIME"]
    assert query["orderBy"] == ["ORDER_BY_DESC"]
    assert query["workspaceIds"] == ["1", "2"] and query["name"] == ["my"]


def test_model_changes_and_versions() -> None:
    path = "/api/v1/models/4"
    s = FakeSession({("POST", path + "/versions"): {"modelVersion": VERSION},
                     ("GET", path + "/versions"): {"modelVersions": [VERSION],
                                                   "pagination": {"endIndex": 1, "total": 1}},
                     ("PATCH", path): {"model": dict(MODEL, metadata={"a": 1, "b": 2})}})
    model = m.Model._from_json(s, MODEL)
    version = model.register_version("u1")
    assert s.calls[-1] == ("POST", path + "/versions",
                           {"checkpointUuid": "u1", "modelName": "my model"})
    assert version.model_version == 1 and version.checkpoint_uuid == "u1"
    assert version.checkpoint.uuid == "u1"

    latest = model.get_version()
    assert latest is not None and latest.model_version == 1
    assert "limit=1" in s.calls[-1][1] and "orderBy=ORDER_BY_DESC" in s.calls[-1][1]

    model.add_metadata({"b": 2})
    assert s.calls[-1] == ("PATCH", path, {"metadata": {"a": 1, "b": 2}})
    assert model.metadata == {"a": 1, "b": 2}
    model.add_label("y")
    assert s.calls[-1] == ("PATCH", path, {"labels": ["x", "y"]})
    model.archive()
    assert s.calls[-1][:2] == ("POST", path + "/archive") and model.archived

    version.set_notes("n")
    assert s.calls[-1] == ("PATCH", path + "/versions/1", {"notes": "n"})
    version.delete()
    assert s.calls[-1][:2] == ("DELETE", path + "/versions/1")
    unhydrated = m.ModelVersion(s, 3, "my model")
    unhydrated.delete()
    assert s.calls[-1][:2] == ("DELETE", "/api/v1/models/my%20model/versions/3")

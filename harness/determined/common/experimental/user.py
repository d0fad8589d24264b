"""Users in the client SDK."""

from typing import Any, Dict, Optional

from determined.common import api


class User:
    """A user of the master. Attributes as of the last :meth:`reload`."""

    def __init__(self, user_id: int, session: api.Session) -> None:
        self.user_id = user_id
        self._session = session
        self.username: Optional[str] = None
        self.admin: Optional[bool] = None
        self.active: Optional[bool] = None
        self.remote: Optional[bool] = None
        self.agent_uid: Optional[int] = None
        self.agent_gid: Optional[int] = None
        self.agent_user: Optional[str] = None
        self.agent_group: Optional[str] = None
        self.display_name: Optional[str] = None

    def _hydrate(self, u: Dict[str, Any]) -> None:
        self.username = u.get("username")
        self.admin = u.get("admin")
        self.remote = bool(u.get("remote", False))
        self.active = u.get("active", True) is not False
        self.display_name = u.get("displayName")
        group = u.get("agentUserGroup") or {}
        self.agent_uid = group.get("agentUid")
        self.agent_gid = group.get("agentGid")
        self.agent_user = group.get("agentUser")
        self.agent_group = group.get("agentGroup")

    @classmethod
    def _from_json(cls, u: Dict[str, Any], session: api.Session) -> "User":
        user = cls(int(u["id"]), session)
        user._hydrate(u)
        return user

    def reload(self) -> None:
        self._hydrate(self._session.get(f"/api/v1/users/{self.user_id}")["user"])

    def __repr__(self) -> str:
        return f"User(user_id={self.user_id}, username={self.username})"

    def _patch(self, **fields: Any) -> None:
        self._session.patch(f"/api/v1/users/{self.user_id}", json_body=fields)
        self.reload()

    def rename(self, new_username: str) -> None:
        self._patch(username=new_username)

    def activate(self) -> None:
        self._patch(active=True)

    def deactivate(self) -> None:
        self._patch(active=False)

    def change_display_name(self, display_name: str) -> None:
        self._patch(displayName=display_name)

    def change_password(self, new_password: str) -> None:
        from determined.common.experimental import determined

        determined.check_password_complexity(new_password)
        self._session.post(f"/api/v1/users/{self.user_id}/password",
                           json_body={"password": api.salt_and_hash(new_password),
                                      "isHashed": True})

    def link_with_agent(self, agent_uid: Optional[int] = None, agent_gid: Optional[int] = None,
                        agent_user: Optional[str] = None,
                        agent_group: Optional[str] = None) -> None:
        self._patch(agentUserGroup={"agentUid": agent_uid, "agentGid": agent_gid,
                                    "agentUser": agent_user, "agentGroup": agent_group})

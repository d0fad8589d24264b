"""An OAuth client of the SCIM integration (Enterprise-only in Determined; this master does
not serve it, so the client functions raise EnterpriseOnlyError)."""

from typing import Optional


class Oauth2ScimClient:
    def __init__(self, name: str, client_id: str, domain: str,
                 secret: Optional[str] = None) -> None:
        self.name = name
        self.id = client_id
        self.domain = domain
        self.secret = secret

    def __repr__(self) -> str:
        return f"Oauth2ScimClient(name={self.name}, id={self.id}, domain={self.domain})"

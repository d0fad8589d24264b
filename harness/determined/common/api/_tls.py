"""How the package verifies an HTTPS master: Determined's ``DET_MASTER_CERT_FILE`` (a PEM CA
file, or ``noverify``) and ``DET_MASTER_CERT_NAME`` (the name the certificate carries when it
is not the host in the master URL)."""

import os
import ssl
from typing import Any, Dict, Optional, Tuple

_cache: Dict[Tuple[str, str], ssl.SSLContext] = {}


class _NamedContext(ssl.SSLContext):
    """Checks the certificate against a fixed name instead of the host connected to."""

    det_cert_name: Optional[str] = None

    def wrap_socket(self, sock: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["server_hostname"] = self.det_cert_name
        return super().wrap_socket(sock, *args, **kwargs)


def ssl_context(url: str) -> Optional[ssl.SSLContext]:
    """The context for ``url`` (None for plain http)."""
    if not url.lower().startswith("https://"):
        return None
    cert_file = os.environ.get("DET_MASTER_CERT_FILE", "")
    cert_name = os.environ.get("DET_MASTER_CERT_NAME", "")
    key = (cert_file, cert_name)
    ctx = _cache.get(key)
    if ctx is not None:
        return ctx
    if cert_file.lower() == "noverify":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        if cert_name:
            ctx = _NamedContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.det_cert_name = cert_name
        else:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if cert_file:
            ctx.load_verify_locations(cafile=cert_file)
        else:
            ctx.load_default_certs()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    _cache[key] = ctx
    return ctx


def certificate_problem(exc: BaseException) -> Optional[str]:
    """The verification failure behind ``exc`` (an URLError's reason or an SSL error), if any."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, ssl.SSLCertVerificationError):
        return reason.verify_message or str(reason)
    if isinstance(reason, ssl.CertificateError):
        return str(reason)
    return None


def certificate_message(master_url: str, problem: str) -> str:
    return (
        f"cannot verify the TLS certificate of the master at {master_url}: {problem} (trust its "
        "CA with DET_MASTER_CERT_FILE; DET_MASTER_CERT_NAME if the certificate names another host)"
    )

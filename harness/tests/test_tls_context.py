"""determined.common.api._tls: which SSL context a master URL gets from DET_MASTER_CERT_FILE and
DET_MASTER_CERT_NAME, and how a verification failure is recognised."""

import ssl
import subprocess
import urllib.error

import pytest

from determined.common.api import _tls


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    monkeypatch.delenv("DET_MASTER_CERT_FILE", raising=False)
    monkeypatch.delenv("DET_MASTER_CERT_NAME", raising=False)
    _tls._cache.clear()
    yield
    _tls._cache.clear()


def test_plain_http_has_no_context():
    assert _tls.ssl_context("http://127.0.0.1:8080") is None


def test_default_verifies_with_the_system_cas():
    ctx = _tls.ssl_context("https://master:8443")
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname


def test_noverify_skips_the_check(monkeypatch):
    monkeypatch.setenv("DET_MASTER_CERT_FILE", "noverify")
    ctx = _tls.ssl_context("https://master:8443")
    assert ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname


def test_ca_file_and_name(monkeypatch, tmp_path):
    crt, key = tmp_path / "ca.crt", tmp_path / "ca.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=test-ca", "-keyout", str(key), "-out", str(crt)], check=True,
                   capture_output=True)
    monkeypatch.setenv("DET_MASTER_CERT_FILE", str(crt))
    monkeypatch.setenv("DET_MASTER_CERT_NAME", "master.example")
    ctx = _tls.ssl_context("https://10.0.0.1:8443")
    assert isinstance(ctx, _tls._NamedContext) and ctx.det_cert_name == "master.example"
    assert [c["subject"] for c in ctx.get_ca_certs()] == [((("commonName", "test-ca"),),)]


def test_certificate_problem_is_recognised():
    err = ssl.SSLCertVerificationError(1, "certificate verify failed")
    err.verify_message = "self-signed certificate"
    assert _tls.certificate_problem(urllib.error.URLError(err)) == "self-signed certificate"
    assert _tls.certificate_problem(urllib.error.URLError(ConnectionRefusedError())) is None
    msg = _tls.certificate_message("https://m:1", "self-signed certificate")
    assert msg.startswith("cannot verify the TLS certificate of the master at https://m:1")

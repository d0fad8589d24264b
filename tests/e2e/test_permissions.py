"""Users and permissions end to end (issue #15 items 2-3): two users, where one cannot change
the other's experiment but an admin can; logout revoking a token at once; login throttling;
and a trial's allocation token that reaches only its own trial and dies with its allocation."""

import hashlib
import pathlib
import re
import sqlite3

import pytest

from cluster import Cluster, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
CHECKPOINTS = FIXTURES / "checkpoints.yaml"


def client_hash(password: str) -> str:
    """The salted SHA-512 Determined's clients send (isHashed: true)."""
    return hashlib.sha512(("GubPEmmotfiK9TMD6Zdw" + password).encode()).hexdigest()


def login(c: Cluster, username: str, password: str = "") -> str:
    status, body = c.request_status("POST", "/api/v1/auth/login",
                                    {"username": username, "password": password})
    assert status == 200, body
    return body["token"]


def as_user(token: str):
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def new_user(c: Cluster, username: str, password: str) -> str:
    """Creates an ordinary user (as the built-in admin) and returns their session token."""
    status, body = c.request_status(
        "POST", "/api/v1/users",
        {"user": {"username": username, "active": True, "admin": False},
         "password": client_hash(password), "isHashed": True}, headers=as_user(login(c, "admin")))
    assert status == 200, body
    return login(c, username, password)


@pytest.fixture(scope="module")
def two_users():
    c = Cluster(agents=1, slots=1)
    c.up()
    try:
        admin = login(c, "admin")
        status, body = c.request_status(
            "POST", "/api/v1/users",
            {"user": {"username": "alice", "active": True, "admin": False},
             "password": client_hash("alice-pw"), "isHashed": True},
            headers=as_user(admin))
        assert status == 200, body
        # An experiment of the default user `determined`, paused so that it stays put.
        exp = c.create(CHECKPOINTS, FIXTURES, "--paused")
        yield c, admin, exp
    finally:
        c.cleanup()


@pytest.mark.parametrize("method,path", [
    ("POST", "/api/v1/experiments/{id}/activate"),
    ("POST", "/api/v1/experiments/{id}/pause"),
    ("POST", "/api/v1/experiments/{id}/cancel"),
    ("POST", "/api/v1/experiments/{id}/kill"),
    ("POST", "/api/v1/experiments/{id}/archive"),
    ("PATCH", "/api/v1/experiments/{id}"),
    ("PUT", "/api/v1/experiments/{id}/labels/mine"),
    ("DELETE", "/api/v1/experiments/{id}"),
])
def test_another_user_cannot_change_the_experiment(two_users, method, path):
    c, _, exp = two_users
    alice = login(c, "alice", "alice-pw")
    body = {"description": "taken over"} if method == "PATCH" else None
    status, answer = c.request_status(method, path.format(id=exp), body, headers=as_user(alice))
    assert status == 403, answer
    message = answer["error"]["error"]
    assert "user 'alice'" in message and f"experiment {exp}" in message, message
    assert "only its owner or an admin may" in message, message
    # Reading stays open to every user.
    status, answer = c.request_status("GET", f"/api/v1/experiments/{exp}", headers=as_user(alice))
    assert status == 200 and answer["experiment"]["state"] == "STATE_PAUSED", answer


def test_the_cli_reports_the_refusal(two_users):
    c, _, exp = two_users
    # Alice's own token cache, so that the cluster's det stays logged in as `determined`.
    env_user = dict(c.env, DET_USER="alice", DET_PASS="alice-pw",
                    XDG_CONFIG_HOME=str(c.tmp / "alice-config"))
    saved = c.env
    try:
        c.env = env_user
        proc = c.det("experiment", "archive", str(exp), check=False)
    finally:
        c.env = saved
    assert proc.returncode != 0
    assert "user 'alice' may not change experiment" in proc.stderr + proc.stdout, proc


def test_an_admin_can_change_any_experiment(two_users):
    c, admin, _ = two_users
    exp = c.create(CHECKPOINTS, FIXTURES, "--paused")
    for action in ("activate", "pause", "kill"):
        status, answer = c.request_status("POST", f"/api/v1/experiments/{exp}/{action}",
                                          headers=as_user(admin))
        assert status == 200, (action, answer)
    c.wait_state(exp, "STATE_CANCELED", timeout=60)
    for action in ("archive", "unarchive"):
        status, answer = c.request_status("POST", f"/api/v1/experiments/{exp}/{action}",
                                          headers=as_user(admin))
        assert status == 200, (action, answer)
    status, answer = c.request_status("DELETE", f"/api/v1/experiments/{exp}",
                                      headers=as_user(admin))
    assert status == 200, answer


def test_only_admins_manage_users_and_read_the_master_config(two_users):
    c, admin, _ = two_users
    alice = login(c, "alice", "alice-pw")
    status, answer = c.request_status(
        "POST", "/api/v1/users", {"user": {"username": "mallory"}}, headers=as_user(alice))
    assert status == 403, answer
    status, answer = c.request_status("GET", "/api/v1/master/config", headers=as_user(alice))
    assert status == 403 and "user 'alice'" in answer["error"]["error"], answer
    status, _ = c.request_status("GET", "/api/v1/master/config", headers=as_user(admin))
    assert status == 200


def test_logout_revokes_the_token_at_once(two_users):
    c, _, _ = two_users
    token = login(c, "alice", "alice-pw")
    status, _ = c.request_status("GET", "/api/v1/me", headers=as_user(token))
    assert status == 200
    status, _ = c.request_status("POST", "/api/v1/auth/logout", headers=as_user(token))
    assert status == 200
    status, answer = c.request_status("GET", "/api/v1/me", headers=as_user(token))
    assert status == 401, answer


def test_deactivated_users_are_refused_at_once(two_users):
    c, admin, _ = two_users
    status, body = c.request_status(
        "POST", "/api/v1/users",
        {"user": {"username": "bob", "active": True}, "password": client_hash("bob-pw"),
         "isHashed": True}, headers=as_user(admin))
    assert status == 200, body
    bob_id = body["user"]["id"]
    token = login(c, "bob", "bob-pw")
    assert c.request_status("GET", "/api/v1/me", headers=as_user(token))[0] == 200
    status, body = c.request_status("PATCH", f"/api/v1/users/{bob_id}", {"active": False},
                                    headers=as_user(admin))
    assert status == 200, body
    status, answer = c.request_status("GET", "/api/v1/me", headers=as_user(token))
    assert status == 403 and "not active" in answer["error"]["error"], answer


def test_repeated_failed_logins_are_throttled(two_users):
    c, admin, _ = two_users
    status, body = c.request_status(
        "POST", "/api/v1/users",
        {"user": {"username": "carol", "active": True}, "password": client_hash("carol-pw"),
         "isHashed": True}, headers=as_user(admin))
    assert status == 200, body
    for _ in range(5):
        status, _ = c.request_status("POST", "/api/v1/auth/login",
                                     {"username": "carol", "password": "wrong"})
        assert status == 401
    status, answer = c.request_status("POST", "/api/v1/auth/login",
                                      {"username": "carol", "password": "carol-pw"})
    assert status == 429, answer
    assert re.search(r"too many failed logins for .*; retry in \d+ s", answer["error"]["error"])
    # After the back-off the right password works again.
    wait_for(lambda: c.request_status("POST", "/api/v1/auth/login",
                                      {"username": "carol", "password": "carol-pw"})[0] == 200,
             30, "carol's login after the back-off")


def test_an_allocation_token_reaches_only_its_own_trial_while_it_runs(two_users):
    c, _, other_exp = two_users
    exp = c.create(FIXTURES / "authz" / "token_probe.yaml", FIXTURES / "authz")

    def token():
        trials = c.trials(exp)
        if not trials:
            return None
        logs = c.det("trial", "logs", str(trials[0]["id"]), check=False).stdout
        m = re.search(r"TOKEN=([0-9a-f]+)", logs)
        return (trials[0]["id"], m.group(1)) if m else None

    trial, tok = wait_for(token, 120, "the probe's token in its logs", interval=0.5)
    # The database keeps only the token's digest (migration 0024): a copy of it signs nothing in.
    db = sqlite3.connect(f"file:{c.data_dir / 'determined.db'}?mode=ro", uri=True)
    try:
        stored = [r[0] for r in db.execute("SELECT token FROM allocations")]
    finally:
        db.close()
    assert tok not in stored, stored
    assert hashlib.sha256(tok.encode()).hexdigest() in stored, stored
    alloc = {"Grpc-Metadata-x-allocation-token": f"Bearer {tok}"}
    assert c.request_status("GET", f"/api/v1/trials/{trial}", headers=alloc)[0] == 200
    assert c.request_status("GET", f"/api/v1/experiments/{exp}", headers=alloc)[0] == 200
    status, answer = c.request_status("GET", f"/api/v1/experiments/{other_exp}", headers=alloc)
    assert status == 403 and "only reach their own trial" in answer["error"]["error"], answer
    (other_trial,) = c.trials(other_exp)[:1] or [None]
    if other_trial is not None:
        status, _ = c.request_status("GET", f"/api/v1/trials/{other_trial['id']}",
                                     headers=alloc)
        assert status == 403
    status, answer = c.request_status("GET", "/api/v1/users", headers=alloc)
    assert status == 403, answer
    # The probe exits once its experiment has the label "go"; then its token is dead.
    c.request("PUT", f"/api/v1/experiments/{exp}/labels/go")
    terminal = ("STATE_COMPLETED", "STATE_ERROR", "STATE_CANCELED")
    wait_for(lambda: c.trials(exp)[0]["state"] in terminal, 120, "the probe's trial to end")
    status, answer = c.request_status("GET", f"/api/v1/trials/{trial}", headers=alloc)
    assert status == 401, answer
    assert "has ended" in answer["error"]["error"], answer

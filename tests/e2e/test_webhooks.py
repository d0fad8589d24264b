"""Webhooks end to end (issue #34): a local receiver gets Determined's signed deliveries for
experiment state changes (DEFAULT and SLACK shapes), matching task log lines (once per task),
and core_context.alert() on SPECIFIC webhooks an experiment names; who may manage which
webhook; bad bodies refused naming the field; a delivery the receiver refuses at first is
retried, and one still queued when the master is killed -9 is made by the next master."""

import hashlib
import hmac
import http.server
import json
import pathlib
import signal
import os
import tempfile
import threading

import pytest

from cluster import Cluster, brought_up, free_port, wait_for
from test_permissions import as_user, client_hash, login

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "webhooks"
KEY = "e2e-signing-key"


class Receiver:
    """A webhook receiver on 127.0.0.1: records every POST; answers 503 to the first
    `fail_first` of them."""

    def __init__(self, port: int = 0, fail_first: int = 0) -> None:
        self.lock = threading.Lock()
        self.posts = []
        self.fail_first = fail_first
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                with receiver.lock:
                    receiver.posts.append((self.path, dict(self.headers), body))
                    failing = len(receiver.posts) <= receiver.fail_first
                self.send_response(503 if failing else 200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str):
        with self.lock:
            return [(h, b) for p, h, b in self.posts if p == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def master_config() -> str:
    fd, path = tempfile.mkstemp(prefix="det-webhooks-", suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        f.write(f"webhooks:\n  signing_key: {KEY}\n")
    return path


@pytest.fixture(scope="module")
def hooked():
    config = master_config()
    try:
        with brought_up(Cluster(agents=1, slots=1,
                                up_args=("--master-config-path", config))) as c:
            yield c
    finally:
        os.unlink(config)


def hook(c: Cluster, url: str, triggers, webhook_type="DEFAULT", mode="WORKSPACE", name="",
         workspace_id=None, headers=None):
    body = {"url": url, "webhookType": f"WEBHOOK_TYPE_{webhook_type}", "triggers": triggers,
            "mode": f"WEBHOOK_MODE_{mode}", "name": name, "workspaceId": workspace_id}
    status, answer = c.request_status("POST", "/api/v1/webhooks", body,
                                      headers=headers or admin(c))
    return status, answer


def admin(c: Cluster):
    return as_user(login(c, "admin"))


def state(s):
    return {"triggerType": "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE", "condition": {"state": s}}


def verify(headers, body) -> None:
    ts = headers["X-Determined-AI-Signature-Timestamp"]
    want = hmac.new(KEY.encode(), f"{ts},{body}".encode(), hashlib.sha256).hexdigest()
    assert headers["X-Determined-AI-Signature"] == want, headers
    assert headers["Content-Type"].startswith("application/json"), headers


def test_deliveries_for_states_log_lines_and_alerts(hooked):
    c = hooked
    r = Receiver()
    ids = []
    try:
        for url, triggers, kind, mode, name in [
            (r.url("/default"), [state("COMPLETED"), state("ERROR")], "DEFAULT", "WORKSPACE", ""),
            (r.url("/slack"), [state("COMPLETED")], "SLACK", "WORKSPACE", ""),
            (r.url("/log"), [{"triggerType": "TRIGGER_TYPE_TASK_LOG",
                              "condition": {"regex": "FATAL.*code 7"}}], "DEFAULT", "WORKSPACE", ""),
            (r.url("/custom"), [{"triggerType": "TRIGGER_TYPE_CUSTOM"}], "DEFAULT", "SPECIFIC",
             "alerts"),
            (r.url("/never"), [state("COMPLETED")], "DEFAULT", "SPECIFIC", "not-named"),
        ]:
            status, answer = hook(c, url, triggers, kind, mode, name)
            assert status == 200, answer
            assert answer["webhook"]["url"] == url and answer["webhook"]["id"] > 0, answer
            ids.append(answer["webhook"]["id"])

        ok = c.create(FIXTURES / "ok.yaml", FIXTURES)
        c.wait_state(ok, "STATE_COMPLETED")
        completed = wait_for(lambda: r.at("/default") or None, 60, "the COMPLETED delivery")
        headers, body = completed[0]
        verify(headers, body)
        event = json.loads(body)
        assert event["event_type"] == "EXPERIMENT_STATE_CHANGE", event
        assert event["condition"] == {"state": "COMPLETED"}, event
        assert event["event_data"]["experiment"]["id"] == ok, event
        assert event["event_data"]["experiment"]["name"] == "webhooks-ok", event

        slack = json.loads(wait_for(lambda: r.at("/slack") or None, 60, "the Slack message")[0][1])
        assert slack["blocks"][0]["text"]["text"] == "Your experiment completed successfully 🎉"
        assert slack["attachments"][0]["color"] == "#13B670", slack
        assert slack["attachments"][0]["blocks"][0]["text"]["text"] == f"✅ webhooks-ok (#{ok})"

        custom = json.loads(wait_for(lambda: r.at("/custom") or None, 60, "the alert")[0][1])
        assert custom["event_type"] == "CUSTOM", custom
        assert custom["event_data"]["custom_data"]["title"] == "loss is low", custom
        assert custom["event_data"]["custom_data"]["level"] == "LOG_LEVEL_WARNING", custom
        assert custom["event_data"]["experiment"]["trial_id"] > 0, custom

        failed = c.create(FIXTURES / "fail.yaml", FIXTURES)
        c.wait_state(failed, "STATE_ERROR")
        wait_for(lambda: len(r.at("/default")) >= 2 or None, 60, "the ERROR delivery")
        errored = json.loads(r.at("/default")[1][1])
        assert errored["condition"] == {"state": "ERROR"}, errored
        assert errored["event_data"]["experiment"]["id"] == failed, errored
        line = json.loads(wait_for(lambda: r.at("/log") or None, 60, "the log-line delivery")[0][1])
        assert line["event_type"] == "TASK_LOG", line
        assert "FATAL: the loader broke" in line["event_data"]["task_log"]["triggering_log"], line
        # The line came twice; the trigger reports a task once. Nothing named the SPECIFIC one.
        assert len(r.at("/log")) == 1, r.at("/log")
        assert r.at("/never") == []
        assert len(r.at("/slack")) == 1 and len(r.at("/custom")) == 1

        # det webhook list shows the global ones to every user; only an admin deletes them.
        listed = c.det("webhook", "list").stdout
        assert r.url("/custom") in listed and "SPECIFIC" in listed, listed
        refused = c.det("webhook", "delete", str(ids[-1]), check=False)
        assert refused.returncode != 0, refused
        assert "only an admin can manage global webhooks" in refused.stderr, refused.stderr
    finally:
        for i in ids:
            c.request_status("DELETE", f"/api/v1/webhooks/{i}", headers=admin(c))
        r.close()


def test_who_may_manage_which_webhook(hooked):
    c = hooked
    root = login(c, "admin")
    for name in ("whk-alice", "whk-bob"):
        status, body = c.request_status(
            "POST", "/api/v1/users",
            {"user": {"username": name, "active": True, "admin": False},
             "password": client_hash("pw"), "isHashed": True}, headers=as_user(root))
        assert status == 200, body
    alice, bob = login(c, "whk-alice", "pw"), login(c, "whk-bob", "pw")
    status, ws = c.request_status("POST", "/api/v1/workspaces", {"name": "whk-alices"},
                                  headers=as_user(alice))
    assert status == 200, ws
    ws_id = ws["workspace"]["id"]

    status, answer = hook(c, "http://127.0.0.1:9/x", [state("COMPLETED")], headers=as_user(alice))
    assert status == 403 and "only an admin can manage global webhooks" in str(answer), answer
    status, answer = hook(c, "http://127.0.0.1:9/x", [state("COMPLETED")], workspace_id=ws_id,
                          headers=as_user(alice))
    assert status == 200, answer
    mine = answer["webhook"]["id"]
    status, answer = hook(c, "http://127.0.0.1:9/x", [state("COMPLETED")], workspace_id=ws_id,
                          headers=as_user(bob))
    assert status == 403, answer
    status, answer = hook(c, "http://127.0.0.1:9/g", [state("COMPLETED")], headers=as_user(root))
    assert status == 200, answer
    global_id = answer["webhook"]["id"]

    def seen(token):
        status, answer = c.request_status("GET", "/api/v1/webhooks", headers=as_user(token))
        assert status == 200, answer
        return {w["id"] for w in answer["webhooks"]}

    assert {mine, global_id} <= seen(alice)
    assert global_id in seen(bob) and mine not in seen(bob)
    assert {mine, global_id} <= seen(root)
    for token, target in ((bob, mine), (alice, global_id), (bob, global_id)):
        status, answer = c.request_status("DELETE", f"/api/v1/webhooks/{target}",
                                          headers=as_user(token))
        assert status == 403, answer
    status, answer = c.request_status("PATCH", f"/api/v1/webhooks/{mine}",
                                      {"url": "http://127.0.0.1:9/y"}, headers=as_user(bob))
    assert status == 403, answer
    status, answer = c.request_status("PATCH", f"/api/v1/webhooks/{mine}",
                                      {"url": "http://127.0.0.1:9/y"}, headers=as_user(alice))
    assert status == 200, answer
    status, answer = c.request_status("GET", "/api/v1/webhooks", headers=as_user(alice))
    urls = {w["id"]: w["url"] for w in answer["webhooks"]}
    assert urls[mine] == "http://127.0.0.1:9/y", urls
    for token, target in ((alice, mine), (root, global_id)):
        status, answer = c.request_status("DELETE", f"/api/v1/webhooks/{target}",
                                          headers=as_user(token))
        assert status == 200, answer


@pytest.mark.parametrize("body,message", [
    ({"url": "ftp://x/y", "webhookType": "WEBHOOK_TYPE_DEFAULT", "triggers": [state("COMPLETED")]},
     "url: \"ftp://x/y\" is not an http:// or https:// URL"),
    ({"url": "http://127.0.0.1:9", "webhookType": "WEBHOOK_TYPE_DEFAULT", "triggers": []},
     "triggers: at least one trigger required"),
    ({"url": "http://127.0.0.1:9", "webhookType": "WEBHOOK_TYPE_DEFAULT",
      "triggers": [{"triggerType": "TRIGGER_TYPE_TASK_LOG", "condition": {"regex": "(unclosed"}}]},
     "triggers[0].condition.regex: \"(unclosed\" is not a valid regular expression"),
    ({"url": "http://127.0.0.1:9", "webhookType": "WEBHOOK_TYPE_DEFAULT",
      "mode": "WEBHOOK_MODE_WORKSPACE", "triggers": [{"triggerType": "TRIGGER_TYPE_CUSTOM"}]},
     "a CUSTOM trigger needs mode WEBHOOK_MODE_SPECIFIC"),
])
def test_a_bad_webhook_is_refused_naming_the_field(hooked, body, message):
    c = hooked
    before = c.request("GET", "/api/v1/webhooks")["webhooks"]
    status, answer = c.request_status("POST", "/api/v1/webhooks", body, headers=admin(c))
    assert status == 400 and message in answer["error"]["error"], answer
    assert c.request("GET", "/api/v1/webhooks")["webhooks"] == before


def test_a_refused_delivery_is_retried(hooked):
    c = hooked
    r = Receiver(fail_first=2)
    try:
        status, answer = hook(c, r.url("/flaky"), [state("COMPLETED")])
        assert status == 200, answer
        hook_id = answer["webhook"]["id"]
        exp = c.create(FIXTURES / "ok.yaml", FIXTURES)
        c.wait_state(exp, "STATE_COMPLETED")
        posts = wait_for(lambda: r.at("/flaky") if len(r.at("/flaky")) >= 3 else None, 60,
                         "the third attempt")
        bodies = {json.loads(b)["event_id"] for _, b in posts}
        assert len(bodies) == 1, "the same event each time"
        c.request_status("DELETE", f"/api/v1/webhooks/{hook_id}", headers=admin(c))
    finally:
        r.close()


def test_a_queued_delivery_survives_a_master_kill9(own_cluster):
    c = own_cluster
    config = master_config()
    port = free_port()
    try:
        c.det("deploy", "local", "master-down", "--data-dir", str(c.data_dir))
        c.master_up("--master-config-path", config)
        # Nothing listens on `port` yet: every attempt fails and the delivery stays queued.
        status, answer = hook(c, f"http://127.0.0.1:{port}/late", [state("COMPLETED")])
        assert status == 200, answer
        exp = c.create(FIXTURES / "ok.yaml", FIXTURES)
        c.wait_state(exp, "STATE_COMPLETED")
        log = c.data_dir / "master.log"
        wait_for(lambda: "webhook delivery to" in log.read_text(errors="replace") or None, 30,
                 "a failed attempt")
        os.kill(c.master_pid(), signal.SIGKILL)
        wait_for(lambda: not c.master_running() or None, 30, "the master to die")
        r = Receiver(port=port)
        try:
            c.master_up("--master-config-path", config)
            headers, body = wait_for(lambda: r.at("/late") or None, 60, "the delivery")[0]
            verify(headers, body)
            assert json.loads(body)["event_data"]["experiment"]["id"] == exp
        finally:
            r.close()
    finally:
        os.unlink(config)

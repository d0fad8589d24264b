"""Follow streams end with their client and with the master: clients killed mid-follow leave
no master thread or descriptor behind, and SIGTERM with a follow open exits promptly."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

from cluster import BIN, free_port, wait_for

# A client that follows the master's log and blocks reading it, like `det master logs -f`.
FOLLOWER = """
import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/api/v1/master/logs?follow=true",
                             headers={"Authorization": "Bearer " + sys.argv[2]})
with urllib.request.urlopen(req, timeout=600) as resp:
    resp.readline()
    print("following", flush=True)
    while resp.read(1):
        pass
"""


def count(pid: int, what: str) -> int:
    return len(os.listdir(f"/proc/{pid}/{what}"))


def start_master(tmp_path):
    port = free_port()
    log = open(tmp_path / "master.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "determined-master"), "--port", str(port), "--data-dir",
         str(tmp_path / "data")],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"

    def login():
        req = urllib.request.Request(
            url + "/api/v1/auth/login", method="POST",
            data=json.dumps({"username": "determined", "password": "", "isHashed": True}).encode())
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read())["token"]
        except OSError:
            return None

    token = wait_for(login, 60, "the master to answer")
    return proc, url, token


def follow(url: str, token: str) -> subprocess.Popen:
    client = subprocess.Popen([sys.executable, "-c", FOLLOWER, url, token],
                              stdout=subprocess.PIPE, text=True)
    assert client.stdout.readline().strip() == "following"
    return client


def test_killed_followers_leave_nothing_and_sigterm_exits_with_a_follow_open(tmp_path):
    master, url, token = start_master(tmp_path)
    try:
        threads = count(master.pid, "task")
        fds = None
        for round in range(2):
            clients = [follow(url, token) for _ in range(20)]
            assert count(master.pid, "task") >= threads + 20  # a thread per follow
            for c in clients:
                c.kill()  # gone mid-follow, as a `det ... logs -f` killed with SIGKILL
                c.wait()
            # Noticed within seconds: not when the followed log ends (never, here). The first
            # round also warms the store's read connections, the baseline of the second.
            wait_for(lambda: count(master.pid, "task") <= threads
                     and (fds is None or count(master.pid, "fd") <= fds),
                     20, f"round {round}: threads back to {threads} and fds to {fds}")
            fds = count(master.pid, "fd")

        # SIGTERM with a follow open: the drain ends it and the master exits.
        held = follow(url, token)
        master.send_signal(signal.SIGTERM)
        started = time.monotonic()
        code = master.wait(timeout=30)
        assert code == 0, (tmp_path / "master.log").read_text()[-3000:]
        assert time.monotonic() - started < 15
        held.wait(timeout=30)  # its stream was ended, not left hanging
    finally:
        if master.poll() is None:
            master.kill()
            master.wait()

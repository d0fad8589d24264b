"""The cluster-wide message (issue #34): an admin sets, schedules, reads and clears it with
`det master cluster-message`; every user sees the active one in `det master info`; a scheduled
one shows only to the admin's get; users cannot touch it; a restart keeps it."""

import datetime
import json

from cluster import Cluster


def as_admin(c: Cluster, *args, check=True):
    saved = c.env
    c.env = dict(saved, DET_USER="admin", DET_PASS="", XDG_CONFIG_HOME=str(c.tmp / "admin-config"))
    try:
        return c.det(*args, check=check)
    finally:
        c.env = saved


def info(c: Cluster):
    return json.loads(c.det("master", "info", "--json").stdout)


def test_cluster_message(own_cluster):
    c = own_cluster
    as_admin(c, "master", "cluster-message", "clear")
    got = json.loads(as_admin(c, "master", "cluster-message", "get", "--json").stdout)
    assert got["clusterMessage"] is None, got
    assert info(c)["clusterMessage"] is None

    end = (datetime.datetime.utcnow() + datetime.timedelta(days=500)).isoformat() + "Z"
    as_admin(c, "master", "cluster-message", "set", "-m", "maintenance tonight", "--end", end)
    shown = info(c)["clusterMessage"]  # as the non-admin `determined`
    assert shown["message"] == "maintenance tonight", shown
    got = json.loads(as_admin(c, "master", "cluster-message", "get", "--json").stdout)
    assert got["clusterMessage"]["endTime"] == end, (got, end)

    # A user may not set, read or clear it.
    for args in (("get",), ("set", "-m", "mine"), ("clear",)):
        proc = c.det("master", "cluster-message", *args, check=False)
        assert proc.returncode != 0, (args, proc.stdout)

    # Survives a restart.
    c.det("deploy", "local", "master-down", "--data-dir", str(c.data_dir))
    c.master_up()
    assert info(c)["clusterMessage"]["message"] == "maintenance tonight"

    # Scheduled for later: the admin sees it, users do not yet.
    as_admin(c, "master", "cluster-message", "set", "-m", "later", "--start",
             "2035-01-01T00:00:00Z", "--duration", "22h")
    assert info(c)["clusterMessage"] is None
    got = json.loads(as_admin(c, "master", "cluster-message", "get", "--json").stdout)
    assert got["clusterMessage"]["endTime"] == "2035-01-01T22:00:00Z", got

    bad = as_admin(c, "master", "cluster-message", "set", "-m", "x" * 251, check=False)
    assert bad.returncode != 0 and "at most 250 characters" in bad.stderr, bad.stderr
    as_admin(c, "master", "cluster-message", "clear")
    assert json.loads(as_admin(c, "master", "cluster-message", "get", "--json").stdout)[
        "clusterMessage"] is None

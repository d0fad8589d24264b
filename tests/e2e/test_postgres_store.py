"""The master on PostgreSQL end to end: `det deploy local cluster-up --db postgres` starts a
throwaway PostgreSQL under the data dir (tools/postgres/det-postgres) and points the master at
it. The walking skeleton, a search, pause/activate, a master kill -9 that keeps every
acknowledged report exactly once, and `determined-master migrate-store` from SQLite.

Skipped only when the PostgreSQL server binaries are not installed."""

import glob
import json
import os
import pathlib
import pwd
import shutil
import signal
import subprocess
import tempfile
import threading

import pytest

from cluster import BIN, REPO, Cluster, brought_up, wait_for
from test_lifecycle import FIXTURES, flaky_config, start_trial
from test_metrics_ingest import CLIENTS, post_until_failure

DIGITS = REPO / "examples" / "digits"

pytestmark = pytest.mark.skipif(
    not glob.glob("/usr/lib/postgresql/*/bin/initdb") and shutil.which("initdb") is None,
    reason="PostgreSQL server binaries (Debian's postgresql package) are not installed")


@pytest.fixture(scope="module")
def pg_cluster():
    with brought_up(Cluster(agents=1, slots=2, up_args=("--db", "postgres"))) as c:
        yield c
        c.down()
        # cluster-down stopped the server: nothing of it is left running.
        pid_file = c.data_dir / "postgres" / "data" / "postmaster.pid"
        assert not pid_file.exists(), "cluster-down left PostgreSQL running"


def test_master_runs_on_postgres(pg_cluster):
    url = (pg_cluster.data_dir / "postgres" / "url").read_text().strip()
    assert url.startswith("postgres://determined@127.0.0.1:"), url
    log = (pg_cluster.data_dir / "master.log").read_text(errors="replace")
    assert not (pg_cluster.data_dir / "determined.db").exists(), "the master opened SQLite"
    assert "listening" in log
    # The store is PostgreSQL's: the master's rows are in its tables.
    out = subprocess.run(["psql", url, "-tAc", "SELECT username FROM users ORDER BY id"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["admin", "determined"], out


def test_walking_skeleton_and_search_on_postgres(pg_cluster):
    c = pg_cluster
    exp_id = c.create(DIGITS / "random.yaml", DIGITS)
    exp = c.wait_state(exp_id, "STATE_COMPLETED", timeout=300)
    assert exp["searcherType"] == "random"
    trials = c.trials(exp_id)
    assert len(trials) == 4 and all(t["state"] == "STATE_COMPLETED" for t in trials)
    assert len({json.dumps(t["hparams"], sort_keys=True) for t in trials}) == 4
    for t in trials:
        steps = [m["stepsCompleted"] for m in c.metrics(t["id"], "training")]
        assert steps and steps == sorted(set(steps)), steps
        validation = c.metrics(t["id"], "validation")
        assert [m["stepsCompleted"] for m in validation] == [200]
        assert t["searcherMetricValue"] is not None
    ckpts = c.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
    assert ckpts
    # The web UI's list sorts by the searcher metric in SQL (JSON functions differ per dialect).
    listed = c.request("GET", "/api/v1/experiments?sortBy=SORT_BY_SEARCHER_METRIC_VAL")
    assert exp_id in [e["id"] for e in listed["experiments"]]


def test_pause_and_activate_on_postgres(pg_cluster, tmp_path):
    c = pg_cluster
    total = 30
    cfg = flaky_config(tmp_path, "pause.yaml", batches=total, sleep_per_step=0.25)
    exp_id, trial = start_trial(c, cfg, min_steps=2)
    c.det("experiment", "pause", str(exp_id))
    wait_for(lambda: c.experiment(exp_id)["state"] == "STATE_PAUSED"
             and c.trials(exp_id)[0]["state"] == "STATE_PAUSED", 60, "PAUSED")
    c.det("experiment", "activate", str(exp_id))
    c.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    (trial,) = c.trials(exp_id)
    assert trial["restarts"] == 0
    steps = [m["stepsCompleted"] for m in c.metrics(trial["id"], "training")]
    assert steps == list(range(1, total + 1)), steps


def test_acknowledged_reports_survive_master_kill9_on_postgres(pg_cluster, tmp_path):
    c = pg_cluster
    (tmp_path / "c.yaml").write_text(
        "name: ingest-kill9-pg\nentrypoint: sleep 600\n"
        "searcher: {name: single, metric: loss, max_length: {batches: 1}}\nmax_restarts: 0\n")
    exp_id = c.create(tmp_path / "c.yaml", tmp_path)
    trial = wait_for(lambda: (c.trials(exp_id) or [None])[0], 60, "trial")["id"]
    token = c.token()
    acked = [[] for _ in range(CLIENTS)]
    sent = [[] for _ in range(CLIENTS)]
    errors = [[] for _ in range(CLIENTS)]
    threads = [threading.Thread(target=post_until_failure,
                                args=(c.port, token, trial, i, acked[i], sent[i], errors[i]))
               for i in range(CLIENTS)]
    for t in threads:
        t.start()
    wait_for(lambda: all(len(a) >= 20 for a in acked), 120, "every client to get answers",
             interval=0.05)
    pid = c.master_pid()
    os.kill(pid, signal.SIGKILL)
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive()
    wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
    c.master_up("--db", "postgres")

    stored = [m["stepsCompleted"] for m in c.metrics(trial, "training")]
    all_acked = {s for a in acked for s in a}
    all_sent = {s for lst in sent for s in lst}
    missing = sorted(all_acked - set(stored))
    assert not missing, f"{len(missing)} acknowledged reports lost, e.g. {missing[:5]}"
    assert len(stored) == len(set(stored)), "a report was stored twice"
    assert set(stored) <= all_sent, "a row nobody sent"
    assert len(stored) - len(all_acked) <= CLIENTS
    c.request("POST", f"/api/v1/experiments/{exp_id}/kill")


def owner_uid(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError(f"no Uid in /proc/{pid}/status")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None,
                    reason="becoming a non-root user needs root and runuser")
def test_cluster_up_on_postgres_as_a_non_root_user():
    """A master run by a normal user: det-postgres runs initdb and pg_ctl as that user itself
    (no runuser, no `postgres` user), and the cluster works. `nobody` stands in for the user."""
    nobody = pwd.getpwnam("nobody")
    needed = [BIN / "det", BIN / "determined-master", BIN / "determined-agent",
              REPO / "harness" / "determined" / "__init__.py", FIXTURES]
    if subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-c",
                       " && ".join(f"test -r '{p}'" for p in needed)]).returncode != 0:
        # e.g. a checkout under a mode-0700 temporary directory, as a CI clone may be
        pytest.skip(f"user nobody cannot read the build or the harness under {REPO}")
    c = Cluster(agents=1, slots=1, up_args=("--db", "postgres"),
                det_prefix=("runuser", "-u", "nobody", "--"))
    os.chown(c.tmp, nobody.pw_uid, nobody.pw_gid)
    os.chmod(c.tmp, 0o755)
    c.env["HOME"] = str(c.tmp)
    try:
        c.up()
        pg = c.data_dir / "postgres"
        assert pg.stat().st_uid == nobody.pw_uid and (pg / "data").stat().st_uid == nobody.pw_uid
        postmaster = int((pg / "data" / "postmaster.pid").read_text().split()[0])
        assert owner_uid(postmaster) == nobody.pw_uid
        assert owner_uid(c.master_pid()) == nobody.pw_uid
        cfg = flaky_config(c.tmp, "nonroot.yaml", batches=3)  # where nobody can read it
        exp_id = c.create(cfg, FIXTURES)
        c.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
        (trial,) = c.trials(exp_id)
        assert [m["stepsCompleted"] for m in c.metrics(trial["id"], "training")] == [1, 2, 3]
        c.down()
        assert not (pg / "data" / "postmaster.pid").exists(), "cluster-down left PostgreSQL running"
    finally:
        c.cleanup()


def test_migrate_store_copies_a_sqlite_installation(tmp_path):
    """An installation run on SQLite, copied with migrate-store, then served from PostgreSQL."""
    src = Cluster(agents=1, slots=1, up_args=("--db", "sqlite"))  # also under DET_E2E_DB=postgres
    src.up()
    try:
        cfg = flaky_config(tmp_path, "small.yaml", batches=5)
        exp_id = src.create(cfg, FIXTURES)
        src.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
        (trial,) = src.trials(exp_id)
        before = [m["stepsCompleted"] for m in src.metrics(trial["id"], "training")]
        src.down()
        pg_dir = pathlib.Path(tempfile.mkdtemp(prefix="det-pg-"))
        try:
            url = subprocess.run([str(BIN / "det-postgres"), "start", str(pg_dir), "--no-fsync"],
                                 capture_output=True, text=True, check=True).stdout.strip()
            out = subprocess.run(
                [str(BIN / "determined-master"), "migrate-store", "--from",
                 f"sqlite:{src.data_dir / 'determined.db'}", "--to", url],
                capture_output=True, text=True, timeout=300)
            assert out.returncode == 0, out.stdout + out.stderr
            assert "experiments" in out.stdout
            # A second copy into the same database is refused, naming the reason.
            again = subprocess.run(
                [str(BIN / "determined-master"), "migrate-store", "--from",
                 f"sqlite:{src.data_dir / 'determined.db'}", "--to", url],
                capture_output=True, text=True, timeout=300)
            assert again.returncode != 0 and "already holds" in again.stdout + again.stderr
            # The same data dir (checkpoints), now on PostgreSQL.
            dst = Cluster(agents=0, slots=1)
            master = subprocess.Popen(
                [str(BIN / "determined-master"), "--port", str(dst.port), "--data-dir",
                 str(src.data_dir), "--db", url],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                def up():
                    try:
                        return dst.request("GET", "/info", auth=False)
                    except OSError:
                        return None

                wait_for(up, 60, "the master on the copied store")
                assert dst.experiment(exp_id)["state"] == "STATE_COMPLETED"
                (copied,) = dst.trials(exp_id)
                assert copied["id"] == trial["id"]
                assert [m["stepsCompleted"] for m in dst.metrics(trial["id"], "training")] == before
                new_id = dst.create(cfg, FIXTURES)
                assert new_id == exp_id + 1, "ids continue after the copied ones"
            finally:
                master.kill()
                master.wait()
        finally:
            subprocess.run([str(BIN / "det-postgres"), "stop", str(pg_dir)], check=False)
            shutil.rmtree(pg_dir, ignore_errors=True)
    finally:
        src.cleanup()


def test_master_up_after_a_crash_reuses_the_recorded_postgres(tmp_path):
    """cluster-up --db postgres, a master crash, then master-up naming no store: the data dir
    recorded PostgreSQL (never its password), so the master comes back on it, not on a fresh
    SQLite file; a start naming SQLite is refused."""
    c = Cluster(agents=0, slots=1, up_args=("--db", "postgres"))
    c.up()
    try:
        record = json.loads((c.data_dir / "store.json").read_text())
        assert record["store"] == "postgres" and record["dbname"] == "determined", record
        assert record["user"] == "determined" and record["host"] == "127.0.0.1", record
        assert "password" not in json.dumps(record)
        (tmp_path / "c.yaml").write_text(
            "name: recorded-store\nentrypoint: sleep 600\n"
            "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n")
        exp_id = c.create(tmp_path / "c.yaml", tmp_path)
        pid = c.master_pid()
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
        # Plain det (Cluster.det would add the suite's --db under DET_E2E_DB=postgres).
        def master_up(*extra):
            return subprocess.run(
                [str(BIN / "det"), "deploy", "local", "master-up", "--master-port", str(c.port),
                 "--data-dir", str(c.data_dir), *extra],
                env=c.env, capture_output=True, text=True, timeout=120)
        up = master_up()
        assert up.returncode == 0, up.stdout + up.stderr
        c._token = None
        assert c.experiment(exp_id)["id"] == exp_id
        assert not (c.data_dir / "determined.db").exists(), "the master opened SQLite"
        c.det("deploy", "local", "master-down", "--data-dir", str(c.data_dir))
        refused = master_up("--db", "sqlite")
        assert refused.returncode != 0
        text = refused.stdout + refused.stderr
        assert "PostgreSQL database determined on 127.0.0.1" in text, text
        assert "SQLite database " in text, text
        assert not (c.data_dir / "determined.db").exists()
    finally:
        c.cleanup()

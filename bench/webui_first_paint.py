"""Web UI first paint at scale: time from navigation to the first rendered row of the
experiment list with 100,000 experiments, and to a drawn learning curve of one trial with
1,000,000 metric rows, in Debian's chromium through playwright-core (webui/bench/first_paint.mjs,
median of 5 cold page loads).

The stores are filled through Store::BulkInsert (bin/store_scale --fill-only), then a master is
started on each (det deploy local master-up; no agent is needed). Baseline, same run: the same
pages on a store of 10 experiments whose trial has 1,000 metric rows.

Usage: webui_first_paint.py [--experiments 100000] [--long-series 1000000]"""

import argparse
import os
import pathlib
import re
import shutil
import socket
import subprocess
import tempfile
import urllib.request

from bench_cluster import BIN, REPO, wait_for

FIRST_PAINT = REPO / "webui" / "bench" / "first_paint.mjs"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(experiments: int, long_series: int) -> dict:
    """Fills a store of `experiments` (one trial each; trial 1 of experiment 1 has
    `long_series` rows, the others 2 each), starts a master on it and times both pages."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-webui-"))
    data = tmp / "data"
    try:
        fill = subprocess.run(
            [str(BIN / "store_scale"), "--data-dir", str(data), "--fill-only",
             "--experiments", str(experiments), "--trials", str(experiments),
             "--big-experiment-trials", "1", "--long-series", str(long_series),
             "--metric-rows", str(long_series + 2 * (experiments - 1))],
            capture_output=True, text=True, check=True)
        fill_line = next((l for l in fill.stdout.splitlines() if l.startswith("fill:")), "")
        port = free_port()
        env = dict(os.environ, XDG_CONFIG_HOME=str(tmp / "config"))
        subprocess.run([str(BIN / "det"), "deploy", "local", "master-up", "--master-port",
                        str(port), "--data-dir", str(data)], check=True, env=env,
                       capture_output=True, text=True, timeout=300)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: urllib.request.urlopen(url + "/info", timeout=5).status == 200, 60,
                     "the master")
            out = subprocess.run(
                ["node", str(FIRST_PAINT)], capture_output=True, text=True, check=True,
                env=dict(os.environ, DET_MASTER=url, EXPERIMENT="1"), timeout=600,
                cwd=str(REPO / "webui")).stdout
        finally:
            subprocess.run([str(BIN / "det"), "deploy", "local", "master-down", "--data-dir",
                            str(data)], env=env, capture_output=True, text=True, timeout=120)
        times = [int(m) for m in re.findall(r"^(\d+) ms ", out, re.M)]
        if len(times) != 2:
            raise AssertionError(f"first_paint.mjs printed:\n{out}")
        return {"list_ms": times[0], "curve_ms": times[1], "fill": fill_line, "raw": out}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiments", type=int, default=100_000)
    ap.add_argument("--long-series", type=int, default=1_000_000)
    args = ap.parse_args()
    base = measure(10, 1_000)
    big = measure(args.experiments, args.long_series)
    print(f"web UI first paint ({big['fill']})")
    print(f"experiment list: baseline {base['list_ms']} ms at 10 experiments; "
          f"{big['list_ms']} ms at {args.experiments:,} experiments; "
          f"ratio {big['list_ms'] / max(base['list_ms'], 1):.2f}")
    print(f"learning curve: baseline {base['curve_ms']} ms at 1,000 rows; "
          f"{big['curve_ms']} ms at {args.long_series:,} rows; "
          f"ratio {big['curve_ms'] / max(base['curve_ms'], 1):.2f} (target < 1000 ms)")


if __name__ == "__main__":
    main()

"""Checkpoint throughput on shared_fs: upload and download of a 1 GiB checkpoint of many files
(256 x 4 MiB) through the Python storage layer, next to `cp -r` of the same tree in the same
run; prints MiB/s and the ratio ours/cp (1.0 = as fast as cp). Temp data is removed.

Env: DET_BENCH_CKPT_FILES (256), DET_BENCH_CKPT_FILE_MIB (4), DET_BENCH_RUNS (3).
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "harness"))

from determined.common import storage  # noqa: E402

FILES = int(os.environ.get("DET_BENCH_CKPT_FILES", "256"))
FILE_MIB = int(os.environ.get("DET_BENCH_CKPT_FILE_MIB", "4"))
RUNS = int(os.environ.get("DET_BENCH_RUNS", "3"))


def make_tree(root: pathlib.Path) -> int:
    block = os.urandom(FILE_MIB << 20)
    for i in range(FILES):
        d = root / f"shard-{i % 16:02d}"
        d.mkdir(parents=True, exist_ok=True)
        # distinct content per file, cheaply: rotate the random block
        k = (i * 4099) % len(block)
        (d / f"param-{i:04d}.bin").write_bytes(block[k:] + block[:k])
    return FILES * (FILE_MIB << 20)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def cp_r(src: pathlib.Path, dst: pathlib.Path) -> None:
    subprocess.run(["cp", "-r", str(src), str(dst)], check=True)


def main() -> None:
    work = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-ckpt-"))
    try:
        src = work / "src"
        nbytes = make_tree(src)
        manager = storage.build({"type": "shared_fs", "host_path": str(work), "storage_path": "storage"})
        results = {"upload": ([], []), "download": ([], [])}
        for run in range(RUNS):
            sid = f"ckpt-{run}"
            ours_up = timed(lambda: manager.upload(src, sid))
            cp_up = timed(lambda: cp_r(src, work / f"cp-up-{run}"))
            ours_dn = timed(lambda: manager.download(sid, work / f"dl-{run}"))
            cp_dn = timed(lambda: cp_r(manager.path_of(sid), work / f"cp-dn-{run}"))
            assert manager.list_files(sid) == storage.list_directory(work / f"dl-{run}")
            results["upload"][0].append(ours_up)
            results["upload"][1].append(cp_up)
            results["download"][0].append(ours_dn)
            results["download"][1].append(cp_dn)
            for p in (work / f"cp-up-{run}", work / f"dl-{run}", work / f"cp-dn-{run}"):
                shutil.rmtree(p)
            manager.delete(sid)
        mib = nbytes / (1 << 20)
        print(f"checkpoint throughput: {FILES} files x {FILE_MIB} MiB = {mib:.0f} MiB on shared_fs, best of {RUNS}")
        for what, (ours, cp) in results.items():
            o, c = min(ours), min(cp)
            print(
                f"  {what:8s} storage layer {mib / o:8.1f} MiB/s ({o:.3f} s)   cp -r {mib / c:8.1f} MiB/s ({c:.3f} s)"
                f"   ratio ours/cp throughput {c / o:.2f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""A small container image built offline for the container tests and benchmark.

No registry is reachable here, so the image is `podman import` of a tiny root file system (the
directories a process needs, and the /bin, /lib, /lib64, /sbin links of a merged-/usr Debian);
the trial's config bind-mounts the host's /usr (python, torch, sklearn) and what the dynamic
linker needs from /etc read-only. The host must use a merged /usr (Debian 12 does).
"""

import io
import os
import pathlib
import shutil
import subprocess
import tarfile
import uuid
from typing import Dict, List, Optional

# What a trial in the image needs from the host, all read-only.
HOST_MOUNTS = ["/usr", "/etc/alternatives", "/etc/ld.so.cache"]


def podman() -> Optional[str]:
    return shutil.which("podman")


def containers_conf(dir_: pathlib.Path) -> pathlib.Path:
    """A containers.conf without default ulimits: in sandboxes that forbid setrlimit (this
    machine is one), podman's defaults make every container fail with 'error setting rlimits'."""
    path = dir_ / "containers.conf"
    path.write_text("[containers]\ndefault_ulimits = []\n")
    return path


def _rootfs_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ["usr", "etc", "etc/alternatives", "tmp", "proc", "sys", "dev", "run", "root",
                  "var", "var/tmp", "home"]:
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if d in ("tmp", "var/tmp") else 0o755
            tar.addfile(info)
        for link, target in [("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64"),
                             ("sbin", "usr/sbin")]:
            info = tarfile.TarInfo(link)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
        for name, text in [("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
                           ("etc/group", "root:x:0:\n")]:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def build(env: Dict[str, str]) -> str:
    """Imports the image under a fresh tag and returns its name."""
    name = f"localhost/det-e2e-{uuid.uuid4().hex[:12]}:1"
    subprocess.run([podman(), "import", "-", name], input=_rootfs_tar(), env=env, check=True,
                   capture_output=True, timeout=120)
    return name


def remove(name: str, env: Dict[str, str]) -> None:
    proc = subprocess.run([podman(), "rmi", "-f", name], env=env, capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"podman rmi {name} exited {proc.returncode}: {proc.stderr}")


def bind_mounts() -> List[Dict[str, object]]:
    return [{"host_path": p, "container_path": p, "read_only": True} for p in HOST_MOUNTS]


def containers_of(data_dir: pathlib.Path, env: Dict[str, str]) -> List[str]:
    """Container ids (running or not) of the agents whose data dirs lie under `data_dir`."""
    out = subprocess.run(
        [podman(), "ps", "-a", "--format", "{{.ID}} {{.Labels}}"], env=env, capture_output=True,
        text=True, timeout=60, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if str(data_dir) in line]

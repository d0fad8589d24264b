"""A command in a container image (podman here): its bind_mounts are mounted (an absolute
container_path where it says, a relative one linked from the working directory), read-write
unless read_only. The image is the offline test image of container_image.py."""

import json
import pathlib

import pytest

import container_image
from cluster import Cluster


@pytest.fixture(scope="module")
def podman_cluster():
    if container_image.podman() is None:
        pytest.skip("podman is not installed (Debian package podman): container tests skipped")
    c = Cluster(agents=1, slots=1)
    c.env["CONTAINERS_CONF"] = str(container_image.containers_conf(c.tmp))
    image = container_image.build(c.env)
    c.image = image
    try:
        c.up()
        yield c
    finally:
        c.down()
        container_image.remove(image, c.env)
        c.cleanup()


def test_a_command_in_an_image_gets_its_bind_mounts(podman_cluster, tmp_path):
    c = podman_cluster
    models = tmp_path / "models"
    models.mkdir()
    (models / "in.txt").write_text("mounted from the host\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "d.txt").write_text("linked data\n")
    cfg = tmp_path / "cmd.yaml"
    cfg.write_text(json.dumps({
        "environment": {"image": {"cpu": c.image, "cuda": c.image}},
        "bind_mounts": container_image.bind_mounts() + [
            {"host_path": str(models), "container_path": "/models"},
            {"host_path": str(data), "container_path": "data"},
        ],
    }))
    proc = c.det("cmd", "run", "--config-file", str(cfg), "sh", "-c",
                 "cat /models/in.txt data/d.txt; echo from-inside > /models/out.txt; "
                 "test -e /run/.containerenv && echo in-a-container", timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "mounted from the host" in proc.stdout
    assert "linked data" in proc.stdout
    assert "in-a-container" in proc.stdout
    assert (models / "out.txt").read_text() == "from-inside\n"
    assert not pathlib.Path("/models").exists()

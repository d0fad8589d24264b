"""`det experiment create --local --test-mode` tests a model definition without a master."""

import subprocess

from cluster import BIN, REPO

EXAMPLE = REPO / "examples" / "digits-pytorch"


def test_local_test_mode_runs_one_batch_and_a_checkpoint_round_trip(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [str(BIN / "det"), "experiment", "create", "--local", "--test-mode",
         str(EXAMPLE / "const.yaml"), str(EXAMPLE)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Checkpoint round trip succeeded" in proc.stdout
    assert "Model definition test succeeded!" in proc.stdout


def test_local_without_test_mode_is_refused(tmp_path):
    proc = subprocess.run(
        [str(BIN / "det"), "experiment", "create", "--local", str(EXAMPLE / "const.yaml"),
         str(EXAMPLE)],
        capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode != 0
    assert "--test-mode" in proc.stderr

"""log_policies with cancel_retries (issue #34): a failed run whose lines match the policy's
pattern ends its trial in ERROR without a restart, saying so in the trial's logs; one whose lines
do not match restarts as max_restarts allows."""

import pathlib

import pytest
import yaml

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "webhooks"


@pytest.mark.parametrize("pattern,matches", [
    (r"FATAL.*code 7", True),
    (r"this should not match", False),
])
def test_cancel_retries(cluster, tmp_path, pattern, matches):
    config = yaml.safe_load((FIXTURES / "fail.yaml").read_text())
    config["max_restarts"] = 1
    # Determined's legacy form and its named one.
    config["log_policies"] = [
        {"pattern": pattern, "action": {"type": "cancel_retries"}},
        {"name": "named", "pattern": pattern, "action": "cancel_retries"},
    ]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    exp = cluster.create(path, FIXTURES)
    cluster.wait_state(exp, "STATE_ERROR")
    (trial,) = cluster.trials(exp)
    logs = cluster.det("trial", "logs", str(trial["id"])).stdout
    if matches:
        assert trial["restarts"] == 0, trial
        assert "trial failed and matched logs to a don't retry policy" in logs, logs
        assert logs.count("New trial runner") == 1, logs
    else:
        assert trial["restarts"] == 1, trial
        assert "don't retry policy" not in logs, logs
        assert logs.count("New trial runner") == 2, logs

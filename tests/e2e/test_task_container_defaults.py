"""task_container_defaults of the master and of a resource pool (issue #34): the pool's go over
the master's. An experiment in the pool gets the pool's environment variables in its config (shown
masked, as the master's are);
its trial and a command in the pool run the pool's startup_hook (not the master's) before the
entrypoint, and what the hook exports reaches it."""

import pathlib

import yaml

from cluster import Cluster, brought_up

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "webhooks"

MASTER_YAML = """
resource_pools:
  - pool_name: default
    task_container_defaults:
      environment_variables: [SOMEVAR=SOMEVAL]
      startup_hook: "echo 'hello from rp tcd startup hook'; export FROM_HOOK=rp"
task_container_defaults:
  startup_hook: "echo 'hello from master tcd startup hook'; export FROM_HOOK=master"
  environment_variables: [MASTERVAR=1]
"""


def test_pool_defaults_over_the_masters(tmp_path):
    master_yaml = tmp_path / "master.yaml"
    master_yaml.write_text(MASTER_YAML)
    with brought_up(Cluster(agents=1, slots=1,
                            up_args=("--master-config-path", str(master_yaml)))) as c:
        config = yaml.safe_load((FIXTURES / "ok.yaml").read_text())
        config.pop("integrations")
        config["entrypoint"] = "sh -c 'echo trial sees $SOMEVAR $FROM_HOOK && python3 script.py'"
        path = tmp_path / "ok.yaml"
        path.write_text(yaml.safe_dump(config))
        exp = c.create(path, FIXTURES)
        shown = c.experiment(exp)["config"]["environment"]["environment_variables"]["cpu"]
        # Both are the admin's: shown masked, as the master's are.
        assert sorted(shown) == ["MASTERVAR=********", "SOMEVAR=********"], shown
        c.wait_state(exp, "STATE_COMPLETED")
        (trial,) = c.trials(exp)
        logs = c.det("trial", "logs", str(trial["id"])).stdout
        assert "hello from rp tcd startup hook" in logs, logs
        assert "hello from master tcd startup hook" not in logs, logs
        assert "trial sees SOMEVAL rp" in logs, logs

        ran = c.det("cmd", "run", "echo command sees $FROM_HOOK", check=False)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "hello from rp tcd startup hook" in ran.stdout, ran.stdout
        assert "command sees rp" in ran.stdout, ran.stdout

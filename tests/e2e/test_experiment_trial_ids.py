"""GET /api/v1/experiments/{id} lists the experiment's trial ids (`experiment.trialIds`, as
Determined's GetExperiment), which the web UI's experiment page uses to ask for the learning
curves before the trial list is in; the list route leaves them out."""

import pathlib

import yaml

from cluster import wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def test_get_experiment_lists_trial_ids(cluster, tmp_path):
    c = cluster
    cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
    cfg["searcher"] = {"name": "grid", "metric": "validation_loss", "max_length": {"batches": 2}}
    cfg["hyperparameters"]["x"] = {"type": "categorical", "vals": [0.1, 0.2, 0.3]}
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp_id = c.create(path, FIXTURES)
    try:
        trials = wait_for(lambda: (lambda t: t if len(t) == 3 else None)(c.trials(exp_id)), 60,
                          "three trials")
        exp = c.experiment(exp_id)
        assert exp["trialIds"] == sorted(t["id"] for t in trials), exp
        listed = c.request("GET", "/api/v1/experiments?limit=1000")["experiments"]
        (row,) = [e for e in listed if e["id"] == exp_id]
        assert "trialIds" not in row
    finally:
        c.det("experiment", "kill", str(exp_id), check=False)

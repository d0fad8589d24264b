"""GET /api/v1/experiments/{id}/searcher/rungs on a real adaptive_asha search: every trial is in
the first rung of one bracket, the finished search leaves nobody running or waiting, and a
master restarted after the search finished (the searcher restored from the store, not memory)
answers the same."""

import pathlib

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "core_api_compat"


def test_rungs_from_the_searcher_survive_a_restart(own_cluster):
    c = own_cluster
    exp_id = c.create(FIXTURES / "hpsearch.yaml", FIXTURES)
    c.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    before = c.request("GET", f"/api/v1/experiments/{exp_id}/searcher/rungs")
    assert before["searcher"] == "adaptive_asha" and before["smallerIsBetter"] is False
    trial_ids = sorted(t["id"] for t in c.trials(exp_id))
    first = sorted(t["trialId"] for b in before["brackets"] for t in b["rungs"][0]["trials"])
    assert first == trial_ids, before
    for b in before["brackets"]:
        for r in b["rungs"]:
            for t in r["trials"]:
                assert t["outcome"] in ("promoted", "stopped", "completed"), before
                assert isinstance(t["metric"], float), t

    c.det("deploy", "local", "master-down", "--data-dir", str(c.data_dir))
    c.master_up()
    assert c.request("GET", f"/api/v1/experiments/{exp_id}/searcher/rungs") == before

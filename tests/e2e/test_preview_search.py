"""`det preview-search CONFIG` prints the trials a search would create without running it."""

import subprocess

import pytest

from cluster import BIN, REPO

DIGITS = REPO / "examples" / "digits"


@pytest.mark.parametrize("config,trials,total", [
    ("adaptive.yaml", 4, "350 batches"),
    ("grid.yaml", 4, "400 batches"),
    ("pbt.yaml", 4, "300 batches"),
    ("random.yaml", 4, "800 batches"),
    ("tpe.yaml", 8, "1600 batches"),
    ("const.yaml", 1, "200 batches"),
])
def test_preview_counts_trials_and_units(config, trials, total):
    proc = subprocess.run([str(BIN / "det"), "preview-search", str(DIGITS / config)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"create a total of {trials} trial(s) and train {total} in all" in proc.stdout
    assert "Trials | Training Length" in proc.stdout


def test_preview_reports_config_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("searcher: {name: random, metric: x, max_length: {batches: 5}}\n"
                   "entrypoint: python3 t.py\n")
    proc = subprocess.run([str(BIN / "det"), "preview-search", str(bad)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert "searcher.max_trials" in proc.stderr

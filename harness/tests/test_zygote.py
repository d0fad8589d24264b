"""determined.exec.zygote's pure helpers; the agent's tests (agent/launcher/warm_launcher_test.cc)
and tests/e2e/test_warm_python.py drive the whole warm start."""

import os
import pathlib
import sys

from determined.exec import zygote


def test_pythonpath_entries_are_absolute_and_empty_means_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cwd = os.getcwd()
    assert zygote._pythonpath_entries("") == []
    assert zygote._pythonpath_entries("rel::/abs") == [f"{cwd}/rel", cwd, "/abs"]


def test_path_without_pythonpath_and_dedup():
    path = ["/h", "/usr/lib/python3.11", "/x", "/usr/lib/python3.11"]
    assert zygote._path_without_pythonpath(path, "/h:/x") == ["/usr/lib/python3.11"] * 2
    assert zygote._dedup(["/a", "/b", "/a", "/c", "/b"]) == ["/a", "/b", "/c"]


def test_system_exit_status(capsys):
    assert zygote._system_exit_status(SystemExit()) == 0
    assert zygote._system_exit_status(SystemExit(3)) == 3
    assert zygote._system_exit_status(SystemExit(256 + 7)) == 7
    assert zygote._system_exit_status(SystemExit("bad input")) == 1
    assert capsys.readouterr().err == "bad input\n"


def test_shadowed_module_finds_an_earlier_copy(tmp_path):
    # `zygote` itself is loaded from the harness: a context dir ahead of it with a
    # `determined/` package shadows it, one without does not.
    harness = str(pathlib.Path(zygote.__file__).parents[2])
    base = {m.split(".")[0] for m in sys.modules} - {"determined"}
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "train.py").write_text("")
    assert zygote._shadowed_module([str(clean), harness] + sys.path, base) is None
    shadow = tmp_path / "shadow"
    (shadow / "determined").mkdir(parents=True)
    why = zygote._shadowed_module([str(shadow), harness] + sys.path, base)
    assert why is not None and why.startswith("'determined' would come from " + str(shadow)), why

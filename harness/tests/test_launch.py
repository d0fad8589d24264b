import os
import subprocess
import sys

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = HARNESS
    env.update(extra)
    return env


def test_wrap_rank_prefixes_and_keeps_exit_code():
    code = "import sys; print('out1'); print('out2', flush=True); print('err1', file=sys.stderr); sys.exit(3)"
    p = subprocess.run(
        [sys.executable, "-m", "determined.launch.wrap_rank", "2", "--", sys.executable, "-c", code],
        capture_output=True, env=_env(), timeout=30,
    )
    assert p.returncode == 3
    assert p.stdout.decode().splitlines() == ["[rank=2] out1", "[rank=2] out2"]
    assert p.stderr.decode().splitlines() == ["[rank=2] err1"]


def test_wrap_rank_from_env_var():
    p = subprocess.run(
        [sys.executable, "-m", "determined.launch.wrap_rank", "MY_RANK", "--", "echo", "hi"],
        capture_output=True, env=_env(MY_RANK="5"), timeout=30,
    )
    assert p.returncode == 0
    assert p.stdout.decode() == "[rank=5] hi\n"


def test_wrap_rank_signal_exit_code():
    p = subprocess.run(
        [sys.executable, "-m", "determined.launch.wrap_rank", "0", "--", "sh", "-c", "kill -9 $$"],
        capture_output=True, env=_env(), timeout=30,
    )
    assert p.returncode == 128 + 9


def test_harness_rejects_non_pytorch_trial(tmp_path):
    (tmp_path / "model_def.py").write_text("class MyTrial:\n    pass\n")
    p = subprocess.run(
        [sys.executable, "-m", "determined.exec.harness", "model_def:MyTrial"],
        capture_output=True, env=_env(), cwd=tmp_path, timeout=60,
    )
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "determined.pytorch" in err or "PyTorchTrial" in err


def test_harness_missing_module(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "determined.exec.harness", "nope:Trial"],
        capture_output=True, env=_env(), cwd=tmp_path, timeout=60,
    )
    assert p.returncode != 0
    assert "cannot load trial class" in p.stderr.decode()


def test_harness_runs_pytorch_trial_via_trainer(tmp_path, monkeypatch):
    import types

    from determined.exec import harness

    calls = []

    class PyTorchTrial:
        def __init__(self, context):
            self.context = context

    class _Ctx:
        def __enter__(self):
            return "train-context"

        def __exit__(self, *exc):
            calls.append("exit")

    class Trainer:
        def __init__(self, trial, context):
            calls.append(("trainer", type(trial).__name__, trial.context, context))

        def fit(self):
            calls.append("fit")

    fake = types.ModuleType("determined.pytorch")
    fake.PyTorchTrial = PyTorchTrial
    fake.Trainer = Trainer
    fake.init = lambda **kw: (calls.append(("init", kw)), _Ctx())[1]
    monkeypatch.setitem(sys.modules, "determined.pytorch", fake)
    (tmp_path / "my_model_def.py").write_text(
        "from determined.pytorch import PyTorchTrial\nclass MyTrial(PyTorchTrial):\n    pass\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert harness.main(["my_model_def:MyTrial"]) == 0
    assert calls == [
        ("init", {"hparams": None, "exp_conf": None}),
        ("trainer", "MyTrial", "train-context", "train-context"),
        "fit",
        "exit",
    ]

"""TensorBoard event files without the tensorboard package: CRC-32C vectors, the record format
read back and decoded with the protobuf runtime, metric naming, and the upload to checkpoint
storage at Determined's path."""

import json
import pathlib
import struct
import tempfile

import pytest

from determined import core, tensorboard
from determined.common import storage
from determined.tensorboard import _crc32c


def test_crc32c_known_vectors():
    # RFC 3720 (iSCSI) B.4 and the usual check value.
    assert _crc32c.crc32c(b"") == 0
    assert _crc32c.crc32c(b"123456789") == 0xE3069283
    assert _crc32c.crc32c(bytes(32)) == 0x8A9136AA
    assert _crc32c.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert _crc32c.crc32c(bytes(range(32))) == 0x46DD794E
    assert _crc32c.crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C


def test_masked_crc32c_rotates_and_adds_the_constant():
    # TFRecord's mask: rotate right by 15, add 0xa282ead8.
    crc = 0xE3069283
    want = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert _crc32c.masked_crc32c(b"123456789") == want
    assert _crc32c.masked_crc32c(b"") == 0xA282EAD8


def read_records(path: pathlib.Path):
    """Splits a tfevents file into record payloads, checking both CRCs of every record."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos < len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert len_crc == _crc32c.masked_crc32c(header)
        payload = data[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        assert data_crc == _crc32c.masked_crc32c(payload)
        out.append(payload)
        pos += 16 + length
    assert pos == len(data)
    return out


def event_class():
    """tensorflow.Event, Summary and Summary.Value built with the protobuf runtime (the same
    field numbers as TensorBoard's event.proto and summary.proto)."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FileDescriptorProto(name="det_test_event.proto", package="dettest", syntax="proto3")
    T = descriptor_pb2.FieldDescriptorProto
    summary = f.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    value.field.add(name="simple_value", number=2, type=T.TYPE_FLOAT, label=T.LABEL_OPTIONAL)
    summary.field.add(name="value", number=1, type=T.TYPE_MESSAGE, label=T.LABEL_REPEATED,
                      type_name=".dettest.Summary.Value")
    event = f.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=T.TYPE_DOUBLE, label=T.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=T.TYPE_INT64, label=T.LABEL_OPTIONAL)
    event.field.add(name="file_version", number=3, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    event.field.add(name="summary", number=5, type=T.TYPE_MESSAGE, label=T.LABEL_OPTIONAL,
                    type_name=".dettest.Summary")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    desc = pool.FindMessageTypeByName("dettest.Event")
    factory = message_factory.MessageFactory(pool)
    get = getattr(message_factory, "GetMessageClass", None)
    return get(desc) if get else factory.GetPrototype(desc)


def parse_events(path: pathlib.Path):
    Event = event_class()
    events = []
    for payload in read_records(path):
        e = Event()
        e.ParseFromString(payload)
        events.append(e)
    return events


def test_event_file_round_trip(tmp_path):
    w = tensorboard.EventFileWriter(tmp_path / "logs")
    w.add_scalar("loss", 0.25, step=3, wall_time=1000.5)
    w.add_scalars({"a": 1.5, "b": -2.0}, step=2**40)
    w.add_scalar("zero", 7, step=0)
    w.close()
    assert w.path.name.startswith("events.out.tfevents.")
    events = parse_events(w.path)
    assert events[0].file_version == "brain.Event:2"
    assert events[1].step == 3 and events[1].wall_time == 1000.5
    assert [(v.tag, v.simple_value) for v in events[1].summary.value] == [("loss", 0.25)]
    assert events[2].step == 2**40
    assert [(v.tag, v.simple_value) for v in events[2].summary.value] == [("a", 1.5), ("b", -2.0)]
    assert events[3].step == 0 and events[3].summary.value[0].simple_value == 7


def test_negative_steps_encode_as_int64(tmp_path):
    w = tensorboard.EventFileWriter(tmp_path)
    w.add_scalar("x", 1, step=-5)
    w.close()
    assert parse_events(w.path)[1].step == -5


def test_batch_metric_writer_names_like_determined(tmp_path):
    np = pytest.importorskip("numpy")
    w = tensorboard.EventFileWriter(tmp_path)
    bw = tensorboard.BatchMetricWriter(w)
    bw.on_train_step_end(4, {"loss": 0.5, "lr": np.float32(0.1), "note": "text"},
                         batch_metrics=[{"loss": 0.7}, {"loss": 0.3}])
    bw.on_validation_step_end(4, {"validation_loss": 0.2, "accuracy": 0.9})
    bw.close()
    points = [(e.step, v.tag, round(v.simple_value, 4)) for e in parse_events(w.path)[1:]
              for v in e.summary.value]
    assert points == [
        (2, "Determined/loss", 0.7), (3, "Determined/loss", 0.3),  # per batch
        (4, "Determined/lr", 0.1),  # averages not in the batch metrics; strings skipped
        (4, "Determined/validation_loss", 0.2), (4, "Determined/val_accuracy", 0.9),
    ]


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_manager_copies_changed_files_to_determineds_path(tmp_path):
    base = tmp_path / "tb"
    base.mkdir()
    sm = storage.build({"type": "shared_fs", "host_path": str(tmp_path / "store")})
    clock = FakeClock()
    m = tensorboard.TensorboardManager(base, sm, "cluster-x", 3, 7, clock=clock)
    (base / "events.1").write_bytes(b"one")
    (base / "sub").mkdir()
    (base / "sub" / "trace.json").write_text("{}")
    m.sync()
    m.wait()  # unforced syncs upload in the background
    root = tmp_path / "store" / "cluster-x" / "tensorboard" / "experiment" / "3" / "trial" / "7"
    assert m.storage_path() == "cluster-x/tensorboard/experiment/3/trial/7"
    assert (root / "events.1").read_bytes() == b"one"
    assert (root / "sub" / "trace.json").read_text() == "{}"

    # At most once per second unless forced.
    (base / "events.1").write_bytes(b"one-two")
    m.sync()
    m.wait()
    assert (root / "events.1").read_bytes() == b"one"
    clock.now += 1.5
    m.sync()
    m.wait()
    assert (root / "events.1").read_bytes() == b"one-two"

    # Selector and mangler (MANUAL uploads).
    (base / "skip.txt").write_text("no")
    (base / "keep.txt").write_text("yes")
    m.sync(lambda p: p.name != "skip.txt", lambda p, rank: pathlib.Path(f"rank{rank}", p), 2, force=True)
    assert (root / "rank2" / "keep.txt").read_text() == "yes"
    assert not (root / "skip.txt").exists() and not (root / "rank2" / "skip.txt").exists()


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temp dir of this test's own (the local TensorBoard directory lives there)."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def test_a_background_upload_failure_is_retried_by_the_next_sync(tmp_path):
    base = tmp_path / "tb"
    base.mkdir()
    (base / "events.1").write_bytes(b"x")
    sm = storage.build({"type": "shared_fs", "host_path": str(tmp_path / "store")})
    calls = []
    real_upload = sm.upload

    def flaky_upload(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("storage unavailable")
        return real_upload(*args, **kwargs)

    sm.upload = flaky_upload
    clock = FakeClock()
    m = tensorboard.TensorboardManager(base, sm, "c", 1, 2, clock=clock)
    m.sync()
    m.wait()  # failed in the background: logged, not raised
    root = tmp_path / "store" / "c" / "tensorboard" / "experiment" / "1" / "trial" / "2"
    assert not (root / "events.1").exists()
    m.sync(force=True)
    assert (root / "events.1").read_bytes() == b"x"


def test_auto_mode_writes_and_uploads_reported_metrics(on_cluster, tmp_path, private_tmp):
    with core.init() as ctx:
        ctx.train.report_training_metrics(10, {"loss": 0.5})
        ctx.train.report_validation_metrics(10, {"validation_loss": 0.25})
        local = ctx.train.get_tensorboard_path()
        assert local.parent == private_tmp
        with pytest.raises(RuntimeError, match="MANUAL"):
            ctx.train.upload_tensorboard_files()
    # fake_master's storage: shared_fs at tmp_path/ckpts; cluster-1, experiment 1, trial 7.
    root = tmp_path / "ckpts" / "cluster-1" / "tensorboard" / "experiment" / "1" / "trial" / "7"
    files = sorted(root.glob("events.out.tfevents.*"))
    assert files, f"no event files under {root}"
    assert any(local.glob("events.out.tfevents.*"))
    tags = {(e.step, v.tag, v.simple_value) for f in files for e in parse_events(f)
            for v in e.summary.value}
    assert tags == {(10, "Determined/loss", 0.5), (10, "Determined/validation_loss", 0.25)}


def test_manual_mode_uploads_on_request_only(on_cluster, tmp_path, private_tmp):
    with core.init(tensorboard_mode=core.TensorboardMode.MANUAL) as ctx:
        ctx.train.report_training_metrics(1, {"loss": 1.0})
        path = ctx.train.get_tensorboard_path()
        (path / "mine.txt").write_text("hello")
        ctx.train.upload_tensorboard_files()
    root = tmp_path / "ckpts" / "cluster-1" / "tensorboard" / "experiment" / "1" / "trial" / "7"
    assert (root / "mine.txt").read_text() == "hello"
    assert not list(root.glob("events.out.tfevents.*"))  # nothing written automatically


def test_summary_writer_without_the_tensorboard_package(tmp_path):
    with tensorboard.SummaryWriter(tmp_path / "sw") as w:
        w.add_scalar("acc", 0.75, 12)
        w.add_scalar("no_step", 3)
    (f,) = (tmp_path / "sw").glob("events.out.tfevents.*")
    got = [(e.step, v.tag, v.simple_value) for e in parse_events(f)[1:] for v in e.summary.value]
    assert got == [(12, "acc", 0.75), (0, "no_step", 3.0)]


def test_pytorch_context_writer_falls_back_to_ours(tmp_path):
    torch = pytest.importorskip("torch")
    from determined import pytorch

    with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": str(tmp_path)}) as ctx:
        w = ctx.get_tensorboard_writer()
        assert w is ctx.get_tensorboard_writer()
        w.add_scalar("my_metric", torch.tensor(2.5), 4)
        w.flush()
        files = list(ctx.get_tensorboard_path().glob("events.out.tfevents.*"))
    assert any((4, "my_metric", 2.5) in {(e.step, v.tag, v.simple_value) for e in parse_events(f)
                                         for v in e.summary.value} for f in files)


def test_set_profiler_writes_torch_traces_into_the_tensorboard_path(tmp_path, private_tmp):
    torch = pytest.importorskip("torch")
    from determined import pytorch

    class Tiny(pytorch.PyTorchTrial):
        def __init__(self, context):
            self.context = context
            self.model = context.wrap_model(torch.nn.Linear(4, 2))
            self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), lr=0.1))
            context.set_profiler(activities=[torch.profiler.ProfilerActivity.CPU],
                                 schedule=torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1))

        def build_training_data_loader(self):
            data = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
            return pytorch.DataLoader(data, batch_size=4)

        def build_validation_data_loader(self):
            return self.build_training_data_loader()

        def train_batch(self, batch, epoch_idx, batch_idx):
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            self.context.backward(loss)
            self.context.step_optimizer(self.opt)
            return {"loss": loss}

        def evaluate_batch(self, batch, batch_idx):
            x, y = batch
            return {"validation_loss": torch.nn.functional.cross_entropy(self.model(x), y)}

    with pytorch.init(hparams={}, exp_conf={"checkpoint_storage": str(tmp_path / "ckpt")}) as ctx:
        pytorch.Trainer(Tiny(ctx), ctx).fit(max_length=pytorch.Batch(6))
        traces = list(ctx.get_tensorboard_path().glob("*.pt.trace.json"))
    assert len(traces) == 1, traces  # one active window of the schedule
    events = json.loads(traces[0].read_text())  # a Chrome trace: a list of events
    assert any(e.get("name", "").startswith("aten::") for e in events)


def test_gc_task_deletes_an_experiments_tensorboard_files(tmp_path, capsys):
    from determined.exec import gc_checkpoints

    store = tmp_path / "store"
    for exp in (3, 4):
        d = store / "cluster-x" / "tensorboard" / "experiment" / str(exp) / "trial" / "1"
        d.mkdir(parents=True)
        (d / "events.out.tfevents.1").write_bytes(b"x")
    config = json.dumps({"type": "shared_fs", "host_path": str(store)})
    rc = gc_checkpoints.main(["--storage-config", config, "--delete", "", "--experiment-id", "3",
                              "--delete-tensorboards", "cluster-x", "--no-report"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["tensorboards"] == {"storageId": "cluster-x", "path": "tensorboard/experiment/3",
                                      "error": None}
    assert not (store / "cluster-x" / "tensorboard" / "experiment" / "3").exists()
    assert (store / "cluster-x" / "tensorboard" / "experiment" / "4" / "trial" / "1").is_dir()
    # Again: nothing left to delete is fine.
    assert gc_checkpoints.main(["--storage-config", config, "--delete", "", "--experiment-id", "3",
                                "--delete-tensorboards", "cluster-x", "--no-report"]) == 0

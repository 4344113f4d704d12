"""Exports: CSV and JSON lines read back with the standard library, TensorBoard scalars read
back with TensorBoard's own event reader."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest

from tfres.cli import main
from tfres.errors import MissingDependencyError
from tfres.export import rows, write_csv, write_jsonl, write_tensorboard
from tfres.record import Record, save
from tfres.sampler.columns import column_names
from tfres.store import Store
from tfres.timeline import GpuSample, Mark, Sample


def sample(t: float, *, gpu_util: float | None = 50.0, with_gpu: bool = True) -> Sample:
    gpus = ()
    if with_gpu:
        gpus = (
            GpuSample(
                index=0,
                util_percent=gpu_util,
                memory_used_bytes=2**30,
                memory_total_bytes=16 * 2**30,
                throttle_reasons=("sw_power_cap",),
            ),
        )
    return Sample(
        t_seconds=t,
        cpu_percent=10.0 * t,
        cpu_per_core_percent=(5.0, 15.0),
        memory_used_bytes=1000 + int(t),
        memory_available_bytes=5000,
        process_cpu_percent=None if t == 0 else 80.0,
        process_rss_bytes=4096,
        gpus=gpus,
        tf_memory={"CPU:0": {"current_bytes": 100, "peak_bytes": 200}},
    )


@pytest.fixture
def record() -> Record:
    r = Record(kind="run", label="exp", started_at="2024-05-01T12:00:00Z")
    # the GPU stopped answering after t=1: its columns stop, the rows go on
    r.samples = [sample(0.0), sample(0.5, gpu_util=None), sample(1.0), sample(1.5, with_gpu=False)]
    r.marks = [Mark(0.5, "epoch 2")]
    return r


def test_csv_has_one_row_per_sample_and_unit_named_columns(record, tmp_path):
    path = tmp_path / "out" / "run.csv"
    assert write_csv(record, path) == 4
    table = list(csv.DictReader(path.open()))
    assert len(table) == 4
    names = list(table[0])
    assert names[:4] == ["t_seconds", "cpu_percent", "cpu0_percent", "cpu1_percent"]
    for name in (
        "process_rss_bytes",
        "gpu0_util_percent",
        "gpu0_memory_used_bytes",
        "tf_cpu0_current_bytes",
        "gpu0_throttle_reasons",
    ):
        assert name in names
    assert table[1]["t_seconds"] == "0.5" and table[1]["cpu_percent"] == "5.0"
    assert table[0]["process_cpu_percent"] == ""  # not read: empty, never 0
    assert table[1]["gpu0_util_percent"] == ""
    assert table[2]["gpu0_util_percent"] == "50.0"
    assert table[3]["gpu0_util_percent"] == ""  # the GPU columns stopped
    assert table[0]["gpu0_throttle_reasons"] == "sw_power_cap"


def test_jsonl_rows_are_objects_with_nulls(record):
    buffer = io.StringIO()
    assert write_jsonl(record, buffer) == 4
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [row["t_seconds"] for row in lines] == [0.0, 0.5, 1.0, 1.5]
    assert lines[0]["process_cpu_percent"] is None
    assert lines[2]["gpu0_memory_total_bytes"] == 16 * 2**30
    assert "gpu0_util_percent" not in lines[3]


def test_long_runs_export_their_buckets_first(record):
    record.aggregates = [
        {
            "start_seconds": -20.0,
            "end_seconds": -10.0,
            "count": 100,
            "min": {"cpu_percent": 1.0},
            "mean": {"cpu_percent": 2.0},
            "max": {"cpu_percent": 3.0},
        },
    ]
    table = rows(record, extremes=True)
    assert table[0]["t_seconds"] == -20.0 and table[0]["bucket_seconds"] == 10.0
    assert table[0]["cpu_percent"] == 2.0 and table[0]["max"] == {"cpu_percent": 3.0}
    assert table[1]["bucket_seconds"] is None and len(table) == 5
    assert column_names(table)[0] == "t_seconds"


def test_tensorboard_scalars_read_back_with_tensorboards_reader(record, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    path = write_tensorboard(record, tmp_path / "logs")
    assert path.name.startswith("events.out.tfevents.")
    acc = EventAccumulator(str(tmp_path / "logs"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert "tfres/process_rss_bytes" in tags and "tfres/gpu0_util_percent" in tags
    cpu = acc.Scalars("tfres/cpu_percent")
    assert [e.step for e in cpu] == [0, 500, 1000, 1500]  # milliseconds since the start
    assert [e.value for e in cpu] == pytest.approx([0.0, 5.0, 10.0, 15.0])
    start = 1714564800.0  # 2024-05-01T12:00:00Z
    assert cpu[2].wall_time == pytest.approx(start + 1.0)
    gpu = acc.Scalars("tfres/gpu0_util_percent")
    assert [e.step for e in gpu] == [0, 1000]  # None is left out, not written as 0


def test_tensorboard_missing_is_a_clear_error(record, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto", None)
    with pytest.raises(MissingDependencyError, match=r"tfres\[tensorboard\]"):
        write_tensorboard(record, tmp_path)


def test_export_cli_from_the_store_and_from_a_file(record, store_path, tmp_path, capsys):
    with Store(store_path) as s:
        n = s.save(record)
    assert main(["export", str(n)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("t_seconds,cpu_percent,")
    assert len(out.splitlines()) == 5

    file = save(record, tmp_path / "r.json")
    target = tmp_path / "r.jsonl"
    assert main(["export", str(file), "--out", str(target)]) == 0  # format from the suffix
    assert len(target.read_text().splitlines()) == 4
    assert main(["export", str(file), "--tensorboard", str(tmp_path / "tb")]) == 0
    assert list((tmp_path / "tb").glob("events.out.tfevents.*"))


def test_export_of_an_unknown_run_is_one_line(capsys):
    Store().close()  # an empty store
    assert main(["export", "999"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tfres: error: no run '999'") and err.count("\n") == 1

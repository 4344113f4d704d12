"""tfres.record: the versioned run record, atomic saves and one-line load errors."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from tfres import record as rec
from tfres.errors import RecordError
from tfres.record import FORMAT, VERSION, Record, dumps, load, loads, save
from tfres.timeline import GpuSample, Mark, Phase, Sample

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


def _full_record() -> Record:
    r = Record(kind="run", label="exp 1", command=["python", "train.py", "--epochs", "3"])
    r.started_at, r.ended_at, r.elapsed_seconds = (
        "2024-05-01T10:00:00Z",
        "2024-05-01T10:01:00Z",
        60.0,
    )
    r.status, r.exit_code, r.job, r.worker = "ok", 0, "job-a", 1
    r.fingerprint = {"host": {"hostname": "box", "source": "platform"}, "gpus": []}
    r.interval_seconds = 0.1
    r.samples = [
        Sample(
            t_seconds=0.0,
            cpu_percent=12.5,
            cpu_per_core_percent=(10.0, 15.0),
            memory_used_bytes=2**30,
            process_rss_bytes=2**28,
            gpus=(GpuSample(index=0, util_percent=50.0, throttle_reasons=("sw_power_cap",)),),
            tf_memory={"CPU:0": {"current_bytes": 10, "peak_bytes": 20}},
        ),
        Sample(t_seconds=0.1, cpu_percent=None, process_cpu_percent=95.0),
    ]
    r.marks = [Mark(0.05, "epoch 1")]
    r.phases = [Phase("warmup", 0.0, 0.05), Phase("train", 0.05)]
    r.steps = [{"t_seconds": 0.06, "duration_seconds": 0.01, "epoch": 0, "step": 1}]
    r.workloads = [{"name": "cpu_matmul", "device": "host", "seconds_median": 0.2, "error": None}]
    r.findings = [{"rule": "x", "severity": "info", "title": "t", "evidence": "e", "span": None}]
    r.control = {"budget": {"budget_bytes": 2**31}}
    r.notes = ["GPU 0: NVML error"]
    r.extra = {"anything": [1, 2, 3]}
    return r


def test_round_trip_keeps_every_field(tmp_path):
    original = _full_record()
    path = save(original, tmp_path / "a.json")
    back = load(path)
    assert back.to_dict() == original.to_dict()
    assert back.samples[0].gpus[0].throttle_reasons == ("sw_power_cap",)
    assert back.phases[1].end_seconds is None
    assert back.host == "box"
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT and data["version"] == VERSION


def test_gz_round_trip(tmp_path):
    path = save(_full_record(), tmp_path / "a.json.gz")
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert load(path).to_dict() == _full_record().to_dict() | {
        "id": load(path).id,
        "created_at": load(path).created_at,
    }


def test_atomic_save_leaves_no_temp_files(tmp_path):
    r = _full_record()
    for _ in range(3):
        save(r, tmp_path / "a.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_failed_write_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = save(_full_record(), tmp_path / "a.json")
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rec.os, "replace", broken_replace)
    r = _full_record()
    r.label = "changed"
    with pytest.raises(OSError):
        save(r, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_nan_and_infinity_are_saved_as_null(tmp_path):
    r = Record()
    r.samples = [Sample(t_seconds=0.0, cpu_percent=float("nan"))]
    r.workloads = [{"name": "w", "throughput": float("inf")}]
    back = load(save(r, tmp_path / "nan.json"))
    assert back.samples[0].cpu_percent is None
    assert back.workloads[0]["throughput"] is None


def test_every_truncation_point_says_truncated(tmp_path):
    r = Record(label='a "quoted" label \\ with escapes', command=["x"])
    r.samples = [Sample(t_seconds=0.5, cpu_percent=1.25)]
    text = dumps(r)
    for cut in range(1, len(text) - 1):
        with pytest.raises(RecordError) as info:
            loads(text[:cut], source="record x.json")
        message = str(info.value)
        assert "truncated" in message, (cut, text[:cut][-20:], message)
        assert message.startswith("record x.json") and "\n" not in message


def test_truncated_file_names_the_file_and_byte(tmp_path):
    path = save(_full_record(), tmp_path / "run.json")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(RecordError) as info:
        load(path)
    assert str(info.value) == (
        f"record {path} is truncated (ends at byte {len(data) // 2}); re-run or pick another record"
    )


def test_truncated_gz(tmp_path):
    path = save(_full_record(), tmp_path / "run.json.gz")
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(RecordError, match="truncated or damaged gzip"):
        load(path)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'{"foo": 1}', "not a tfres record"),
        (b"[1, 2, 3]", "not a tfres record"),
        (b"hello world", "not valid JSON"),
        (b"", "is empty"),
        (b"   \n", "is empty"),
        (b"\xff\xfe\x00garbage", "not text"),
        (b'{"format": "tfres.record", "version": 99}', "newer tfres"),
        (b'{"format": "tfres.record", "version": "one"}', "no valid record version"),
        (b'{"format": "tfres.record", "version": 1, "samples": ["x"]}', "damaged"),
        (b'{"format": "tfres.record", "version": 1, "marks": [{"label": "m"}]}', "damaged"),
    ],
)
def test_bad_files_give_one_line_naming_the_file(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(RecordError) as info:
        load(path)
    message = str(info.value)
    assert words in message
    assert str(path) in message
    assert "\n" not in message


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(RecordError, match="does not exist"):
        load(tmp_path / "nope.json")
    with pytest.raises(RecordError, match="is a folder"):
        load(tmp_path)


def test_older_version_and_unknown_keys_are_read(tmp_path):
    """Readers accept what they know and ignore unknown keys (forward-compatible extras)."""
    data = {"format": FORMAT, "version": 1, "label": "old", "a_future_key": {"x": 1}}
    samples = [{"t_seconds": 1.0, "cpu_percent": 5.0, "future_metric": 7}]
    data["samples"] = samples
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    back = load(path)
    assert back.label == "old"
    assert back.samples[0].cpu_percent == 5.0
    assert back.status == "running"  # defaults fill what an older writer left out


def test_gzip_magic_detected_whatever_the_suffix(tmp_path):
    path = tmp_path / "renamed.json"
    path.write_bytes(gzip.compress(dumps(_full_record()).encode()))
    assert load(path).label == "exp 1"


def test_ids_are_unique_and_sortable():
    ids = [rec.new_record_id() for _ in range(200)]
    assert len(set(ids)) == 200
    assert all(len(i.split("-")[0]) == 16 for i in ids)


def test_save_creates_parent_folders(tmp_path):
    path = save(Record(), tmp_path / "deep" / "er" / "r.json")
    assert path.exists() and os.path.getsize(path) > 0


def test_corruption_in_the_middle_is_not_called_truncation():
    text = dumps(_full_record())
    middle = text.index(',"', len(text) // 2) + 1  # just after a comma between members
    broken = text[:middle] + "@#" + text[middle:]
    with pytest.raises(RecordError) as info:
        loads(broken, source="record y.json")
    assert "not valid JSON" in str(info.value) and "truncated" not in str(info.value)
    with pytest.raises(RecordError, match="not valid JSON"):
        loads(text + "x", source="record y.json")


# -- what a record keeps of a command line (docs/reliability.md, "Redaction") ------------------
SECRET_COMMAND = [
    "python",
    "train.py",
    "--api-key=sk-12345",
    "--password",
    "hunter3",
    "--token",
    "tok-1",
    "--secret=s3",
    "HF_TOKEN=hf-9",
    "postgres://u:pw@h/db",
    "--epochs",
    "3",
]


def test_secrets_in_the_command_never_reach_the_file(tmp_path):
    r = Record(kind="run", command=SECRET_COMMAND)
    assert r.command == [
        "python",
        "train.py",
        "--api-key=***",
        "--password",
        "***",
        "--token",
        "***",
        "--secret=***",
        "HF_TOKEN=***",
        "postgres://u:***@h/db",
        "--epochs",
        "3",
    ]
    r.command = list(SECRET_COMMAND)  # set after the record was made: masked on writing too
    text = save(r, tmp_path / "r.json").read_text()
    for secret in ("sk-12345", "hunter3", "tok-1", 's3"', "hf-9", ":pw@"):
        assert secret not in text
    assert load(tmp_path / "r.json").command[:3] == ["python", "train.py", "--api-key=***"]


def test_record_files_are_owner_only(tmp_path):
    os.umask(0o022)
    path = save(Record(), tmp_path / "r.json")
    assert path.stat().st_mode & 0o777 == 0o600


def test_non_utf8_bytes_in_command_and_label_are_kept_as_escapes(tmp_path):
    name = os.fsdecode(b"\xff\xfe.csv")  # how Python hands over a non-UTF-8 file name
    r = Record(kind="run", command=["python3", "-c", "pass", name], label=os.fsdecode(b"l\xff"))
    text = dumps(r)
    text.encode("utf-8")  # valid UTF-8, for SQLite and every JSON reader
    back = loads(text)
    assert back.command[-1] == "\\xff\\xfe.csv" and back.label == "l\\xff"
    # surrogate escapes anywhere else (a note, the fingerprint) are cleaned when written
    r.notes.append(name)
    assert loads(dumps(r)).notes == ["\\xff\\xfe.csv"]


def test_escaped_surrogates_from_an_older_file_are_read_as_escapes():
    text = dumps(Record(label="x")).replace('"label":"x"', '"label":"a\\udcffb"')
    assert loads(text).label == "a\\xffb"


# -- damaged field types: one line naming the field (docs/reliability.md) ------------------
@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("elapsed_seconds", "abc", "elapsed_seconds should be a finite number or null, got 'abc'"),
        ("label", 12345, "label should be text or null, got 12345"),
        ("id", None, "id should be text, got null"),
        ("command", "notalist", "command should be a list of texts or null, got 'notalist'"),
        ("exit_code", 10**30, "exit_code should be a whole number or null"),
        ("samples", [{"t_seconds": "x"}], "samples[0].t_seconds should be a finite number"),
        ("fingerprint", {"cpu": {"logical_cores": "2"}}, "fingerprint.cpu.logical_cores"),
        ("findings", [{"title": ["a"]}], "findings[0].title should be text or null"),
        ("status", True, "status should be text, got True"),
    ],
)
def test_damaged_field_types_give_one_line(field, value, words):
    data = json.loads(dumps(_full_record()))
    data[field] = value
    with pytest.raises(RecordError) as info:
        loads(json.dumps(data), source="record d.json")
    message = str(info.value)
    assert words in message and message.startswith("record d.json is a damaged tfres record")
    assert "\n" not in message


def test_null_lists_and_objects_read_as_empty():
    data = json.loads(dumps(_full_record()))
    data.update(fingerprint=None, samples=None, notes=None, extra=None)
    r = loads(json.dumps(data))
    assert r.fingerprint == {} and r.samples == [] and r.notes == [] and r.extra == {}
    assert r.host is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[" * 100_000, "nests too deeply"),
        (
            '{"format": "tfres.record", "version": 1, "extra": {"a": ' + "[" * 80 + "]" * 80 + "}}",
            "nests deeper than 64 levels",
        ),
        ('{"format": "tfres.record", "version": 1, "elapsed_seconds": NaN}', "NaN"),
        ('{"format": "tfres.record", "version": 1, "extra": {"x": Infinity}}', "Infinity"),
    ],
)
def test_deep_nesting_and_non_numbers_give_one_line(text, words):
    with pytest.raises(RecordError, match=words) as info:
        loads(text)
    assert "\n" not in str(info.value)


# -- only regular files, and not too much of them --------------------------------------------
def test_a_device_or_fifo_is_refused_without_reading(tmp_path):
    with pytest.raises(RecordError, match="not a regular file"):
        load("/dev/zero")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(RecordError, match="not a regular file"):
        load(fifo)  # would wait forever for a writer if it were opened for reading


def test_a_file_over_the_cap_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(rec, "MAX_RECORD_BYTES", 1000)
    big = tmp_path / "big.json"
    big.write_text(" " * 2000)
    with pytest.raises(RecordError, match="over the 1000 B a tfres record may hold"):
        load(big)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * 100_000))  # small on disk, large unpacked
    with pytest.raises(RecordError, match=r"\(uncompressed\) is .* over the"):
        load(bomb)

"""Property: any mutation of a valid record loads as a valid record or raises one RecordError
line, and ``tfres show FILE`` prints it or exits non-zero with one line: never an internal
error. Mutations: a value replaced by another JSON type, a key dropped, a value nested in
lists, the text truncated."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfres.cli import main
from tfres.errors import RecordError
from tfres.record import Record, dumps, loads
from tfres.timeline import GpuSample, Mark, Phase, Sample

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


def _valid_record() -> dict[str, Any]:
    record = Record(
        kind="run",
        label="base",
        command=["python", "train.py", "--epochs", "3"],
        status="ok",
        exit_code=0,
        elapsed_seconds=2.5,
        interval_seconds=0.1,
        started_at="2026-01-01T00:00:00Z",
        samples=[
            Sample(
                t_seconds=t / 10,
                cpu_percent=40.0,
                cpu_per_core_percent=(30.0, 50.0),
                process_cpu_percent=90.0,
                process_rss_bytes=2**27 + t,
                gpus=(GpuSample(index=0, util_percent=50.0, memory_used_bytes=2**30),),
                tf_memory={"CPU:0": {"current_bytes": 10, "peak_bytes": 20}},
            )
            for t in range(3)
        ],
        marks=[Mark(t_seconds=0.1, label="epoch 1")],
        phases=[Phase(name="fit", start_seconds=0.0, end_seconds=0.2)],
        steps=[{"t_seconds": 0.1, "duration_seconds": 0.05, "epoch": 0, "step": 1}],
        workloads=[{"name": "cpu_matmul", "device": "CPU:0", "seconds": 0.5, "details": {}}],
        findings=[{"rule": "r", "severity": "warning", "title": "T", "evidence": ["e"]}],
        aggregates=[
            {"start_seconds": 0.0, "end_seconds": 10.0, "mean": {"cpu_percent": 3.0}},
        ],
        notes=["a note"],
        control={"devices": ["intra-op threads: 2"]},
    )
    record.fingerprint = {
        "host": {"hostname": "box", "os": "Linux"},
        "cpu": {"model": "EPYC", "logical_cores": 2, "usable_cores": 2.0, "isa_flags": {}},
        "memory": {"total_bytes": 2**34},
        "gpus": [{"name": "L4", "memory_total_bytes": 2**34}],
        "tensorflow": {"installed": True, "version": "2.21.0"},
        "env": {"TF_CPP_MIN_LOG_LEVEL": "2"},
    }
    return json.loads(dumps(record))


BASE = _valid_record()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in ``obj`` (keys and list indices)."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for key, value in obj.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out += _paths(value, (*prefix, i))
    return out


PATHS = _paths(BASE)


def _mutated(data: Any, path: tuple[Any, ...], how: str, value: Any) -> Any:
    data = json.loads(json.dumps(data))
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "replace":
        parent[last] = value
    elif how == "drop":
        del parent[last]
    else:  # nest
        parent[last] = [[parent[last]]]
    return data


mutation = st.tuples(
    st.sampled_from(PATHS), st.sampled_from(("replace", "drop", "nest")), json_values
)


def _check_loads(text: str) -> None:
    try:
        record = loads(text, source="record m.json")
    except RecordError as err:
        message = str(err)
        assert message and "\n" not in message and message.startswith("record m.json")
        return
    assert isinstance(record, Record)
    json.loads(dumps(record))  # a record that loads can be written again


@settings(max_examples=300, deadline=None)
@given(mutation)
def test_any_mutated_record_loads_or_raises_one_line(change):
    path, how, value = change
    _check_loads(json.dumps(_mutated(BASE, path, how, value)))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_any_truncation_raises_one_line(data):
    text = json.dumps(BASE)
    cut = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    _check_loads(text[:cut])


def _show(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["show", str(path)])
    return code, out.getvalue(), err.getvalue()


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(mutation)
def test_tfres_show_prints_or_fails_in_one_line(tmp_path, change):
    path, how, value = change
    target = tmp_path / "m.json"
    target.write_text(json.dumps(_mutated(BASE, path, how, value)))
    code, out, err = _show(target)
    assert "internal error" not in err and "Traceback" not in err
    if code == 0:
        assert "run " in out and err == ""
    else:
        assert code == 1 and out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tfres: error: record "), err


def test_the_unmutated_record_shows(tmp_path):
    target = tmp_path / "m.json"
    target.write_text(json.dumps(BASE))
    code, out, err = _show(target)
    assert code == 0 and "python train.py --epochs 3" in out, err


def test_a_sample_reading_that_is_a_list_is_refused_in_one_line(tmp_path):
    """Found by the property test: ``samples[2].process_cpu_percent = []`` reached the
    summary's arithmetic. A sample's unit-named readings are one number or null."""
    target = tmp_path / "m.json"
    target.write_text(
        json.dumps(_mutated(BASE, ("samples", 2, "process_cpu_percent"), "replace", []))
    )
    code, out, err = _show(target)
    assert code != 0 and "internal error" not in err and err.count("\n") == 1
    assert "process_cpu_percent" in err

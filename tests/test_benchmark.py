"""tfres.benchmark(): a real run of every workload at tiny sizes, under the real sampler."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _bench_shared import HOSTILE_LABEL, TINY_PARAMS, WORKLOAD_NAMES, tiny_bench_record
from tfres.benchmark import bench, resolve_devices, select_workloads
from tfres.errors import NoGpuError
from tfres.record import Record, dumps, loads
from tfres.store import Store
from tfres.workloads import RESULT_KEYS, WORKLOADS


@pytest.fixture(scope="module")
def record() -> Record:
    return tiny_bench_record()


def test_record_is_a_finished_bench(record: Record) -> None:
    assert record.kind == "bench"
    assert record.status == "ok"
    assert record.label == HOSTILE_LABEL
    assert record.elapsed_seconds and record.elapsed_seconds > 0
    assert record.fingerprint.get("cpu"), "the fingerprint is in the record"
    assert record.extra["bench"]["devices"] == ["CPU:0"]
    # the sampler's facts sit where docs/record-format.md says, as in every other record
    assert "timeline" in record.extra and "sampler_cpu_seconds" in record.extra
    assert "sampler" not in record.extra
    assert record.extra["bench"]["params"] == TINY_PARAMS


def test_every_result_has_exactly_the_contract_keys(record: Record) -> None:
    assert record.workloads
    for w in record.workloads:
        assert tuple(w) == RESULT_KEYS
        assert w["error"] is None, w
        assert w["repeats"] >= 1
        assert w["seconds_min"] <= w["seconds_median"] <= w["seconds_max"]
        assert w["throughput"] > 0 and w["throughput_unit"]
        assert w["start_seconds"] <= w["end_seconds"] <= record.elapsed_seconds + 1e-6
        assert w["gpu_util_percent_mean"] is None  # no GPU here: None, never 0
        assert w["process_cpu_percent_mean"] is not None and w["process_cpu_percent_mean"] >= 0


def test_each_workload_ran_on_its_device(record: Record) -> None:
    seen = {(w["name"], w["device"]) for w in record.workloads}
    assert ("cpu_matmul", "host") in seen
    for name in WORKLOAD_NAMES[1:]:
        assert (name, "CPU:0") in seen
    sizes = [w["params"]["n"] for w in record.workloads if w["name"] == "cpu_matmul"]
    assert sizes == TINY_PARAMS["cpu_matmul"]["sizes"]


def test_one_phase_per_workload_and_device_covers_its_results(record: Record) -> None:
    phases = {p.name: p for p in record.phases}
    assert list(phases) == [
        "cpu_matmul host",
        "tf_matmul CPU:0",
        "train_small CPU:0",
        "batch_sweep CPU:0",
        "input_pipeline CPU:0",
    ]
    for w in record.workloads:
        phase = phases[f"{w['name']} {w['device']}"]
        assert phase.start_seconds - 1e-6 <= w["start_seconds"]
        assert w["end_seconds"] <= phase.end_seconds + 1e-6


def test_samples_cover_the_run_and_feed_the_results(record: Record) -> None:
    assert len(record.samples) >= 3
    assert record.samples[-1].t_seconds >= record.phases[-1].end_seconds - 0.2
    rss = [w["peak_rss_bytes"] for w in record.workloads]
    assert all(r is not None and r > 10 * 2**20 for r in rss), rss
    peaks = [s.process_rss_bytes for s in record.samples if s.process_rss_bytes]
    assert max(rss) <= max(peaks)


def test_findings_come_from_diagnose_and_the_record_round_trips(record: Record) -> None:
    assert isinstance(record.findings, list)
    for f in record.findings:
        assert {"rule", "severity", "title", "evidence", "cause", "fix"} <= set(f)
    again = loads(dumps(record))
    assert again.workloads == json.loads(json.dumps(record.workloads))
    assert [p.name for p in again.phases] == [p.name for p in record.phases]


def test_bench_saves_to_the_store_by_default(store_path: Path) -> None:
    r = bench(quick=True, only=["cpu_matmul"], params={"cpu_matmul": {"sizes": [32]}}, label="s")
    with Store(store_path) as s:
        runs = s.runs()
        assert [run.id for run in runs] == [r.id]
        assert runs[0].kind == "bench" and runs[0].what == "bench: cpu_matmul"
        assert s.get(r.id).workloads == json.loads(json.dumps(r.workloads))


def test_store_false_saves_nothing(store_path: Path) -> None:
    bench(only=["cpu_matmul"], params={"cpu_matmul": {"sizes": [32], "repeats": 1}}, store=False)
    assert not store_path.exists() or Store(store_path).runs() == []


def test_unknown_workload_and_parameter_are_one_line_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown workload 'nope'; choose from: cpu_matmul"):
        bench(only=["nope"], store=False)
    with pytest.raises(ValueError, match="has no parameter 'size'"):
        bench(only=["cpu_matmul"], params={"cpu_matmul": {"size": 3}}, store=False)
    with pytest.raises(ValueError, match="device must be one of cpu, gpu, all"):
        resolve_devices("tpu")
    with pytest.raises(ValueError, match="interval"):
        bench(only=["cpu_matmul"], interval=-1, store=False)


def test_default_selection_is_the_registry_order() -> None:
    names = [w.name for w in select_workloads(None)]
    assert names[:5] == ["cpu_matmul", "tf_matmul", "train_small", "batch_sweep", "input_pipeline"]
    assert names == [w.name for w in WORKLOADS.values() if w.default]


def test_device_gpu_without_a_gpu_says_why(record: Record) -> None:
    # this machine has no GPU and a CPU build of TensorFlow: a real NoGpuError
    with pytest.raises(NoGpuError) as info:
        resolve_devices("gpu", fingerprint=record.fingerprint)
    text = str(info.value)
    assert "\n" not in text
    assert "no GPU for --device gpu" in text and "CPU-only build" in text
    assert "--device cpu" in text
    assert resolve_devices("all") == ["CPU:0"]


BLOCK_TF = """
import json, sys
class BlockTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "keras"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, BlockTensorFlow())
import tfres
r = tfres.bench(only=["cpu_matmul", "tf_matmul"], store=False,
                params={"cpu_matmul": {"sizes": [32], "repeats": 1}})
print(json.dumps({"workloads": r.workloads, "notes": r.notes, "tf": "tensorflow" in sys.modules}))
"""


def test_without_tensorflow_cpu_matmul_runs_and_tf_workloads_say_how_to_install() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCK_TF], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["tf"] is False
    by_name = {w["name"]: w for w in data["workloads"]}
    assert by_name["cpu_matmul"]["error"] is None and by_name["cpu_matmul"]["throughput"] > 0
    assert "pip install 'tfres[cpu]'" in by_name["tf_matmul"]["error"]
    assert by_name["tf_matmul"]["throughput"] is None
    assert any("tf_matmul skipped" in n and "tfres[cpu]" in n for n in data["notes"])

"""tfres.watch.monitor(): a block of Python code in, a saved record out."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import psutil
import pytest

import tfres
from tfres.backends.tf_runtime import memory_info
from tfres.record import load
from tfres.store import Store


@pytest.fixture(scope="module")
def tf():
    """TensorFlow, imported once for this module (the sampler itself never imports it)."""
    return pytest.importorskip("tensorflow")


def test_monitor_gives_a_saved_record_with_marks_and_phases(tmp_path, store_path):
    out = tmp_path / "exp1.json"
    with tfres.monitor(label="exp1", interval=0.02, out=out) as m:
        data = bytearray(32 * 2**20)
        m.mark("allocated")
        with m.phase("work"):
            sum(range(200_000))
    record = m.record
    assert record.status == "ok" and record.label == "exp1"
    assert record.samples[0].t_seconds == 0.0
    assert len(record.samples) >= 2
    assert [mk.label for mk in record.marks] == ["allocated"]
    assert [p.name for p in record.phases] == ["work"]
    assert max(s.process_rss_bytes or 0 for s in record.samples) > 32 * 2**20
    assert record.extra["timeline"]["window_seconds"] == 600.0
    assert "cpu_share_of" in record.extra
    assert record.fingerprint  # the machine is in the record
    assert load(out).id == record.id
    with Store(store_path) as s:
        assert s.get(record.id).label == "exp1"
    assert m.store_number is not None
    del data


def test_an_exception_still_saves_a_failed_record(store_path):
    with pytest.raises(ZeroDivisionError):
        with tfres.monitor(label="boom", interval=0.05) as m:
            _ = 1 / 0
    assert m.record.status == "failed"
    assert "ZeroDivisionError" in m.record.end_reason
    with Store(store_path) as s:
        assert s.get(m.record.id).status == "failed"


def test_ctrl_c_gives_a_partial_record():
    with pytest.raises(KeyboardInterrupt):
        with tfres.monitor(interval=0.05, store=False) as m:
            raise KeyboardInterrupt
    assert m.record.status == "partial"


def test_store_false_keeps_it_out_of_the_store(store_path):
    with tfres.monitor(interval=0.05, store=False) as m:
        pass
    assert m.store_number is None
    with Store(store_path) as s:
        assert s.runs() == []


def test_monitor_does_not_import_tensorflow_or_start_it(python, tmp_path):
    code = (
        "import sys, tfres\n"
        "with tfres.monitor(label='x', interval=0.05) as m:\n"
        "    pass\n"
        "assert 'tensorflow' not in sys.modules\n"
        "assert m.record.samples and not m.record.samples[-1].tf_memory\n"
    )
    out = subprocess.run(
        [python, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"TFRES_STORE": str(tmp_path / "s.sqlite"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.onednn
def test_tensorflow_allocator_is_read_once_the_program_started_it(tf):
    with tfres.monitor(interval=0.02, store=False) as m:
        big = tf.ones((1024, 1024))  # 4 MiB in TF's CPU allocator
        m.mark("tensor made")
        m.sampler.sample_once()
        float(tf.reduce_sum(big))
    with_tf = [s for s in m.record.samples if s.tf_memory]
    if memory_info("CPU:0") is None:  # oneDNN off: TensorFlow keeps no CPU statistics
        assert not with_tf
        assert any("no allocator statistics for CPU:0" in n for n in m.record.notes)
        return
    assert with_tf, "no sample read the TensorFlow allocator"
    cpu = with_tf[-1].tf_memory["CPU:0"]
    assert cpu["peak_bytes"] >= 4 * 2**20
    assert set(cpu) == {"current_bytes", "peak_bytes"}


def _detached_hog(python: str) -> int:
    """A busy-looping process that is not our descendant (its parent exits at once)."""
    code = (
        "import subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'while True: pass'], "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"
    )
    out = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    return int(out.stdout)


def test_busy_processes_outside_the_run_are_named_over_the_whole_run(python):
    hog = _detached_hog(python)
    try:
        hog_proc = psutil.Process(hog)
        deadline = time.monotonic() + 5.0
        while sum(hog_proc.cpu_times()[:2]) < 0.1 and time.monotonic() < deadline:
            time.sleep(0.05)  # it runs before the block starts
        with tfres.monitor(interval=0.1, store=False) as m:
            time.sleep(1.5)
        top = m.record.extra["top_processes"]
        found = [p for p in top if p["pid"] == hog]
        assert found and found[0]["cpu_percent"] > 50, top
        assert os.getpid() not in [p["pid"] for p in top]
        assert [p["cpu_percent"] for p in top] == sorted(
            (p["cpu_percent"] for p in top), reverse=True
        )
        assert "scans" in m.record.extra["top_processes_source"]
    finally:
        os.kill(hog, signal.SIGKILL)

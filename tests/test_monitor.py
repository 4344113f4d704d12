"""tfres.monitor(): a block of Python code in, a saved record out."""

from __future__ import annotations

import subprocess

import pytest

import tfres
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


def test_tensorflow_allocator_is_read_once_the_program_started_it(tf):
    with tfres.monitor(interval=0.02, store=False) as m:
        big = tf.ones((1024, 1024))  # 4 MiB in TF's CPU allocator
        m.mark("tensor made")
        m.sampler.sample_once()
        float(tf.reduce_sum(big))
    with_tf = [s for s in m.record.samples if s.tf_memory]
    assert with_tf, "no sample read the TensorFlow allocator"
    cpu = with_tf[-1].tf_memory["CPU:0"]
    assert cpu["peak_bytes"] >= 4 * 2**20
    assert set(cpu) == {"current_bytes", "peak_bytes"}

"""tfres.callbacks.ResourceMonitor with a tiny real Keras model.fit on the CPU."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tfres
from tfres.backends.tf_runtime import memory_info
from tfres.store import Store

keras = pytest.importorskip("keras")


@pytest.fixture(scope="module")
def model_and_data():
    pytest.importorskip("tensorflow")
    rng = np.random.default_rng(0)
    # big enough that TensorFlow's CPU allocator tracks it (tiny tensors show a peak of 0)
    x = rng.normal(size=(256, 256)).astype("float32")
    y = rng.normal(size=(256, 1)).astype("float32")
    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(256), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)  # trace once, for every test here
    return model, x, y


def sampler_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "tfres-sampler" and t.is_alive())


@pytest.mark.onednn
def test_epochs_steps_and_allocator_peaks_in_a_saved_record(model_and_data, store_path):
    model, x, y = model_and_data
    cb = tfres.callbacks.ResourceMonitor(label="tiny", interval=0.02)
    model.fit(x, y, batch_size=64, epochs=2, verbose=0, callbacks=[cb])
    record = cb.record
    assert record.status == "ok" and record.label == "tiny"
    assert [p.name for p in record.phases] == ["epoch 1", "epoch 2"]
    assert [m.label for m in record.marks] == ["epoch 1", "epoch 2"]
    assert [(s["epoch"], s["step"]) for s in record.steps] == [
        (e, b) for e in range(2) for b in range(4)
    ]
    assert all(s["duration_seconds"] > 0 for s in record.steps)
    ts = [s["t_seconds"] for s in record.steps]
    assert ts == sorted(ts)
    epoch1 = record.phases[0]
    assert epoch1.start_seconds <= ts[0] and ts[3] <= epoch1.end_seconds
    epochs = record.extra["epochs"]
    assert [e["steps"] for e in epochs] == [4, 4]
    assert "loss" in epochs[1]["logs"]
    if memory_info("CPU:0") is not None:  # TensorFlow keeps CPU allocator statistics here
        assert epochs[0]["tf_peak_bytes"]["CPU:0"] > 0
        assert record.samples and any(s.tf_memory for s in record.samples)
    else:  # oneDNN off (TF's default on CPUs without AVX512_VNNI/AMX): said, not guessed
        assert "CPU:0" not in (epochs[0]["tf_peak_bytes"] or {})
        assert any("no allocator statistics for CPU:0" in n for n in record.notes)
    with Store(store_path) as s:
        assert s.get(record.id).steps == record.steps
    assert sampler_threads() == 0


def test_attached_to_a_running_monitor(model_and_data):
    model, x, y = model_and_data
    with tfres.monitor(label="outer", interval=0.05, store=False) as m:
        m.mark("before fit")
        cb = tfres.callbacks.ResourceMonitor(monitor=m)
        model.fit(x, y, batch_size=128, epochs=1, verbose=0, callbacks=[cb])
        assert sampler_threads() == 1  # the monitor's own, no second one
    assert cb.record is m.record
    assert [mk.label for mk in m.record.marks] == ["before fit", "epoch 1"]
    assert len(m.record.steps) == 2
    assert m.record.status == "ok"


def test_sample_false_only_times_steps(model_and_data, store_path):
    model, x, y = model_and_data
    cb = tfres.callbacks.ResourceMonitor(sample=False, store=False)
    before = sampler_threads()
    model.fit(x, y, batch_size=64, epochs=1, verbose=0, callbacks=[cb])
    assert sampler_threads() == before == 0
    assert len(cb.steps) == 4 and cb.record is not None
    assert cb.record.samples == [] and len(cb.record.steps) == 4
    assert [p.name for p in cb.record.phases] == ["epoch 1"]
    with Store(store_path) as s:
        assert s.runs() == []


def test_long_trainings_thin_their_steps(model_and_data):
    model, x, y = model_and_data
    cb = tfres.callbacks.ResourceMonitor(sample=False, store=False, max_steps=4)
    model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[cb])  # 16 steps
    assert len(cb.steps) <= 4
    assert cb.record.extra["steps_stride"] >= 4
    assert [e["steps"] for e in cb.epochs] == [8, 8]


def test_docstring_ends_with_the_fit_example():
    doc = tfres.callbacks.ResourceMonitor.__doc__.strip().splitlines()
    assert doc[-1].strip() == "model.fit(x, y, epochs=3, callbacks=[cb])"


def test_under_tfres_run_steps_go_to_the_steps_file(model_and_data, tmp_path, monkeypatch):
    from tfres.watch.steps import read_steps_file

    path = tmp_path / "steps.jsonl"
    monkeypatch.setenv("TFRES_STEPS_FILE", str(path))
    cb = tfres.callbacks.ResourceMonitor(sample=False, store=False)
    model, x, y = model_and_data
    model.fit(x, y, batch_size=64, epochs=1, verbose=0, callbacks=[cb])
    steps = read_steps_file(path)
    assert [(s["epoch"], s["step"]) for s in steps] == [(0, b) for b in range(4)]
    assert [s["duration_seconds"] for s in steps] == [s["duration_seconds"] for s in cb.steps]


def test_keras_keeps_dispatching_batch_ends_on_a_thread():
    # overriding on_train_batch_end would make Keras (on backends that dispatch batch ends
    # on a thread, e.g. JAX) turn each step's logs into numbers on the training thread
    cls = tfres.callbacks.ResourceMonitor
    assert cls.on_train_batch_end is keras.callbacks.Callback.on_train_batch_end
    assert cls.on_batch_end is keras.callbacks.Callback.on_batch_end

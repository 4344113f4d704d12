from __future__ import annotations

import numpy as np
import pytest

import synthetic as syn
from tfres.errors import NoGpuError
from tfres.placement.pipeline import (
    GPU_BUSY_PERCENT,
    OverlapReport,
    SpanRecorder,
    input_pipeline,
    naive_pipeline,
    overlap,
)
from tfres.timeline import GpuSample

# -- the overlap measure: interval arithmetic on known spans ----------------------------------


def test_overlap_of_known_spans():
    # preprocessing busy 0-4 and 6-8; compute busy 3-7: together 3-4 and 6-7 = 2 s of 10
    report = overlap(
        preprocess_spans=[(0, 2), (1, 4), (6, 8)],
        compute_spans=[(3, 5), (5, 7)],
        window=(0, 10),
    )
    assert report.source == "spans"
    assert report.run_seconds == 10
    assert report.preprocess_busy_seconds == pytest.approx(6.0)
    assert report.compute_busy_seconds == pytest.approx(4.0)
    assert report.both_busy_seconds == pytest.approx(2.0)
    assert report.overlap_fraction == pytest.approx(0.2)
    assert report.hidden_fraction == pytest.approx(2 / 6)
    assert report.compute_busy_fraction == pytest.approx(0.4)
    assert OverlapReport.from_dict(report.to_dict()) == report


def test_sequential_spans_do_not_overlap_and_window_clips():
    report = overlap(preprocess_spans=[(0, 1), (2, 3)], compute_spans=[(1, 2), (3, 4)])
    assert report.run_seconds == 4
    assert report.both_busy_seconds == 0.0
    clipped = overlap(preprocess_spans=[(0, 10)], compute_spans=[(0, 10)], window=(2, 4))
    assert clipped.both_busy_seconds == pytest.approx(2.0)
    assert clipped.overlap_fraction == pytest.approx(1.0)


def test_overlap_reads_record_spans_and_gpu_samples():
    r = syn.record()
    r.extra["spans"] = {"preprocess": [[0.0, 2.0]], "compute": [[1.0, 3.0]]}
    assert overlap(r).both_busy_seconds == pytest.approx(1.0)

    # GPU busy in the first half, host busy in the second: they meet for one interval
    n = 10
    gpus = [[GpuSample(0, util_percent=90.0 if i < 6 else 0.0)] for i in range(n)]
    cpu = [10.0 if i < 5 else 150.0 for i in range(n)]
    r = syn.record(samples_=syn.samples(n, process_cpu=cpu, gpus=gpus))
    report = overlap(r)
    assert report.source == "samples"
    assert report.compute_busy_seconds == pytest.approx(0.5)  # intervals ending at samples 1..5
    assert report.preprocess_busy_seconds == pytest.approx(0.5)  # ending at samples 5..9
    assert report.both_busy_seconds == pytest.approx(0.1)  # the one ending at sample 5
    assert GPU_BUSY_PERCENT > 0


def test_overlap_without_data_says_how_to_get_it():
    with pytest.raises(ValueError, match="timestamps=True"):
        overlap(syn.record())
    with pytest.raises(ValueError, match="no spans"):
        overlap(preprocess_spans=[], compute_spans=[])
    r = syn.record()
    with pytest.raises(ValueError, match="no phase 'nope'"):
        overlap(r, phase="nope")


def test_span_recorder_with_a_fake_clock():
    now = [50.0]
    rec = SpanRecorder(clock=lambda: now[0])
    rec.add_preprocess(np.array([[50.0, 50.5], [50.2, 50.9]]))
    now[0] = 50.4
    with rec.step():
        now[0] = 51.0
    report = rec.report()
    assert report.preprocess_busy_seconds == pytest.approx(0.9)
    assert report.compute_busy_seconds == pytest.approx(0.6)
    assert report.both_busy_seconds == pytest.approx(0.5)
    assert rec.to_extra(t0=50.0)["compute"] == [[pytest.approx(0.4), pytest.approx(1.0)]]


# -- building pipelines with real tf.data --------------------------------------------------


@pytest.fixture(scope="module")
def tf():
    from tfres.backends.tf import load_tensorflow

    return load_tensorflow()


def _double(x, y):
    return x * 2.0, y


def test_input_pipeline_applies_preprocess_and_keeps_every_example(tf):
    x = np.arange(10, dtype="float32").reshape(10, 1)
    y = np.arange(10, dtype="int64")
    ds = input_pipeline((x, y), _double, batch_size=4, deterministic=True)
    batches = list(ds)
    assert [int(b[0].shape[0]) for b in batches] == [4, 4, 2]
    got = np.concatenate([b[0].numpy() for b in batches])
    assert got.ravel().tolist() == (x.ravel() * 2).tolist()
    # the recommended steps are in the dataset's graph: parallel map and prefetch
    graph = ds._as_serialized_graph().numpy()
    assert b"ParallelMapDataset" in graph
    assert b"PrefetchDataset" in graph
    naive = naive_pipeline((x, y), _double, batch_size=4)._as_serialized_graph().numpy()
    assert b"ParallelMapDataset" not in naive


def test_timestamps_ride_along_with_each_batch(tf):
    x = np.ones((6, 3), dtype="float32")
    ds = input_pipeline(x, lambda v: v + 1.0, batch_size=3, timestamps=True)
    rec = SpanRecorder()
    for batch, spans in ds:
        assert batch.shape == (3, 3)
        assert spans.shape == (3, 2)
        assert bool(np.all(spans.numpy()[:, 1] >= spans.numpy()[:, 0]))
        rec.add_preprocess(spans)
    assert len(rec.preprocess) == 6


def test_naive_pipeline_turns_off_the_automatic_overlap(tf):
    ds = naive_pipeline(np.ones((4, 2), dtype="float32"), lambda v: v, batch_size=2)
    opts = ds.options().experimental_optimization
    assert opts.inject_prefetch is False
    assert opts.map_parallelization is False
    assert len(list(ds)) == 2


def test_bad_arguments(tf):
    with pytest.raises(ValueError, match="batch_size"):
        input_pipeline(np.ones(3), None, batch_size=0)
    with pytest.raises(ValueError, match="preprocess"):
        input_pipeline(np.ones(3), "not a function", batch_size=2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timestamps"):
        input_pipeline(np.ones(3), None, batch_size=2, timestamps=True)
    if not tf.config.list_logical_devices("GPU"):
        with pytest.raises(NoGpuError, match="GPU:0"):
            input_pipeline(np.ones(3), None, batch_size=2, device="GPU:0")

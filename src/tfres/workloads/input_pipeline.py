"""``input_pipeline``: does CPU-side preprocessing hold the device back?

Each example is a random 1-second "audio" signal (16 000 samples) turned into log-spectrum
features on the CPU (``tf.signal.stft``, magnitude, log, mean over time): real work of the
kind audio and image pipelines do, each example on one core (``max_intra_op_parallelism = 1``,
as decoders and most image ops run). A small model trains on the features, on each selected
device, fed three ways:

- ``naive``: ``dataset.map(preprocess).batch(b)``, one example at a time (with tf.data's
  automatic ``map_parallelization`` off, as it is for a ``py_function`` or stateful map);
- ``parallel``: ``map(preprocess, num_parallel_calls=AUTOTUNE)`` plus ``prefetch(AUTOTUNE)``;
- the device step alone, on features computed beforehand (the reference, in ``details``).

The figures per mode: samples/s, the process's CPU% (100 = one core), and the share of
step time spent waiting for input. When the naive pipeline is much slower than the device
step alone, preprocessing limits the device; the parallel pipeline shows how much of that
``tf.data`` wins back with the cores this machine has.
"""

from __future__ import annotations

import time
from typing import Any

from tfres.backends.tf import load_tensorflow
from tfres.backends.tf_placement import on_device
from tfres.backends.tf_runtime import memory_info, reset_memory_peak
from tfres.workloads._context import (
    Workload,
    WorkloadContext,
    failure_text,
    make_result,
    median,
    tf_failures,
)

__all__ = ["WORKLOAD", "run"]

NAME = "input_pipeline"


def _preprocess(tf: Any, p: dict[str, Any]) -> Any:
    frame, step = int(p["frame_length"]), int(p["frame_step"])

    def preprocess(signal: Any) -> Any:
        spectrum = tf.abs(tf.signal.stft(signal, frame_length=frame, frame_step=step))
        return tf.reduce_mean(tf.math.log(spectrum + 1e-6), axis=0)

    return preprocess


def _train_step(tf: Any, keras: Any, features: int, seed: int) -> Any:
    """A compiled training step of a small model on ``features``-wide inputs."""
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [
            keras.Input((features,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ]
    )
    optimizer = keras.optimizers.Adam()

    @tf.function(reduce_retracing=True)
    def train_step(xb: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return train_step


def _epoch(ds: Any, train_step: Any) -> tuple[float, float, int]:
    """One pass: (seconds, seconds waiting for input, samples)."""
    wait = 0.0
    count = 0
    t0 = t = time.perf_counter()
    for xb in ds:
        wait += time.perf_counter() - t
        float(train_step(xb))  # wait for the device, so the input wait is measured apart
        count += int(xb.shape[0])
        t = time.perf_counter()
    return time.perf_counter() - t0, wait, count


def _timed(ds: Any, train_step: Any, repeats: int) -> tuple[list[float], float, int]:
    for _ in ds.take(2):  # warm-up: trace, start the map threads, fill buffers
        pass
    _epoch(ds.take(2), train_step)
    times, waits, count = [], 0.0, 0
    for _ in range(repeats):
        seconds, wait, count = _epoch(ds, train_step)
        times.append(seconds)
        waits += wait
    total = sum(times)
    return times, (waits / total if total > 0 else 0.0), count


def run(ctx: WorkloadContext) -> list[dict[str, Any]]:
    tf = load_tensorflow()  # before keras, which imports TensorFlow less quietly
    import keras

    p = WORKLOAD.params(quick=ctx.quick, overrides=ctx.params)
    n, length, batch = int(p["samples"]), int(p["signal_length"]), int(p["batch_size"])
    repeats = int(p["repeats"])
    signals = ctx.rng(4).standard_normal((n, length)).astype("float32")
    preprocess = _preprocess(tf, p)
    pipelines = _pipelines(tf, signals, preprocess, batch)
    results: list[dict[str, Any]] = []
    total = len(ctx.devices) * 3
    for index, device in enumerate(ctx.devices):
        done = index * 3
        with ctx.phase(f"{NAME} {device}"), on_device(device):
            train_step = _train_step(tf, keras, int(p["frame_length"]) // 2 + 1, ctx.seed)
            ctx.report(done / total, f"{device} device step alone")
            device_rate = _device_only_rate(tf, signals, preprocess, train_step, batch, repeats)
            rows = []
            for step, (mode, ds) in enumerate(pipelines.items(), start=1):
                ctx.report((done + step) / total, f"{device} {mode}")
                rows.append(_mode_row(ctx, tf, p, device, mode, ds, train_step, device_rate))
        _add_verdicts(rows, device_rate)
        results.extend(rows)
    ctx.report(1.0, "done")
    return results


def _pipelines(tf: Any, signals: Any, preprocess: Any, batch: int) -> dict[str, Any]:
    """The ``naive`` and ``parallel`` datasets over the same signals."""
    autotune = tf.data.AUTOTUNE
    # one core per example, as decoders and most image ops run: parallelism then comes from
    # tf.data running several examples at once, which is what this workload compares
    options = tf.data.Options()
    options.threading.max_intra_op_parallelism = 1
    source = tf.data.Dataset.from_tensor_slices(signals).with_options(options)
    # naive really is one example at a time: tf.data would otherwise parallelize this stateless
    # map by itself (``map_parallelization``), which it cannot do for a py_function or a
    # stateful map, the usual naive pipelines
    sequential = tf.data.Options()
    sequential.experimental_optimization.map_parallelization = False
    return {
        "naive": source.map(preprocess).batch(batch).with_options(sequential),
        "parallel": source.map(preprocess, num_parallel_calls=autotune)
        .batch(batch)
        .prefetch(autotune),
    }


def _device_only_rate(
    tf: Any, signals: Any, preprocess: Any, train_step: Any, batch: int, repeats: int
) -> float | None:
    """Samples/s of the device step alone, on features computed beforehand."""
    n = len(signals)
    ready = tf.stack([preprocess(s) for s in signals[:batch]])
    cached = tf.data.Dataset.from_tensor_slices(ready).repeat().take(n).batch(batch)
    device_times, _, _ = _timed(cached, train_step, repeats)
    device_seconds = median(device_times)
    return n / device_seconds if device_seconds else None


def _mode_row(
    ctx: WorkloadContext,
    tf: Any,
    p: dict[str, Any],
    device: str,
    mode: str,
    ds: Any,
    train_step: Any,
    device_rate: float | None,
) -> dict[str, Any]:
    """One pipeline timed on ``device``: its result row (the error when it failed)."""
    n, length = int(p["samples"]), int(p["signal_length"])
    times: list[float] = []
    wait_fraction = None
    error = None
    count = n
    with ctx.span() as span:
        reset_memory_peak(device)
        try:
            times, wait_fraction, count = _timed(ds, train_step, int(p["repeats"]))
        except tf_failures(tf) as err:
            error = failure_text(tf, err)
        mem = memory_info(device)
    seconds = median(times)
    return make_result(
        ctx,
        name=NAME,
        device=device,
        params={
            "mode": mode,
            "samples": n,
            "batch_size": int(p["batch_size"]),
            "signal_length": length,
        },
        times=times,
        span=span,
        peak_tf_memory_bytes=mem["peak_bytes"] if mem else None,
        throughput=count / seconds if seconds else None,
        throughput_unit="samples/s",
        details={
            "variant": mode,
            "input_wait_fraction": wait_fraction,
            "device_only_samples_per_second": device_rate,
            "preprocessing": f"stft({p['frame_length']}/{p['frame_step']}) "
            f"log-spectrum of {length} samples",
        },
        error=error,
    )


def _add_verdicts(rows: list[dict[str, Any]], device_rate: float | None) -> None:
    """The parallel row's speed-up over the naive one, and the verdict on both."""
    naive, parallel = rows
    if naive["throughput"] and parallel["throughput"]:
        parallel["details"]["speedup_vs_naive"] = parallel["throughput"] / naive["throughput"]
    for r in rows:
        r["details"]["verdict"] = _verdict(naive, parallel, device_rate)


def _verdict(naive: dict[str, Any], parallel: dict[str, Any], device_rate: float | None) -> str:
    a, b = naive["throughput"], parallel["throughput"]
    if not a or not b or not device_rate:
        return "not measured: a pipeline did not run to the end"
    limited = a < 0.8 * device_rate
    text = (
        f"the device step alone takes {device_rate:.0f} samples/s; the naive pipeline feeds "
        f"{a:.0f} ({a / device_rate:.0%} of it)"
    )
    if limited:
        text += ", so CPU preprocessing limits the device"
    else:
        text += ": preprocessing keeps up"
    text += f"; parallel map + prefetch gives {b / a:.2f}x"
    if b < 0.8 * device_rate:
        text += (
            f", still short of the device ({b / device_rate:.0%}): "
            "more cores or cheaper preprocessing"
        )
    return text


WORKLOAD = Workload(
    name=NAME,
    description="tf.data with real CPU preprocessing: naive vs parallel map + prefetch",
    run=run,
    quick_params={
        "samples": 512,
        "signal_length": 16000,
        "frame_length": 512,
        "frame_step": 128,
        "batch_size": 32,
        "repeats": 2,
    },
    full_params={
        "samples": 2048,
        "signal_length": 16000,
        "frame_length": 512,
        "frame_step": 128,
        "batch_size": 32,
        "repeats": 3,
    },
)
